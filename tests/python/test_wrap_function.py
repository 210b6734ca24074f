"""tf.compat.v1.wrap_function in a TF1 graph: ``_function_models.wrapped`` (variables made inside,
the call's structure, values and gradients through the call, ``prune`` to a part of the body fed
from a placeholder, error classes) against TensorFlow 2.21 with v2 behaviour disabled
(``tests/fixtures/compat_v1_last/function.json``, from ``tools/make_compat_v1_last_fixtures.py``).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import _function_models
import ferroflow as tf
import ferroflow.compat.v1 as tf1

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "compat_v1_last"


def test_wrap_function_matches_tensorflow():
    want = json.loads((FIXTURES / "function.json").read_text())["wrapped"]
    got = _function_models.wrapped(tf1)
    for g, w in zip(got.pop("values"), want.pop("values")):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert got == want


def test_wrap_function_prune_needs_its_feeds():
    with tf.Graph().as_default():

        def two_inputs(a, b):
            return a + b, a * 2.0

        fn = tf1.wrap_function(two_inputs, [tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)])
        doubled = fn.prune(feeds=[fn.inputs[0]], fetches=fn.outputs[1])
        with tf.Session() as sess:
            assert sess.run(doubled(tf.constant(4.0))) == 8.0
        with pytest.raises(ValueError, match="not among the feeds"):
            fn.prune(feeds=[fn.inputs[0]], fetches=fn.outputs[0])
        with pytest.raises(ValueError, match="wrapped function's graph"):
            fn.prune(feeds=[tf.constant(1.0)], fetches=fn.outputs[1])
