"""tf.io.decode_jxl and JPEG XL through the other decode ops, against
TensorFlow 2.21's pixels and errors (fixtures made by
tools/make_jxl_fixtures.py: files from libjxl's cjxl, decoded by TF, which
uses libjxl; ferroflow decodes with the pure-Rust jxl-oxide)."""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "image_jxl")

with open(os.path.join(FIXTURES, "cases.json")) as f:
    META = json.load(f)
CASES = META["cases"]
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))

# Lossless files must match exactly. Lossy (VarDCT) files are reconstructed
# in floating point by both decoders and rounded to 8 bits: on these files
# a quarter of the samples differ, by 1 at most.
LOSSY_MAX_DIFF = 1

# Both refuse these bytes with InvalidArgument, at different steps: libjxl
# reads a (nonsense) basic-info header from them and fails on the frame,
# jxl-oxide already refuses the header.
OUR_MESSAGE = {"bad_header.jxl": "Failed to decode JXL header"}


def read(name):
    with open(os.path.join(FIXTURES, name), "rb") as fh:
        return fh.read()


def build(case):
    a = dict(case["attrs"])
    if "dtype" in a:
        a["dtype"] = getattr(tf, a["dtype"])
    fn = {
        "DecodeJxl": tf.io.decode_jxl,
        "DecodeImage": tf.io.decode_image,
        "DecodePng": tf.io.decode_png,
        "DecodeGif": tf.io.decode_gif,
        "DecodeBmp": tf.io.decode_bmp,
    }[case["op"]]
    return fn(read(case["file"]), **a)


def case_id(c):
    return f"{c['file']}-{c['op']}-" + ",".join(f"{k}={v}" for k, v in c["attrs"].items())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_tensorflow(case):
    with tf.Graph().as_default():
        out = build(case)
        with tf.Session() as sess:
            if "error" in case:
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=OUR_MESSAGE.get(case["file"], case["error"])):
                    sess.run(out)
                return
            got = sess.run(out)
    want = EXPECTED[case["expected"]]
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if "lossless" in case["file"]:
        np.testing.assert_array_equal(got, want)
    else:
        assert np.abs(got.astype(np.int16) - want.astype(np.int16)).max() <= LOSSY_MAX_DIFF


def test_static_shapes_and_errors_name_the_op():
    shapes = META["static_shapes"]
    with tf.Graph().as_default():
        c = tf.placeholder(tf.string, [])
        assert tf.io.decode_jxl(c).shape.as_list() == shapes["DecodeJxl"]
        assert tf.image.decode_jxl(c, channels=3).shape.as_list() == shapes["DecodeJxl_channels3"]
        with pytest.raises(TypeError, match="not in list of allowed values: uint8"):
            tf.io.decode_jxl(c, dtype=tf.float32)
        out = tf.io.decode_jxl(c, name="my_jxl")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(out, {c: read("trunc_rgb.jxl")})
            assert "my_jxl" in str(e.value)
            assert "Failed to decode JXL image" in str(e.value)
