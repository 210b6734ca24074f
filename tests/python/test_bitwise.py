"""tf.bitwise and tf.raw_ops' bitwise ops against TensorFlow 2.21 (tools/make_bitwise_fixtures.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1

DOC = json.loads((pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "bitwise" / "bitwise.json").read_text())


def _cases(dtype):
    return [c for c in DOC["cases"] if c["dtype"] == dtype]


@pytest.mark.parametrize("dtype", sorted({c["dtype"] for c in DOC["cases"]}))
def test_values_like_tensorflow(dtype):
    # one graph and one run per dtype: every function, extremes, out-of-range shifts, broadcasting
    cases = _cases(dtype)
    with tf.Graph().as_default():
        outs = []
        for c in cases:
            x = tf.constant(np.array(c["x"], dtype=dtype))
            if c["fn"] == "population_count":
                outs.append(tf.raw_ops.PopulationCount(x=x))
            elif "y" in c:
                outs.append(getattr(tf.bitwise, c["fn"])(x, tf.constant(np.array(c["y"], dtype=dtype))))
            else:
                outs.append(tf.bitwise.invert(x))
        for c, out in zip(cases, outs):
            assert out.dtype.name == c["out_dtype"], c["fn"]
            assert out.shape.as_list() == list(np.shape(c["out"])), c["fn"]
        with tf.Session() as sess:
            got = sess.run(outs)
    for c, value in zip(cases, got):
        assert value.dtype == np.dtype(c["out_dtype"]), c["fn"]
        np.testing.assert_array_equal(value, np.array(c["out"], dtype=c["out_dtype"]), err_msg=c["fn"])


def test_bad_dtypes_raise_like_tensorflow():
    errors = {e["case"]: e["error"] for e in DOC["errors"]}
    builds = {
        "float_input": lambda: tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0])),
        "float_invert": lambda: tf.bitwise.invert(tf.constant([1.5])),
        "mixed_dtypes": lambda: tf.bitwise.left_shift(tf.constant([1], tf.int32), tf.constant([1], tf.int64)),
    }
    assert set(builds) == set(errors)
    for case, build in builds.items():
        with tf.Graph().as_default():
            with pytest.raises(TypeError) as info:
                build()
        assert type(info.value).__name__ == errors[case]


def test_names_python_operands_and_no_gradient():
    assert tf_v1.bitwise.left_shift is tf.bitwise.left_shift
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [3], name="x")
        y = tf.bitwise.left_shift(x, 3)  # the plain 3 becomes uint8
        z = tf.bitwise.bitwise_or(x, y, name="mixed")
        assert (y.op.type, y.op.name, y.dtype) == ("LeftShift", "LeftShift", tf.uint8)
        assert (z.op.type, z.name) == ("BitwiseOr", "mixed:0")
        v = tf.placeholder(tf.float32, [3])
        shifted = tf.cast(tf.bitwise.right_shift(tf.cast(v, tf.int32), 1), tf.float32)
        assert tf.gradients(shifted, v) == [None]  # not differentiable, as in TensorFlow
        with tf.Session() as sess:
            out = sess.run(z, {x: np.array([1, 33, 255], np.uint8)})
        np.testing.assert_array_equal(out, np.array([1 | 8, 33 | 8, 255], np.uint8))
