"""The gradient of ``tf.image.extract_patches`` (``ExtractImagePatches``): each window element's
gradient flows back to the pixel it was read from, and padding receives nothing. Checked against a
NumPy scatter of the same windows, for VALID and SAME padding, strides and rates."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf


def _numpy_patches_grad(shape, dy, ksize, stride, rate, padding):
    """Scatters ``dy`` ([b, out_r, out_c, kh*kw*d]) back onto an image of ``shape``."""
    b, h, w, d = shape
    kh, kw = ksize
    eff_h, eff_w = kh + (kh - 1) * (rate[0] - 1), kw + (kw - 1) * (rate[1] - 1)
    if padding == "SAME":
        out_h, out_w = -(-h // stride[0]), -(-w // stride[1])
        top = max(0, (out_h - 1) * stride[0] + eff_h - h) // 2
        left = max(0, (out_w - 1) * stride[1] + eff_w - w) // 2
    else:
        out_h, out_w = -(-(h - eff_h + 1) // stride[0]), -(-(w - eff_w + 1) // stride[1])
        top = left = 0
    assert dy.shape == (b, out_h, out_w, kh * kw * d)
    dx = np.zeros(shape, np.float64)
    for y in range(out_h):
        for x in range(out_w):
            for i in range(kh):
                for j in range(kw):
                    r = y * stride[0] + i * rate[0] - top
                    c = x * stride[1] + j * rate[1] - left
                    if 0 <= r < h and 0 <= c < w:
                        k = (i * kw + j) * d
                        dx[:, r, c, :] += dy[:, y, x, k:k + d]
    return dx


@pytest.mark.parametrize(
    "shape,ksize,stride,rate,padding",
    [
        ((2, 5, 6, 3), (2, 2), (1, 1), (1, 1), "VALID"),
        ((1, 7, 7, 2), (3, 3), (2, 2), (1, 1), "SAME"),
        ((2, 8, 9, 1), (2, 3), (3, 2), (2, 1), "SAME"),
        ((1, 6, 5, 4), (3, 2), (1, 2), (1, 2), "VALID"),
    ],
)
def test_extract_patches_gradient_scatters_back(shape, ksize, stride, rate, padding):
    rng = np.random.RandomState(3)
    with tf.Graph().as_default():
        x = tf.constant(rng.randn(*shape).astype(np.float32))
        patches = tf.image.extract_patches(x, [1, *ksize, 1], [1, *stride, 1], [1, *rate, 1], padding)
        weights = tf.constant(rng.randn(*patches.shape.as_list()).astype(np.float32))
        (dx,) = tf.gradients(tf.reduce_sum(patches * weights), [x])
        with tf.Session() as sess:
            got, w = sess.run([dx, weights])
    want = _numpy_patches_grad(shape, w.astype(np.float64), ksize, stride, rate, padding)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_top_level_name_and_ksizes_alias():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    with tf.Graph().as_default():
        a = tf.extract_image_patches(x, ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1], padding="VALID")
        b = tf.image.extract_image_patches(x, sizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1],
                                           padding="VALID")
        assert a.shape.as_list() == [1, 2, 2, 4]
        with tf.Session() as sess:
            va, vb = sess.run([a, b])
    np.testing.assert_array_equal(va, vb)
    np.testing.assert_array_equal(va[0, 0, 0], [0, 1, 4, 5])
    with pytest.raises(ValueError):
        tf.extract_image_patches(x, ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1], padding="VALID",
                                 sizes=[1, 2, 2, 1])
