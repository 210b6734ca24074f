"""decode_csv, decode_raw, base64, decode_compressed, decode_json_example,
serialize/parse_tensor and the sparse serialization ops against TF 2.21
(tests/fixtures/parsing/decode_cases.json, made by make_parsing.py)."""

import base64

import numpy as np
import pytest

import ferroflow as tf
from _parsing_cases import array, assert_value, load

CASES = load("decode_cases.json")
CSV_DT = {"float32": tf.float32, "float64": tf.float64, "int32": tf.int32, "int64": tf.int64, "string": tf.string}
B = base64.b64decode


def _sparse(args):
    return tf.SparseTensor(array(args["indices"]), array(args["values"]), array(args["dense_shape"]))


def _build(case):
    op, a = case["op"], case["args"]
    if op == "decode_csv":
        rd = [tf.constant([], CSV_DT[d]) if v is None else tf.constant([v], CSV_DT[d]) for d, v in a["defaults"]]
        return tf.decode_csv(a["records"], rd, **a["kwargs"])
    if op == "decode_raw":
        raw = [B(x) for x in a["bytes"]] if isinstance(a["bytes"], list) else B(a["bytes"])
        return tf.decode_raw(raw, tf.as_dtype(a["out_type"]), little_endian=a["little_endian"])
    if op == "encode_base64":
        return tf.encode_base64([B(x) for x in a["input"]], pad=a["pad"])
    if op == "decode_base64":
        return tf.decode_base64([B(x) for x in a["input"]])
    if op == "decode_compressed":
        return tf.decode_compressed([B(x) for x in a["bytes"]], compression_type=a["compression_type"])
    if op == "decode_json_example":
        return tf.decode_json_example(a["json"])
    if op == "serialize_tensor":
        return tf.io.serialize_tensor(tf.constant(array(a["tensor"])))
    if op == "parse_tensor":
        return tf.io.parse_tensor(B(a["bytes"]), tf.as_dtype(a["out_type"]))
    if op == "serialize_sparse":
        return tf.serialize_sparse(_sparse(a))
    if op == "serialize_many_sparse":
        return tf.serialize_many_sparse(_sparse(a))
    if op == "deserialize_many_sparse":
        if "serialized" in a:
            return tf.deserialize_many_sparse(array(a["serialized"]), tf.as_dtype(a["dtype"]))
        return tf.deserialize_many_sparse(tf.serialize_many_sparse(_sparse(a)), tf.float32)
    raise ValueError(op)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_decode_matches_tensorflow(case):
    if "error" in case:
        err = getattr(tf.errors, case["error"])
        with pytest.raises(err) as info:
            with tf.Session() as sess:
                sess.run(_build(case))
        message = getattr(info.value, "message", str(info.value))
        if case["op"] in ("decode_json_example", "decode_compressed"):
            # Same error class; the detail comes from a different JSON / zlib library.
            assert message.startswith(case["message"].split(":")[0])
        else:
            assert case["message"] in message
        return
    out = _build(case)
    with tf.Session() as sess:
        got = sess.run(out)
    want = case["outputs"]
    if isinstance(want, list):
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_value(g, w, f"output {i}")
    else:
        assert_value(got, want, "output")


def test_parse_tensor_round_trips_every_dtype():
    values = [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1.5, -2.25], np.float64),
        np.array([[1, -2]], np.int32),
        np.array([1 << 50], np.int64),
        np.array([0, 255], np.uint8),
        np.array([-128, 127], np.int8),
        np.array([-3, 3], np.int16),
        np.array([7, 65535], np.uint16),
        np.array([0.5, -1], np.float16),
        np.array([True, False, True]),
        np.array([b"x", b"", b"\x00\xff"], dtype=object),
        np.float32(3.0),
    ]
    tensors = [tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant(v)), tf.as_dtype(np.asarray(v).dtype)
                                  if np.asarray(v).dtype != object else tf.string) for v in values]
    with tf.Session() as sess:
        got = sess.run(tensors)
    for g, v in zip(got, values):
        v = np.asarray(v)
        assert g.shape == v.shape
        assert g.reshape(-1).tolist() == v.reshape(-1).tolist()


def test_decode_raw_argument_spellings():
    with tf.Session() as sess:
        a = sess.run(tf.decode_raw(bytes=[b"\x01\x02"], out_type=tf.uint8))
        b = sess.run(tf.io.decode_raw(input_bytes=b"\x01\x00\x00\x00", out_type=tf.int32))
    assert a.tolist() == [[1, 2]] and b.tolist() == [1]
    with pytest.raises(ValueError):
        tf.decode_raw(input_bytes=b"a", bytes=b"b", out_type=tf.uint8)


def test_decode_csv_validates_select_cols():
    with pytest.raises(ValueError, match="strictly increasing"):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[1, 0])


def test_base64_round_trip_random():
    rng = np.random.RandomState(1)
    data = [bytes(rng.randint(0, 256, size=n).astype(np.uint8)) for n in range(0, 40)]
    with tf.Session() as sess:
        for pad in (False, True):
            got = sess.run(tf.decode_base64(tf.encode_base64(data, pad=pad)))
            assert list(got) == data
            enc = sess.run(tf.encode_base64(data, pad=pad))
            std = [base64.urlsafe_b64encode(d) for d in data]
            assert list(enc) == (std if pad else [s.rstrip(b"=") for s in std])
