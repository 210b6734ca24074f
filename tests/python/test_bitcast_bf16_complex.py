"""``tf.bitcast``, bfloat16 values as ``ml_dtypes.bfloat16``, and complex tensors in TF-written
checkpoints (issue 23).

Expected values were printed by TensorFlow 2.21 for the same calls; the checkpoint under
``tests/fixtures/checkpoints/bf16_complex/`` was written by TF 2.21
(``tools/make_checkpoint_dtype_fixtures.py``), with the values TF read back in its ``manifest.json``.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import ferroflow as tf

BITCASTS = [
    # (value, input dtype, target dtype, TF 2.21's static shape and value)
    ([1.0, -2.0], tf.float32, tf.int32, [2], [1065353216, -1073741824]),
    ([1.0, -2.0], tf.float32, tf.uint8, [2, 4], [[0, 0, 128, 63], [0, 0, 0, 192]]),
    ([1.0, -2.0], tf.float32, tf.float64, [], -2.000000473111868),
    ([1.0, -2.0], tf.float32, tf.int16, [2, 2], [[0, 16256], [0, -16384]]),
    ([[1, 2], [3, 4]], tf.int32, tf.int64, [2], [8589934593, 17179869187]),
]


@pytest.mark.parametrize("value,src,dst,shape,expected", BITCASTS)
def test_bitcast_matches_tf(value, src, dst, shape, expected):
    y = tf.bitcast(tf.constant(value, src), dst)
    assert y.dtype == dst
    assert y.shape.as_list() == shape
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), np.array(expected, dst.as_numpy_dtype))


def test_bitcast_to_bfloat16_and_back():
    x = tf.constant([1.0, -2.0], tf.float32)
    b = tf.bitcast(x, tf.bfloat16)
    assert b.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        out, back = sess.run([b, tf.bitcast(b, tf.float32)])
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), [[0.0, 1.0], [0.0, -2.0]])
    np.testing.assert_array_equal(back, [1.0, -2.0])


def test_bitcast_errors_match_tf():
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.bitcast(tf.constant(1.0), tf.float64)
    with pytest.raises(TypeError, match="bool"):
        tf.bitcast(tf.constant(True), tf.uint8)
    with pytest.raises(ValueError, match="Cannot bitcast from 3 to 9 due to shape. 3 does not match 2"):
        tf.bitcast(tf.constant([1, 2, 3], tf.int32), tf.int64)
    p = tf.placeholder(tf.int32, [None, None])
    assert tf.bitcast(p, tf.int64).shape.as_list() == [None]
    assert tf.bitcast(p, tf.int8).shape.as_list() == [None, None, 4]
    assert tf.bitcast(tf.placeholder(tf.int32), tf.int64).shape.dims is None
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match 2"):
            sess.run(tf.bitcast(p, tf.int64), {p: [[1, 2, 3]]})
    with pytest.raises(LookupError):  # no gradient in TF either
        x = tf.constant([1.0])
        tf.gradients(tf.bitcast(x, tf.float16), [x])


def test_bfloat16_fetch_and_feed_use_ml_dtypes():
    x = tf.constant([1.5, 2.0, -0.0078125], dtype=tf.bfloat16)
    p = tf.placeholder(tf.bfloat16, [2])
    with tf.Session() as sess:
        v = sess.run(x)
        fed = sess.run(p * 2, {p: np.array([1.5, 3.0], ml_dtypes.bfloat16)})
        scalar = sess.run(tf.constant(1.5, tf.bfloat16))
    assert v.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(v.astype(np.float32), [1.5, 2.0, -0.0078125])
    assert fed.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(fed.astype(np.float32), [3.0, 6.0])
    assert np.asarray(scalar).dtype == ml_dtypes.bfloat16 and float(scalar) == 1.5
    assert tf.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16


def _manifest(fixtures):
    root = fixtures / "checkpoints" / "bf16_complex"
    return root / "ckpt" / "model.ckpt", json.loads((root / "manifest.json").read_text())["variables"]


def _expected(entry):
    value = np.array(entry["value"])
    if entry["dtype"] == "bfloat16":
        return value.astype(np.uint16).view(ml_dtypes.bfloat16)
    if entry["dtype"].startswith("complex"):
        return (value[..., 0] + 1j * value[..., 1]).astype(entry["dtype"])
    return value.astype(entry["dtype"])


def test_tf_checkpoint_of_bf16_and_complex_reads_with_tf_dtypes(fixtures):
    prefix, variables = _manifest(fixtures)
    reader = tf.train.load_checkpoint(str(prefix))
    dtypes = reader.get_variable_to_dtype_map()
    shapes = reader.get_variable_to_shape_map()
    for entry in variables:
        name = entry["name"]
        assert dtypes[name].as_datatype_enum == entry["dtype_enum"], name
        assert dtypes[name].name == entry["dtype"]
        assert shapes[name] == entry["shape"]
        got = np.asarray(reader.get_tensor(name))
        want = _expected(entry)
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8), np.atleast_1d(want).view(np.uint8),
                                      err_msg=name)
    assert tf.complex128.as_datatype_enum == 18 and tf.complex64.as_datatype_enum == 8


def test_bf16_variables_restore_from_tf_checkpoint(fixtures):
    prefix, variables = _manifest(fixtures)
    bf16 = {e["name"]: e for e in variables if e["dtype"] == "bfloat16"}
    made = {name: tf.Variable(tf.zeros(e["shape"], tf.bfloat16), name=name) for name, e in bf16.items()}
    saver = tf.train.Saver(made)
    with tf.Session() as sess:
        saver.restore(sess, str(prefix))
        for name, v in made.items():
            got = sess.run(v)
            assert got.dtype == ml_dtypes.bfloat16
            np.testing.assert_array_equal(got.view(np.uint16), _expected(bf16[name]).view(np.uint16))
