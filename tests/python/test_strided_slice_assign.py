"""Sliced variable assignment: ``v[1:3].assign(value)`` builds TF1's ``StridedSliceAssign`` (issue 23).

Expected values, names, shapes and error messages were printed by TensorFlow 2.21 (``tf.compat.v1`` with
ref variables) for the same programs.
"""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf


def _run(fetch, feed=None, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetch, feed)


def test_vector_slice_assign_matches_tf():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0], name="v")
    s = v[1:3]
    assert s.op.type == "StridedSlice" and s.op.inputs[0].name == "v/read:0"
    a = s.assign([7.0, 8.0])
    assert a.op.type == "StridedSliceAssign"
    assert a.op.name == "strided_slice/_assign"
    assert a.op.inputs[0].name == "v:0"
    assert a.shape.as_list() == [4]
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(a), [1.0, 7.0, 8.0, 4.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 7.0, 8.0, 4.0])
        # tf.assign of a variable's slice goes through the slice's assign, as in TF1.
        b = tf.assign(v[::2], [0.0, 9.0])
        assert b.op.type == "StridedSliceAssign"
        np.testing.assert_array_equal(sess.run(b), [0.0, 7.0, 9.0, 4.0])
        # A scalar broadcasts over the slice.
        np.testing.assert_array_equal(sess.run(v[1:3].assign(5.0)), [0.0, 5.0, 5.0, 4.0])


# (slice of a [3, 4] variable holding arange(12), value, TF 2.21's variable afterwards)
MATRIX = [
    (lambda m: m[:, 1:3], [1.0, 2.0], [[0, 1, 2, 3], [4, 1, 2, 7], [8, 1, 2, 11]]),
    (lambda m: m[:, 1:3], [[1.0], [2.0], [3.0]], [[0, 1, 1, 3], [4, 2, 2, 7], [8, 3, 3, 11]]),
    (lambda m: m[None, 1, 1:3], [[[1.0, 2.0]]], [[0, 1, 2, 3], [4, 1, 2, 7], [8, 9, 10, 11]]),
    (lambda m: m[::-1, ::2], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[5, 1, 6, 3], [3, 5, 4, 7], [1, 9, 2, 11]]),
    (lambda m: m[2], [1.0, 1.0, 1.0, 1.0], [[0, 1, 2, 3], [4, 5, 6, 7], [1, 1, 1, 1]]),
    (lambda m: m[..., -1], -1.0, [[0, 1, 2, -1], [4, 5, 6, -1], [8, 9, 10, -1]]),
    (lambda m: m[1, 1:], [[55.0, 66.0, 77.0]], [[0, 1, 2, 3], [4, 55, 66, 77], [8, 9, 10, 11]]),
]


@pytest.mark.parametrize("index,value,expected", MATRIX)
def test_matrix_slice_assign_matches_tf(index, value, expected):
    m = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(3, 4), name="m")
    out = _run(index(m).assign(value))
    np.testing.assert_array_equal(out, np.array(expected, np.float32))


def test_fed_values_broadcast_or_fail_like_tf():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0], name="v")
    ph = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        # Leading size-1 dimensions of the value are dropped.
        np.testing.assert_array_equal(sess.run(v[1:3].assign(ph), {ph: [[[1.0, 2.0]]]}), [1.0, 1.0, 2.0, 4.0])
        for value, shape in [([1.0, 2.0, 3.0], "[3]"), ([[1.0], [2.0]], "[2,1]")]:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=rf"Cannot broadcast input shape {re_escape(shape)} into final shape \[2\]"):
                sess.run(v[1:3].assign(ph), {ph: value})
        # An empty slice assigns nothing, whatever the value.
        np.testing.assert_array_equal(sess.run(v[10:].assign(ph), {ph: [9.0]}), [1.0, 1.0, 2.0, 4.0])
        np.testing.assert_array_equal(sess.run(v[3:1].assign(ph), {ph: 5.0}), [1.0, 1.0, 2.0, 4.0])
        # A scalar element: v[1] = [[7.]] (leading ones dropped).
        np.testing.assert_array_equal(sess.run(v[1].assign(ph), {ph: [[7.0]]}), [1.0, 7.0, 2.0, 4.0])


def re_escape(s):
    import re

    return re.escape(s)


def test_errors_are_typed():
    v = tf.Variable([1.0, 2.0], name="v")
    u = tf.Variable([1.0, 2.0], name="u")
    with pytest.raises(TypeError, match="Input 'value' of 'StridedSliceAssign' Op has type int32"):
        v[0:1].assign(tf.constant([1]))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value u"):
            sess.run(u[0:1].assign([3.0]))
    # StridedSliceAssign has no gradient in TF either.
    with pytest.raises(LookupError):
        tf.gradients(v[0:1].assign([1.0]), [v])


def test_only_a_variables_own_slice_has_assign():
    v = tf.Variable([[1.0, 2.0]], name="v")
    assert not hasattr(v[0][0:1], "assign")  # a slice of a slice
    assert not hasattr(tf.constant([1.0, 2.0])[0:1], "assign")
    assert not hasattr(v.value()[0:1], "assign")
    with pytest.raises((TypeError, AttributeError)):  # TF: AttributeError (no .assign)
        tf.assign(tf.constant([1.0])[0:1], [2.0])


def test_other_dtypes_and_int64_indices():
    s = tf.Variable([b"a", b"b", b"c"], name="s")
    i = tf.Variable(np.arange(6, dtype=np.int64), name="i")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(s[1:].assign([b"x", b"y"])).tolist() == [b"a", b"x", b"y"]
        start = tf.constant(2, tf.int64)
        np.testing.assert_array_equal(sess.run(i[start:].assign(0)), [0, 1, 0, 0, 0, 0])


def test_exported_graph_has_tf_attrs(tmp_path):
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    v[1:].assign([5.0, 6.0])
    nodes = {n.name: n for n in tf.get_default_graph().as_graph_def().node}
    node = nodes["strided_slice/_assign"]
    assert node.op == "StridedSliceAssign"
    assert list(node.input)[0] == "v"
    assert set(node.attr) >= {"T", "Index", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                              "shrink_axis_mask"}
