"""tf.io.decode_proto / encode_proto against TensorFlow 2.21.

tests/fixtures/proto_ops/cases.json holds what TensorFlow returned (or raised) for each case, made by
tools/make_proto_ops_fixtures.py from the messages in test_messages.proto / test_proto3.proto (compiled
into test_messages.desc): every scalar type with proto2 defaults, repeated fields packed and unpacked,
enums, nested messages, groups, extensions, hand-made wire data, text format, sanitize, and the errors.
"""

import base64
import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow import _native

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "proto_ops")
with open(os.path.join(HERE, "cases.json")) as _f:
    FIXTURE = json.load(_f)
DESC = os.path.join(HERE, FIXTURE["descriptor_set"])
with open(DESC, "rb") as _f:
    DESC_BYTES = _f.read()
CASES = {c["op"] + ":" + c["name"]: c for c in FIXTURE["cases"]}


def source(kind):
    if kind == "file":
        return DESC
    if kind == "bytes":
        return b"bytes://" + DESC_BYTES
    if kind == "local":
        return "local://"
    return kind[4:]


def array(t):
    if t["dtype"] == "string":
        vals = [base64.b64decode(v) for v in t["values"]]
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        return out.reshape(t["shape"])
    return np.array(t["values"], dtype=np.dtype(t["dtype"])).reshape(t["shape"])


def run_decode(case, fields, types):
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.string, shape=None)
        sizes, values = tf.io.decode_proto(ph, case["message_type"], fields, [tf.as_dtype(t) for t in types],
                                           descriptor_source=source(case.get("source", "file")),
                                           message_format=case.get("message_format", "binary"),
                                           sanitize=case.get("sanitize", False))
        with tf.Session() as sess:
            return sess.run([sizes, values], {ph: array(case["input"])})


def check_error(err, expected):
    assert type(err).__name__ == expected["class"], (type(err).__name__, str(err))
    assert err.message.startswith(expected["message"]), (err.message, expected["message"])


@pytest.mark.parametrize("key", [k for k in CASES if k.startswith("decode:")])
def test_decode_matches_tensorflow(key):
    case = CASES[key]
    fields, types = case["field_names"], case["output_types"]
    if "error" in case:
        with pytest.raises(tf.errors.OpError) as e:
            run_decode(case, fields, types)
        check_error(e.value, case["error"])
        return
    sizes, values = run_decode(case, fields, types)
    want_sizes = array(case["sizes"])
    np.testing.assert_array_equal(sizes, want_sizes)
    assert sizes.dtype == np.int32
    for i, got in enumerate(values):
        want = array(case["values"][i])
        assert got.shape == want.shape, (fields[i], got.shape, want.shape)
        if want.dtype == object:
            assert [bytes(x) for x in got.reshape(-1)] == list(want.reshape(-1)), fields[i]
        else:
            assert got.dtype == want.dtype, fields[i]
            np.testing.assert_array_equal(got, want, err_msg=fields[i])


def run_encode(case):
    with tf.Graph().as_default():
        sizes = tf.placeholder(tf.int32, shape=None)
        feeds = {sizes: array(case["sizes"])}
        values = []
        for v in case["values"]:
            ph = tf.placeholder(tf.as_dtype(v["dtype"]), shape=None)
            feeds[ph] = array(v)
            values.append(ph)
        out = tf.io.encode_proto(sizes, values, case["field_names"], case["message_type"],
                                 descriptor_source=source(case.get("source", "file")))
        with tf.Session() as sess:
            return sess.run(out, feeds)


@pytest.mark.parametrize("key", [k for k in CASES if k.startswith("encode:")])
def test_encode_matches_tensorflow(key):
    case = CASES[key]
    if "error" in case:
        with pytest.raises(tf.errors.OpError) as e:
            run_encode(case)
        check_error(e.value, case["error"])
        return
    got = run_encode(case)
    want = array(case["bytes"])
    assert got.shape == want.shape
    assert [bytes(x) for x in got.reshape(-1)] == list(want.reshape(-1))


def test_decode_cases_cover_the_field_kinds():
    # The fixture is what makes the parametrized tests mean something: keep it broad.
    assert FIXTURE["tensorflow_version"].startswith("2.21")
    names = {n for c in FIXTURE["cases"] if c["op"] == "decode" for n in c["field_names"]}
    for kind in ("double", "float", "int64", "int32", "bool", "string", "message", "bytes", "enum", "sfixed32",
                 "sfixed64", "sint32", "sint64"):
        assert {f"f_{kind}", f"r_{kind}"} <= names
    assert {"fgroup", "rgroup", "p_int32", "p_sint64", "ferroflow.test.ext_int"} <= names
    formats = {(c.get("message_format", "binary"), c.get("sanitize", False), c.get("source", "file"))
               for c in FIXTURE["cases"]}
    assert {("text", False, "file"), ("binary", True, "file"), ("binary", False, "bytes"),
            ("binary", False, "local"), ("text", False, "local")} <= formats


def test_local_source_finds_imported_protobuf_classes():
    # google.protobuf.Duration is not one of TensorFlow's messages: local:// finds it in protobuf's default
    # pool because the program imported its class.
    from google.protobuf import duration_pb2

    msgs = [duration_pb2.Duration(seconds=-3, nanos=5).SerializeToString(), b"",
            duration_pb2.Duration(seconds=2 ** 40).SerializeToString()]
    with tf.Graph().as_default():
        sizes, (seconds, nanos) = tf.io.decode_proto(msgs, "google.protobuf.Duration", ["seconds", "nanos"],
                                                     [tf.int64, tf.int32])
        again = tf.io.encode_proto(sizes, [seconds, nanos], ["seconds", "nanos"], "google.protobuf.Duration")
        with tf.Session() as sess:
            s, sec, ns, enc = sess.run([sizes, seconds, nanos, again])
    np.testing.assert_array_equal(s, [[1, 1], [0, 0], [1, 0]])
    np.testing.assert_array_equal(sec[:, 0], [-3, 0, 2 ** 40])
    np.testing.assert_array_equal(ns[:, 0], [5, 0, 0])
    assert [duration_pb2.Duration.FromString(bytes(b)) for b in enc] == [
        duration_pb2.Duration.FromString(m) for m in msgs]


def test_unknown_local_type_is_invalid_argument():
    with tf.Graph().as_default():
        sizes, _ = tf.io.decode_proto([b""], "no.such.Message", ["a"], [tf.int32])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                  match="No descriptor found for message type no.such.Message"):
            sess.run(sizes)


def test_graph_def_keeps_tensorflows_attrs_and_imported_local_graph_runs():
    from google.protobuf import timestamp_pb2

    msg = timestamp_pb2.Timestamp(seconds=7, nanos=9).SerializeToString()
    with tf.Graph().as_default() as g:
        tf.io.decode_proto(tf.constant([msg]), "google.protobuf.Timestamp", ["nanos", "seconds"],
                           [tf.int32, tf.int64], name="dec")
    node = [n for n in g.as_graph_def().node if n.name == "dec"][0]
    assert node.op == "DecodeProtoV2"
    assert node.attr["descriptor_source"].s == b"local://"
    assert node.attr["message_format"].s == b"binary"
    assert list(node.attr["field_names"].list.s) == [b"nanos", b"seconds"]
    with tf.Graph().as_default():
        tf.import_graph_def(g.as_graph_def(), name="imp")
        with tf.Session() as sess:
            sizes, nanos, seconds = sess.run(["imp/dec:0", "imp/dec:1", "imp/dec:2"])
    np.testing.assert_array_equal(sizes, [[1, 1]])
    assert nanos.tolist() == [[9]] and seconds.tolist() == [[7]]


def test_shapes_and_no_gradient():
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.string, [None, 3])
        sizes, (a, b) = tf.io.decode_proto(ph, "ferroflow.test.AllTypes", ["f_int32", "r_string"],
                                           [tf.int32, tf.string], descriptor_source=DESC)
        assert sizes.shape.as_list() == [None, 3, 2]
        assert a.shape.as_list() == [None, 3, None] and b.dtype == tf.string
        out = tf.io.encode_proto(sizes, [a, b], ["f_int32", "r_string"], "ferroflow.test.AllTypes",
                                 descriptor_source=DESC)
        assert out.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match="at least rank 2"):
            tf.io.encode_proto([1], [tf.constant([1])], ["f_int32"], "ferroflow.test.AllTypes",
                               descriptor_source=DESC)
    # Registered as not differentiable (TensorFlow's ops.NotDifferentiable), so tf.gradients passes None.
    assert _native.has_gradient("DecodeProtoV2") and _native.has_gradient("EncodeProto")
    assert tf.compat.v1.io.decode_proto is tf.io.decode_proto
    assert tf.compat.v1.io.encode_proto is tf.io.encode_proto
