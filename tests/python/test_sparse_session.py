"""SparseTensors through Session.run: fetched as SparseTensorValue anywhere in a fetch structure, fed from
SparseTensorValues or (indices, values, dense_shape) tuples, sparse placeholders with partial shapes,
SparseTensor.eval, and the errors of bad feeds and bad sparse input."""

import collections

import numpy as np
import pytest

import ferroflow as tf

IND = np.array([[0, 1], [1, 0], [2, 3]], np.int64)
VAL = np.array([1.0, -2.0, 3.5], np.float32)
SHAPE = np.array([3, 4], np.int64)


def _dense(ind, val, shape, fill=0):
    out = np.full(tuple(shape), fill, np.asarray(val).dtype)
    for i, v in zip(ind, val):
        out[tuple(i)] = v
    return out


def _same(got, ind, val, shape):
    assert isinstance(got, tf.SparseTensorValue)
    np.testing.assert_array_equal(got.indices, ind)
    np.testing.assert_array_equal(got.values, val)
    np.testing.assert_array_equal(got.dense_shape, shape)


def test_fetch_sparse_tensor_in_nested_structures():
    Pair = collections.namedtuple("Pair", ["sp", "n"])
    with tf.Graph().as_default():
        sp = tf.SparseTensor(IND, VAL, SHAPE)
        n = tf.size(sp.values)
        with tf.Session() as sess:
            _same(sess.run(sp), IND, VAL, SHAPE)
            out = sess.run({"a": [sp, (n, sp)], "b": Pair(sp, n)})
            _same(out["a"][0], IND, VAL, SHAPE)
            _same(out["a"][1][1], IND, VAL, SHAPE)
            assert out["a"][1][0] == 3
            assert isinstance(out["b"], Pair)
            _same(out["b"].sp, IND, VAL, SHAPE)
            # A fetched value has the three parts' own dtypes.
            assert out["b"].sp.indices.dtype == np.int64 and out["b"].sp.values.dtype == np.float32
            _same(sp.eval(session=sess), IND, VAL, SHAPE)
            with sess.as_default():
                _same(sp.eval(), IND, VAL, SHAPE)


def test_feed_sparse_value_or_tuple_into_sparse_tensor():
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32, name="sp")
        dense = tf.sparse.to_dense(sp)
        total = tf.sparse.reduce_sum(sp)
        with tf.Session() as sess:
            value = tf.SparseTensorValue(IND, VAL, SHAPE)
            np.testing.assert_array_equal(sess.run(dense, {sp: value}), _dense(IND, VAL, SHAPE))
            np.testing.assert_allclose(sess.run(total, {sp: (IND, VAL, SHAPE)}), VAL.sum())
            # Round trip: what is fed comes back.
            _same(sess.run(sp, {sp: value}), IND, VAL, SHAPE)
            # Plain lists convert to the parts' dtypes.
            got = sess.run(sp, {sp: ([[0, 0]], [2], [1, 1])})
            assert got.values.dtype == np.float32 and got.indices.dtype == np.int64
            # A constant SparseTensor can be fed too (its parts are feedable constants).
            c = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
            np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(c), {c: ([[1, 1]], [5.0], [2, 2])}),
                                          [[0, 0], [0, 5]])


def test_sparse_placeholder_partial_shapes():
    with tf.Graph().as_default():
        p = tf.sparse_placeholder(tf.float32, shape=[None, 4], name="p")
        assert p.shape.as_list() == [None, 4]
        assert p.indices.shape.as_list() == [None, 2]
        assert p.values.shape.as_list() == [None]
        assert p.indices.name == "p/indices:0" and p.values.name == "p/values:0" and p.dense_shape.name == "p/shape:0"
        q = tf.sparse.placeholder(tf.int64, shape=[2, -1, 3])
        assert q.get_shape().as_list() == [2, None, 3]
        r = tf.sparse_placeholder(tf.string)
        assert r.shape.rank is None and r.indices.shape.as_list() == [None, None]
        with tf.Session() as sess:
            # The static dense shape is fed like any other part.
            got = sess.run(tf.sparse.to_dense(p), {p: (IND, VAL, SHAPE)})
            np.testing.assert_array_equal(got, _dense(IND, VAL, SHAPE))
            got = sess.run(tf.sparse.to_dense(r, default_value="-"),
                           {r: ([[0], [2]], np.array([b"x", b"y"], object), [3])})
            assert list(got) == [b"x", b"-", b"y"]


def test_sparse_placeholder_dense_shape_defaults_to_static_shape():
    with tf.Graph().as_default():
        p = tf.sparse_placeholder(tf.float32, shape=[3, 4])
        with tf.Session() as sess:
            got = sess.run(tf.sparse.to_dense(p), {p.indices: IND, p.values: VAL})
            np.testing.assert_array_equal(got, _dense(IND, VAL, SHAPE))


def test_bad_sparse_feeds_raise():
    with tf.Graph().as_default():
        p = tf.sparse_placeholder(tf.float32, shape=[None, 4], name="p")
        d = tf.sparse.to_dense(p)
        with tf.Session() as sess:
            with pytest.raises(TypeError, match="SparseTensorValue"):
                sess.run(d, {p: IND})
            with pytest.raises(TypeError, match="SparseTensorValue"):
                sess.run(d, {p: (IND, VAL)})
            with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
                sess.run(d, {p: p})
            # Indices of the wrong rank for the placeholder's [None, 2]: names the tensor fed.
            with pytest.raises(ValueError, match="p/indices"):
                sess.run(d, {p: (np.zeros([2, 3], np.int64), VAL[:2], [3, 4, 5])})


def test_bad_sparse_values_raise_invalid_argument():
    with tf.Graph().as_default():
        p = tf.sparse_placeholder(tf.float32)
        with tf.Session() as sess:
            # Values and indices of different lengths.
            with pytest.raises(tf.errors.InvalidArgumentError, match="Number of values must match"):
                sess.run(tf.sparse.reorder(p), {p: (IND, VAL[:2], SHAPE)})
            # Out of order where order is required, naming the index.
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[0,1\] is out of order"):
                sess.run(tf.sparse.to_dense(p), {p: ([[1, 0], [0, 1]], [1.0, 2.0], [2, 2])})
            # An index outside the dense shape.
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
                sess.run(tf.sparse.to_dense(p), {p: ([[0, 0], [5, 1]], [1.0, 2.0], [2, 2])})
            # Reordering first makes it valid.
            got = sess.run(tf.sparse.to_dense(tf.sparse.reorder(p)), {p: ([[1, 0], [0, 1]], [1.0, 2.0], [2, 2])})
            np.testing.assert_array_equal(got, [[0, 2], [1, 0]])


def test_static_shape_errors_at_construction():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(IND, VAL, SHAPE)
        with pytest.raises(ValueError, match="Cannot reshape"):
            tf.sparse.reshape(sp, [5, 5])
        with pytest.raises(ValueError):
            tf.sparse.sparse_dense_matmul(sp, np.zeros([3, 2], np.float32))
        with pytest.raises(TypeError):
            tf.sparse.to_dense(np.zeros([2, 2]))
        with pytest.raises(ValueError, match="Keyword"):
            tf.sparse.split(sp, 2, 1)


def test_sparse_dense_operators_and_set_shape():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(IND, VAL, SHAPE)
        row = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
        with tf.Session() as sess:
            got = sess.run(sp * row)
            np.testing.assert_allclose(got.values, VAL * row[IND[:, 1]])
            got = sess.run(sp / row)
            np.testing.assert_allclose(got.values, VAL / row[IND[:, 1]])
            neg = sess.run(-sp)
            np.testing.assert_allclose(neg.values, -VAL)
        p = tf.sparse_placeholder(tf.float32)
        p.set_shape([None, 7])
        assert p.shape.as_list() == [None, 7]
        with pytest.raises(ValueError):
            p.set_shape([3, 8])


def test_make_callable_feeds_and_fetches_sparse_tensors():
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32)
        x = tf.placeholder(tf.float32, [])
        scaled = tf.SparseTensor(sp.indices, sp.values * x, sp.dense_shape)
        with tf.Session() as sess:
            run = sess.make_callable([scaled, tf.sparse.reduce_sum(sp)], feed_list=[sp, x])
            got, total = run(tf.SparseTensorValue(IND, VAL, SHAPE), 2.0)
            _same(got, IND, VAL * 2, SHAPE)
            np.testing.assert_allclose(total, VAL.sum())
            got, _ = run((IND[:1], VAL[:1], SHAPE), 3.0)
            _same(got, IND[:1], VAL[:1] * 3, SHAPE)
            with pytest.raises(TypeError, match="Expected 2 feed values"):
                run(tf.SparseTensorValue(IND, VAL, SHAPE))


def test_gradients_where_tensorflow_has_none():
    with tf.Graph().as_default():
        v = tf.constant(VAL)
        sp = tf.SparseTensor(IND, v * 1.0, SHAPE)
        # TensorFlow registers no gradient for SparseReduceMax or SparseSplit: LookupError, as there.
        with pytest.raises(LookupError, match="SparseReduceMax"):
            tf.gradients(tf.sparse.reduce_max(sp), v)
        with pytest.raises(LookupError, match="SparseSplit"):
            tf.gradients(tf.reduce_sum(tf.sparse.split(sp_input=sp, num_split=2, axis=1)[0].values), v)
        # SparseConcat is NotDifferentiable there: no gradient, no error.
        assert tf.gradients(tf.reduce_sum(tf.sparse.concat(0, [sp, sp]).values), v) == [None]


def test_degenerate_shapes_raise_or_work_without_crashing():
    with tf.Graph().as_default():
        p = tf.sparse_placeholder(tf.float32)
        with tf.Session() as sess:
            # Entries in a dense shape of no elements.
            with pytest.raises(tf.errors.InvalidArgumentError, match="no elements"):
                sess.run(tf.sparse.reshape(p, [0, 3]), {p: ([[0, 1]], [1.0], [0, 2])})
            # A scalar output: indices with no columns.
            got = sess.run(tf.sparse_to_dense(np.zeros([1, 0], np.int64), np.zeros([0], np.int64), 4.0))
            assert got.shape == () and got == 4.0
            # Indices and values of different lengths in a cross.
            bad = tf.SparseTensor(tf.placeholder_with_default(np.array([[0, 0], [1, 0]], np.int64), [None, 2]),
                                  tf.placeholder_with_default(np.array(["a"], object), [None]), [2, 1])
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(tf.sparse.cross([bad, bad]).values)
