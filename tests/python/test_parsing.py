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
