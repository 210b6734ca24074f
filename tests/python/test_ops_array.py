"""Array ops against numpy: shapes, slicing (tf.strided_slice and Tensor.__getitem__), joining, gathering,
padding, sources (fill/zeros/range/linspace), static shape inference and error cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferroflow as tf
from _optest import (
    BF16_SCALAR_FEED_OK,
    FEW,
    NUMERIC,
    PROPS,
    arrays,
    assume_feedable,
    fetch_dtype,
    normal_floats,
    np_dtype,
    run,
)

DTYPES = NUMERIC + ["bool"]


def _values(data, dtype, shape):
    if dtype == "bool":
        return data.draw(hnp.arrays(np.bool_, shape))
    x = data.draw(arrays(dtype, shape))
    assume_feedable(dtype, x)
    return x


def _run_feed(build, dtype, x, static_shape=None):
    """Runs ``build(placeholder)`` with ``x`` fed; returns (static shape before running, value)."""
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, x.shape if static_shape is None else static_shape)
        out = build(p)
        static = [o.shape.as_list() if o.shape.ndims is not None else None for o in out] if isinstance(
            out, list) else (out.shape.as_list() if out.shape.ndims is not None else None)
        with tf.Session() as s:
            return static, s.run(out, {p: x})


# ---------------------------------------------------------------------------------------------
# reshape / transpose / expand_dims / squeeze
# ---------------------------------------------------------------------------------------------


@PROPS
@given(data=st.data())
def test_reshape_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES + ["string"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, max_side=4))
    if dtype == "string":
        x = np.array(data.draw(st.lists(st.sampled_from([b"a", b"bc", b""]), min_size=int(np.prod(shape)),
                                        max_size=int(np.prod(shape)))), dtype=object).reshape(shape)
    else:
        x = _values(data, dtype, shape)
    target = list(data.draw(st.permutations(shape)))  # a same-size shape
    target = data.draw(st.sampled_from([target, [int(np.prod(shape))], target + [1]]))
    if target and data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    assume(not (-1 in target and x.size == 0))
    static, got = _run_feed(lambda p: tf.reshape(p, target), dtype, x)
    expected = x.reshape(target)
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_reshape_shape_inference_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.reshape(x, [-1, 6]).shape.as_list() == [None, 6]
        assert tf.reshape(x, [2, -1]).shape.as_list() == [2, None]
        assert tf.reshape(tf.ones([2, 3]), [-1]).shape.as_list() == [6]
        assert tf.reshape(x, tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
        with pytest.raises(ValueError) as e:
            tf.reshape(tf.ones([2, 3]), [4, -1], name="rs")
        assert "rs" in str(e.value) and "[2,3]" in str(e.value)
        with pytest.raises(ValueError):
            tf.reshape(tf.ones([2, 3]), [4, 2])
        out = tf.reshape(x, [4, -1])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {x: np.ones((3, 3))})
            np.testing.assert_array_equal(s.run(out, {x: np.ones((4, 3))}), np.ones((4, 3)))


@PROPS
@given(data=st.data())
def test_transpose_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, max_side=4))
    x = _values(data, dtype, shape)
    perm = data.draw(st.one_of(st.none(), st.permutations(range(len(shape)))))
    static, got = _run_feed(lambda p: tf.transpose(p, perm), dtype, x)
    expected = np.transpose(x, perm)
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_transpose_shape_inference_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        assert tf.transpose(x, [2, 0, 1]).shape.as_list() == [4, None, 3]
        assert tf.transpose(x).shape.as_list() == [4, 3, None]
        assert tf.transpose(x, tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
        with pytest.raises(ValueError):
            tf.transpose(tf.ones([2, 3]), [0, 1, 2])
        out = tf.transpose(tf.ones([2, 3]), [0, 0])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out)
        got = run(lambda p: tf.transpose(p["x"]), {"x": (tf.float32, None, np.arange(6.0).reshape(2, 3))})
        np.testing.assert_array_equal(got, np.arange(6.0).reshape(2, 3).T)


@PROPS
@given(data=st.data())
def test_expand_dims_and_squeeze_match_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    x = _values(data, dtype, shape)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    static, got = _run_feed(lambda p: tf.expand_dims(p, axis), dtype, x)
    expected = np.expand_dims(x, axis)
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)
    ones = [i for i, d in enumerate(shape) if d == 1]
    sq = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(ones), unique=True) if ones else st.none()))
    static, got = _run_feed(lambda p: tf.squeeze(p, sq), dtype, x)
    expected = np.squeeze(x, None if not sq else tuple(sq))
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_expand_dims_squeeze_shapes_aliases_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1, 3])
        assert tf.expand_dims(x, -1).shape.as_list() == [None, 1, 3, 1]
        assert tf.expand_dims(x, dim=0).shape.as_list() == [1, None, 1, 3]
        assert tf.squeeze(x, [1]).shape.as_list() == [None, 3]
        assert tf.squeeze(x, squeeze_dims=[-2]).shape.as_list() == [None, 3]
        assert tf.squeeze(x).shape.ndims is None  # the unknown dim may or may not be 1
        assert tf.squeeze(x, [0]).shape.as_list() == [1, 3]
        with pytest.raises(ValueError):
            tf.expand_dims(tf.ones([2, 3]), 3)
        with pytest.raises(ValueError):
            tf.expand_dims(tf.ones([2, 3]), -4)
        with pytest.raises(ValueError):
            tf.squeeze(tf.ones([2, 1]), [0])
        with pytest.raises(ValueError):
            tf.expand_dims(tf.ones([2]))
        out = tf.squeeze(x, [0])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {x: np.ones((2, 1, 3))})
            assert s.run(tf.squeeze(x), {x: np.ones((1, 1, 3))}).shape == (3,)


# ---------------------------------------------------------------------------------------------
# concat / stack / unstack / split
# ---------------------------------------------------------------------------------------------


@PROPS
@given(data=st.data())
def test_concat_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = list(data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=3)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 4))
    xs = []
    for _ in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        xs.append(_values(data, dtype, tuple(s)))
    with tf.Graph().as_default():
        ps = [tf.placeholder(dtype, x.shape) for x in xs]
        out = tf.concat(ps, axis)
        expected = np.concatenate(xs, axis)
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out, dict(zip(ps, xs)))
    np.testing.assert_array_equal(got, expected)


def test_concat_shape_inference_and_errors():
    with tf.Graph().as_default():
        assert tf.concat([tf.ones([2, 3]), tf.placeholder(tf.float32, [None, 3])], 0).shape.as_list() == [None, 3]
        assert tf.concat([tf.ones([2, 3]), tf.placeholder(tf.float32, [None, None])], 1).shape.as_list() == [2, None]
        assert tf.concat([tf.ones([2, 3]), tf.ones([2, 1])], tf.placeholder(tf.int32, [])).shape.as_list() == [
            None, None]
        with pytest.raises(ValueError) as e:
            tf.concat([tf.ones([2, 3]), tf.ones([3, 3])], 1, name="cat")
        assert "cat" in str(e.value) and "[2,3]" in str(e.value) and "[3,3]" in str(e.value)
        with pytest.raises(ValueError):
            tf.concat([tf.ones([2, 3]), tf.ones([3])], 0)
        with pytest.raises(ValueError):
            tf.concat([tf.ones([2, 3]), tf.ones([3, 3])], 2)
        with pytest.raises(TypeError):
            tf.concat([tf.ones([2, 3]), tf.ones([2, 3], tf.int32)], 0)
        a = tf.placeholder(tf.float32, [None, None])
        out = tf.concat([a, tf.ones([2, 2])], 0)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {a: np.ones((1, 3))})
            np.testing.assert_array_equal(s.run(tf.concat([tf.constant([1]), tf.constant([2, 3])], -1)), [1, 2, 3])
            np.testing.assert_array_equal(s.run(tf.concat([tf.constant([4, 5])], 0)), [4, 5])


@PROPS
@given(data=st.data())
def test_stack_and_unstack_match_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
    n = data.draw(st.integers(1, 4))
    xs = [_values(data, dtype, shape) for _ in range(n)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    with tf.Graph().as_default():
        ps = [tf.placeholder(dtype, shape) for _ in xs]
        out = tf.stack(ps, axis)
        expected = np.stack(xs, axis)
        assert out.shape.as_list() == list(expected.shape)
        parts = tf.unstack(out, axis=axis)
        assert len(parts) == n
        assert [p.shape.as_list() for p in parts] == [list(shape)] * n
        with tf.Session() as s:
            got, got_parts = s.run([out, parts], dict(zip(ps, xs)))
    np.testing.assert_array_equal(got, expected)
    for g, x in zip(got_parts, xs):
        np.testing.assert_array_equal(g, x)


def test_stack_unstack_shapes_and_errors():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3])
        b = tf.placeholder(tf.float32, [2, None])
        assert tf.stack([a, b], 1).shape.as_list() == [2, 2, 3]
        assert [t.shape.as_list() for t in tf.unstack(tf.ones([4, 2]), axis=1)] == [[4], [4]]
        assert len(tf.unstack(a, num=5)) == 5
        with pytest.raises(ValueError) as e:
            tf.stack([tf.ones([2, 3]), tf.ones([3, 3])], name="stk")
        assert "[2,3]" in str(e.value) and "[3,3]" in str(e.value)
        with pytest.raises(ValueError):
            tf.stack([tf.ones([2, 3]), tf.ones([2, 3])], 3)
        with pytest.raises(TypeError):
            tf.stack([tf.ones([2]), tf.ones([2], tf.int32)])
        with pytest.raises(ValueError):
            tf.unstack(a)
        with pytest.raises(ValueError):
            tf.unstack(tf.ones([2, 3]), axis=2)
        np.testing.assert_array_equal(run(lambda: tf.stack([1, 2, 3])), [1, 2, 3])


@PROPS
@given(data=st.data())
def test_split_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = list(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    d = shape[axis]
    x = _values(data, dtype, tuple(shape))
    if data.draw(st.booleans()):
        num = data.draw(st.sampled_from([k for k in range(1, d + 1) if d % k == 0]))
        arg = num
        expected = np.split(x, num, axis)
    else:
        sizes = data.draw(st.lists(st.integers(0, d), min_size=1, max_size=4).filter(lambda v: sum(v) <= d))
        sizes[-1] += d - sum(sizes)
        arg = list(sizes)
        if data.draw(st.booleans()):
            arg[data.draw(st.integers(0, len(arg) - 1))] = -1
        expected = np.split(x, np.cumsum(sizes)[:-1], axis)
    static, got = _run_feed(lambda p: tf.split(p, arg, axis), dtype, x)
    assert len(got) == len(expected)
    for st_, g, e in zip(static, got, expected):
        assert st_ == list(e.shape)
        np.testing.assert_array_equal(g, e)


def test_split_shapes_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        assert [t.shape.as_list() for t in tf.split(x, 2, 1)] == [[None, 2], [None, 2]]
        assert [t.shape.as_list() for t in tf.split(x, [1, 3], axis=1)] == [[None, 1], [None, 3]]
        assert [t.shape.as_list() for t in tf.split(tf.ones([5, 3]), [2, -1])] == [[2, 3], [3, 3]]
        with pytest.raises(ValueError):
            tf.split(tf.ones([5, 3]), 2)
        with pytest.raises(ValueError):
            tf.split(tf.ones([5, 3]), [2, 4])
        out = tf.split(x, 3, 0)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {x: np.ones((4, 4))})


# ---------------------------------------------------------------------------------------------
# slice / strided_slice / __getitem__
# ---------------------------------------------------------------------------------------------


@PROPS
@given(data=st.data())
def test_slice_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    x = _values(data, dtype, shape)
    begin = [data.draw(st.integers(0, d)) for d in shape]
    size = [data.draw(st.sampled_from([-1, data.draw(st.integers(0, d - b))])) for d, b in zip(shape, begin)]
    static, got = _run_feed(lambda p: tf.slice(p, begin, size), dtype, x)
    expected = x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_slice_shapes_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.slice(x, [1, 1], [-1, 2]).shape.as_list() == [None, 2]
        assert tf.slice(x, [0, 0], [2, -1]).shape.as_list() == [2, 3]
        assert tf.slice(x, tf.placeholder(tf.int32, [2]), [2, 1]).shape.as_list() == [2, 1]
        # TensorFlow raises when run; ferroflow already when building (the arguments are constants).
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            out = tf.slice(tf.ones([5, 3]), [1, 1], [2, 3])
            with tf.Session() as s:
                s.run(out)
        b = tf.placeholder(tf.int32, [2])
        out = tf.slice(tf.ones([5, 3]), b, [2, 3])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {b: [1, 1]})
        with pytest.raises(ValueError):
            tf.slice(tf.ones([5, 3]), [1], [2])


def _index_tuple(idx):
    return idx if isinstance(idx, tuple) else (idx,)


@pytest.mark.parametrize("partial", [False, True], ids=["static", "unknown_dims"])
@PROPS
@given(data=st.data())
def test_getitem_matches_numpy_basic_indexing(partial, data):
    dtype = data.draw(st.sampled_from(["float32", "int32", "bool", "float64", "int8"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    x = _values(data, dtype, shape)
    idx = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    assume(_index_tuple(idx) != ())
    expected = x[idx]
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, [None] * len(shape) if partial else shape)
        out = p[idx]
        static = out.shape.as_list()
        with tf.Session() as s:
            got = s.run(out, {p: x})
    np.testing.assert_array_equal(got, expected)
    assert got.shape == expected.shape
    if partial:
        assert len(static) == expected.ndim
        assert all(a is None or a == b for a, b in zip(static, expected.shape))
    else:
        assert static == list(expected.shape)


@FEW
@given(data=st.data())
def test_strided_slice_with_masks_matches_getitem(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    n = len(shape)
    begin = [data.draw(st.integers(-d, d)) for d in shape]
    end = [data.draw(st.integers(-d - 1, d + 1)) for d in shape]
    strides = [data.draw(st.sampled_from([1, 2, -1, -2, 3])) for _ in shape]
    bm = data.draw(st.integers(0, 2 ** n - 1))
    em = data.draw(st.integers(0, 2 ** n - 1))
    idx = tuple(slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i])
                for i in range(n))
    got = run(lambda: tf.strided_slice(tf.constant(x), begin, end, strides, begin_mask=bm, end_mask=em))
    np.testing.assert_array_equal(got, x[idx])


def test_strided_slice_shrink_and_new_axis_masks():
    x = np.arange(24).reshape(2, 3, 4).astype(np.float32)
    with tf.Graph().as_default():
        c = tf.constant(x)
        a = tf.strided_slice(c, [1, 0, 0], [2, 3, 4], [1, 1, 1], shrink_axis_mask=1)
        b = tf.strided_slice(c, [0, 0], [0, 0], [1, 1], ellipsis_mask=1, new_axis_mask=2)
        assert a.shape.as_list() == [3, 4]
        assert b.shape.as_list() == [2, 3, 4, 1]
        with tf.Session() as s:
            ga, gb = s.run([a, b])
    np.testing.assert_array_equal(ga, x[1])
    np.testing.assert_array_equal(gb, x[..., None])


def test_getitem_specific_forms():
    x = np.arange(60).reshape(3, 4, 5).astype(np.float32)
    with tf.Graph().as_default():
        t = tf.constant(x)
        i = tf.placeholder(tf.int32, [])
        outs = [t[1], t[-1], t[:, 1], t[..., 2], t[1, ..., ::-2], t[tf.newaxis, :, None, 1], t[::-1, 1:3, ::2],
                t[-2:, :-1], t[i], t[:, i:i + 2], t[..., tf.newaxis], t[2:0:-1, ::-3], t[5:], t[:, -100:100]]
        assert outs[0].shape.as_list() == [4, 5]
        assert outs[8].shape.as_list() == [4, 5]
        assert outs[9].shape.as_list() == [3, None, 5]
        with tf.Session() as s:
            got = s.run(outs, {i: 2})
    expected = [x[1], x[-1], x[:, 1], x[..., 2], x[1, ..., ::-2], x[None, :, None, 1], x[::-1, 1:3, ::2],
                x[-2:, :-1], x[2], x[:, 2:4], x[..., None], x[2:0:-1, ::-3], x[5:], x[:, -100:100]]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_getitem_errors():
    with tf.Graph().as_default():
        t = tf.ones([3, 4])
        with pytest.raises(ValueError):
            t[5]
        with pytest.raises(ValueError):
            t[1, 2, 3]
        with pytest.raises(TypeError):
            t[1.5]
        with pytest.raises(TypeError):
            t["a"]
        with pytest.raises(ValueError):
            t[::0]
        p = tf.placeholder(tf.float32, [None])
        i = tf.placeholder(tf.int32, [])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(p[3], {p: np.ones(2)})
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(t[i], {i: 7})


# ---------------------------------------------------------------------------------------------
# gather / gather_nd / tile / pad / one_hot
# ---------------------------------------------------------------------------------------------


@PROPS
@given(data=st.data())
def test_gather_with_axis_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = _values(data, dtype, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    idx_dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    idx = data.draw(hnp.arrays(idx_dtype, ishape, elements=st.integers(0, shape[axis] - 1)))
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        pi = tf.placeholder(tf.as_dtype(idx_dtype), ishape)
        out = tf.gather(p, pi, axis=axis)
        expected = np.take(x, idx, axis=axis)
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out, {p: x, pi: idx})
    np.testing.assert_array_equal(got, expected)


def test_gather_shapes_and_errors():
    with tf.Graph().as_default():
        params = tf.placeholder(tf.float32, [None, 3])
        ids = tf.placeholder(tf.int32, [None, 2])
        assert tf.gather(params, ids).shape.as_list() == [None, 2, 3]
        assert tf.gather(params, ids, axis=1).shape.as_list() == [None, None, 2]
        assert tf.gather(tf.ones([5, 3]), [[1, 2]], axis=1).shape.as_list() == [5, 1, 2]
        with pytest.raises(ValueError):
            tf.gather(tf.ones([5, 3]), [1], axis=2)
        with pytest.raises(TypeError):
            tf.gather(tf.ones([5, 3]), tf.constant([1.0]))
        with tf.Session() as s:
            for bad in ([1, 7], [1, -1]):
                with pytest.raises(tf.errors.InvalidArgumentError, match="not in"):
                    s.run(tf.gather(tf.ones([5, 3]), bad))


@PROPS
@given(data=st.data())
def test_gather_nd_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = _values(data, dtype, shape)
    k = data.draw(st.integers(1, len(shape)))
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    idx = np.stack([data.draw(hnp.arrays(np.int32, batch, elements=st.integers(0, shape[j] - 1)))
                    for j in range(k)], axis=-1)
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        out = tf.gather_nd(p, tf.constant(idx))
        expected = x[tuple(np.moveaxis(idx, -1, 0))]
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    np.testing.assert_array_equal(got, expected)


def test_gather_nd_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.gather_nd(tf.ones([5, 3]), [[1, 2, 1]])
        out = tf.gather_nd(tf.ones([5, 3]), [[1, 5]])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out)
        assert tf.gather_nd(tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.int32, [4, 1])).shape.as_list() \
            == [4, 3]


@PROPS
@given(data=st.data())
def test_tile_matches_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    x = _values(data, dtype, shape)
    reps = [data.draw(st.integers(0, 3)) for _ in shape]
    static, got = _run_feed(lambda p: tf.tile(p, reps), dtype, x)
    expected = np.tile(x, reps)
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_tile_shapes_and_errors():
    with tf.Graph().as_default():
        assert tf.tile(tf.placeholder(tf.float32, [None, 3]), [2, 2]).shape.as_list() == [None, 6]
        with pytest.raises(ValueError):
            tf.tile(tf.ones([5, 3]), [2])
        m = tf.placeholder(tf.int32, [2])
        out = tf.tile(tf.ones([2, 2]), m)
        assert out.shape.as_list() == [None, None]
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {m: [1, -1]})


@PROPS
@given(data=st.data())
def test_pad_modes_match_numpy(data):
    dtype = data.draw(st.sampled_from(["float32", "int32", "float64", "int64", "uint8", "bool"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = _values(data, dtype, shape)
    mode = data.draw(st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC", "constant", "reflect", "symmetric"]))
    limit = {"CONSTANT": 3, "REFLECT": None, "SYMMETRIC": None}[mode.upper()]
    pads = []
    for d in shape:
        hi = limit if limit is not None else (d - 1 if mode.upper() == "REFLECT" else d)
        pads.append([data.draw(st.integers(0, hi)), data.draw(st.integers(0, hi))])
    cv = 0
    if mode.upper() == "CONSTANT" and dtype != "bool" and data.draw(st.booleans()):
        cv = 7
    static, got = _run_feed(lambda p: tf.pad(p, pads, mode=mode, constant_values=cv), dtype, x)
    if mode.upper() == "CONSTANT":
        expected = np.pad(x, pads, mode="constant", constant_values=cv)
    else:
        expected = np.pad(x, pads, mode=mode.lower())
    assert static == list(expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_pad_shapes_and_errors():
    with tf.Graph().as_default():
        assert tf.pad(tf.placeholder(tf.float32, [None, 3]), [[1, 1], [2, 0]]).shape.as_list() == [None, 5]
        assert tf.pad(tf.ones([2, 3]), tf.placeholder(tf.int32, [2, 2])).shape.as_list() == [None, None]
        with pytest.raises(ValueError):
            tf.pad(tf.ones([2, 3]), [[1, 1]])
        with pytest.raises(ValueError):
            tf.pad(tf.ones([2, 3]), [[1, 1], [-1, 2]])
        with pytest.raises(ValueError):
            tf.pad(tf.ones([2, 3]), [[1, 1], [2, 0]], "BAD")
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(tf.pad(tf.ones([2, 3]), [[1, 1], [3, 0]], "REFLECT"))
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(tf.pad(tf.ones([2, 3]), [[1, 1], [4, 0]], "SYMMETRIC"))


@FEW
@given(data=st.data())
def test_one_hot_matches_numpy(data):
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    depth = data.draw(st.integers(1, 5))
    idx = data.draw(hnp.arrays(np.int32, ishape, elements=st.integers(-1, depth + 1)))
    axis = data.draw(st.integers(-1, len(ishape)))
    on, off, dtype = data.draw(st.sampled_from([(None, None, None), (5, -1, None), (2.5, 0.5, tf.float64),
                                                (True, False, tf.bool)]))
    with tf.Graph().as_default():
        out = tf.one_hot(tf.constant(idx), depth, on_value=on, off_value=off, axis=axis, dtype=dtype)
        oh = np.arange(depth) == idx[..., None]
        on_v = 1 if on is None else on
        off_v = 0 if off is None else off
        expected = np.where(oh, on_v, off_v)
        expected = np.moveaxis(expected, -1, axis)
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out)
    if on is None:
        assert got.dtype == np.float32
    elif isinstance(on, int) and not isinstance(on, bool):
        assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


def test_one_hot_shapes_and_errors():
    with tf.Graph().as_default():
        assert tf.one_hot(tf.placeholder(tf.int32, [None]), 4).shape.as_list() == [None, 4]
        assert tf.one_hot(tf.placeholder(tf.int64, [None, 2]), 3, axis=1).shape.as_list() == [None, 3, 2]
        with pytest.raises(TypeError):
            tf.one_hot([0, 2], 3, on_value=5.0, off_value=tf.constant(-1))
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            with tf.Session() as s:
                s.run(tf.one_hot([0, 2], 3, axis=2))


# ---------------------------------------------------------------------------------------------
# shape / size / rank / stop_gradient
# ---------------------------------------------------------------------------------------------


@FEW
@given(data=st.data())
def test_shape_size_rank(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    x = np.zeros(shape, np.float32)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None] * len(shape))
        outs = [tf.shape(p), tf.size(p), tf.rank(p), tf.shape(p, out_type=tf.int64), tf.size(p, out_type=tf.int64)]
        assert [o.dtype for o in outs] == [tf.int32, tf.int32, tf.int32, tf.int64, tf.int64]
        assert outs[0].shape.as_list() == [len(shape)]
        assert outs[1].shape.as_list() == [] and outs[2].shape.as_list() == []
        with tf.Session() as s:
            got = s.run(outs, {p: x})
    np.testing.assert_array_equal(got[0], shape)
    assert got[1] == x.size and got[2] == len(shape)
    np.testing.assert_array_equal(got[3], shape)
    assert got[3].dtype == np.int64


def test_shape_of_unknown_rank_and_static_values():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        assert tf.shape(p).shape.as_list() == [None]
        assert tf.get_static_value(tf.shape(tf.ones([2, 3]))).tolist() == [2, 3]
        assert tf.get_static_value(tf.rank(tf.placeholder(tf.float32, [None, 3]))) == 2
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(tf.shape(p), {p: np.ones((2, 5, 1))}), [2, 5, 1])


def test_stop_gradient_passes_values():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3])
        out = tf.stop_gradient(p * 2)
        assert out.shape.as_list() == [None, 3]
        assert out.op.type == "StopGradient"
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(out, {p: x}), 2 * x)


# ---------------------------------------------------------------------------------------------
# fill / zeros / ones / zeros_like / ones_like / range / linspace
# ---------------------------------------------------------------------------------------------


@FEW
@given(data=st.data())
def test_fill_zeros_ones_and_likes(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    assume(dtype != "bfloat16" or BF16_SCALAR_FEED_OK)  # scalar bfloat16 constants: see test_ops_math
    shape = list(data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
    npd = np_dtype(dtype)
    with tf.Graph().as_default():
        big = [40, 30]  # past the constant-folding limit: built with a Fill op
        outs = [tf.zeros(shape, dtype), tf.ones(shape, dtype), tf.zeros(big, dtype), tf.ones(big, dtype)]
        src = tf.placeholder(tf.float32, [None] * len(shape))
        outs += [tf.zeros_like(src, dtype=dtype), tf.ones_like(src, dtype=dtype)]
        outs += [tf.zeros_like(tf.ones(shape, dtype)), tf.ones_like(tf.zeros(shape, dtype))]
        fill_value = tf.constant(3, tf.bfloat16) if dtype == "bfloat16" else (np.array(3, npd) if dtype != "bool" else True)
        outs += [tf.fill(shape, fill_value)]
        assert all(o.dtype == tf.as_dtype(dtype) for o in outs)
        assert [o.shape.as_list() for o in outs[:4]] == [shape, shape, big, big]
        assert outs[8].shape.as_list() == shape
        with tf.Session() as s:
            got = s.run(outs, {src: np.zeros(shape, np.float32)})
    np.testing.assert_array_equal(got[0], np.zeros(shape, npd))
    np.testing.assert_array_equal(got[1], np.ones(shape, npd))
    np.testing.assert_array_equal(got[2], np.zeros(big, npd))
    np.testing.assert_array_equal(got[3], np.ones(big, npd))
    np.testing.assert_array_equal(got[4], np.zeros(shape, npd))
    np.testing.assert_array_equal(got[5], np.ones(shape, npd))
    np.testing.assert_array_equal(got[6], np.zeros(shape, npd))
    np.testing.assert_array_equal(got[7], np.ones(shape, npd))
    np.testing.assert_array_equal(got[8], np.full(shape, 3 if dtype != "bool" else True, npd))
    for g in got:
        assert g.dtype == fetch_dtype(dtype)


def test_sources_with_dynamic_shapes_and_errors():
    with tf.Graph().as_default():
        d = tf.placeholder(tf.int32, [2])
        z = tf.zeros(d)
        f = tf.fill(d, 7.0)
        assert z.shape.as_list() == [None, None] and f.shape.as_list() == [None, None]
        zl = tf.zeros_like(tf.constant(["a", "b"]))
        ol = tf.ones_like(tf.constant([True, False]))
        with pytest.raises(ValueError):
            tf.fill([2, 3], [7])
        with pytest.raises(ValueError):
            tf.fill([2, -3], 7)
        with tf.Session() as s:
            gz, gf, gzl, gol = s.run([z, f, zl, ol], {d: [2, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(f, {d: [2, -1]})
    np.testing.assert_array_equal(gz, np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(gf, np.full((2, 3), 7.0, np.float32))
    np.testing.assert_array_equal(gzl, [b"", b""])
    np.testing.assert_array_equal(gol, [True, True])


@PROPS
@given(data=st.data())
def test_range_matches_numpy(data):
    kind = data.draw(st.sampled_from(["int", "float", "int64"]))
    if kind == "float":
        start = data.draw(normal_floats(-10, 10, width=32))
        delta = data.draw(st.sampled_from([0.25, 0.5, 1.5, -0.25, -1.0]))
        limit = start + delta * data.draw(st.integers(0, 12))
        dtype = None
    else:
        start = data.draw(st.integers(-10, 10))
        delta = data.draw(st.integers(-4, 4).filter(bool))
        limit = data.draw(st.integers(-20, 20))
        assume((limit - start) * delta >= 0)
        dtype = tf.int64 if kind == "int64" else None
    with tf.Graph().as_default():
        out = tf.range(start, limit, delta, dtype=dtype)
        if kind == "float":
            expected = np.arange(np.float32(start), np.float32(limit), np.float32(delta), dtype=np.float32)
            assert out.dtype == tf.float32
        else:
            expected = np.arange(start, limit, delta)
            assert out.dtype == (tf.int64 if kind == "int64" else tf.int32)
        assert out.shape.as_list() == [len(expected)]
        with tf.Session() as s:
            got = s.run(out)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_range_forms_and_errors():
    got = run(lambda: [tf.range(5), tf.range(1, 10, 3), tf.range(10, 1, -3), tf.range(1.5), tf.range(0.0, 1.0, 0.25)])
    np.testing.assert_array_equal(got[0], np.arange(5))
    np.testing.assert_array_equal(got[1], [1, 4, 7])
    np.testing.assert_array_equal(got[2], [10, 7, 4])
    np.testing.assert_array_equal(got[3], [0.0, 1.0])
    np.testing.assert_array_equal(got[4], [0.0, 0.25, 0.5, 0.75])
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.range(1, 5, 0)
        with pytest.raises(ValueError):
            tf.range(5, 1)
        n = tf.placeholder(tf.int32, [])
        out = tf.range(n)
        assert out.shape.as_list() == [None]
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(out, {n: 3}), [0, 1, 2])
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(tf.range(0, n, -1), {n: 3})


@FEW
@given(start=normal_floats(-10, 10, width=32), stop=normal_floats(-10, 10, width=32), num=st.integers(1, 20))
def test_linspace_matches_numpy(start, stop, num):
    with tf.Graph().as_default():
        out = tf.linspace(np.float32(start), np.float32(stop), num)
        assert out.shape.as_list() == [num]
        with tf.Session() as s:
            got = s.run(out)
    expected = np.linspace(np.float32(start), np.float32(stop), num)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert got[0] == np.float32(start)
    if num > 1:
        assert got[-1] == np.float32(stop)


def test_linspace_dynamic_num_and_errors():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        out = tf.lin_space(tf.constant(0.0, tf.float64), 1.0, n)
        assert out.shape.as_list() == [None]
        assert out.dtype == tf.float64
        with tf.Session() as s:
            np.testing.assert_allclose(s.run(out, {n: 5}), np.linspace(0.0, 1.0, 5))
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {n: 0})


# ---------------------------------------------------------------------------------------------
# string tensors through the array ops
# ---------------------------------------------------------------------------------------------


def test_array_ops_on_strings():
    m = [["a", "b"], ["c", "d"]]
    with tf.Graph().as_default():
        v = tf.constant(["a", "b", "c"])
        outs = [
            tf.gather(v, [2, 0]), tf.concat([v, tf.constant(["x"])], 0), tf.stack([tf.constant("a"), "b"]),
            tf.tile(v[:2], [2]), tf.transpose(tf.constant(m)), tf.constant(m)[1, ::-1],
            tf.where([True, False], tf.constant(["a", "b"]), tf.constant(["c", "d"])), tf.reverse(v, [0]),
            tf.pad(v[:2], [[1, 1]]), tf.expand_dims(v, 0), tf.slice(v, [1], [2]), tf.fill([2], "x"),
            tf.identity(v), tf.gather_nd(tf.constant(m), [[1, 0]]), tf.reshape(tf.constant(m), [4]),
            tf.one_hot([0, 1], 2, on_value="y", off_value="n"), tf.shape(v), tf.zeros([2], tf.string),
        ]
        parts = tf.split(v, 3) + tf.unstack(v)
        with tf.Session() as s:
            got = s.run(outs)
            got_parts = s.run(parts)
    b = np.array
    expected = [
        [b"c", b"a"], [b"a", b"b", b"c", b"x"], [b"a", b"b"], [b"a", b"b", b"a", b"b"],
        [[b"a", b"c"], [b"b", b"d"]], [b"d", b"c"], [b"a", b"d"], [b"c", b"b", b"a"], [b"", b"a", b"b", b""],
        [[b"a", b"b", b"c"]], [b"b", b"c"], [b"x", b"x"], [b"a", b"b", b"c"], [b"c"], [b"a", b"b", b"c", b"d"],
        [[b"y", b"n"], [b"n", b"y"]], [3], [b"", b""],
    ]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, b(e, dtype=object if isinstance(e[0], (bytes, list)) else None))
    assert [list(p) for p in got_parts[:3]] == [[b"a"], [b"b"], [b"c"]]
    assert list(got_parts[3:]) == [b"a", b"b", b"c"]


def test_large_gather_slice_pad_tile_concat():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(400, 300)).astype(np.float32)
    idx = rng.integers(0, 400, size=500).astype(np.int32)
    with tf.Graph().as_default():
        t = tf.constant(x)
        outs = [tf.gather(t, idx), tf.gather(t, idx[:250] % 300, axis=1), t[::-3, 5:-7:2], tf.pad(t, [[3, 1], [0, 2]]),
                tf.pad(t, [[2, 2], [1, 3]], "REFLECT"), tf.tile(t, [2, 1]), tf.concat([t, t[:, :17]], 1),
                tf.stack([t, -t], 1), tf.one_hot(idx, 400)]
        with tf.Session() as s:
            got = s.run(outs)
    expected = [x[idx], x[:, idx[:250] % 300], x[::-3, 5:-7:2], np.pad(x, [[3, 1], [0, 2]]),
                np.pad(x, [[2, 2], [1, 3]], "reflect"), np.tile(x, [2, 1]), np.concatenate([x, x[:, :17]], 1),
                np.stack([x, -x], 1), np.eye(400, dtype=np.float32)[idx]]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=str(i))


def test_shape_inference_from_partly_known_arguments():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        x = tf.placeholder(tf.float32, [4, 3])
        assert tf.reshape(x, tf.stack([n, 3])).shape.as_list() == [4, 3]
        assert tf.reshape(x, tf.shape(tf.placeholder(tf.float32, [None, 12]))).shape.as_list() == [1, 12]
        assert tf.gather(tf.placeholder(tf.float32, [5, 3]), tf.placeholder(tf.int32, [2]),
                         axis=tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
        assert tf.tile(tf.placeholder(tf.float32), [2, 3]).shape.as_list() == [None, None]
        m = tf.boolean_mask(tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.bool, [None]))
        assert m.shape.as_list() == [None, 3]
        with pytest.raises(ValueError):
            tf.reshape(x, tf.stack([n, 5]))
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, [None, 3])
        msk = tf.placeholder(tf.bool, [None])
        out = tf.boolean_mask(t, msk)
        with tf.Session() as s:
            got = s.run(out, {t: np.arange(6.0).reshape(2, 3), msk: [False, True]})
    np.testing.assert_array_equal(got, [[3.0, 4.0, 5.0]])


def _unique_reference(x):
    """First-appearance unique and index map, by value equality (NaN never equal)."""
    y, idx = [], []
    for v in x.tolist():
        pos = next((k for k, u in enumerate(y) if u == v), None)
        if pos is None:
            y.append(v)
            pos = len(y) - 1
        idx.append(pos)
    return y, idx


@PROPS
@given(data=st.data())
def test_unique_matches_first_appearance_order(data):
    dtype = data.draw(st.sampled_from(["int32", "int64", "uint8", "float32", "float64"]))
    n = data.draw(st.integers(0, 12))
    # Few distinct values so repeats are common.
    values = data.draw(st.lists(st.sampled_from([0, 1, 2, 5, 7]), min_size=n, max_size=n))
    x = np.array(values, dtype=np_dtype(dtype))
    out_idx = data.draw(st.sampled_from([tf.int32, tf.int64]))
    got = run(lambda f: tf.unique(f["x"], out_idx=out_idx), {"x": (dtype, [None], x)})
    y, idx = _unique_reference(x)
    np.testing.assert_array_equal(got.y, np.array(y, dtype=x.dtype))
    np.testing.assert_array_equal(got.idx, np.array(idx))
    assert got.idx.dtype == out_idx.as_numpy_dtype
    np.testing.assert_array_equal(got.y[got.idx], x)


def test_unique_floats_strings_and_errors():
    y, idx = run(lambda: tf.unique([0.0, -0.0, float("nan"), 1.5, float("nan")]))
    assert len(y) == 4 and list(idx) == [0, 0, 1, 2, 3]
    y, idx = run(lambda: tf.unique(tf.constant([b"b", b"a", b"b"])))
    assert list(y) == [b"b", b"a"] and list(idx) == [0, 1, 0]
    with tf.Graph().as_default():
        u = tf.unique(tf.constant([3, 3, 4], tf.int64), name="u")
        assert u.y.op.type == "Unique" and u.y.op.name == "u"
        assert u.y.shape.as_list() == [None] and u.idx.shape.as_list() == [3]
        with pytest.raises(ValueError, match="rank 1"):
            tf.unique([[1, 2]])
        with pytest.raises(TypeError, match="out_idx"):
            tf.unique([1, 2], out_idx=tf.float32)
        p = tf.placeholder(tf.int32)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="1D vector"):
                sess.run(tf.unique(p), {p: [[1, 2]]})


def test_cast_sparse_tensor_and_indexed_slices():
    # TF1 speech programs do tf.cast(decoded, tf.int64) on ctc_greedy_decoder's SparseTensor before
    # tf.edit_distance; TensorFlow casts the values and keeps indices and dense_shape.
    sp = tf.SparseTensor([[0, 0], [1, 2]], [1, 2], [2, 3])
    as_float = tf.cast(sp, tf.float32)
    as_int64 = tf.to_int64(sp)
    assert isinstance(as_float, tf.SparseTensor) and as_float.dtype == tf.float32
    assert as_float.indices is sp.indices and as_float.dense_shape is sp.dense_shape
    assert as_float.values.op.name == "Cast"
    assert tf.cast(sp, tf.int32).values is sp.values
    sl = tf.IndexedSlices(tf.constant([[1, 2]]), tf.constant([1]), tf.constant([3, 2]))
    sl_cast = tf.cast(sl, tf.float64)
    assert isinstance(sl_cast, tf.IndexedSlices) and sl_cast.indices is sl.indices
    dist = tf.edit_distance(as_int64, tf.cast(tf.SparseTensor([[0, 0]], [1], [2, 3]), tf.int64))
    with tf.Session() as sess:
        v, s, d = sess.run([as_float, sl_cast, dist])
    np.testing.assert_array_equal(v.values, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(v.indices, [[0, 0], [1, 2]])
    np.testing.assert_array_equal(s.values, np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(d, [0.0, np.inf])


def test_tile_by_multiples_known_in_part_keeps_the_known_dims():
    # TF's shape function: tf.tile(w, [batch, 1, 1]) with a dynamic batch keeps w's other dims (the CapsNet and
    # pointer-network programs feed such tiles to matmul and LSTM cells, which need them).
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.zeros([1, 3, 5])
    batch = tf.shape(x)[0]
    assert tf.tile(w, [batch, 1, 1]).shape.as_list() == [None, 3, 5]
    assert tf.tile(w, [batch, 2, batch]).shape.as_list() == [None, 6, None]
    assert tf.tile(tf.zeros([1, 1]), tf.stack([batch, 1])).shape.as_list() == [None, 1]
    with tf.Session() as sess:
        assert sess.run(tf.tile(w, [batch, 1, 1]), {x: np.zeros((2, 4))}).shape == (2, 3, 5)
