"""The image codecs against TensorFlow 2.21's pixels (fixtures made by
tools/make_image_codec_fixtures.py), round trips, errors and tf.data use."""

import json
import os
import struct
import zlib

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "image_codecs")

with open(os.path.join(FIXTURES, "cases.json")) as f:
    CASES = json.load(f)["cases"]
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))


def read(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def build(case):
    data = read(case["file"])
    a = dict(case["attrs"])
    op = case["op"]
    if op == "DecodeJpeg":
        return tf.io.decode_jpeg(data, **a)
    if op == "DecodeAndCropJpeg":
        window = a.pop("crop_window")
        return tf.io.decode_and_crop_jpeg(data, window, **a)
    if op == "ExtractJpegShape":
        return tf.io.extract_jpeg_shape(data)
    if op == "DecodePng":
        return tf.io.decode_png(data, channels=a.get("channels", 0), dtype=getattr(tf, a.get("dtype", "uint8")))
    if op == "DecodeGif":
        return tf.io.decode_gif(data)
    if op == "DecodeBmp":
        return tf.io.decode_bmp(data, **a)
    if op == "DecodeImage":
        if "dtype" in a:
            a["dtype"] = getattr(tf, a["dtype"])
        return tf.io.decode_image(data, **a)
    raise AssertionError(op)


def case_id(c):
    return f"{c['file']}-{c['op']}-" + ",".join(f"{k}={v}" for k, v in c["attrs"].items())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_tensorflow(case):
    """Every decode is bit-exact with TensorFlow's (or fails where TF fails)."""
    with tf.Graph().as_default():
        if "error" in case:
            with pytest.raises(tf.errors.InvalidArgumentError):
                run(build(case))
            return
        got = run(build(case))
    want = EXPECTED[case["key"]]
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def picture(h, w, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) % 256], -1)
    return np.clip(img + rng.integers(-8, 9, img.shape), 0, 255).astype(np.uint8)


def test_jpeg_round_trip_and_options():
    img = picture(40, 56)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [None, None, 3])
        plain = tf.io.encode_jpeg(x)
        small = tf.io.encode_jpeg(x, quality=20, progressive=True, optimize_size=True)
        full = tf.io.encode_jpeg(x, chroma_downsampling=False, density_unit="cm", x_density=72, y_density=96,
                                 xmp_metadata="<x:xmpmeta/>")
        gray = tf.io.encode_jpeg(x[:, :, :1], format="grayscale")
        assert plain.shape.as_list() == []
        a, b, c, g = run([plain, small, full, gray], {x: img})
        dec = run([tf.io.decode_jpeg(a), tf.io.decode_jpeg(c), tf.io.decode_jpeg(g)])
    assert len(b) < len(a)
    assert b"<x:xmpmeta/>" in c and b"http://ns.adobe.com/xap/1.0/\x00" in c
    # JFIF density: unit 2 (cm), 72 x 96.
    assert c[13:18] == bytes([2, 0, 72, 0, 96])
    for d in dec[:2]:
        assert d.shape == img.shape
        assert np.abs(d.astype(int) - img).mean() < 4
        assert np.abs(d.astype(int) - img).max() <= 40
    assert dec[2].shape == (40, 56, 1)


def test_png_round_trip_is_exact():
    with tf.Graph().as_default():
        for channels in (1, 2, 3, 4):
            img = picture(9, 13)[:, :, :1].repeat(4, -1)[:, :, :channels]
            enc = tf.io.encode_png(img, compression=9)
            np.testing.assert_array_equal(run(tf.io.decode_png(enc)), img)
        img16 = (np.arange(9 * 13 * 3).reshape(9, 13, 3) * 97).astype(np.uint16)
        out = run(tf.io.decode_png(tf.io.encode_png(img16), dtype=tf.uint16))
        np.testing.assert_array_equal(out, img16)
        batch = tf.io.encode_png(np.zeros([2, 3, 4, 5, 1], np.uint8))
        assert batch.shape.as_list() == [2, 3]
        assert run(batch).shape == (2, 3)


def test_static_shapes():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        assert tf.io.decode_jpeg(s, channels=3).shape.as_list() == [None, None, 3]
        assert tf.io.decode_png(s).shape.as_list() == [None, None, None]
        assert tf.io.decode_png(s, dtype=tf.uint16).dtype == tf.uint16
        assert tf.io.decode_gif(s).shape.as_list() == [None, None, None, 3]
        assert tf.io.decode_bmp(s, channels=4).shape.as_list() == [None, None, 4]
        assert tf.io.decode_and_crop_jpeg(s, [1, 2, 3, 4], channels=1).shape.as_list() == [3, 4, 1]
        assert tf.io.decode_image(s).shape.ndims is None
        assert tf.io.decode_image(s, channels=3, expand_animations=False).shape.as_list() == [None, None, 3]
        assert tf.io.extract_jpeg_shape(s).shape.as_list() == [3]
        assert tf.io.extract_jpeg_shape(s, output_type=tf.int64).dtype == tf.int64


def test_is_jpeg_and_sniffing():
    jpeg, png = read("420.jpg"), read("rgb8.png")
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        flag = tf.io.is_jpeg(s)
        assert run(flag, {s: jpeg}) and not run(flag, {s: png}) and not run(flag, {s: b""})
        # decode_png decodes a JPEG, decode_jpeg a PNG (TF 2.x's shared kernel).
        np.testing.assert_array_equal(run(tf.io.decode_png(jpeg)), run(tf.io.decode_jpeg(jpeg)))
        np.testing.assert_array_equal(run(tf.io.decode_jpeg(png)), run(tf.io.decode_png(png)))


def test_decode_image_converts_other_dtypes():
    png = read("rgb8.png")
    with tf.Graph().as_default():
        f = run(tf.io.decode_image(png, dtype=tf.float32))
        u = run(tf.io.decode_png(png))
    assert f.dtype == np.float32
    np.testing.assert_allclose(f, u / 255.0, atol=1e-6)


def png_header_only(width, height, color_type=2):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1000)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


BAD = [
    ("truncated jpeg", "DecodeJpeg", lambda: read("420.jpg")[:300], "Invalid JPEG data"),
    ("corrupt jpeg", "DecodeJpeg", lambda: b"\xff\xd8\xff" + b"x" * 200, "Invalid JPEG data"),
    ("jpeg header only", "DecodeJpeg", lambda: read("444.jpg")[:30], "Invalid JPEG data"),
    ("truncated png", "DecodePng", lambda: read("rgb8.png")[:2000], "Invalid PNG data"),
    ("png header", "DecodePng", lambda: read("rgb8.png")[:20], "Invalid PNG"),
    ("png bomb", "DecodePng", lambda: png_header_only(100_000, 100_000), "PNG size too large for int: 100000 by 100000"),
    ("png bomb 2", "DecodeImage", lambda: png_header_only(20_000, 20_000, 6), "too large"),
    ("truncated gif", "DecodeGif", lambda: read("anim.gif")[:700], "Invalid GIF data"),
    ("corrupt gif", "DecodeGif", lambda: b"GIF89a" + b"x" * 30, "Invalid GIF data"),
    ("truncated bmp", "DecodeBmp", lambda: read("rgb24.bmp")[:500], "Input size should match"),
    ("short bmp", "DecodeBmp", lambda: read("rgb24.bmp")[:20], "at least 32 bytes"),
    ("unknown", "DecodeImage", lambda: b"hello world 1234", "Unknown image file format"),
    ("empty", "DecodeImage", lambda: b"", "Input is empty."),
    ("bmp via decode_png", "DecodePng", lambda: read("rgb24.bmp"), "Trying to decode BMP format using a wrong op"),
    ("png via decode_bmp", "DecodeBmp", lambda: read("rgb8.png"), "Trying to decode PNG format using DecodeBmp"),
    ("animated gif via decode_png", "DecodePng", lambda: read("anim.gif"), "Got 3 frames"),
]


@pytest.mark.parametrize("what,op,data,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_typed_error(what, op, data, message):
    fn = {
        "DecodeJpeg": tf.io.decode_jpeg,
        "DecodePng": tf.io.decode_png,
        "DecodeGif": tf.io.decode_gif,
        "DecodeBmp": tf.io.decode_bmp,
        "DecodeImage": tf.io.decode_image,
    }[op]
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        out = fn(s, name=f"my_{op}")
        with pytest.raises(tf.errors.InvalidArgumentError, match=message) as e:
            run(out, {s: data()})
    # The error names the node that failed.
    assert f"my_{op}" in str(e.value)


def test_bad_attributes():
    jpeg = read("420.jpg")
    with tf.Graph().as_default():
        cases = [
            (tf.io.decode_jpeg(jpeg, ratio=3), "ratio must be 1, 2, 4, or 8, got 3"),
            (tf.io.decode_jpeg(jpeg, channels=2), "`channels` must be 0, 1, 3 or 4 but got 2"),
            (tf.io.decode_jpeg(jpeg, channels=4), "JPEG does not support 4 channels"),
            (tf.io.decode_jpeg(jpeg, dct_method="FLOAT"), "dct_method must be one of"),
            (tf.io.decode_image(read("anim.gif"), channels=1), "channels must be 0 or 3 for GIF, got 1"),
            (tf.io.decode_bmp(read("rgb24.bmp"), channels=1), "must be 0, 3 or 4 for BMP"),
            (tf.io.encode_jpeg(np.zeros([4, 4, 2], np.uint8)), "image must have 1 or 3 channels"),
            (tf.io.encode_jpeg(np.zeros([4, 4, 1], np.uint8), format="rgb"), "format rgb expects 3 channels"),
            (tf.io.encode_jpeg(np.zeros([4, 4, 3], np.uint8), quality=101), r"quality must be in \[0,100\]"),
            (tf.io.encode_png(np.zeros([4, 4, 5], np.uint8)), "image must have 1, 2, 3, or 4 channels, got 5"),
            (tf.io.encode_png(np.zeros([4, 4, 3], np.uint8), compression=10), r"compression should be in \[-1,9\]"),
        ]
        for out, message in cases:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                run(out)
        with pytest.raises(tf.errors.InternalError, match="JPEG encoding failed"):
            run(tf.io.encode_jpeg(np.zeros([0, 4, 3], np.uint8)))


def test_decode_in_dataset_map():
    files = ["444.jpg", "420.jpg", "gray.jpg", "rgb8.png", "rgb24.bmp"]
    blobs = [read(f) for f in files]
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(blobs)
        ds = ds.map(lambda s: tf.io.decode_image(s, channels=3, expand_animations=False), num_parallel_calls=2)
        it = tf.data.make_one_shot_iterator(ds)
        nxt = it.get_next()
        with tf.Session() as sess:
            got = [sess.run(nxt) for _ in files]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
        want = [run(tf.io.decode_image(b, channels=3, expand_animations=False)) for b in blobs]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
