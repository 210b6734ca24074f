"""``tf.image.adjust_jpeg_quality`` and ``random_jpeg_quality``: a JPEG round trip at a quality, in the
image's own dtype, the same as encoding and decoding by hand; seeded qualities reproduce."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf


def _image():
    rng = np.random.RandomState(0)
    return (rng.rand(24, 40, 3) * 0.2 + np.linspace(0, 0.8, 24)[:, None, None]).astype(np.float32)


def test_adjust_jpeg_quality_is_an_encode_decode_round_trip():
    img = _image()
    u8 = (img * 255.5).astype(np.uint8)  # convert_image_dtype's rounding
    with tf.Graph().as_default():
        adjusted = tf.image.adjust_jpeg_quality(tf.constant(img), 35)
        by_hand = tf.image.decode_jpeg(tf.image.encode_jpeg(tf.constant(u8), quality=35), channels=3)
        adjusted_u8 = tf.image.adjust_jpeg_quality(tf.constant(u8), 35)
        with tf.Session() as sess:
            got, want, got_u8 = sess.run([adjusted, by_hand, adjusted_u8])
    assert got.dtype == np.float32 and got.shape == img.shape
    np.testing.assert_array_equal(got_u8, want)
    np.testing.assert_allclose(got, want / 255.0, rtol=1e-6, atol=1e-6)
    # A low quality visibly changes the image; the round trip is not the identity.
    assert np.abs(got - img).max() > 0.02


def test_random_jpeg_quality_reproduces_for_a_seed():
    u8 = (_image() * 255).astype(np.uint8)

    def run(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            out = tf.image.random_jpeg_quality(tf.constant(u8), 5, 95, seed=seed)
            with tf.Session() as sess:
                return [sess.run(out) for _ in range(4)]

    first, again = run(1), run(1)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # Successive runs draw new qualities: not every draw gives the same pixels.
    assert any(not np.array_equal(first[0], other) for other in first[1:])


@pytest.mark.parametrize("lo,hi", [(-1, 50), (10, 101), (50, 50), (60, 40)])
def test_random_jpeg_quality_rejects_bad_ranges(lo, hi):
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.image.random_jpeg_quality(tf.zeros([4, 4, 3], tf.uint8), lo, hi)
