"""tf.parse_example / parse_single_example / parse_(single_)sequence_example against TF 2.21.

Every case of tests/fixtures/parsing/parse_cases.json (made by make_parsing.py
with real TensorFlow): the same serialized protos and feature specs, the same
outputs, or the same error class and message.
"""

import base64

import numpy as np
import pytest

import ferroflow as tf
from _parsing_cases import assert_value, feature, load

CASES = load("parse_cases.json")


def _serialized(case):
    s = case["serialized"]
    if isinstance(s, list):
        return np.array([base64.b64decode(x) for x in s], dtype=object).reshape([len(s)])
    return base64.b64decode(s)


def _build(case):
    ser = _serialized(case)
    fn = case["fn"]
    if fn == "parse_example":
        feats = {k: feature(v) for k, v in case["features"].items()}
        names = case["names"]
        return tf.parse_example(tf.constant(ser, dtype=tf.string), feats, example_names=names)
    if fn == "parse_single_example":
        feats = {k: feature(v) for k, v in case["features"].items()}
        return tf.parse_single_example(ser, feats)
    ctx = {k: feature(v) for k, v in case["context"].items()}
    seq = {k: feature(v) for k, v in case["sequence"].items()}
    if fn == "parse_single_sequence_example":
        c, s = tf.io.parse_single_sequence_example(ser, ctx, seq)
        return {**{"context/" + k: v for k, v in c.items()}, **{"sequence/" + k: v for k, v in s.items()}}
    c, s, lengths = tf.io.parse_sequence_example(ser, ctx, seq)
    return {
        **{"context/" + k: v for k, v in c.items()},
        **{"sequence/" + k: v for k, v in s.items()},
        **{"lengths/" + k: v for k, v in lengths.items()},
    }


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_parse_matches_tensorflow(case):
    if "error" in case:
        err = getattr(tf.errors, case["error"], None) or {"ValueError": ValueError, "TypeError": TypeError}[
            case["error"]]
        with pytest.raises(err) as info:
            out = _build(case)
            with tf.Session() as sess:
                sess.run(out)
        message = getattr(info.value, "message", str(info.value))
        assert case["message"] in message
        return
    out = _build(case)
    with tf.Session() as sess:
        got = sess.run(out)
    assert sorted(got) == sorted(case["outputs"])
    for key, want in case["outputs"].items():
        assert_value(got[key], want, key)


def test_static_shapes():
    ser = tf.placeholder(tf.string, [None])
    out = tf.parse_example(ser, {
        "a": tf.FixedLenFeature([2, 3], tf.float32),
        "b": tf.VarLenFeature(tf.int64),
        "c": tf.FixedLenSequenceFeature([4], tf.string, allow_missing=True),
    })
    assert out["a"].shape.as_list() == [None, 2, 3]
    assert out["b"].indices.shape.as_list() == [None, 2]
    assert out["b"].dense_shape.shape.as_list() == [2]
    assert out["c"].shape.as_list() == [None, None, 4]
    one = tf.parse_single_example(tf.placeholder(tf.string, []), {"a": tf.FixedLenFeature([3], tf.int64)})
    assert one["a"].shape.as_list() == [3]
    assert out["a"].op.type == "ParseExampleV2"


def test_graph_matches_tensorflow_layout():
    """Inputs and attrs as TF 2.x's tf.compat.v1.parse_example writes them (features sorted by key)."""
    ser = tf.placeholder(tf.string, [None])
    out = tf.parse_example(ser, {"z": tf.VarLenFeature(tf.float32), "a": tf.FixedLenFeature([], tf.int64, 0),
                                 "m": tf.VarLenFeature(tf.string)})
    op = out["a"].op
    assert [i.op.name.rsplit("/", 1)[-1] for i in op.inputs[1:5]] == ["names", "sparse_keys", "dense_keys",
                                                                        "ragged_keys"]
    assert op.get_attr("num_sparse") == 2
    assert [tf.as_dtype(t) for t in op.get_attr("sparse_types")] == [tf.string, tf.float32]
    with tf.Session() as sess:
        keys = sess.run(op.inputs[2])
    assert list(keys) == [b"m", b"z"]


def test_parse_single_example_rejects_vector():
    with pytest.raises(ValueError):
        tf.parse_single_example(tf.constant([b"", b""]), {"a": tf.VarLenFeature(tf.int64)})


def test_sequence_feature_needs_allow_missing_in_parse_example():
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(tf.constant([b""]), {"a": tf.FixedLenSequenceFeature([], tf.int64)})


def test_fed_batch_and_names():
    ser = tf.placeholder(tf.string, [None])
    names = tf.placeholder(tf.string, [None])
    out = tf.parse_example(ser, {"x": tf.FixedLenFeature([], tf.float32)}, example_names=names)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Name: ex1, Feature: x"):
            sess.run(out, {ser: [b"", b""], names: [b"ex1", b"ex0"]})


def _example(**features):
    """A serialized Example with int64 / float / bytes features, encoded by hand."""
    import struct

    def varint(n):
        n &= (1 << 64) - 1
        out = bytearray()
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)

    def ld(tag, body):
        return bytes([tag]) + varint(len(body)) + body

    entries = b""
    for key, values in sorted(features.items()):
        if isinstance(values[0], float):
            feat = ld(0x12, ld(0x0A, struct.pack(f"<{len(values)}f", *values)))
        elif isinstance(values[0], int):
            feat = ld(0x1A, ld(0x0A, b"".join(varint(v) for v in values)))
        else:
            feat = ld(0x0A, b"".join(ld(0x0A, v) for v in values))
        entries += ld(0x0A, ld(0x0A, key.encode()) + ld(0x12, feat))
    return ld(0x0A, entries)


def test_legacy_parse_example_and_parse_single_example_ops():
    """The v1 ops (in GraphDefs of older TensorFlow) give what ParseExampleV2 gives."""
    from ferroflow.ops._op_util import make_op

    serialized = [_example(a=[1, 2], b=[0.5], s=[b"x", b"y"]), _example(a=[3, 4], s=[b"z"])]
    ser = tf.constant(serialized, dtype=tf.string)
    v1 = make_op(
        "ParseExample",
        [ser, tf.constant([], dtype=tf.string), tf.constant("s"), tf.constant("a"), tf.constant("b"),
         tf.constant([], dtype=tf.int64), tf.constant([9.0], dtype=tf.float32)],
        {"Nsparse": 1, "Ndense": 2, "sparse_types": ("list_type", [tf.string.as_datatype_enum]),
         "Tdense": ("list_type", [tf.int64.as_datatype_enum, tf.float32.as_datatype_enum]),
         "dense_shapes": ("list_shape", [[2], [1]])},
    )
    single = make_op(
        "ParseSingleExample",
        [tf.constant(serialized[1], dtype=tf.string), tf.constant([], dtype=tf.int64),
         tf.constant([9.0], dtype=tf.float32)],
        {"num_sparse": 1, "sparse_keys": ["s"], "dense_keys": ["a", "b"],
         "sparse_types": ("list_type", [tf.string.as_datatype_enum]),
         "Tdense": ("list_type", [tf.int64.as_datatype_enum, tf.float32.as_datatype_enum]),
         "dense_shapes": ("list_shape", [[2], [1]])},
    )
    v2 = tf.parse_example(ser, {"s": tf.VarLenFeature(tf.string), "a": tf.FixedLenFeature([2], tf.int64),
                                "b": tf.FixedLenFeature([1], tf.float32, default_value=[9.0])})
    with tf.Session() as sess:
        got1, got_single, want = sess.run([v1.outputs, single.outputs, v2])
    assert got1[0].tolist() == want["s"].indices.tolist()
    assert got1[1].tolist() == want["s"].values.tolist()
    assert got1[2].tolist() == want["s"].dense_shape.tolist()
    assert got1[3].tolist() == want["a"].tolist() == [[1, 2], [3, 4]]
    assert got1[4].tolist() == want["b"].tolist() == [[0.5], [9.0]]
    assert got_single[0].tolist() == [[0]] and got_single[1].tolist() == [b"z"] and got_single[2].tolist() == [1]
    assert got_single[3].tolist() == [3, 4] and got_single[4].tolist() == [9.0]


def test_legacy_parse_single_sequence_example_op():
    """The v1 op gives what ParseSequenceExampleV2 gives (keys as scalar inputs, no lengths)."""
    from ferroflow.ops._op_util import make_op

    case = next(c for c in CASES if c["name"] == "seq_single")
    ser = tf.constant(base64.b64decode(case["serialized"]), dtype=tf.string)
    enum = {"int64": tf.int64, "float32": tf.float32, "string": tf.string}
    op = make_op(
        "ParseSingleSequenceExample",
        [ser, tf.constant(["missing"], dtype=tf.string), tf.constant("w"), tf.constant("len"), tf.constant("ragged"),
         tf.constant("emb"), tf.constant("tok"), tf.constant([], dtype=tf.int64), tf.constant("", dtype=tf.string)],
        {"Ncontext_sparse": 1, "Ncontext_dense": 1, "Nfeature_list_sparse": 1, "Nfeature_list_dense": 2,
         "context_sparse_types": ("list_type", [enum["float32"].as_datatype_enum]),
         "Tcontext_dense": ("list_type", [enum["int64"].as_datatype_enum]),
         "context_dense_shapes": ("list_shape", [[]]),
         "feature_list_sparse_types": ("list_type", [enum["int64"].as_datatype_enum]),
         "feature_list_dense_types": ("list_type", [enum["float32"].as_datatype_enum, enum["int64"].as_datatype_enum]),
         "feature_list_dense_shapes": ("list_shape", [[2], []])},
    )
    with tf.Session() as sess:
        got = sess.run(op.outputs)
    out = case["outputs"]
    w, length, ragged, emb, tok = got[0:3], got[3], got[4:7], got[7], got[8]
    assert_value(tf.SparseTensorValue(*w), out["context/w"], "w")
    assert_value(length, out["context/len"], "len")
    assert_value(tf.SparseTensorValue(*ragged), out["sequence/ragged"], "ragged")
    assert_value(emb, out["sequence/emb"], "emb")
    assert_value(tok, out["sequence/tok"], "tok")
