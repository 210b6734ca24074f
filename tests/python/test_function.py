"""tf.function in a TF1 graph.

``_function_models.describe`` (trace counts per call, call op types, values and gradients through
the calls, variables made inside, error classes) against what TensorFlow 2.21 gave with v2
behaviour disabled (``tests/fixtures/compat_v1_last/function.json``, from
``tools/make_compat_v1_last_fixtures.py``). The one planned difference: without AutoGraph a Python
``if`` on a tensor raises OperatorNotAllowedInGraphError with ``autograph=True`` too (TensorFlow
converts it), which is what TensorFlow raises with ``autograph=False``.
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


@pytest.fixture(scope="module")
def expected():
    return json.loads((FIXTURES / "function.json").read_text())


def _check(got, want):
    got, want = dict(got), dict(want)
    for g, w in zip(got.pop("values"), want.pop("values")):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    for key in [k for k in want if k.endswith("_values")]:
        np.testing.assert_allclose(got.pop(key), want.pop(key), rtol=1e-6)
    assert got == want


def test_retracing_matches_tensorflow(expected):
    _check(_function_models.retracing(tf1), expected["retracing"])


def test_variables_gradients_and_nesting_match_tensorflow(expected):
    got = _function_models.variables_and_nesting(tf1)
    want = dict(expected["variables_and_nesting"])
    assert want.pop("python_if_error") is None  # TensorFlow's AutoGraph converted the if
    assert got.pop("python_if_error") == "OperatorNotAllowedInGraphError"
    _check(got, want)


def test_python_if_error_is_a_type_error_naming_the_way_out():
    @tf.function
    def branchy(v):
        return v if v > 0 else -v

    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="tf.cond") as info:
            branchy(tf.constant(1.0))
    assert isinstance(info.value, tf.errors.OperatorNotAllowedInGraphError)


def test_stateful_body_runs_on_every_call_and_concrete_functions():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")

        @tf.function
        def bump(n):
            return counter.assign_add(n)

        op = bump(tf.constant(2))
        assert op.op.type == "StatefulPartitionedCall"
        concrete = bump.get_concrete_function(tf.TensorSpec([], tf.int32))
        assert bump.experimental_get_tracing_count() == 1
        assert concrete.structured_outputs is concrete.outputs[0]
        with pytest.raises(ValueError, match="is not compatible with the shape"):
            concrete(tf.constant([1, 2]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert [sess.run(op) for _ in range(3)] == [2, 4, 6]
            assert sess.run(concrete(tf.constant(10))) == 16


def test_function_arguments_and_outputs():
    with pytest.raises(TypeError, match="TensorSpec"):
        tf.function(lambda x: x, input_signature=[3])

    @tf.function
    def nothing(x):
        del x

    @tf.function
    def structure(x, scale):
        return {"a": x * scale, "b": [None, scale]}

    with tf.Graph().as_default() as g:
        assert nothing(tf.constant(1.0)) is None
        out = structure(tf.constant([1.0, 2.0]), 3)
        assert out["b"][0] is None and out["b"][1].op.type == "PartitionedCall"
        with pytest.raises(TypeError, match="missing a required argument"):
            structure(tf.constant(1.0))
        other = tf.Graph()
        with other.as_default():
            again = structure(tf.constant([1.0, 2.0]), 3)  # traced again in this graph
        assert again["a"].graph is other and out["a"].graph is g
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out["a"]), [3.0, 6.0])
            assert sess.run(out["b"][1]) == 3


def test_get_concrete_function_of_an_input_signature():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def double(v):
        return v * 2.0

    with tf.Graph().as_default():
        concrete = double.get_concrete_function()
        assert concrete is double.get_concrete_function(tf.TensorSpec([None], tf.float32))
        with pytest.raises(TypeError, match="Can not cast"):
            double.get_concrete_function(tf.TensorSpec([None], tf.int32))
        called = double(tf.constant([1.0]))
        assert double.experimental_get_tracing_count() == 1
        with tf.Session() as sess:
            six_eight, two = sess.run([concrete(tf.constant([3.0, 4.0])), called])
        np.testing.assert_allclose(six_eight, [6.0, 8.0])
        np.testing.assert_allclose(two, [2.0])
