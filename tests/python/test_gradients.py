"""``tf.gradients``: every op with a registered gradient, checked against central differences.

Inputs are float64 (tight tolerances) and kept away from kinks; behaviour *at* kinks and ties
follows TensorFlow's conventions and is checked with exact values (and against TF's recorded
results in test_golden_gradients.py). Expected values of semantics tests were checked against
TensorFlow 2.21 (``tf.compat.v1``, graph mode).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferroflow as tf
from _optest import FEW
from ferroflow.framework import errors
from ferroflow.ops import math_ops
from ferroflow.ops._op_util import make
from ferroflow.test_util import compute_gradient, compute_gradient_error

# --------------------------------------------------------------------------- helpers


def rand(*shape, lo=-2.0, hi=2.0, seed=0, away=None):
    """Uniform float64 values in [lo, hi); ``away``: keep at least 0.1 from those points."""
    rng = np.random.default_rng(seed + 17 * len(shape) + int(np.prod(shape, dtype=np.int64)))
    v = rng.uniform(lo, hi, shape)
    for p in away or ():
        close = np.abs(v - p) < 0.1
        v = np.where(close, p + np.where(v >= p, 0.1, -0.1) + 0.05 * np.sign(v - p + 1e-12), v)
    return v


def check(fn, *inputs, tol=1e-6, delta=1e-5, wrt=None):
    """Builds ``y = fn(*placeholders)`` and compares every float input's Jacobian with central
    differences (relative to the Jacobian's scale). Non-float inputs are only fed. Also checks that
    each gradient has its input's shape, statically and at run time."""
    with tf.Graph().as_default():
        phs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), np.shape(a), name=f"in{i}") for i, a in enumerate(inputs)]
        y = fn(*phs)
        y_shape = y.shape.as_list()
        feed = dict(zip(phs, inputs))
        idx = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind == "f"] if wrt is None else wrt
        grads = tf.gradients(y, [phs[i] for i in idx])
        with tf.Session() as sess:
            for i, g in zip(idx, grads):
                assert g is not None, f"no gradient for input {i}"
                if not isinstance(g, tf.IndexedSlices):
                    assert g.shape.is_compatible_with(phs[i].shape), (g.shape, phs[i].shape)
                    assert sess.run(g, feed).shape == np.shape(inputs[i])
                others = {p: v for p, v in feed.items() if p is not phs[i]}
                jt, jn = compute_gradient(phs[i], list(np.shape(inputs[i])), y, y_shape,
                                          x_init_value=np.asarray(inputs[i]), delta=delta, extra_feed_dict=others)
                scale = max(1.0, float(np.abs(jn).max(initial=0.0)))
                np.testing.assert_allclose(jt, jn, rtol=0, atol=tol * scale, err_msg=f"input {i}")


def grad_values(fn, *inputs, wrt=None, **kw):
    """Runs ``tf.gradients(fn(*placeholders), placeholders)``; IndexedSlices come back as values."""
    with tf.Graph().as_default():
        phs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), np.shape(a)) for a in inputs]
        y = fn(*phs)
        xs = phs if wrt is None else [phs[i] for i in wrt]
        gs = tf.gradients(y, xs, **kw)
        with tf.Session() as sess:
            return [None if g is None else sess.run(g, dict(zip(phs, inputs))) for g in gs]


def unbroadcast(g, shape):
    """NumPy reference: sums ``g`` over the axes broadcasting added or stretched to reach ``shape``."""
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for ax, d in enumerate(shape):
        if d == 1 and g.shape[ax] != 1:
            g = g.sum(axis=ax, keepdims=True)
    return g


# --------------------------------------------------------------------------- gradient checker


class TestGradientChecker:
    def test_returns_jacobians_of_x_size_by_y_size(self):
        x = tf.placeholder(tf.float64, [2, 3])
        y = tf.reduce_sum(x * x, axis=1)
        v = rand(2, 3)
        with tf.Session():
            jt, jn = compute_gradient(x, [2, 3], y, [2], x_init_value=v)
        assert jt.shape == jn.shape == (6, 2)
        expected = np.zeros((6, 2))
        for i in range(2):
            expected[3 * i:3 * i + 3, i] = 2 * v[i]
        np.testing.assert_allclose(jt, expected, rtol=1e-12)
        np.testing.assert_allclose(jn, expected, rtol=1e-6)

    def test_error_is_max_abs_difference(self):
        x = tf.placeholder(tf.float64, [4])
        with tf.Session():
            err = compute_gradient_error(x, [4], tf.sin(x), [4], x_init_value=rand(4))
        assert 0 <= err < 1e-6

    def test_detects_a_wrong_gradient(self):
        # stop_gradient hides the second factor: the theoretical Jacobian misses half of d(x*x).
        x = tf.placeholder(tf.float64, [3])
        y = x * tf.stop_gradient(x)
        with tf.Session():
            err = compute_gradient_error(x, [3], y, [3], x_init_value=np.array([1.0, 2.0, 3.0]))
        np.testing.assert_allclose(err, 3.0, rtol=1e-6)

    def test_default_random_values_float32_and_no_default_session(self):
        x = tf.placeholder(tf.float32, [3])
        jt, jn = compute_gradient(x, [3], tf.exp(x), [3])
        assert jt.dtype == jn.dtype == np.float32
        np.testing.assert_allclose(jt, jn, atol=5e-3)

    def test_list_of_xs_and_extra_feed_dict(self):
        a = tf.placeholder(tf.float64, [2])
        b = tf.placeholder(tf.float64, [3])
        c = tf.placeholder(tf.float64, [])
        y = tf.reduce_sum(a) * b * c
        va, vb = rand(2), rand(3)
        res = compute_gradient([a, b], [[2], [3]], y, [3], x_init_value=[va, vb],
                               extra_feed_dict={a: va, b: vb, c: 2.0})
        assert isinstance(res, list) and len(res) == 2
        (ta, na), (tb, nb) = res
        np.testing.assert_allclose(ta, np.tile(2 * vb, (2, 1)), rtol=1e-12)
        np.testing.assert_allclose(tb, 2 * va.sum() * np.eye(3), rtol=1e-12)
        np.testing.assert_allclose(na, ta, atol=1e-8)
        np.testing.assert_allclose(nb, tb, atol=1e-8)
        assert compute_gradient_error([a, b], [[2], [3]], y, [3], x_init_value=[va, vb],
                                      extra_feed_dict={a: va, b: vb, c: 2.0}) < 1e-8

    def test_indexed_slices_gradient(self):
        p = tf.placeholder(tf.float64, [4, 2])
        y = tf.gather(p, [3, 1, 3])
        with tf.Session():
            jt, jn = compute_gradient(p, [4, 2], y, [3, 2], x_init_value=rand(4, 2))
        np.testing.assert_allclose(jt, jn, atol=1e-9)
        assert jt[6, 0] == 1 and jt[6, 4] == 1 and jt[2, 2] == 1

    def test_variable_with_init_targets(self):
        v = tf.Variable(np.array([1.0, 2.0]), name="v")
        y = v * v * 3.0
        with tf.Session():
            jt, jn = compute_gradient(v, [2], y, [2], x_init_value=np.array([1.0, 2.0]),
                                      init_targets=[tf.global_variables_initializer()])
        np.testing.assert_allclose(jt, np.diag([6.0, 12.0]))
        np.testing.assert_allclose(jn, jt, atol=1e-6)

    def test_unconnected_y_gives_zero_jacobian(self):
        x = tf.placeholder(tf.float64, [2])
        z = tf.placeholder(tf.float64, [3])
        jt, jn = compute_gradient(x, [2], z * 2, [3], extra_feed_dict={z: np.ones(3)})
        assert not jt.any() and not jn.any()

    def test_empty_y(self):
        x = tf.placeholder(tf.float64, [2])
        y = tf.slice(x, [0], [0])
        jt, jn = compute_gradient(x, [2], y, [0])
        assert jt.shape == jn.shape == (2, 0)
        assert compute_gradient_error(x, [2], y, [0]) == 0

    def test_shape_mismatch_and_integer_inputs_are_rejected(self):
        x = tf.placeholder(tf.float64, [2])
        with pytest.raises(ValueError, match="x_shape"):
            compute_gradient(x, [2], x * 2, [2], x_init_value=np.ones(3))
        i = tf.placeholder(tf.int32, [2])
        with pytest.raises(TypeError, match="int32"):
            compute_gradient(i, [2], tf.cast(i, tf.float64), [2])

    def test_default_session_of_another_graph_is_rejected(self):
        x = tf.placeholder(tf.float64, [2])
        with tf.Graph().as_default() as g2:
            tf.constant(1.0)
        with tf.Session(graph=g2):
            with pytest.raises(ValueError, match="another graph"):
                compute_gradient(x, [2], x * 2, [2])


# --------------------------------------------------------------------------- elementwise math

UNARY = {
    "neg": (tf.negative, {}),
    "abs": (tf.abs, {"away": [0]}),
    "square": (tf.square, {}),
    "exp": (tf.exp, {}),
    "log": (tf.log, {"lo": 0.2, "hi": 3.0}),
    "log1p": (tf.log1p, {"lo": -0.5, "hi": 3.0}),
    "expm1": (tf.math.expm1, {}),
    "sin": (tf.sin, {}),
    "cos": (tf.cos, {}),
    "tan": (tf.tan, {"lo": -1.0, "hi": 1.0}),
    "tanh": (tf.tanh, {}),
    "sigmoid": (tf.sigmoid, {}),
    "sqrt": (tf.sqrt, {"lo": 0.2, "hi": 3.0}),
    "rsqrt": (tf.rsqrt, {"lo": 0.2, "hi": 3.0}),
    "reciprocal": (tf.reciprocal, {"away": [0]}),
    "relu": (tf.nn.relu, {"away": [0]}),
    "relu6": (tf.nn.relu6, {"lo": -2.0, "hi": 8.0, "away": [0, 6]}),
    "elu": (tf.nn.elu, {"away": [0]}),
    "selu": (tf.nn.selu, {"away": [0]}),
    "softplus": (tf.nn.softplus, {}),
    "softsign": (tf.nn.softsign, {"away": [0]}),
    "leaky_relu": (tf.nn.leaky_relu, {"away": [0]}),
    "leaky_relu_alpha": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), {"away": [0]}),
    "identity": (tf.identity, {}),
    "check_numerics": (lambda x: tf.check_numerics(x, "bad"), {}),
    "placeholder_with_default": (lambda x: tf.placeholder_with_default(x, [2, 3]), {}),
    "cast_f64_f64": (lambda x: tf.cast(x, tf.float64), {}),
    "print": (lambda x: tf.Print(x, [], "nothing "), {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, kw = UNARY[name]
    check(fn, rand(2, 3, **kw))


def test_cast_between_floats():
    check(lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * 2.0, rand(3), tol=1e-3, delta=1e-2)
    (g,) = grad_values(lambda x: tf.cast(x, tf.float64) * 3.0, rand(3).astype(np.float32))
    assert g.dtype == np.float32 and np.all(g == 3)


def test_cast_to_integer_stops_the_gradient():
    assert grad_values(lambda x: tf.cast(tf.cast(x, tf.int32), tf.float64), rand(3)) == [None]


BROADCAST_SHAPES = [((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 3), (3,)), ((), (2, 3)), ((2, 1, 3), (4, 1)), ((1,), ())]

BINARY = {
    "add": (tf.add, {}, {}),
    "add_v1": (lambda a, b: make("Add", [a, b]), {}, {}),
    "sub": (tf.subtract, {}, {}),
    "mul": (tf.multiply, {}, {}),
    "realdiv": (tf.realdiv, {}, {"away": [0]}),
    "div_v1": (lambda a, b: make("Div", [a, b]), {}, {"away": [0]}),
    "div_no_nan": (tf.div_no_nan, {}, {"away": [0]}),
    "pow": (tf.pow, {"lo": 0.3, "hi": 2.0}, {}),
    "maximum": (tf.maximum, {}, {}),
    "minimum": (tf.minimum, {}, {}),
    "squared_difference": (tf.squared_difference, {}, {}),
    "atan2": (tf.atan2, {}, {}),
    "floormod": (tf.floormod, {"lo": 0.1, "hi": 0.9}, {"lo": 1.5, "hi": 2.0}),
}


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(name, shapes):
    fn, ka, kb = BINARY[name]
    a = rand(*shapes[0], seed=1, **ka)
    b = rand(*shapes[1], seed=2, **kb)
    if name in ("maximum", "minimum"):
        b = b + 0.05  # no ties (seed-dependent values, but keep the intent explicit)
    check(fn, a, b)


def test_pow_gradient_of_exponent_at_nonpositive_base_is_zero():
    # TF: d(x**y)/dy = x**y * log(x) where x > 0, else 0.
    ga, gb = grad_values(tf.pow, np.array([-2.0, 0.0, 2.0]), np.array([2.0, 2.0, 3.0]))
    np.testing.assert_allclose(ga, [-4.0, 0.0, 12.0])
    np.testing.assert_allclose(gb, [0.0, 0.0, 8 * np.log(2.0)])


def test_div_no_nan_gradient_is_zero_where_the_divisor_is():
    ga, gb = grad_values(tf.div_no_nan, np.array([1.0, 2.0]), np.array([0.0, 4.0]))
    np.testing.assert_allclose(ga, [0.0, 0.25])
    np.testing.assert_allclose(gb, [0.0, -2.0 / 16])


def test_maximum_minimum_ties_go_to_the_first_argument():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 3.0])
    for f in (tf.maximum, tf.minimum):
        gx, gy = grad_values(f, x, y)
        assert gx[0] == 1 and gy[0] == 0 and gx[2] == 1 and gy[2] == 0
        assert gx[1] + gy[1] == 1


def test_kinks_follow_tensorflow():
    x = np.array([0.0, 6.0, -1.0, 7.0])
    assert grad_values(tf.nn.relu, x)[0].tolist() == [0, 1, 0, 1]
    assert grad_values(tf.nn.relu6, x)[0].tolist() == [0, 0, 0, 0]
    assert grad_values(tf.abs, x)[0].tolist() == [0, 1, -1, 1]
    assert grad_values(lambda t: tf.clip_by_value(t, 0.0, 6.0), x)[0].tolist() == [1, 1, 0, 0]
    # LeakyRelu's alpha attr is a float32 in TensorFlow, also for float64 tensors.
    a = float(np.float32(0.2))
    assert grad_values(tf.nn.leaky_relu, x)[0].tolist() == [a, 1, a, 1]


def test_add_n():
    check(lambda a, b, c: tf.add_n([a, b, a * c]), rand(2, 3), rand(2, 3, seed=1), rand(2, 3, seed=2))


def test_l2_loss():
    check(tf.nn.l2_loss, rand(3, 2))


@given(st.data())
@FEW
def test_broadcast_gradients_reduce_to_the_input_shape(data):
    rank = data.draw(st.integers(0, 3))
    out = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))

    def operand_shape():
        keep = data.draw(st.integers(0, rank))
        return [1 if data.draw(st.booleans()) else d for d in out[rank - keep:]]

    sa, sb = operand_shape(), operand_shape()
    a = rand(*sa, seed=3)
    b = rand(*sb, seed=4, away=[0])
    op = data.draw(st.sampled_from(["add", "sub", "mul", "div", "squared_difference"]))
    fns = {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply, "div": tf.realdiv,
           "squared_difference": tf.squared_difference}
    ga, gb = grad_values(lambda x, y: fns[op](x, y), a, b)
    assert ga.shape == a.shape and gb.shape == b.shape
    ab, bb = np.broadcast_arrays(a, b)
    one = np.ones(ab.shape)
    da, db = {
        "add": (one, one),
        "sub": (one, -one),
        "mul": (bb, ab),
        "div": (1 / bb, -ab / bb ** 2),
        "squared_difference": (2 * (ab - bb), -2 * (ab - bb)),
    }[op]
    np.testing.assert_allclose(ga, unbroadcast(da, a.shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb, unbroadcast(db, b.shape), rtol=1e-12, atol=1e-12)


@given(st.data())
@FEW
def test_broadcast_to_and_where_v2_gradients_reduce_to_the_input_shape(data):
    rank = data.draw(st.integers(1, 3))
    out = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    keep = data.draw(st.integers(0, rank))
    shape = [1 if data.draw(st.booleans()) else d for d in out[rank - keep:]]
    x = rand(*shape, seed=5)
    (g,) = grad_values(lambda t: tf.broadcast_to(t, out) * 2.0, x)
    assert g.shape == x.shape
    np.testing.assert_allclose(g, unbroadcast(np.full(out, 2.0), x.shape))
    cond = np.arange(int(np.prod(out))).reshape(out) % 2 == 0
    gx, gy = grad_values(lambda t, u: tf.where_v2(cond, t, u), x, rand(*out, seed=6))
    assert gx.shape == x.shape
    np.testing.assert_allclose(gx, unbroadcast(cond.astype(float), x.shape))
    np.testing.assert_allclose(gy, (~cond).astype(float))


# --------------------------------------------------------------------------- reductions

REDUCTIONS = {
    "sum": tf.reduce_sum,
    "mean": tf.reduce_mean,
    "max": tf.reduce_max,
    "min": tf.reduce_min,
    "prod": tf.reduce_prod,
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, [0, 2], [1]], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, axis, keepdims):
    # Distinct values: no ties (tested below).
    x = (np.random.default_rng(7).permutation(24).reshape(2, 3, 4) + 1) / 12.0
    check(lambda t: REDUCTIONS[name](t, axis=axis, keepdims=keepdims), x)


def test_reduce_max_min_split_the_gradient_among_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 5.0]])
    (g,) = grad_values(lambda t: tf.reduce_max(t, axis=1), x)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [0, 0, 0, 1]])
    (g,) = grad_values(lambda t: tf.reduce_min(t, axis=1), x)
    np.testing.assert_allclose(g, [[0, 0, 0, 1], [1 / 3, 1 / 3, 1 / 3, 0]])
    (g,) = grad_values(tf.reduce_max, np.array([[4.0, 1.0], [4.0, 4.0]]))
    np.testing.assert_allclose(g, [[1 / 3, 0], [1 / 3, 1 / 3]])


def test_reduce_prod_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    (g,) = grad_values(lambda t: tf.reduce_prod(t, axis=1), x)
    np.testing.assert_allclose(g, [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    check(lambda t: tf.reduce_prod(t, axis=1), x)


@pytest.mark.parametrize("axis", [[1], [0, 2], [-1, 0]], ids=str)
def test_reduce_prod_dynamic_axes_and_unknown_rank(axis):
    x0 = rand(2, 3, 2, lo=0.5, hi=1.5)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, None)
        ax = tf.placeholder(tf.int64, [len(axis)])
        (g,) = tf.gradients(tf.reduce_prod(x, axis=ax), x)
        (g_all,) = tf.gradients(tf.reduce_prod(x), x)
        with tf.Session() as sess:
            got, got_all = sess.run([g, g_all], {x: x0, ax: axis})
    expected = np.prod(x0, axis=tuple(axis), keepdims=True) / x0
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got_all, np.prod(x0) / x0, rtol=1e-12)


def test_reduce_mean_of_a_dynamic_shape():
    x = rand(3, 4)
    (g,) = grad_values(lambda t: tf.reduce_mean(tf.reshape(t, tf.shape(t)), axis=0), x)
    np.testing.assert_allclose(g, np.full((3, 4), 1 / 3))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum(axis, exclusive, reverse):
    check(lambda t: tf.cumsum(t, axis=axis, exclusive=exclusive, reverse=reverse), rand(3, 4))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod(exclusive, reverse):
    check(lambda t: tf.cumprod(t, axis=1, exclusive=exclusive, reverse=reverse), rand(3, 4, lo=0.5, hi=2.0))


# --------------------------------------------------------------------------- matmul


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul(ta, tb):
    a = rand(*((4, 3) if ta else (3, 4)), seed=1)
    b = rand(*((2, 4) if tb else (4, 2)), seed=2)
    check(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), a, b)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("batch", [((2,), (2,)), ((2, 1), (3,)), ((), (2,)), ((2,), ())], ids=str)
def test_batch_matmul_broadcast(batch, ta, tb):
    a = rand(*batch[0], *((4, 3) if ta else (3, 4)), seed=1)
    b = rand(*batch[1], *((2, 4) if tb else (4, 2)), seed=2)
    check(lambda x, y: tf.matmul(x, y, adjoint_a=ta, adjoint_b=tb), a, b)


# --------------------------------------------------------------------------- shapes and data movement

ARRAY = {
    "reshape": (lambda x: tf.reshape(x, [3, 2, 2]), (2, 6)),
    "reshape_dynamic": (lambda x: tf.reshape(x, tf.stack([tf.shape(x)[1], -1])), (2, 6)),
    "expand_dims": (lambda x: tf.expand_dims(x, 1), (2, 3)),
    "squeeze": (lambda x: tf.squeeze(x, [1]), (2, 1, 3)),
    "transpose": (lambda x: tf.transpose(x, [2, 0, 1]), (2, 3, 4)),
    "transpose_default": (tf.transpose, (2, 3, 4)),
    "slice": (lambda x: tf.slice(x, [1, 0], [2, -1]), (4, 3)),
    "gather_axis1": (lambda x: tf.gather(x, [2, 0, 2], axis=1), (2, 3, 2)),
    "gather_axis_neg1": (lambda x: tf.gather(x, [[1, 0], [1, 1]], axis=-1), (2, 3)),
    "gather_nd": (lambda x: tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]]), (3, 2, 2)),
    "gather_nd_scalar_rows": (lambda x: tf.gather_nd(x, [[1], [1]]), (3, 2)),
    "tile": (lambda x: tf.tile(x, [2, 1, 3]), (2, 3, 1)),
    "pad": (lambda x: tf.pad(x, [[1, 0], [2, 1]]), (2, 3)),
    "pad_v2": (lambda x: tf.pad(x, [[1, 2], [0, 1]], constant_values=3.0), (2, 3)),
    "mirror_pad_reflect": (lambda x: tf.pad(x, [[1, 1], [2, 1]], mode="REFLECT"), (3, 4)),
    "mirror_pad_symmetric": (lambda x: tf.pad(x, [[2, 1], [0, 3]], mode="SYMMETRIC"), (3, 4)),
    "reverse": (lambda x: tf.reverse(x, [0, 2]), (2, 3, 2)),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3, 4]), (3, 1)),
    "fill": (lambda v: tf.fill([2, 3], v), ()),
    "bias_add_nhwc": (lambda x: tf.nn.bias_add(x, tf.constant([1.0, 2.0, 3.0], tf.float64)), (2, 2, 3)),
    "concat_one": (lambda x: tf.concat([x], 0), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(ARRAY))
def test_array_ops(name):
    fn, shape = ARRAY[name]
    check(fn, rand(*shape))


STRIDED = {
    "reverse_all": lambda x: x[::-1],
    "neg_stride_2": lambda x: x[::-2, 1:],
    "neg_begin_end": lambda x: x[-1:0:-1, -2],
    "shrink": lambda x: x[1],
    "shrink_last": lambda x: x[:, -1, :],
    "new_axis": lambda x: x[:, None, 1:3],
    "ellipsis": lambda x: x[..., 1],
    "ellipsis_new_axis": lambda x: x[1:, ..., None, ::-1],
    "step": lambda x: x[0:4:3, ::2, 1::2],
    "empty": lambda x: x[2:1],
}


@pytest.mark.parametrize("name", sorted(STRIDED))
def test_strided_slice(name):
    check(STRIDED[name], rand(4, 3, 4))


def test_strided_slice_explicit_masks():
    check(lambda x: tf.strided_slice(x, [1, 0], [0, 2], [1, 1], begin_mask=0, end_mask=1, shrink_axis_mask=0),
          rand(4, 3))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    check(lambda a, b, c: tf.concat([a, b, c], axis), rand(2, 2, seed=1), rand(2, 2, seed=2),
          rand(2, 2, seed=3))


def test_concat_int64_axis():
    check(lambda a, b: tf.concat([a, b], tf.constant(-1, tf.int64)), rand(2, 1, seed=1), rand(2, 3, seed=2))


def test_concat_different_sizes():
    check(lambda a, b: tf.concat([a, b], 1), rand(2, 1, seed=1), rand(2, 3, seed=2))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_unstack(axis):
    check(lambda a, b: tf.stack([a, b * 2.0], axis=axis), rand(2, 3, seed=1), rand(2, 3, seed=2))
    check(lambda x: tf.unstack(x, axis=axis)[0] * 3.0 + tf.unstack(x, axis=axis)[-1], rand(2, 3, 2))


def test_unstack_some_outputs_unused():
    check(lambda x: tf.unstack(x)[1], rand(3, 2))


def test_split():
    check(lambda x: tf.split(x, 3, axis=1)[2] * 2.0 + tf.split(x, 3, axis=1)[0], rand(2, 6))
    check(lambda x: tf.split(x, [1, 3, 2], axis=-1)[1], rand(2, 6))
    check(lambda x: tf.concat(tf.split(x, [2, -1], axis=0)[::-1], 0), rand(5, 2))


@pytest.mark.parametrize("ids", [[0, 2, 2, 5], [[1, 1], [0, 3]], 4], ids=str)
def test_gather_axis0_is_indexed_slices(ids):
    params = rand(6, 2)
    check(lambda p: tf.gather(p, ids) * 2.0, params)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [6, 2])
        (g,) = tf.gradients(tf.nn.embedding_lookup(p, ids), p)
        assert isinstance(g, tf.IndexedSlices)
        with tf.Session() as sess:
            v = sess.run([g.values, g.indices, g.dense_shape, tf.convert_to_tensor(g)], {p: params})
    flat = np.reshape(ids, [-1])
    assert v[0].shape == (flat.size, 2)
    np.testing.assert_array_equal(v[1], flat)
    np.testing.assert_array_equal(v[2], [6, 2])
    dense = np.zeros((6, 2))
    np.add.at(dense, flat, 1.0)
    np.testing.assert_allclose(v[3], dense)


@pytest.mark.parametrize(("batch_dims", "axis", "pshape", "ids"), [
    (1, 1, (2, 4), [[0, 3, 3], [1, 1, 2]]),
    (1, 1, (2, 4, 2), [[3], [0]]),
    (1, 2, (2, 3, 4), [[0, 3, 3], [2, 1, 0]]),
    (-1, 1, (3, 4), [[1, 1], [0, 2], [3, 3]]),
    (1, 1, (2, 3), [1, 2]),
    (2, 2, (2, 2, 3, 2), [[[0, 2], [1, 1]], [[2, 2], [0, 1]]]),
], ids=str)
def test_gather_batch_dims(batch_dims, axis, pshape, ids):
    check(lambda p: tf.gather(p, ids, axis=axis, batch_dims=batch_dims) * 2.0, rand(*pshape))
    check(lambda p: tf.gather(p, tf.constant(ids, tf.int64), axis=axis, batch_dims=batch_dims), rand(*pshape))


def test_gather_int64_indices():
    check(lambda p: tf.gather(p, tf.constant([3, 0, 3], tf.int64)), rand(4, 3))


@pytest.mark.parametrize("v1", [True, False])
def test_select(v1):
    c = np.array([[True, False, True], [False, False, True]])
    fn = tf.where if v1 else tf.where_v2
    check(lambda a, b: fn(c, a, b), rand(2, 3, seed=1), rand(2, 3, seed=2))


def test_select_v1_row_selector():
    c = np.array([True, False, True])
    check(lambda a, b: tf.where(c, a, b), rand(3, 2, seed=1), rand(3, 2, seed=2))
    ga, gb = grad_values(lambda a, b: tf.where(c, a, b), rand(3, 2, 2), rand(3, 2, 2))
    np.testing.assert_array_equal(ga[:, 0, 0], [1, 0, 1])
    np.testing.assert_array_equal(gb[:, 1, 1], [0, 1, 0])


def test_select_v2_broadcasting():
    c = np.array([True, False, True])
    check(lambda a, b: tf.where_v2(c, a, b), rand(2, 1, seed=1), rand(3, seed=2))


def test_top_k():
    x = np.random.default_rng(8).permutation(12).reshape(3, 4).astype(np.float64)
    check(lambda t: tf.nn.top_k(t, k=2).values * 1.5, x)


def test_unsorted_segment_sum():
    ids = np.array([2, 0, -1, 2])
    check(lambda d: math_ops.unsorted_segment_sum(d, ids, 3), rand(4, 2))


def test_scatter_nd():
    idx = np.array([[1], [3], [1]])
    check(lambda u: make("ScatterNd", [tf.constant(idx), u, tf.constant([4, 2])]), rand(3, 2))


# --------------------------------------------------------------------------- nn


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_log_softmax(axis):
    check(lambda x: tf.nn.softmax(x, axis=axis), rand(3, 4))
    check(lambda x: tf.nn.log_softmax(x, axis=axis), rand(3, 4))


def test_softmax_3d():
    check(tf.nn.softmax, rand(2, 2, 3))


def test_bias_add_nchw():
    check(lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"), rand(2, 3, 2, 2, seed=1), rand(3, seed=2))
    check(lambda x, b: tf.nn.bias_add(x, b), rand(2, 2, 3, seed=1), rand(3, seed=2))


def _labels(n, k, seed=0):
    p = np.random.default_rng(seed).uniform(0.1, 1.0, (n, k))
    return p / p.sum(axis=1, keepdims=True)


def test_softmax_cross_entropy_v2_backpropagates_into_labels():
    check(lambda y, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x), _labels(3, 4), rand(3, 4))
    ly, lx = grad_values(lambda y, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x),
                         _labels(3, 4), rand(3, 4))
    assert ly is not None and np.abs(ly).max() > 0


def test_softmax_cross_entropy_v1_stops_label_gradients():
    def f(y, x):
        return tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x)

    check(f, _labels(3, 4), rand(3, 4), wrt=[1])
    gy, gx = grad_values(f, _labels(3, 4), rand(3, 4))
    assert gy is None and gx.shape == (3, 4)


def test_softmax_cross_entropy_other_axis():
    check(lambda y, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x, axis=0),
          _labels(3, 4).T.copy(), rand(4, 3))


def test_sparse_softmax_cross_entropy():
    labels = np.array([0, 3, 1])
    check(lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x), rand(3, 4))
    check(lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels.astype(np.int64), logits=x),
          rand(3, 4))


def test_sigmoid_cross_entropy():
    z = np.array([[0.0, 1.0, 0.3], [1.0, 0.0, 0.5]])
    check(lambda x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), rand(2, 3, away=[0]))


def test_moments():
    check(lambda x: tf.add_n(list(tf.nn.moments(x, axes=[0]))), rand(4, 3))


def test_mlp_end_to_end():
    def f(x, w1, b1, w2):
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2, 1], logits=tf.matmul(h, w2)))

    check(f, rand(3, 4, seed=1), rand(4, 5, seed=2), rand(5, seed=3), rand(5, 3, seed=4))


# --------------------------------------------------------------------------- tf.gradients semantics


def test_stop_gradient():
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    sg = tf.stop_gradient
    (g,) = grad_values(lambda t: tf.reduce_sum(t * sg(t) + 3.0 * sg(t * t) + t), x)
    np.testing.assert_allclose(g, x + 1)
    assert grad_values(lambda t: tf.reduce_sum(sg(t)), x) == [None]
    (z,) = grad_values(lambda t: tf.reduce_sum(sg(t)), x, unconnected_gradients="zero")
    np.testing.assert_array_equal(z, np.zeros_like(x))
    (z,) = grad_values(lambda t: tf.reduce_sum(sg(t)), x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(z, np.zeros_like(x))


def test_stop_gradients_argument():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        b = 2.0 * a
        c = a + b
        ga, gb = tf.gradients(c, [a, b], stop_gradients=[a, b])
        (ga_only,) = tf.gradients(c, [a], stop_gradients=[b])
        (ga_free,) = tf.gradients(c, [a])
        with tf.Session() as sess:
            assert sess.run([ga, gb, ga_only, ga_free]) == [1.0, 1.0, 1.0, 3.0]


def test_stop_gradients_single_tensor():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        h = tf.square(x)
        (g,) = tf.gradients(h * x, x, stop_gradients=h)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g, {x: [2.0, 3.0]}), [4.0, 9.0])


def test_unconnected_gradients():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        z = tf.placeholder(tf.float32, [2])
        assert tf.gradients(z * 2.0, x) == [None]
        (g,) = tf.gradients(z * 2.0, x, unconnected_gradients="zero")
        assert g.shape.as_list() == [2, 3] and g.dtype == tf.float32
        with tf.Session() as sess:
            assert not sess.run(g, {x: np.ones((2, 3))}).any()
        with pytest.raises(ValueError):
            tf.gradients(z, x, unconnected_gradients="bogus")


def test_unconnected_zeros_of_a_known_shape_need_no_feed():
    # As TF's zeros_like in graph mode: a constant-shaped fill, not ZerosLike(x).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        z = tf.placeholder(tf.float64, [3, 1])
        w = tf.placeholder(tf.float64, [None])
        gz, gw = tf.gradients(x * x, [z, w], unconnected_gradients="zero")
        assert gz.shape.as_list() == [3, 1] and gw.shape.as_list() == [None]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(gz), np.zeros((3, 1)))
            np.testing.assert_array_equal(sess.run(gw, {w: np.ones(4)}), np.zeros(4))


def test_gradients_have_their_inputs_static_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        n = tf.placeholder(tf.int32, [])
        ys = [tf.pad(tf.tile(x, [2, 1]), [[1, 1], [0, 2]]), tf.slice(x, [0, 1], [-1, 2]), x[:, ::-2],
              tf.reshape(x, tf.stack([n, -1])), tf.nn.top_k(x, 2).values, tf.reduce_prod(x, axis=1)]
        for y in ys:
            (g,) = tf.gradients(y, x)
            assert g.shape.as_list() == [2, 3], (y.op.type, g.shape)
        # A gradient passed through unchanged is not narrowed: grad_ys keeps its own shape.
        gy = tf.placeholder(tf.float64, None)
        (g,) = tf.gradients(tf.identity(x), x, grad_ys=gy)
        assert g is gy or g.shape.ndims is None


def test_duplicate_xs_and_ys():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        g = tf.gradients([x * x, x * x], [x, x])
        with tf.Session() as sess:
            r = sess.run(g, {x: [1.0, 2.0]})
    np.testing.assert_allclose(r, [[4.0, 8.0], [4.0, 8.0]])


@pytest.mark.parametrize("name", ["broadcast", "matmul", "softmax_xent", "gather", "concat", "strided_slice", "tile",
                                  "mean", "max", "bias_add", "top_k", "pad", "reshape", "cumprod"])
def test_dynamic_shapes(name):
    # Placeholders of unknown dimensions: every gradient is computed from run-time shapes.
    fns = {
        "broadcast": lambda x: x * tf.reduce_sum(x, axis=0) + x[:, :1],
        "matmul": lambda x: tf.matmul(x, x, transpose_b=True),
        "softmax_xent": lambda x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(x * 2.0), logits=x),
        "gather": lambda x: tf.gather(x, [1, 1, 0]) + tf.gather(x, [2, 0], axis=1)[:1, :1],
        "concat": lambda x: tf.concat([x, x * 2.0], 1),
        "strided_slice": lambda x: x[::-1, 1:],
        "tile": lambda x: tf.tile(x, [2, 1]),
        "mean": lambda x: tf.reduce_mean(x, axis=1),
        "max": lambda x: tf.reduce_max(x * x, axis=0),
        "bias_add": lambda x: tf.nn.bias_add(x, x[0]),
        "top_k": lambda x: tf.nn.top_k(x, 2).values,
        "pad": lambda x: tf.pad(x, [[1, 0], [0, 2]], mode="SYMMETRIC"),
        "reshape": lambda x: tf.reshape(x, [-1]),
        "cumprod": lambda x: tf.cumprod(x, axis=1, reverse=True),
    }
    x0 = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6]])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None])
        y = fns[name](x)
        (g,) = tf.gradients(y, x)
        assert g.shape.as_list() == [None, None] or isinstance(g, tf.IndexedSlices)
        with tf.Session() as sess:
            got = sess.run(tf.convert_to_tensor(g), {x: x0})
    with tf.Graph().as_default():
        xs = tf.placeholder(tf.float64, [2, 3])
        (gs,) = tf.gradients(fns[name](xs), xs)
        with tf.Session() as sess:
            expected = sess.run(tf.convert_to_tensor(gs), {xs: x0})
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    check(fns[name], x0)


def test_gradient_of_y_with_respect_to_itself_is_grad_ys():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        gy = tf.constant([1.0, 2.0, 3.0], tf.float64)
        (g1,) = tf.gradients(x, x)
        (g2,) = tf.gradients(x, x, grad_ys=gy)
        with tf.Session() as sess:
            r = sess.run([g1, g2], {x: np.zeros(3)})
    np.testing.assert_array_equal(r[0], np.ones(3))
    np.testing.assert_array_equal(r[1], [1, 2, 3])


def test_grad_ys():
    x = rand(3, 4)
    w = rand(4, seed=1)
    gy1 = rand(3, 4, seed=2)
    gy2 = rand(4, seed=3)
    with tf.Graph().as_default():
        px = tf.placeholder(tf.float64, [3, 4])
        pw = tf.placeholder(tf.float64, [4])
        y1 = tf.tanh(px * pw)
        y2 = tf.reduce_sum(px * px, axis=0)
        gx, gw = tf.gradients([y1, y2], [px, pw], grad_ys=[gy1, gy2])
        gx1, gw1 = tf.gradients(y1, [px, pw], grad_ys=gy1)
        gx2, gw2 = tf.gradients([y1, y2], [px, pw], grad_ys=[None, gy2])
        with tf.Session() as sess:
            r = sess.run([gx, gw, gx1, gw1, gx2, gw2], {px: x, pw: w})
    d1 = gy1 * (1 - np.tanh(x * w) ** 2)
    np.testing.assert_allclose(r[0], d1 * w + 2 * x * gy2, rtol=1e-12)
    np.testing.assert_allclose(r[1], (d1 * x).sum(0), rtol=1e-12)
    np.testing.assert_allclose(r[2], d1 * w, rtol=1e-12)
    np.testing.assert_allclose(r[3], (d1 * x).sum(0), rtol=1e-12)
    ones = 1 - np.tanh(x * w) ** 2
    np.testing.assert_allclose(r[4], ones * w + 2 * x * gy2, rtol=1e-12)
    np.testing.assert_allclose(r[5], (ones * x).sum(0), rtol=1e-12)


def test_grad_ys_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with pytest.raises(ValueError, match="grad_ys"):
            tf.gradients(x * 2.0, x, grad_ys=[None, None])
        with pytest.raises(TypeError):
            tf.gradients(x * 2.0, x, grad_ys=tf.constant([1, 2, 3]))
        with pytest.raises(ValueError):
            tf.gradients(x * 2.0, x, grad_ys=tf.constant([1.0, 2.0]))


def test_multiple_ys_are_summed():
    (g,) = grad_values(lambda x: [x * 2.0, tf.reduce_sum(x * x)], np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [4.0, 6.0])


def test_gradients_with_respect_to_variables():
    with tf.Graph().as_default():
        w = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="w")
        b = tf.get_variable("b", initializer=np.array([0.5, -0.5]))
        x = tf.constant([[1.0, -1.0]], tf.float64)
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
        gw, gb = tf.gradients(loss, [w, b])
        gw2, gb2 = tf.gradients(loss, tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            r = sess.run([gw, gb, gw2, gb2])
    out = np.array([[1.0, -1.0]]) @ np.array([[1.0, 2.0], [3.0, 4.0]]) + [0.5, -0.5]
    np.testing.assert_allclose(r[0], np.array([[1.0], [-1.0]]) @ (2 * out))
    np.testing.assert_allclose(r[1], 2 * out[0])
    np.testing.assert_allclose(r[2], r[0])
    np.testing.assert_allclose(r[3], r[1])


def test_gradient_of_an_intermediate_x():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        h = x * 3.0
        y = h * h + x
        gh, gx = tf.gradients(y, [h, x])
        with tf.Session() as sess:
            r = sess.run([gh, gx], {x: [1.0, 2.0]})
    np.testing.assert_allclose(r[0], [6.0, 12.0])
    np.testing.assert_allclose(r[1], [19.0, 37.0])


def test_indexed_slices_aggregation_keeps_duplicate_rows():
    params = rand(5, 2)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [5, 2])
        y = tf.reduce_sum(tf.gather(p, [1, 3, 1]) * 2.0) + tf.reduce_sum(tf.nn.embedding_lookup(p, [3, 0]))
        (g,) = tf.gradients(y, p)
        assert isinstance(g, tf.IndexedSlices)
        with tf.Session() as sess:
            v, i, s, d = sess.run([g.values, g.indices, g.dense_shape, tf.convert_to_tensor(g)], {p: params})
    assert v.shape == (5, 2)
    assert sorted(i.tolist()) == [0, 1, 1, 3, 3]
    np.testing.assert_array_equal(s, [5, 2])
    np.testing.assert_allclose(d, [[1, 1], [4, 4], [0, 0], [3, 3], [0, 0]])


def test_indexed_slices_rows_are_in_tensorflows_order():
    # TF visits ops breadth-first from ys; contributions are concatenated in visit order.
    # (Both expectations recorded with TF 2.21.)
    cases = ((tf.identity, [4, 1, 3, 1, 3, 0], [3, 2, 2, 2, 1, 1]),
             (lambda t: t, [3, 0, 4, 1, 3, 1], [1, 1, 3, 2, 2, 2]))
    for wrap, indices, values in cases:
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float64, [5, 2])
            a = tf.gather(p, [1, 3, 1])
            b = wrap(tf.gather(p, [3, 0]))
            c = tf.gather(p, [4])
            y = tf.reduce_sum(a * 2.0) + tf.reduce_sum(b) + tf.reduce_sum(c * 3.0)
            (g,) = tf.gradients(y, p)
            with tf.Session() as sess:
                i, v = sess.run([g.indices, g.values], {p: np.ones((5, 2))})
        assert i.tolist() == indices
        assert v[:, 0].tolist() == values


def test_indexed_slices_with_different_index_dtypes_aggregate():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [4, 2])
        y = tf.reduce_sum(tf.gather(p, tf.constant([1], tf.int32))) + tf.reduce_sum(
            tf.gather(p, tf.constant([1, 2], tf.int64)))
        (g,) = tf.gradients(y, p)
        assert isinstance(g, tf.IndexedSlices)
        with tf.Session() as sess:
            d = sess.run(tf.convert_to_tensor(g), {p: np.zeros((4, 2))})
    np.testing.assert_allclose(d, [[0, 0], [2, 2], [1, 1], [0, 0]])


def test_mixed_dense_and_sparse_gradients_densify():
    params = rand(4, 2)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [4, 2])
        y = tf.reduce_sum(tf.gather(p, [2, 2])) + tf.reduce_sum(p * 3.0)
        (g,) = tf.gradients(y, p)
        assert isinstance(g, tf.Tensor)
        with tf.Session() as sess:
            d = sess.run(g, {p: params})
    np.testing.assert_allclose(d, [[3, 3], [3, 3], [5, 5], [3, 3]])


def test_sparse_gradient_through_identity_stays_sparse_and_densifies_through_other_ops():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [3, 2])
        (g,) = tf.gradients(tf.gather(tf.identity(p), [0]), p)
        assert isinstance(g, tf.IndexedSlices)
        (g,) = tf.gradients(tf.gather(p * 2.0, [0, 0]), p)
        assert isinstance(g, tf.Tensor)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g, {p: np.ones((3, 2))}), [[4, 4], [0, 0], [0, 0]])


def test_gradient_of_an_embedding_variable_is_indexed_slices():
    with tf.Graph().as_default():
        emb = tf.Variable(np.arange(8.0).reshape(4, 2), name="emb")
        y = tf.reduce_sum(tf.nn.embedding_lookup(emb, [3, 3, 1]))
        (g,) = tf.gradients(y, emb)
        assert isinstance(g, tf.IndexedSlices)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(g.indices), [3, 3, 1])


# --------------------------------------------------------------------------- hessians


def test_hessian_of_a_quadratic():
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 4.0]])
    b = np.array([1.0, -2.0, 0.5])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        am = tf.constant(a)
        f = 0.5 * tf.reduce_sum(x * tf.squeeze(tf.matmul(am, tf.expand_dims(x, 1)), 1)) + tf.reduce_sum(b * x)
        (h,) = tf.hessians(f, x)
        assert h.shape.as_list() == [3, 3]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(h, {x: [0.3, -0.2, 0.9]}), a, rtol=1e-12)


def test_hessian_of_tanh_matrix_input():
    x0 = rand(2, 2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 2])
        (h,) = tf.hessians(tf.reduce_sum(tf.tanh(x) * x), x)
        with tf.Session() as sess:
            got = sess.run(h, {x: x0})
    t = np.tanh(x0)
    d2 = 2 * (1 - t ** 2) - 2 * x0 * t * (1 - t ** 2)  # d2/dx2 of x*tanh(x)
    np.testing.assert_allclose(got.reshape(4, 4), np.diag(d2.ravel()), rtol=1e-10, atol=1e-12)


SECOND_ORDER = {
    "relu": lambda x: tf.nn.relu(x) ** 2,
    "relu6": lambda x: tf.nn.relu6(x * 3.0) ** 2,
    "leaky_relu": lambda x: tf.nn.leaky_relu(x) ** 2,
    "elu": tf.nn.elu,
    "selu": tf.nn.selu,
    "softplus": tf.nn.softplus,
    "softsign": tf.nn.softsign,
    "tanh": tf.tanh,
    "sigmoid": tf.sigmoid,
    "sqrt": lambda x: tf.sqrt(x + 3.0),
    "rsqrt": lambda x: tf.rsqrt(x + 3.0),
    "reciprocal": lambda x: tf.reciprocal(x + 3.0),
    "softmax": lambda x: tf.nn.softmax(x) * tf.constant([1.0, 2.0, 3.0], tf.float64),
    "log_softmax": lambda x: tf.nn.log_softmax(x) * tf.constant([1.0, 2.0, 3.0], tf.float64),
    "reduce_max": lambda x: tf.reduce_max(x * x),
    "reduce_prod": lambda x: tf.reduce_prod(x),
    "cumprod": lambda x: tf.cumprod(x),
    "gather": lambda x: tf.gather(x, [0, 2, 2]) ** 3,
    "strided_slice": lambda x: x[::-2] ** 3,
    "gather_nd": lambda x: tf.gather_nd(x, [[1], [1]]) ** 3,
    "bias_add": lambda x: tf.nn.bias_add(tf.reshape(x * x, [1, 3]), x) ** 2,
    "xent_v2": lambda x: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.constant([[0.2, 0.3, 0.5]], tf.float64), logits=tf.reshape(x, [1, 3])),
    "sparse_xent": lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=tf.reshape(x, [1, 3])),
    "tile_pad": lambda x: tf.pad(tf.tile(x, [2]), [[1, 1]]) ** 3,
    "mirror_pad": lambda x: tf.pad(x * x, [[2, 1]], mode="REFLECT") ** 2,
    "mirror_pad_symmetric": lambda x: tf.pad(x * x, [[1, 3]], mode="SYMMETRIC") ** 2,
    "bias_add_nchw": lambda x: tf.nn.bias_add(tf.reshape(x * x, [1, 3, 1, 1]), x, data_format="NCHW") ** 2,
    "top_k": lambda x: tf.nn.top_k(x * x, 2).values ** 2,
    "unsorted_segment_sum": lambda x: math_ops.unsorted_segment_sum(x * x, [1, -1, 1], 2) ** 2,
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradients(name):
    """The gradient graph itself is differentiable: check d/dx of (d sum f / dx) . w numerically."""
    x0 = np.array([0.7, -0.4, 1.3])
    w = np.array([1.0, -2.0, 0.5])

    def first(x):
        (g,) = tf.gradients(SECOND_ORDER[name](x), x)
        return tf.reduce_sum(tf.convert_to_tensor(g) * w)

    check(first, x0, tol=1e-5)


def test_hessians_match_the_numerical_jacobian_of_the_gradient():
    x0 = np.array([0.3, -0.8, 0.5])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        f = tf.reduce_sum(tf.sigmoid(x) * tf.nn.softplus(x[::-1])) + tf.reduce_max(x * x)
        (h,) = tf.hessians(f, x)
        (g,) = tf.gradients(f, x)
        with tf.Session() as sess:
            got = sess.run(h, {x: x0})
            _, jn = compute_gradient(x, [3], g, [3], x_init_value=x0, delta=1e-5)
    np.testing.assert_allclose(got, jn, atol=1e-6)
    np.testing.assert_allclose(got, got.T, atol=1e-12)


# --------------------------------------------------------------------------- errors and dtypes


def test_op_without_gradient_raises_lookup_error():
    # TensorFlow registers no gradient for TruncateMod: tf.gradients raises LookupError.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.truncatemod(x, 2.0)
        with pytest.raises(LookupError, match="No gradient defined for operation.*TruncateMod"):
            tf.gradients(y, x)
        # ...unless the path is cut.
        assert tf.gradients(tf.stop_gradient(y), x) == [None]


def test_not_differentiable_ops_give_none():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        for y in (tf.floor(x), tf.ceil(x), tf.round(x), tf.floordiv(x, 2.0), tf.cast(tf.argmax(x), tf.float32),
                  tf.zeros_like(x), tf.ones_like(x), tf.cast(tf.shape(x), tf.float32),
                  tf.cast(tf.greater(x, 0.0), tf.float32)):
            assert tf.gradients(y, x) == [None], y.op.type


def test_sign_gradient_is_zero():
    (g,) = grad_values(tf.sign, np.array([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(g, [0, 0, 0])


def test_integer_tensors_get_no_gradient():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [3])
        x = tf.placeholder(tf.float32, [3])
        assert tf.gradients(i * 2, i) == [None]
        assert tf.gradients(tf.cast(i, tf.float32) * x, [i, x])[0] is None
        assert tf.gradients(tf.cast(x, tf.int32) * 2, x) == [None]
        assert tf.gradients(tf.cast(x, tf.int32), x) == [None]


def test_float32_gradients_keep_dtype():
    for dtype in (tf.float16, tf.float32):
        with tf.Graph().as_default():
            x = tf.placeholder(dtype, [2, 3])
            b = tf.placeholder(dtype, [3])
            (gx, gb) = tf.gradients(tf.reduce_sum(tf.tanh(x) * b), [x, b])
            assert gx.dtype == dtype and gb.dtype == dtype


def test_ys_and_xs_from_different_graphs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
    with tf.Graph().as_default():
        y = tf.constant(1.0)
        with pytest.raises(ValueError):
            tf.gradients(y, x)


def test_cannot_differentiate_with_respect_to_indexed_slices():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [3, 2])
        (g,) = tf.gradients(tf.gather(p, [0]), p)
        with pytest.raises(TypeError):
            tf.gradients(p, g)


def test_gradient_ops_go_in_the_gradients_scope():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        (g,) = tf.gradients(tf.tanh(x), x)
        assert g.name.startswith("gradients/")
        (g2,) = tf.gradients(tf.tanh(x), x, name="my_grads")
        assert g2.name.startswith("my_grads/")
        (g3,) = tf.gradients(tf.tanh(x), x)
        assert g3.name.startswith("gradients_1/")


def test_errors_are_tensorflow_errors():
    # Feeding a wrong grad_ys shape fails at run time (unknown static shape) with InvalidArgumentError.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        gy = tf.placeholder(tf.float32, None)
        (g,) = tf.gradients(x * x, x, grad_ys=gy)
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError):
            sess.run(g, {x: np.ones(3), gy: np.ones(2)})



def test_optimizer_gradients_are_gated_through_tuples_as_tf_names_them():
    # compute_gradients (GATE_OP) makes each op's input gradients available together, as TF's
    # gradients(gate_gradients=True): '<op>_grad/tuple/group_deps' and 'control_dependency[_k]' identities;
    # names TF1 programs fetch. Without gating (tf.gradients' default, GATE_NONE) there are none.
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    b = tf.Variable([0.5], name="b")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
    gvs = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
    assert [g.name for g, _ in gvs] == ["gradients/MatMul_grad/tuple/control_dependency_1:0",
                                        "gradients/add_grad/tuple/control_dependency_1:0"]
    graph = tf.get_default_graph()
    deps = graph.get_operation_by_name("gradients/MatMul_grad/tuple/group_deps")
    assert deps.type == "NoOp"
    assert sorted(op.name for op in deps.control_inputs) == ["gradients/MatMul_grad/MatMul",
                                                             "gradients/MatMul_grad/MatMul_1"]
    gated = graph.get_operation_by_name("gradients/MatMul_grad/tuple/control_dependency_1")
    assert gated.type == "Identity" and deps in gated.control_inputs
    # The bias's gradient is the summed one (the other input keeps the incoming gradient, as TF's
    # SmartBroadcastGradientArgs does); ungated gradients keep their own names.
    plain = tf.gradients(loss, [w, b])
    assert [g.name for g in plain] == ["gradients_1/MatMul_grad/MatMul_1:0", "gradients_1/add_grad/Reshape:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: [[1.0, 1.0], [0.0, 2.0]]}
        a, c = sess.run([[g for g, _ in gvs], plain], feed)
        for u, v in zip(a, c):
            np.testing.assert_allclose(u, v)
        np.testing.assert_allclose(a[1], [2 * (3.5 + 4.5)])
