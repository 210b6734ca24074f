"""tf.io.decode_webp and WebP through the other decode ops, against
TensorFlow 2.21's pixels and errors (fixtures made by
tools/make_webp_fixtures.py from files Pillow's libwebp encoded)."""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "image_webp")

with open(os.path.join(FIXTURES, "cases.json")) as f:
    META = json.load(f)
CASES = META["cases"]
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))

# Lossy WebP: TensorFlow decodes with libwebp, ferroflow with the pure-Rust
# image-webp; both follow the VP8 spec's integer reconstruction and libwebp's
# fixed-point YUV->RGB with "fancy" chroma upsampling, so the pixels agree
# exactly on these files. Lossless files must match exactly by definition.
LOSSY_MAX_DIFF = 0


def read(name):
    with open(os.path.join(FIXTURES, name), "rb") as fh:
        return fh.read()


def build(case):
    data = read(case["file"])
    a = dict(case["attrs"])
    if "dtype" in a:
        a["dtype"] = getattr(tf, a["dtype"])
    fn = {
        "DecodeWebP": tf.io.decode_webp,
        "DecodeImage": tf.io.decode_image,
        "DecodePng": tf.io.decode_png,
        "DecodeJpeg": tf.io.decode_jpeg,
        "DecodeBmp": tf.io.decode_bmp,
        "DecodeGif": tf.io.decode_gif,
    }[case["op"]]
    return fn(data, **a)


def case_id(c):
    return f"{c['file']}-{c['op']}-" + ",".join(f"{k}={v}" for k, v in c["attrs"].items())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_tensorflow(case):
    with tf.Graph().as_default():
        out = build(case)
        with tf.Session() as sess:
            if "error" in case:
                with pytest.raises(tf.errors.InvalidArgumentError, match=case["error"].replace(".", r"\.")):
                    sess.run(out)
                return
            got = sess.run(out)
    want = EXPECTED[case["expected"]]
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if "lossy" in case["file"] or "mixed" in case["file"]:
        diff = np.abs(got.astype(np.int16) - want.astype(np.int16)).max()
        assert diff <= LOSSY_MAX_DIFF
    else:
        np.testing.assert_array_equal(got, want)


def test_static_shapes_and_errors_name_the_op():
    shapes = META["static_shapes"]
    with tf.Graph().as_default():
        c = tf.placeholder(tf.string, [])
        assert tf.io.decode_webp(c).shape.as_list() == shapes["DecodeWebP"]
        assert tf.image.decode_webp(c, channels=4).shape.as_list() == shapes["DecodeWebP_channels4"]
        with pytest.raises(TypeError, match="not in list of allowed values: uint8"):
            tf.io.decode_webp(c, dtype=tf.uint16)
        out = tf.io.decode_webp(c, name="my_webp")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(out, {c: read("trunc_lossless.webp")})
            assert "my_webp" in str(e.value)
            assert "Failed to decode WebP image." in str(e.value)


def test_huge_declared_size_is_refused_before_decoding():
    # A lossless header declaring 16384 x 16384 RGBA (1 GiB) and nothing else.
    bits = 16383 | 16383 << 14 | 1 << 28
    data = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f" + bits.to_bytes(4, "little") + bytes(9)
    with tf.Graph().as_default():
        out = tf.io.decode_webp(data)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="too large"):
            sess.run(out)


def test_decode_image_sniffs_webp_in_a_dataset():
    files = [read("lossless_rgb.webp"), read("lossy_rgb.webp")]
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(files).map(
            lambda s: tf.shape(tf.io.decode_image(s, expand_animations=False)))
        it = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as sess:
            assert sess.run(it).tolist() == [13, 17, 3]
            assert sess.run(it).tolist() == [33, 47, 3]
