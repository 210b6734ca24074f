"""tf.nn ops against numpy: activations, softmax family, cross-entropies, bias_add, normalisation,
dropout, embedding_lookup, zero_fraction, in_top_k and top_k; static shapes and error cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferroflow as tf
from _optest import FEW, FLOATS, PROPS, arrays, as_dtype_values, assert_close, assume_feedable, run

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x):
    return np.logaddexp(0.0, x)


ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "selu": (tf.nn.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "softplus": (tf.nn.softplus, _softplus),
    # alpha is a float32 attr in TensorFlow, also for float64 inputs.
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, float(np.float32(0.2)) * x)),
    "leaky_relu_0.01": (lambda x: tf.nn.leaky_relu(x, alpha=0.01),
                        lambda x: np.where(x > 0, x, float(np.float32(0.01)) * x)),
    "sigmoid": (tf.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (tf.nn.tanh, np.tanh),
}


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
@PROPS
@given(data=st.data())
def test_activations_match_numpy(op, data):
    fn, ref = ACTIVATIONS[op]
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    x = data.draw(arrays(dtype, shape, lo=-8, hi=8))
    assume_feedable(dtype, x)
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        out = fn(p)
        assert out.shape.as_list() == list(shape)
        assert out.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    expected = as_dtype_values(ref(x.astype(np.float64)), dtype)
    rtol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6, "float64": 1e-12}[dtype]
    assert_close(got, expected, dtype, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("fn", [tf.nn.relu, tf.nn.relu6])
def test_relu_on_integers(fn):
    x = np.array([-7, 0, 3, 9], np.int32)
    got = run(lambda: fn(tf.constant(x)))
    np.testing.assert_array_equal(got, np.clip(x, 0, 6 if fn is tf.nn.relu6 else None))


def test_leaky_relu_alpha_is_a_float32_attr():
    got = run(lambda: tf.nn.leaky_relu(tf.constant([-1.0, 1.0], tf.float64), alpha=0.3))
    np.testing.assert_array_equal(got, [-float(np.float32(0.3)), 1.0])


def test_softplus_extremes_and_leaky_relu_of_ints():
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
    got = run(lambda: [tf.nn.softplus(x), tf.nn.leaky_relu(tf.constant([-2, 3]))])
    np.testing.assert_allclose(got[0], _softplus(x.astype(np.float64)), rtol=1e-6, atol=1e-40)
    assert got[1].dtype == np.float32
    np.testing.assert_allclose(got[1], [-0.4, 3.0], rtol=1e-6)


def test_activations_reject_integers_where_tf_does():
    with tf.Graph().as_default():
        for fn in (tf.nn.elu, tf.nn.selu, tf.nn.softplus, tf.nn.sigmoid, tf.nn.tanh, tf.nn.softmax):
            with pytest.raises(TypeError):
                fn(tf.constant([1, 2]))


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------------------------


def _np_softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    m = x - np.max(x, axis=axis, keepdims=True)
    return m - np.log(np.sum(np.exp(m), axis=axis, keepdims=True))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@PROPS
@given(data=st.data())
def test_softmax_matches_numpy(op, data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    x = data.draw(arrays(dtype, shape, lo=-20, hi=20))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    fn = getattr(tf.nn, op)
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        out = fn(p) if axis is None else fn(p, axis=axis)
        assert out.shape.as_list() == list(shape)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    ref = _np_softmax if op == "softmax" else _np_log_softmax
    expected = ref(x, -1 if axis is None else axis)
    tol = {"float16": 5e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert_close(got, expected.astype(x.dtype), dtype, rtol=tol, atol=tol * (10 if op == "log_softmax" else 1))


def test_softmax_dim_alias_large_logits_and_errors():
    x = np.array([[1000.0, 1000.0, -1000.0], [0.0, 1.0, 2.0]], np.float32)
    with tf.Graph().as_default():
        outs = [tf.nn.softmax(x), tf.nn.softmax(x, dim=0), tf.nn.log_softmax(x), tf.math.softmax(x, axis=-1)]
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):  # TF raises InvalidArgumentError
            tf.nn.softmax(x, axis=2)
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            tf.nn.log_softmax(x, axis=-3)
        with pytest.raises((ValueError, TypeError)):
            tf.nn.softmax(x, axis=0, dim=0)
        with tf.Session() as s:
            got = s.run(outs)
    np.testing.assert_allclose(got[0], _np_softmax(x), rtol=1e-6)
    np.testing.assert_allclose(got[1], _np_softmax(x, 0), rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(got[2], _np_log_softmax(x), rtol=1e-6)
    np.testing.assert_allclose(got[3], _np_softmax(x), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Cross-entropies
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["v1", "v2"])
@PROPS
@given(data=st.data())
def test_softmax_cross_entropy_matches_numpy(api, data):
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    logits = data.draw(arrays(dtype, shape, lo=-10, hi=10))
    raw = data.draw(arrays(dtype, shape, lo=0, hi=1))
    labels = raw / np.maximum(raw.sum(-1, keepdims=True), 1e-3)
    fn = tf.nn.softmax_cross_entropy_with_logits if api == "v1" else tf.nn.softmax_cross_entropy_with_logits_v2
    with tf.Graph().as_default():
        pl = tf.placeholder(dtype, shape)
        py = tf.placeholder(dtype, shape)
        out = fn(labels=py, logits=pl)
        assert out.shape.as_list() == list(shape[:-1])
        with tf.Session() as s:
            got = s.run(out, {pl: logits, py: labels})
    expected = -np.sum(labels * _np_log_softmax(logits), axis=-1)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert_close(got, expected, dtype, rtol=tol, atol=tol * 10)


def test_softmax_cross_entropy_axis_shapes_and_errors():
    logits = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    labels = np.eye(3, 4, dtype=np.float32)
    with tf.Graph().as_default():
        a = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels.T, logits=logits.T, axis=0)
        b = tf.nn.softmax_cross_entropy_with_logits(labels=labels.T, logits=logits.T, dim=0)
        p = tf.placeholder(tf.float32, [None, 4])
        assert tf.nn.softmax_cross_entropy_with_logits_v2(labels=p, logits=p).shape.as_list() == [None]
        with pytest.raises(ValueError):
            tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([3, 5]), logits=tf.ones([3, 4]))
        with tf.Session() as s:
            ga, gb = s.run([a, b])
    expected = -np.sum(labels * _np_log_softmax(logits), -1)
    np.testing.assert_allclose(ga, expected, rtol=1e-5)
    np.testing.assert_allclose(gb, expected, rtol=1e-5)


@PROPS
@given(data=st.data())
def test_sparse_softmax_cross_entropy_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    logits = data.draw(arrays(dtype, shape, lo=-10, hi=10))
    ldtype = data.draw(st.sampled_from([np.int32, np.int64]))
    labels = data.draw(hnp.arrays(ldtype, shape[:-1], elements=st.integers(0, shape[-1] - 1)))
    with tf.Graph().as_default():
        pl = tf.placeholder(dtype, shape)
        py = tf.placeholder(tf.as_dtype(ldtype), shape[:-1])
        out = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=py, logits=pl)
        assert out.shape.as_list() == list(shape[:-1])
        assert out.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            got = s.run(out, {pl: logits, py: labels})
    ls = _np_log_softmax(logits)
    expected = -np.take_along_axis(ls, labels[..., None].astype(np.int64), -1)[..., 0]
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert_close(got, expected, dtype, rtol=tol, atol=tol * 10)


def test_sparse_softmax_cross_entropy_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.ones([3, 4], tf.int32), logits=tf.ones([3, 4]))
        with pytest.raises(ValueError):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.ones([2], tf.int32), logits=tf.ones([3, 4]))
        with pytest.raises(ValueError):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(1), logits=tf.constant(1.0))
        y = tf.placeholder(tf.int32, [None])
        out = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.ones([2, 3]))
        with tf.Session() as s:
            for bad in ([0, 3], [-1, 0]):
                with pytest.raises(tf.errors.InvalidArgumentError):
                    s.run(out, {y: bad})


@FEW
@given(data=st.data())
def test_sigmoid_cross_entropy_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    x = data.draw(arrays(dtype, shape, lo=-30, hi=30))
    z = data.draw(arrays(dtype, shape, lo=0, hi=1))
    got = run(lambda p: tf.nn.sigmoid_cross_entropy_with_logits(labels=p["z"], logits=p["x"]),
              {"x": (dtype, shape, x), "z": (dtype, shape, z)})
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    expected = np.maximum(xd, 0) - xd * zd + np.log1p(np.exp(-np.abs(xd)))
    tol = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert_close(got, expected, dtype, rtol=tol, atol=tol)


def test_sigmoid_cross_entropy_shape_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([3]), logits=tf.ones([4]))
        p = tf.placeholder(tf.float32, [None, 2])
        assert tf.nn.sigmoid_cross_entropy_with_logits(labels=p, logits=p).shape.as_list() == [None, 2]


# ---------------------------------------------------------------------------------------------
# bias_add, l2_loss, l2_normalize, moments
# ---------------------------------------------------------------------------------------------


@FEW
@given(data=st.data())
def test_bias_add_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64", "int32"]))
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=4, max_side=4))
    fmt = data.draw(st.sampled_from([None, "NHWC", "NCHW"]))
    c = shape[1] if fmt == "NCHW" else shape[-1]
    x = data.draw(arrays(dtype, shape))
    b = data.draw(arrays(dtype, (c,)))
    with tf.Graph().as_default():
        out = tf.nn.bias_add(tf.constant(x), tf.constant(b), data_format=fmt)
        assert out.shape.as_list() == list(shape)
        with tf.Session() as s:
            got = s.run(out)
    bb = b.reshape((1, c) + (1,) * (len(shape) - 2)) if fmt == "NCHW" else b
    assert_close(got, (x + bb).astype(x.dtype), dtype)


def test_bias_add_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.nn.bias_add(tf.ones([2, 3]), tf.ones([4]))
        with pytest.raises(ValueError):
            tf.nn.bias_add(tf.ones([2, 3]), tf.ones([1, 3]))
        with pytest.raises(ValueError):
            tf.nn.bias_add(tf.ones([3]), tf.ones([3]))
        p = tf.placeholder(tf.float32, [None, 3])
        assert tf.nn.bias_add(p, tf.ones([3])).shape.as_list() == [None, 3]


@FEW
@given(data=st.data())
def test_l2_loss_and_l2_normalize(data):
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    x = data.draw(arrays(dtype, shape))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        loss = tf.nn.l2_loss(p)
        norm = tf.nn.l2_normalize(p, axis=axis)
        assert loss.shape.as_list() == [] and norm.shape.as_list() == list(shape)
        with tf.Session() as s:
            gl, gn = s.run([loss, norm], {p: x})
    xd = x.astype(np.float64)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(gl, np.sum(xd * xd) / 2, rtol=tol, atol=tol)
    ss = np.sum(xd * xd, axis=axis, keepdims=True)
    np.testing.assert_allclose(gn, xd / np.sqrt(np.maximum(ss, 1e-12)), rtol=tol, atol=tol)


def test_l2_normalize_dim_alias_and_zero_vector():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    got = run(lambda: [tf.nn.l2_normalize(x, dim=1), tf.math.l2_normalize(x, axis=0, epsilon=1e-4)])
    np.testing.assert_allclose(got[0], [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(got[1], [[1.0, 1.0], [0.0, 0.0]], rtol=1e-6)


@FEW
@given(data=st.data())
def test_moments_match_numpy(data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape))
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    keep = data.draw(st.booleans())
    alias = data.draw(st.booleans())
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        mean, var = tf.nn.moments(p, axes, keep_dims=keep) if alias else tf.nn.moments(p, axes, keepdims=keep)
        em = np.mean(x.astype(np.float64), axis=tuple(axes), keepdims=keep)
        ev = np.var(x.astype(np.float64), axis=tuple(axes), keepdims=keep)
        assert mean.shape.as_list() == list(em.shape) and var.shape.as_list() == list(ev.shape)
        assert mean.dtype == tf.as_dtype(dtype) and var.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            gm, gv = s.run([mean, var], {p: x})
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(gm, em, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(gv, ev, rtol=tol, atol=tol * 100)


# ---------------------------------------------------------------------------------------------
# dropout
# ---------------------------------------------------------------------------------------------


def test_dropout_rate_and_keep_prob_scale_kept_values():
    x = np.ones((200, 50), np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        a = tf.nn.dropout(x, rate=0.25, seed=3)
        b = tf.nn.dropout(x, keep_prob=0.75, seed=3)
        kp = tf.placeholder(tf.float32, [])
        c = tf.nn.dropout(x, keep_prob=kp)
        assert a.shape.as_list() == [200, 50]
        with tf.Session() as s:
            ga, gb = s.run([a, b])
            gc = s.run(c, {kp: 0.5})
            gc1 = s.run(c, {kp: 1.0})
    for g, keep in ((ga, 0.75), (gb, 0.75), (gc, 0.5)):
        kept = g != 0
        np.testing.assert_allclose(g[kept], 1 / keep, rtol=1e-6)
        assert abs(kept.mean() - keep) < 0.03
    np.testing.assert_array_equal(ga, gb)  # same graph seed and op seed: same mask
    np.testing.assert_array_equal(gc1, x)


def test_dropout_noise_shape_fresh_masks_and_errors():
    x = np.ones((100, 8), np.float32)
    with tf.Graph().as_default():
        out = tf.nn.dropout(x, rate=0.5, noise_shape=[100, 1])
        with tf.Session() as s:
            g1 = s.run(out)
            g2 = s.run(out)
        assert np.all((g1 == 0).all(1) | (g1 == 2).all(1))  # whole rows kept or dropped
        assert not np.array_equal(g1, g2)  # a fresh mask per run
        with pytest.raises(ValueError):
            tf.nn.dropout(x, rate=1.0)
        with pytest.raises(ValueError):
            tf.nn.dropout(x, keep_prob=0.0)
        with pytest.raises(ValueError):
            tf.nn.dropout(x, rate=0.5, keep_prob=0.5)
        with pytest.raises(ValueError):
            tf.nn.dropout(tf.ones([2], tf.int32), rate=0.5)
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(tf.nn.dropout(x, rate=0.0)), x)


# ---------------------------------------------------------------------------------------------
# embedding_lookup, zero_fraction, in_top_k, top_k
# ---------------------------------------------------------------------------------------------


@FEW
@given(data=st.data())
def test_embedding_lookup_matches_numpy(data):
    rows = data.draw(st.integers(1, 8))
    dim = data.draw(st.integers(1, 4))
    params = data.draw(arrays("float32", (rows, dim)))
    ishape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=4))
    ids = data.draw(hnp.arrays(np.int32, ishape, elements=st.integers(0, rows - 1)))
    with tf.Graph().as_default():
        out = tf.nn.embedding_lookup(tf.constant(params), tf.constant(ids))
        assert out.shape.as_list() == list(ishape) + [dim]
        with tf.Session() as s:
            got = s.run(out)
    np.testing.assert_array_equal(got, params[ids])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_sharded(strategy):
    params = np.arange(7 * 2, dtype=np.float32).reshape(7, 2)
    if strategy == "mod":
        shards = [params[k::3] for k in range(3)]
    else:
        shards = [params[0:3], params[3:5], params[5:7]]
    ids = np.array([[0, 6, 3], [5, 1, 1]], np.int32)
    got = run(lambda: tf.nn.embedding_lookup([tf.constant(s) for s in shards], ids, partition_strategy=strategy))
    np.testing.assert_array_equal(got, params[ids])


def test_embedding_lookup_max_norm_and_bad_ids():
    params = np.array([[3.0, 4.0], [0.3, 0.4]], np.float32)
    got = run(lambda: tf.nn.embedding_lookup(params, [0, 1], max_norm=1.0))
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    with tf.Graph().as_default():
        out = tf.nn.embedding_lookup(params, [2])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out)


@FEW
@given(data=st.data())
def test_zero_fraction(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32", "int64", "uint8"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=5))
    x = data.draw(arrays(dtype, shape, lo=-1, hi=1))
    with tf.Graph().as_default():
        out = tf.nn.zero_fraction(tf.constant(x))
        assert out.dtype == tf.float32 and out.shape.as_list() == []
        with tf.Session() as s:
            got = s.run(out)
    # TensorFlow divides float32(number of zeros) by float32(size).
    np.testing.assert_array_equal(got, np.float32(np.sum(x == 0)) / np.float32(max(x.size, 1)))


def _np_in_top_k(pred, targets, k):
    out = []
    for row, t in zip(pred, targets):
        if not 0 <= t < len(row) or not np.all(np.isfinite(row)):
            out.append(False)
            continue
        out.append(int(np.sum(row > row[t])) < k)
    return np.array(out)


@FEW
@given(data=st.data())
def test_in_top_k_matches_reference(data):
    n, c = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 6))
    pred = data.draw(hnp.arrays(np.float32, (n, c), elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0])))
    targets = data.draw(hnp.arrays(np.int32, (n,), elements=st.integers(0, c - 1)))
    k = data.draw(st.integers(0, c + 1))
    with tf.Graph().as_default():
        out = tf.nn.in_top_k(tf.constant(pred), tf.constant(targets), k)
        assert out.dtype == tf.bool and out.shape.as_list() == [n]
        with tf.Session() as s:
            got = s.run(out)
    np.testing.assert_array_equal(got, _np_in_top_k(pred, targets, k))


def test_in_top_k_out_of_range_target_and_shapes():
    pred = np.array([[0.1, 0.9, 0.0], [0.5, 0.2, np.inf]], np.float32)
    with tf.Graph().as_default():
        out = tf.nn.in_top_k(pred, tf.constant([5, 0]), 2)
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(out), [False, False])
        assert tf.math.in_top_k(tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.int32, [None]),
                                1).shape.as_list() == [None]


@FEW
@given(data=st.data())
def test_top_k_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32", "int64"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    x = data.draw(arrays(dtype, shape, lo=-3, hi=3))  # ties: the lower index comes first
    k = data.draw(st.integers(0, shape[-1]))
    with tf.Graph().as_default():
        values, indices = tf.math.top_k(tf.constant(x), k)
        res = tf.nn.top_k(tf.constant(x), k=k)
        assert values.shape.as_list() == list(shape[:-1]) + [k]
        assert indices.dtype == tf.int32
        with tf.Session() as s:
            gv, gi, rv = s.run([values, indices, res.values])
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(gi, order)
    np.testing.assert_array_equal(gv, np.take_along_axis(x, order, -1))
    np.testing.assert_array_equal(rv, gv)


def test_top_k_result_is_a_namedtuple_that_runs():
    with tf.Graph().as_default():
        res = tf.math.top_k(tf.constant([[3.0, 1.0, 2.0]]), 2)
        unsorted = tf.nn.top_k(tf.constant([3.0, 1.0, 2.0]), 2, sorted=False)
        with tf.Session() as s:
            got = s.run(res)
            gu = s.run(unsorted)
    assert type(got).__name__ == "TopKV2"
    np.testing.assert_array_equal(got.values, [[3.0, 2.0]])
    np.testing.assert_array_equal(got.indices, [[0, 2]])
    # Without sorting the order is unspecified; the set is the same.
    assert sorted(gu.indices.tolist()) == [0, 2] and sorted(gu.values.tolist()) == [2.0, 3.0]


def test_top_k_errors_and_dynamic_k():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.math.top_k(tf.ones([2, 3]), 4)
        with pytest.raises(ValueError):
            tf.math.top_k(tf.constant(1.0), 1)
        k = tf.placeholder(tf.int32, [])
        v, i = tf.math.top_k(tf.constant([[1.0, 3.0, 2.0]]), k)
        assert v.shape.as_list() == [1, None]
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(i, {k: 2}), [[1, 2]])
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(v, {k: 5})


def test_large_softmax_xent_and_l2_loss():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(700, 130)).astype(np.float32) * 3
    labels = rng.integers(0, 130, size=700).astype(np.int32)
    onehot = np.eye(130, dtype=np.float32)[labels]
    with tf.Graph().as_default():
        outs = [tf.nn.softmax(logits), tf.nn.log_softmax(logits), tf.nn.l2_loss(logits),
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits), tf.nn.relu(logits),
                tf.nn.bias_add(logits, logits[0])]
        with tf.Session() as s:
            got = s.run(outs)
    ls = _np_log_softmax(logits)
    np.testing.assert_allclose(got[0], np.exp(ls), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[1], ls, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], np.sum(logits.astype(np.float64) ** 2) / 2, rtol=1e-5)
    np.testing.assert_allclose(got[3], -ls[np.arange(700), labels], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[4], -ls[np.arange(700), labels], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[5], np.maximum(logits, 0))
    np.testing.assert_array_equal(got[6], logits + logits[0])


def test_cross_entropy_graphs_are_named_as_tensorflow_builds_them():
    # TF 2.21 (compat.v1): the operands are flattened, the op takes the scope's name, the cost is reshaped back;
    # Python operands of concat/slice are constants inside the op's scope.
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 3])
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x)
    assert v2.name == "softmax_cross_entropy_with_logits/Reshape_2:0" and v2.shape.as_list() == [None]
    names = [n.name for n in tf.get_default_graph().as_graph_def().node][2:]
    s = "softmax_cross_entropy_with_logits/"
    assert names[:14] == [s + n for n in ["Rank", "Shape", "Rank_1", "Shape_1", "Sub/y", "Sub", "Slice/begin",
                                          "Slice/size", "Slice", "concat/values_0", "concat/axis", "concat",
                                          "Reshape", "Rank_2"]]
    assert "softmax_cross_entropy_with_logits" in names and names[-1] == s + "Reshape_2"
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x)
    assert v1.name == "softmax_cross_entropy_with_logits_sg/Reshape_2:0"
    assert v1.op.inputs[0].op.name == "softmax_cross_entropy_with_logits_sg"
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.placeholder(tf.int32, [None]), logits=x)
    assert sparse.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits:0"
    x3 = tf.placeholder(tf.float32, [None, 4, 3])
    assert tf.nn.softmax_cross_entropy_with_logits_v2(labels=x3, logits=x3).shape.as_list() == [None, 4]
    labels = np.eye(3, dtype=np.float32)[[0, 2]]
    logits = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32)
    want = -np.sum(labels * (logits - np.log(np.exp(logits).sum(1, keepdims=True))), 1)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(v2, {x: logits, y: labels}), want, rtol=1e-5)
        np.testing.assert_allclose(sess.run(v1, {x: logits, y: labels}), want, rtol=1e-5)
