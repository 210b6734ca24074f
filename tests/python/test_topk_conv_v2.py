"""tf.math.approx_max_k / approx_min_k / tf.approx_top_k (exact on a CPU, as TF 2.21's CPU kernel)
and tf.conv2d_backprop_input_v2 / conv2d_backprop_filter_v2."""

import numpy as np
import pytest

import ferroflow.compat.v1 as tf

X = np.array([[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], [5.0, 3.0, 5.0, 8.0, 9.0, 7.0, 9.0, 3.0]], np.float32)


def test_approx_max_k_matches_tensorflow():
    with tf.Graph().as_default(), tf.Session() as s:
        v, i = s.run(tf.math.approx_max_k(tf.constant(X), 3))
    # Observed with TensorFlow 2.21 on a CPU: ties go to the lower index.
    np.testing.assert_array_equal(v, [[9, 6, 5], [9, 9, 8]])
    np.testing.assert_array_equal(i, [[5, 7, 4], [4, 6, 3]])
    assert i.dtype == np.int32
    assert tf.nn.approx_max_k is tf.math.approx_max_k and tf.nn.approx_min_k is tf.math.approx_min_k


def test_min_k_and_other_axes_agree_with_numpy():
    rng = np.random.RandomState(0)
    x = rng.randn(4, 6, 5).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        v, i = s.run(tf.math.approx_min_k(x, 2, reduction_dimension=1))
        r = s.run(tf.approx_top_k(x, 3, reduction_dimension=0, is_max_k=True))
    order = np.argsort(x, axis=1, kind="stable")[:, :2, :]
    np.testing.assert_array_equal(i, order)
    np.testing.assert_allclose(v, np.take_along_axis(x, order, axis=1))
    top = np.argsort(-x, axis=0, kind="stable")[:3]
    np.testing.assert_array_equal(r.indices, top)
    np.testing.assert_allclose(r.values, np.take_along_axis(x, top, axis=0))


def test_approx_top_k_refuses_integers_as_tensorflow():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.math.approx_max_k(tf.constant([[1, 2]]), 1)


@pytest.mark.parametrize("padding", ["SAME", "VALID", "EXPLICIT"])
def test_conv_backprop_v2_equals_the_sized_forms(padding):
    rng = np.random.RandomState(1)
    x = rng.randn(2, 7, 6, 3).astype(np.float32)
    w = rng.randn(3, 2, 3, 4).astype(np.float32)
    explicit = [0, 0, 1, 1, 0, 2, 0, 0] if padding == "EXPLICIT" else []
    pairs = [[0, 0], [1, 1], [0, 2], [0, 0]] if padding == "EXPLICIT" else padding
    with tf.Graph().as_default(), tf.Session() as s:
        y = tf.nn.conv2d(x, w, [1, 2, 1, 1], pairs)
        dy = tf.constant(rng.randn(*y.shape.as_list()).astype(np.float32))
        gx = tf.conv2d_backprop_input_v2(x, w, dy, [1, 2, 1, 1], padding, explicit_paddings=explicit)
        gw = tf.conv2d_backprop_filter_v2(x, w, dy, [1, 2, 1, 1], padding, explicit_paddings=explicit)
        xt, wt = tf.constant(x), tf.constant(w)
        want_x, want_w = tf.gradients(tf.nn.conv2d(xt, wt, [1, 2, 1, 1], pairs), [xt, wt], dy)
        a, b, c, d = s.run([gx, gw, want_x, want_w])
    np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b, d, rtol=1e-5, atol=1e-5)
