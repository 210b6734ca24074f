"""``tf.nn.conv2d``, ``conv2d_backprop_input/filter``, ``conv2d_transpose``, ``max_pool``, ``avg_pool``.

Forward values are checked against numpy references written here (tap-by-tap einsums for
convolutions, window loops for pooling), gradients against central differences in float64
through ``tf.gradients``, and a small CNN is trained. Tie, padding and error behaviour was
checked against TensorFlow 2.21 (``tf.compat.v1``, graph mode); TensorFlow's messages are
quoted where ferroflow raises the same error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import ferroflow as tf
from _optest import FEW
from ferroflow.framework import errors
from ferroflow.ops._op_util import make
from ferroflow.test_util import compute_gradient

# --------------------------------------------------------------------------- references


def out_size(n, k, s, d, padding):
    """TensorFlow's windowed output size: ``(out, pad_before, pad_after)``."""
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-n // s)
        total = max((out - 1) * s + eff - n, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        return (n - eff) // s + 1, 0, 0
    before, after = padding
    return (n + before + after - eff) // s + 1, before, after


def _geometry(x_shape, w_shape, strides, padding, dilations):
    _, h, w, _ = x_shape
    kh, kw = w_shape[:2]
    ph, pw = (padding, padding) if isinstance(padding, str) else padding
    oh, t, b = out_size(h, kh, strides[0], dilations[0], ph)
    ow, left, r = out_size(w, kw, strides[1], dilations[1], pw)
    return oh, ow, ((0, 0), (t, b), (left, r), (0, 0))


def _taps(w_shape, strides, dilations, oh, ow):
    """Each filter tap ``(i, j)`` with the slice of the padded input it reads."""
    for i in range(w_shape[0]):
        for j in range(w_shape[1]):
            y0, x0 = i * dilations[0], j * dilations[1]
            yield i, j, (slice(None), slice(y0, y0 + (oh - 1) * strides[0] + 1, strides[0]),
                         slice(x0, x0 + (ow - 1) * strides[1] + 1, strides[1]), slice(None))


def np_conv2d(x, w, strides, padding, dilations=(1, 1)):
    oh, ow, pads = _geometry(x.shape, w.shape, strides, padding, dilations)
    xp = np.pad(x.astype(np.float64), pads)
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i, j, sl in _taps(w.shape, strides, dilations, oh, ow):
        out += np.einsum("nhwc,co->nhwo", xp[sl], w[i, j])
    return out


def np_conv2d_backprop_input(x_shape, w, dy, strides, padding, dilations=(1, 1)):
    oh, ow, pads = _geometry(x_shape, w.shape, strides, padding, dilations)
    dxp = np.zeros([d + a + b for d, (a, b) in zip(x_shape, pads)])
    for i, j, sl in _taps(w.shape, strides, dilations, oh, ow):
        dxp[sl] += np.einsum("nhwo,co->nhwc", dy, w[i, j])
    (_, _), (t, _), (left, _), _ = pads
    return dxp[:, t:t + x_shape[1], left:left + x_shape[2], :]


def np_conv2d_backprop_filter(x, w_shape, dy, strides, padding, dilations=(1, 1)):
    oh, ow, pads = _geometry(x.shape, w_shape, strides, padding, dilations)
    xp = np.pad(x.astype(np.float64), pads)
    dw = np.zeros(w_shape)
    for i, j, sl in _taps(w_shape, strides, dilations, oh, ow):
        dw[i, j] = np.einsum("nhwc,nhwo->co", xp[sl], dy)
    return dw


def _windows(shape, k, s, padding):
    """Every output position with the in-bounds input window it pools."""
    _, h, w, _ = shape
    oh, t, _ = out_size(h, k[0], s[0], 1, padding)
    ow, left, _ = out_size(w, k[1], s[1], 1, padding)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - t, j * s[1] - left
            yield i, j, slice(max(y0, 0), min(y0 + k[0], h)), slice(max(x0, 0), min(x0 + k[1], w))


def np_pool(x, k, s, padding, kind):
    _, h, w, _ = x.shape
    oh = out_size(h, k[0], s[0], 1, padding)[0]
    ow = out_size(w, k[1], s[1], 1, padding)[0]
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]), np.float64)
    for i, j, ys, xs in _windows(x.shape, k, s, padding):
        win = x[:, ys, xs, :].astype(np.float64)
        out[:, i, j] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


def np_max_pool_grad(x, g, k, s, padding):
    """Each window's gradient to its first maximum in row-major order (np.argmax's tie rule)."""
    dx = np.zeros(x.shape)
    for i, j, ys, xs in _windows(x.shape, k, s, padding):
        win = x[:, ys, xs, :]
        n, wh, ww, c = win.shape
        first = win.reshape(n, wh * ww, c).argmax(axis=1)
        for b in range(n):
            for ch in range(c):
                dy, dxx = divmod(first[b, ch], ww)
                dx[b, ys.start + dy, xs.start + dxx, ch] += g[b, i, j, ch]
    return dx


def np_avg_pool_grad(x_shape, g, k, s, padding):
    dx = np.zeros(x_shape)
    for i, j, ys, xs in _windows(x_shape, k, s, padding):
        count = (ys.stop - ys.start) * (xs.stop - xs.start)
        dx[:, ys, xs, :] += g[:, i, j, None, None, :] / count
    return dx


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).uniform(-1, 1, shape)


def distinct(*shape, seed=0):
    """Values at least 0.1 apart (no ties, so max pooling is smooth under small steps)."""
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape) * 0.1 - n * 0.05


# --------------------------------------------------------------------------- convolution forward

# (input shape, filter shape, strides, padding, dilations)
CONV_CASES = [
    ((2, 7, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 4), (2, 2), "SAME", (1, 1)),
    ((1, 8, 9, 2), (3, 3, 2, 5), (2, 3), "VALID", (1, 1)),
    ((2, 9, 9, 2), (3, 3, 2, 3), (1, 1), "SAME", (2, 2)),
    ((1, 10, 9, 2), (2, 3, 2, 3), (1, 1), "VALID", (2, 3)),
    ((1, 9, 9, 2), (3, 3, 2, 3), (2, 2), "SAME", (2, 2)),
    ((3, 4, 4, 5), (1, 1, 5, 2), (1, 1), "VALID", (1, 1)),  # 1x1: no patch gather
    ((1, 6, 6, 2), (4, 4, 2, 2), (3, 3), "SAME", (1, 1)),  # even window: more padding after
    ((1, 5, 5, 2), (3, 3, 2, 2), (1, 1), ((1, 2), (0, 1)), (1, 1)),  # explicit padding
    ((1, 1, 1, 3), (1, 1, 3, 2), (1, 1), "SAME", (1, 1)),
    ((8, 20, 20, 16), (3, 3, 16, 32), (1, 1), "SAME", (1, 1)),  # large enough to run in parallel
]


def tf_padding(padding):
    return padding if isinstance(padding, str) else [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("xs,ws,strides,padding,dil", CONV_CASES)
def test_conv2d_and_backprops_match_numpy(xs, ws, strides, padding, dil, dtype):
    x, w = rand(*xs, seed=1), rand(*ws, seed=2)
    want = np_conv2d(x, w, strides, padding, dil)
    dy = rand(*want.shape, seed=3)
    s4, d4 = [1, *strides, 1], [1, *dil, 1]
    xt, wt, dyt = (tf.constant(v.astype(dtype)) for v in (x, w, dy))
    y = tf.nn.conv2d(xt, wt, s4, tf_padding(padding), dilations=d4)
    assert y.shape.as_list() == list(want.shape)
    dx = tf.nn.conv2d_backprop_input(list(xs), wt, dyt, s4, tf_padding(padding), dilations=d4)
    dw = tf.nn.conv2d_backprop_filter(xt, list(ws), dyt, s4, tf_padding(padding), dilations=d4)
    assert dx.shape.as_list() == list(xs) and dw.shape.as_list() == list(ws)
    got = run([y, dx, dw])
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0], want, **tol)
    np.testing.assert_allclose(got[1], np_conv2d_backprop_input(xs, w, dy, strides, padding, dil), **tol)
    np.testing.assert_allclose(got[2], np_conv2d_backprop_filter(x, ws, dy, strides, padding, dil), **tol)


@FEW
@given(
    n=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9), ic=st.integers(1, 4), oc=st.integers(1, 4),
    kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
    dh=st.integers(1, 2), dw=st.integers(1, 2), padding=st.sampled_from(["SAME", "VALID"]),
)
# A dilated filter wider than the image: some filter columns only ever see padding.
@example(n=2, h=2, w=1, ic=1, oc=1, kh=1, kw=4, sh=1, sw=1, dh=1, dw=2, padding="SAME")
def test_conv2d_property(n, h, w, ic, oc, kh, kw, sh, sw, dh, dw, padding):
    if padding == "VALID":
        assume((kh - 1) * dh + 1 <= h and (kw - 1) * dw + 1 <= w)
    x, f = rand(n, h, w, ic, seed=4), rand(kh, kw, ic, oc, seed=5)
    with tf.Graph().as_default():
        y = tf.nn.conv2d(x, f, [sh, sw], padding, dilations=[dh, dw])
        np.testing.assert_allclose(run(y), np_conv2d(x, f, (sh, sw), padding, (dh, dw)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 5e-2), ("int32", 0)])
def test_conv2d_other_dtypes(dtype, tol):
    x = np.random.default_rng(0).integers(-3, 4, (2, 5, 5, 3))
    w = np.random.default_rng(1).integers(-2, 3, (3, 3, 3, 2))
    y = tf.nn.conv2d(tf.cast(x, dtype), tf.cast(w, dtype), 1, "SAME")
    assert y.dtype == tf.as_dtype(dtype)
    got = np.asarray(run(tf.cast(y, tf.float64)))
    np.testing.assert_allclose(got, np_conv2d(x, w, (1, 1), "SAME"), rtol=tol, atol=tol)


def test_nchw_is_transposed_around_nhwc():
    x, w = rand(2, 6, 5, 3, seed=6), rand(3, 3, 3, 4, seed=7)
    x_nchw = tf.constant(x.transpose(0, 3, 1, 2))
    y = tf.nn.conv2d(x_nchw, w, [1, 1, 2, 1], "SAME", data_format="NCHW")
    p = tf.nn.max_pool(x_nchw, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    a = tf.nn.avg_pool(x_nchw, 2, 1, "SAME", data_format="NCHW")
    gx = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(p), x_nchw)[0]
    y_v, p_v, a_v, gx_v = run([y, p, a, gx])
    np.testing.assert_allclose(y_v, np_conv2d(x, w, (2, 1), "SAME").transpose(0, 3, 1, 2), rtol=1e-12)
    np.testing.assert_allclose(p_v, np_pool(x, (2, 2), (2, 2), "VALID", "max").transpose(0, 3, 1, 2))
    np.testing.assert_allclose(a_v, np_pool(x, (2, 2), (1, 1), "SAME", "avg").transpose(0, 3, 1, 2), rtol=1e-12)
    assert gx_v.shape == (2, 3, 6, 5)


def test_conv2d_transpose_is_the_gradient_of_conv2d():
    for xs, ws, strides, padding in [((2, 6, 6, 4), (3, 3, 4, 8), 2, "SAME"), ((1, 7, 5, 2), (2, 3, 2, 3), [2, 1], "VALID")]:
        with tf.Graph().as_default():
            x = tf.constant(rand(*xs, seed=8))
            w = tf.constant(rand(*ws, seed=9))
            y = tf.nn.conv2d(x, w, strides, padding)
            v = tf.constant(rand(*y.shape.as_list(), seed=10))
            t = tf.nn.conv2d_transpose(v, w, list(xs), strides, padding)
            assert t.shape.as_list() == list(xs)
            assert t.op.type == "Conv2DBackpropInput" and t.op.name == "conv2d_transpose"
            (g,) = tf.gradients(y, x, grad_ys=v)
            t_v, g_v = run([t, g])
            np.testing.assert_array_equal(t_v, g_v)
    # Aliases (input=, filters=) and an output_shape tensor known only when run.
    with tf.Graph().as_default():
        v, w = rand(1, 3, 3, 8, seed=11), rand(3, 3, 4, 8, seed=12)
        shape = tf.placeholder(tf.int32, [4])
        t = tf.nn.conv2d_transpose(input=v, filters=w, output_shape=shape, strides=[1, 2, 2, 1])
        assert t.shape.as_list() == [1, None, None, 4]
        got = run(t, {shape: [1, 6, 6, 4]})
        np.testing.assert_allclose(got, np_conv2d_backprop_input((1, 6, 6, 4), w, v, (2, 2), "SAME"), rtol=1e-12)


# --------------------------------------------------------------------------- pooling forward

# (input shape, ksize, strides, padding)
POOL_CASES = [
    ((2, 5, 5, 3), (3, 3), (2, 2), "SAME"),
    ((1, 6, 7, 2), (2, 3), (2, 1), "VALID"),
    ((1, 5, 5, 1), (4, 4), (3, 3), "SAME"),
    ((1, 4, 4, 2), (2, 2), (1, 1), "SAME"),
    ((1, 2, 2, 1), (5, 5), (1, 1), "SAME"),  # window larger than the input
    ((4, 40, 40, 16), (3, 3), (2, 2), "SAME"),  # large enough to run in parallel
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_pools_and_their_gradients_match_numpy(xs, k, s, padding, dtype):
    x = distinct(*xs, seed=13)
    x = (x - x.max() - 1).astype(dtype)  # all negative: zero padding would win a max
    xt = tf.constant(x)
    mp = tf.nn.max_pool(xt, [1, *k, 1], [1, *s, 1], padding)
    ap = tf.nn.avg_pool(xt, list(k), list(s), padding)
    g = rand(*mp.shape.as_list(), seed=14).astype(dtype)
    gm, ga = tf.gradients(mp, xt, grad_ys=g)[0], tf.gradients(ap, xt, grad_ys=g)[0]
    mp_v, ap_v, gm_v, ga_v = run([mp, ap, gm, ga])
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_array_equal(mp_v, np_pool(x, k, s, padding, "max"))
    np.testing.assert_allclose(ap_v, np_pool(x, k, s, padding, "avg"), rtol=tol, atol=tol * np.abs(x).max())
    np.testing.assert_allclose(gm_v, np_max_pool_grad(x, g, k, s, padding), rtol=tol, atol=tol)
    np.testing.assert_allclose(ga_v, np_avg_pool_grad(xs, g, k, s, padding), rtol=tol, atol=tol)


def test_same_avg_pool_divides_by_in_bounds_count():
    x = np.arange(1, 26, dtype=np.float32).reshape(1, 5, 5, 1)
    got = run(tf.nn.avg_pool(x, 3, 2, "SAME"))
    np.testing.assert_array_equal(got.reshape(-1), [4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22])  # TF's values


def test_max_pool_integers_and_halves():
    x = np.random.default_rng(0).integers(-50, 50, (2, 5, 6, 3))
    for dtype in ["int32", "int64", "uint8", "float16", "bfloat16"]:
        v = np.abs(x) if dtype == "uint8" else x
        with tf.Graph().as_default():
            got = run(tf.cast(tf.nn.max_pool(tf.cast(v, dtype), 2, 2, "SAME"), tf.float64))
        np.testing.assert_array_equal(got, np_pool(v, (2, 2), (2, 2), "SAME", "max"))


def _max_pool_and_grad(x, k=2, s=1, padding="VALID"):
    xt = tf.constant(np.asarray(x, np.float32).reshape(1, *np.shape(x), 1))
    y = tf.nn.max_pool(xt, k, s, padding)
    (g,) = tf.gradients(tf.reduce_sum(y), xt)
    y_v, g_v = run([y, g])
    return y_v.reshape(-1), g_v.reshape(np.shape(x))


def test_max_pool_gradient_goes_to_the_first_maximum():
    # TensorFlow's values: the first maximum of each window in row-major order.
    _, g = _max_pool_and_grad([[0, 2, 2], [1, 2, 0], [0, 2, 1]])
    np.testing.assert_array_equal(g, [[0, 2, 0], [0, 2, 0], [0, 0, 0]])
    _, g = _max_pool_and_grad([[1, 1], [1, 1]])
    np.testing.assert_array_equal(g, [[1, 0], [0, 0]])
    _, g = _max_pool_and_grad(np.ones((3, 3)), padding="SAME")
    np.testing.assert_array_equal(g, [[1, 1, 1], [1, 1, 1], [1, 1, 1]])
    _, g = _max_pool_and_grad(np.ones((4, 4)), k=3, s=2, padding="SAME")
    np.testing.assert_array_equal(g, np_max_pool_grad(np.ones((1, 4, 4, 1)), np.ones((1, 2, 2, 1)), (3, 3),
                                                      (2, 2), "SAME")[0, :, :, 0])


def test_max_pool_infinities_and_nans_as_tensorflow():
    y, g = _max_pool_and_grad(np.full((2, 2), -np.inf))
    np.testing.assert_array_equal(y, [np.finfo(np.float32).min])  # starts at the lowest finite value
    np.testing.assert_array_equal(g, [[1, 0], [0, 0]])
    y, g = _max_pool_and_grad([[1, np.nan], [3, 2]])
    np.testing.assert_array_equal(y, [3])  # NaN never compares greater
    np.testing.assert_array_equal(g, [[0, 0], [1, 0]])


# --------------------------------------------------------------------------- numerical gradients


def check_grad(build, *inputs, wrt=None, delta=1e-3, atol=1e-8):
    """Jacobians of ``build(*placeholders)`` (float64) w.r.t. each input in ``wrt``, theory vs numbers."""
    with tf.Graph().as_default():
        phs = [tf.placeholder(tf.float64, np.shape(a)) for a in inputs]
        y = build(*phs)
        feed = dict(zip(phs, inputs))
        for i in wrt if wrt is not None else range(len(inputs)):
            others = {p: v for p, v in feed.items() if p is not phs[i]}
            jt, jn = compute_gradient(phs[i], list(np.shape(inputs[i])), y, y.shape.as_list(),
                                      x_init_value=inputs[i], delta=delta, extra_feed_dict=others)
            assert np.abs(jt).max() > 0 or np.abs(jn).max() == 0
            np.testing.assert_allclose(jt, jn, rtol=0, atol=atol * max(1.0, np.abs(jn).max()), err_msg=f"input {i}")


GRAD_CONV_CASES = [
    ((1, 5, 5, 2), (3, 3, 2, 2), [1, 2, 2, 1], "SAME", [1, 1, 1, 1]),
    ((2, 6, 5, 1), (2, 2, 1, 2), [1, 1, 1, 1], "VALID", [1, 2, 2, 1]),
    ((1, 4, 4, 2), (3, 2, 2, 1), [1, 1, 2, 1], [[0, 0], [1, 0], [2, 1], [0, 0]], [1, 1, 1, 1]),
    ((1, 7, 7, 1), (3, 3, 1, 2), [1, 2, 2, 1], "SAME", [1, 2, 2, 1]),
]


@pytest.mark.parametrize("xs,ws,strides,padding,dil", GRAD_CONV_CASES)
def test_conv_gradients_numerically(xs, ws, strides, padding, dil):
    x, w = rand(*xs, seed=15), rand(*ws, seed=16)
    with tf.Graph().as_default():
        ys = tf.nn.conv2d(x, w, strides, padding, dilations=dil).shape.as_list()
    dy = rand(*ys, seed=17)
    # Conv2D: its gradients are Conv2DBackpropInput/Filter.
    check_grad(lambda a, b: tf.nn.conv2d(a, b, strides, padding, dilations=dil), x, w)
    # Conv2DBackpropInput (linear in filter and out_backprop).
    check_grad(lambda b, g: tf.nn.conv2d_backprop_input(list(xs), b, g, strides, padding, dilations=dil), w, dy)
    # Conv2DBackpropFilter (linear in input and out_backprop).
    check_grad(lambda a, g: tf.nn.conv2d_backprop_filter(a, list(ws), g, strides, padding, dilations=dil), x, dy)


def test_second_derivative_through_conv():
    x, w = rand(1, 4, 4, 2, seed=18), rand(2, 2, 2, 3, seed=19)

    def build(a, b):
        y = tf.nn.conv2d(a, b, 1, "SAME")
        ga, gb = tf.gradients(tf.reduce_sum(tf.square(y)), [a, b])
        return tf.reduce_sum(ga * ga) + tf.reduce_sum(tf.sin(gb))

    check_grad(build, x, w, atol=1e-6)


@pytest.mark.parametrize("k,s,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (1, 2), "SAME")])
def test_pool_gradients_numerically(k, s, padding):
    x = distinct(2, 5, 6, 2, seed=20)
    with tf.Graph().as_default():
        ys = tf.nn.max_pool(x, k, s, padding).shape.as_list()
    g = rand(*ys, seed=21)
    h = rand(*x.shape, seed=22)

    def max_pool_grad(a, b):  # MaxPoolGrad(a, max_pool(a), b)
        return tf.gradients(tf.nn.max_pool(a, k, s, padding), a, grad_ys=b)[0]

    def max_pool_grad_grad(a, b, c):  # MaxPoolGradGrad(a, max_pool(a), c)
        return tf.gradients(max_pool_grad(a, b), b, grad_ys=c)[0]

    def avg_pool_grad(a, b):
        return tf.gradients(tf.nn.avg_pool(a, k, s, padding), a, grad_ys=b)[0]

    check_grad(lambda a: tf.nn.max_pool(a, k, s, padding), x)
    check_grad(lambda a: tf.nn.avg_pool(a, k, s, padding), x)
    check_grad(max_pool_grad, x, g)
    check_grad(max_pool_grad_grad, x, g, h, wrt=[0, 2])
    check_grad(avg_pool_grad, x, g, wrt=[1])
    with tf.Graph().as_default():
        a, b, c = tf.constant(x), tf.constant(g), tf.constant(h)
        types = {op.type for op in max_pool_grad_grad(a, b, c).graph.get_operations()}
    assert {"MaxPool", "MaxPoolGrad", "MaxPoolGradGrad"} <= types


# --------------------------------------------------------------------------- errors


def test_construction_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"Shape must be rank 4 but is rank 3.*'Conv2D'.*\[5,5,3\], \[3,3,3,8\]"):
        tf.nn.conv2d(tf.zeros([5, 5, 3]), tf.zeros([3, 3, 3, 8]), 1, "SAME")
    with pytest.raises(ValueError, match=r"Shape must be rank 4 but is rank 3.*\[1,5,5,3\], \[3,3,8\]"):
        tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 8]), 1, "SAME")
    with pytest.raises(ValueError, match=r"Depth of input \(3\) is not a multiple of input depth of filter \(4\)"
                                         r".*\[1,5,5,3\], \[3,3,4,8\]"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [1, 5, 5, 3]), tf.zeros([3, 3, 4, 8]), 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 from 2"):
        tf.nn.conv2d(tf.zeros([1, 2, 2, 3]), tf.zeros([3, 3, 3, 8]), 1, "VALID")
    with pytest.raises(ValueError, match=r"strides should be of length 1, 2 or 4. Received: strides=\[1, 1, 1\]"):
        tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 3, 8]), [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Stride must be > 0, but got 0"):
        tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 3, 8]), [1, 0, 1, 1], "SAME")
    with pytest.raises(ValueError, match="'FOO' not in"):
        tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 3, 8]), 1, "FOO")
    with pytest.raises(TypeError, match="does not match type"):
        tf.nn.conv2d(tf.zeros([1, 5, 5, 3], tf.float64), tf.zeros([3, 3, 3, 8]), 1, "SAME")
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 7 and 8.*'conv2d_transpose'"):
        tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 7]), tf.zeros([3, 3, 4, 8]), [1, 6, 6, 4], 2)
    with pytest.raises(ValueError, match=r"Shape must be rank 4 but is rank 3.*'MaxPool'.*\[5,5,3\]"):
        tf.nn.max_pool(tf.zeros([5, 5, 3]), 2, 2, "SAME")
    with pytest.raises(ValueError, match="`ksize` cannot be zero"):
        tf.nn.max_pool(tf.zeros([1, 5, 5, 3]), [1, 0, 2, 1], 2, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 from 2"):
        tf.nn.avg_pool(tf.zeros([1, 2, 2, 3]), 3, 1, "VALID")
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        tf.nn.avg_pool(tf.zeros([1, 2, 2, 3], tf.int32), 1, 1, "VALID")


def test_unsupported_layouts_fail_at_construction():
    x, w = tf.zeros([1, 3, 5, 5]), tf.zeros([3, 3, 3, 8])
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NCHW"}
    with pytest.raises(errors.UnimplementedError, match="data_format NCHW is not supported"):
        make("Conv2D", [x, w], attrs)
    with pytest.raises(errors.UnimplementedError, match="depth dimension"):
        tf.nn.max_pool(tf.zeros([1, 5, 5, 4]), [1, 1, 1, 2], [1, 1, 1, 2], "VALID")


def test_runtime_errors():
    x = tf.placeholder(tf.float32, [None, None, None, None])
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 4, 8]), 1, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="input depth must be evenly divisible by filter depth: 3 vs 4"):
        run(y, {x: np.zeros((1, 5, 5, 3))})
    t = tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 8]), tf.zeros([3, 3, 4, 8]), [1, 9, 9, 4], 2)
    with pytest.raises(errors.InvalidArgumentError, match="Size of out_backprop doesn't match computed: actual = 3, "
                                                          "computed = 5"):
        run(t)
    y = tf.nn.conv2d(tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 3, 8]), [2, 1, 1, 1], "SAME")
    with pytest.raises(errors.UnimplementedError, match="strides in the batch and depth dimensions"):
        run(y)
    p = tf.nn.max_pool(tf.zeros([1, 5, 5, 3]), [2, 2, 2, 1], [1, 2, 2, 1], "SAME")
    with pytest.raises(errors.UnimplementedError, match="Pooling is not yet supported on the batch dimension"):
        run(p)


# --------------------------------------------------------------------------- training


def test_tiny_cnn_trains():
    rng = np.random.RandomState(0)
    images = rng.randn(32, 8, 8, 1).astype(np.float32)
    labels = (images[:, :4].sum(axis=(1, 2, 3)) > images[:, 4:].sum(axis=(1, 2, 3))).astype(np.int64)
    tf.set_random_seed(1)
    w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 8], stddev=0.3))
    b1 = tf.Variable(tf.zeros([8]))
    w2 = tf.Variable(tf.truncated_normal([3, 3, 8, 8], stddev=0.3))
    w3 = tf.Variable(tf.truncated_normal([2 * 2 * 8, 2], stddev=0.3))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, w1, 1, "SAME"), b1))
    h = tf.nn.max_pool(h, 2, 2, "SAME")  # 4x4
    h = tf.nn.relu(tf.nn.conv2d(h, w2, 1, "SAME"))
    h = tf.nn.avg_pool(h, 2, 2, "VALID")  # 2x2
    logits = tf.matmul(tf.reshape(h, [-1, 2 * 2 * 8]), w3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(40):
            sess.run(train)
        last = sess.run(loss)
    assert np.isfinite(last) and last < 0.6 * first, (first, last)
