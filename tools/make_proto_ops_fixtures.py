"""Fixtures for tf.io.decode_proto / tf.io.encode_proto, made by TensorFlow 2.21.

Compiles tests/fixtures/proto_ops/test_proto3.proto (and test_messages.proto,
which it imports) into a serialized FileDescriptorSet, test_messages.desc,
with grpcio-tools' protoc, then runs TensorFlow's DecodeProtoV2 and
EncodeProto ops (TF1 graphs and sessions, as ferroflow runs them) on a table of
cases and writes what TensorFlow returned, or the error class and message it
raised, to cases.json.

    /work/tfvenv/bin/pip install --no-deps grpcio-tools   # protoc, once
    /work/tfvenv/bin/python tools/make_proto_ops_fixtures.py

In cases.json, strings are base64 and every tensor is {"dtype", "shape",
"values"} with values flattened in row-major order. A case's "source" is
"file" (the descriptor set's path), "bytes" ("bytes://" + its contents),
"local" ("local://") or "raw:<text>" (that string as given).
"""

import base64
import json
import os
import struct
import subprocess
import sys

import numpy as np
import tensorflow as tf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "fixtures", "proto_ops")
DESC = os.path.join(HERE, "test_messages.desc")
ALL = "ferroflow.test.AllTypes"
P3 = "ferroflow.test.Proto3"


def compile_descriptors():
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{HERE}", "--include_imports",
         f"--descriptor_set_out={DESC}", "test_proto3.proto"],
        check=True, cwd=HERE)
    with open(DESC, "rb") as f:
        return f.read()


DESC_BYTES = compile_descriptors()
FDS = descriptor_pb2.FileDescriptorSet.FromString(DESC_BYTES)
POOL = descriptor_pool.DescriptorPool()
for _f in FDS.file:
    POOL.Add(_f)
AllTypes = message_factory.GetMessageClass(POOL.FindMessageTypeByName(ALL))
Inner = message_factory.GetMessageClass(POOL.FindMessageTypeByName("ferroflow.test.Inner"))
Proto3 = message_factory.GetMessageClass(POOL.FindMessageTypeByName(P3))
EXT_INT = POOL.FindExtensionByName("ferroflow.test.ext_int")
EXT_STR = POOL.FindExtensionByName("ferroflow.test.ext_str")


def source(kind):
    if kind == "file":
        return DESC
    if kind == "bytes":
        return b"bytes://" + DESC_BYTES
    if kind == "local":
        return "local://"
    assert kind.startswith("raw:")
    return kind[4:]


def tensor_json(arr):
    arr = np.asarray(arr)
    if arr.dtype == object or arr.dtype.kind in "SU":
        flat = [base64.b64encode(v if isinstance(v, bytes) else v.encode()).decode() for v in arr.reshape(-1)]
        return {"dtype": "string", "shape": list(arr.shape), "values": flat}
    return {"dtype": tf.as_dtype(arr.dtype).name, "shape": list(arr.shape), "values": arr.reshape(-1).tolist()}


def error_json(e):
    message = getattr(e, "message", str(e))
    # TF 2.21 wraps a kernel's message in "Graph execution error: ... Detected
    # at node ..." lines and ends it with the node's name; keep the kernel's.
    lines = message.split("\n")
    if lines[0].startswith("Graph execution error"):
        node = [i for i, ln in enumerate(lines) if ln.startswith("\t [[")]
        lines = [lines[node[0] - 1]] if node else lines[-1:]
    return {"class": type(e).__name__, "message": lines[0] if lines else ""}


def run_decode(case):
    inputs = np.array(case["input"], dtype=object)
    g = tf.Graph()
    try:
        with g.as_default():
            ph = tf.compat.v1.placeholder(tf.string, shape=None)
            sizes, values = tf.io.decode_proto(
                ph, case["message_type"], case["field_names"],
                [tf.as_dtype(t) for t in case["output_types"]],
                descriptor_source=source(case.get("source", "file")),
                message_format=case.get("message_format", "binary"),
                sanitize=case.get("sanitize", False))
            with tf.compat.v1.Session() as sess:
                out_sizes, out_values = sess.run([sizes, values], {ph: inputs})
        return {"sizes": tensor_json(out_sizes), "values": [tensor_json(v) for v in out_values]}
    except Exception as e:  # noqa: BLE001 - the fixture records what TF raised
        return {"error": error_json(e)}


def run_encode(case):
    g = tf.Graph()
    try:
        with g.as_default():
            sizes = tf.compat.v1.placeholder(tf.int32, shape=None)
            feeds = {sizes: np.array(case["sizes"], dtype=np.int32)}
            values = []
            for v, t in zip(case["values"], case["input_types"]):
                dt = tf.as_dtype(t)
                arr = np.array(v, dtype=object if dt == tf.string else dt.as_numpy_dtype)
                ph = tf.compat.v1.placeholder(dt, shape=None)
                feeds[ph] = arr
                values.append(ph)
            out = tf.io.encode_proto(sizes, values, case["field_names"], case["message_type"],
                                     descriptor_source=source(case.get("source", "file")))
            with tf.compat.v1.Session() as sess:
                result = sess.run(out, feeds)
        return {"bytes": tensor_json(result)}
    except Exception as e:  # noqa: BLE001
        return {"error": error_json(e)}


def b64(x):
    return base64.b64encode(x).decode()


SCALARS = [
    ("f_double", "float64"), ("f_float", "float32"), ("f_int64", "int64"), ("f_uint64", "uint64"),
    ("f_int32", "int32"), ("f_fixed64", "uint64"), ("f_fixed32", "uint32"), ("f_bool", "bool"),
    ("f_string", "string"), ("f_message", "string"), ("f_bytes", "string"), ("f_uint32", "uint32"),
    ("f_enum", "int32"), ("f_sfixed32", "int32"), ("f_sfixed64", "int64"), ("f_sint32", "int32"),
    ("f_sint64", "int64"), ("fgroup", "string"), ("plain_int32", "int32"), ("plain_enum", "int32"),
    ("plain_string", "string"),
]
REPEATED = [(n.replace("f_", "r_"), t) for n, t in SCALARS[:18]]
REPEATED[-1] = ("rgroup", "string")
PACKED = [(n.replace("r_", "p_"), t) for n, t in REPEATED
          if n not in ("r_string", "r_message", "r_bytes", "rgroup")]


def full_message():
    m = AllTypes()
    m.f_double = -3.25
    m.f_float = 0.1
    m.f_int64 = -(2 ** 40)
    m.f_uint64 = 2 ** 64 - 2
    m.f_int32 = -2 ** 31
    m.f_fixed64 = 2 ** 63 + 5
    m.f_fixed32 = 2 ** 32 - 3
    m.f_bool = False
    m.f_string = "héllo"
    m.f_message.a = 7
    m.f_message.b = "in"
    m.f_bytes = b"\x00\xff"
    m.f_uint32 = 3_000_000_000
    m.f_enum = -3
    m.f_sfixed32 = -123456
    m.f_sfixed64 = -(2 ** 50)
    m.f_sint32 = -77
    m.f_sint64 = 2 ** 60
    m.fgroup.g = 9
    m.plain_int32 = 12
    m.plain_enum = 1
    m.plain_string = "p"
    return m


def repeated_message(k):
    """A message whose repeated fields hold k values (k - 1 for the packed ones)."""
    m = AllTypes()
    for i in range(k):
        m.r_double.append(i + 0.5)
        m.r_float.append(-i - 0.25)
        m.r_int64.append(-i * 10 ** 12)
        m.r_uint64.append(2 ** 64 - 1 - i)
        m.r_int32.append(-i)
        m.r_fixed64.append(2 ** 63 + i)
        m.r_fixed32.append(2 ** 32 - 1 - i)
        m.r_bool.append(i % 2 == 0)
        m.r_string.append("s" * i)
        m.r_message.add(a=i, b=str(i))
        m.r_bytes.append(bytes(range(i)))
        m.r_uint32.append(2 ** 31 + i)
        m.r_enum.append([0, 1, 2, -3][i % 4])
        m.r_sfixed32.append(-i * 1000)
        m.r_sfixed64.append(-i * 10 ** 15)
        m.r_sint32.append(-i * 3)
        m.r_sint64.append(-i * 10 ** 14)
        m.rgroup.add(g=i)
    for i in range(max(k - 1, 0)):
        m.p_double.append(-i - 0.5)
        m.p_float.append(i + 0.75)
        m.p_int64.append(-i * 10 ** 11)
        m.p_uint64.append(2 ** 64 - 1 - i)
        m.p_int32.append(-i)
        m.p_fixed64.append(2 ** 64 - 1 - i)
        m.p_fixed32.append(2 ** 32 - 1 - i)
        m.p_bool.append(i % 2 == 1)
        m.p_uint32.append(2 ** 32 - 1 - i)
        m.p_enum.append([2, -3, 1, 0][i % 4])
        m.p_sfixed32.append(-i * 7)
        m.p_sfixed64.append(-i * 10 ** 16)
        m.p_sint32.append(-(2 ** 31) + i)
        m.p_sint64.append(-(2 ** 63) + i)
    return m


def tag(number, wire):
    return varint(number << 3 | wire)


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(number, payload):
    return tag(number, 2) + varint(len(payload)) + payload


def decode_cases():
    cases = []

    def add(name, message_type, fields, inputs, **kw):
        names = [f for f, _ in fields]
        types = [t for _, t in fields]
        cases.append({"name": name, "op": "decode", "message_type": message_type, "field_names": names,
                      "output_types": types, "input": inputs, **kw})

    full = full_message().SerializeToString()
    empty = b""
    add("scalars_rank0", ALL, SCALARS, full)
    add("scalars_defaults_batch", ALL, SCALARS, [full, empty, AllTypes(f_int32=3, f_string="x").SerializeToString()])
    add("scalars_file_source_reordered", ALL, list(reversed(SCALARS)), [full, empty])
    add("scalars_bytes_source", ALL, SCALARS, [empty, full], source="bytes")
    reps = [[repeated_message(k).SerializeToString() for k in row] for row in ((0, 3), (1, 4))]
    add("repeated_2x2", ALL, REPEATED + PACKED, reps)
    add("repeated_vector", ALL, REPEATED + PACKED, [repeated_message(2).SerializeToString()], source="bytes")
    add("wider_types", ALL,
        [("f_int32", "int64"), ("f_float", "float64"), ("f_uint32", "uint64"), ("f_fixed32", "uint64"),
         ("f_sfixed32", "int64"), ("f_sint32", "int64"), ("r_int32", "int64"), ("p_int32", "int64"),
         ("r_float", "float64"), ("p_float", "float64"), ("p_uint32", "uint64"), ("p_fixed32", "uint64"),
         ("p_sfixed32", "int64"), ("p_sint32", "int64"), ("r_uint32", "uint64"), ("r_fixed32", "uint64"),
         ("r_sfixed32", "int64"), ("r_sint32", "int64")],
        [full, repeated_message(3).SerializeToString(), empty])
    two = repeated_message(2)
    two.f_int32 = 11
    add("same_field_twice", ALL, [("f_int32", "int32"), ("f_int32", "int64"), ("r_int32", "int32")],
        [two.SerializeToString()])
    add("extensions", ALL, [("ferroflow.test.ext_int", "int32"), ("ferroflow.test.ext_str", "string"),
                            ("f_int32", "int32")],
        [_ext_message(), empty])
    # Hand-made wire data: a singular field twice (the last wins), a message
    # field twice (the last, not merged), fields out of order, unknown fields,
    # a wire type that does not match the schema (skipped), packed and
    # unpacked values of one repeated field mixed, and an empty packed run.
    wire = (tag(5, 0) + varint(1) + ld(10, Inner(a=1).SerializeToString()) + tag(999, 0) + varint(5)
            + ld(25, varint(4) + varint(2 ** 64 - 1)) + tag(25, 0) + varint(6) + tag(5, 0) + varint(2)
            + ld(10, Inner(b="z").SerializeToString()) + tag(3, 5) + b"\x01\x02\x03\x04" + ld(2000, b"abc")
            + tag(1, 1) + struct.pack("<d", 2.5) + ld(45, b"") + tag(45, 0) + varint(2 ** 64 - 3))
    add("wire_oddities", ALL,
        [("f_int32", "int32"), ("f_message", "string"), ("r_int32", "int32"), ("f_int64", "int64"),
         ("f_double", "float64"), ("p_int32", "int64")], [wire])
    add("packed_singular", ALL, [("f_int32", "int32"), ("f_double", "float64")],
        [ld(5, varint(3) + varint(4)) + ld(1, struct.pack("<dd", 1.0, 2.0))])
    add("group_bytes", ALL, [("fgroup", "string"), ("rgroup", "string")],
        [AllTypes(fgroup={"g": 300}, rgroup=[{"g": 1}, {}]).SerializeToString()])
    texts = ['f_int32: 4 f_string: "t" r_int32: [1, 2, 3] f_message { a: 2 } f_enum: DARK',
             'r_int32: 9 FGroup { g: 1 } p_sint64: -5']
    add("text_format", ALL, [("f_int32", "int32"), ("f_string", "string"), ("r_int32", "int32"),
                             ("f_message", "string"), ("f_enum", "int32"), ("fgroup", "string"),
                             ("p_sint64", "int64")], texts, message_format="text")
    # TensorFlow's C++ parser also takes a group by its field name.
    add("text_format_group_field_name", ALL, [("fgroup", "string"), ("rgroup", "string"), ("f_int32", "int32")],
        ['fgroup { g: 2 } rgroup { g: 3 } rgroup { } f_int32: 1', 'RGroup { g: 4 } # fgroup {'],
        message_format="text")
    add("sanitize", ALL, [("f_int32", "int32"), ("r_int32", "int32"), ("f_message", "string")],
        [tag(5, 0) + varint(1) + tag(5, 0) + varint(2) + ld(10, b"\x08\x01") + ld(10, b"\x12\x01q")
         + tag(25, 0) + varint(3) + ld(25, varint(4))], sanitize=True)
    p3 = Proto3(vals=[1, -2, 3], x=-9, shade=2, counts={"a": 1}, inner=Inner(a=5), floats=[0.5])
    add("proto3", P3, [("vals", "int32"), ("x", "int64"), ("shade", "int32"), ("counts", "string"),
                       ("inner", "string"), ("floats", "float32")],
        [p3.SerializeToString(), b"", Proto3(vals=[7]).SerializeToString()])
    ex = tf.train.Example()
    ex.features.feature["k"].int64_list.value.extend([1, 2])
    add("local_example", "tensorflow.Example", [("features", "string")], [ex.SerializeToString(), b""],
        source="local")
    il = tf.train.Int64List(value=[5, -6, 7]).SerializeToString()
    add("local_int64list", "tensorflow.Int64List", [("value", "int64")], [[il], [b""]], source="local")
    add("local_text", "tensorflow.Int64List", [("value", "int64")], ["value: 3 value: 4"], source="local",
        message_format="text")
    # Errors.
    add("err_unknown_type", "ferroflow.test.Nope", [("a", "int32")], [b""])
    add("err_unknown_type_local", ALL, [("f_int32", "int32")], [b""], source="local")
    add("err_unknown_field", ALL, [("f_int32", "int32"), ("nope", "int32")], [b""])
    for f, t in [("f_int32", "float32"), ("f_double", "float32"), ("f_int64", "int32"), ("f_uint32", "int64"),
                 ("f_enum", "int64"), ("f_bool", "int32"), ("f_message", "int32"), ("f_string", "uint8"),
                 ("f_uint64", "int64"), ("f_fixed64", "int64"), ("f_fixed32", "int64"), ("f_float", "int32")]:
        add(f"err_type_{f}_{t}", ALL, [(f, t)], [b""])
    add("err_format", ALL, [("f_int32", "int32")], [b""], message_format="json")
    add("err_text", ALL, [("f_int32", "int32")], ["f_int32: oops"], message_format="text")
    add("err_sanitize", ALL, [("f_int32", "int32")], [b"\x08"], sanitize=True)
    add("err_empty_batch", ALL, [("f_int32", "int32")], np.zeros([0], dtype=object).tolist())
    add("err_source_missing", ALL, [("f_int32", "int32")], [b""], source="raw:/nonexistent/descriptors.pb")
    add("err_bytes_garbage", ALL, [("f_int32", "int32")], [b""], source="raw:bytes://\x12\x05ab")
    for name, data in [
        ("truncated_varint", tag(5, 0) + b"\x80"),
        ("truncated_length", ld(9, b"abcdef")[:-2]),
        ("truncated_fixed", tag(1, 1) + b"\x00\x00"),
        ("bad_packed_varint", ld(25, b"\x01\x80")),
        ("bad_packed_fixed", ld(41, b"\x00" * 5)),
        ("truncated_tag", ld(29, b"abc")[:1]),
        ("packed_group", ld(45, b"\x01") + ld(18, b"\x01")),
        ("unrequested_truncated", tag(500, 2) + varint(10) + b"ab"),
        ("field_zero", b"\x02\x01a"),
        ("zero_tag", tag(5, 0) + varint(1) + b"\x00"),
        ("end_group_top", tag(5, 0) + varint(1) + tag(7, 4)),
        ("unclosed_group", tag(18, 3) + tag(19, 0) + varint(1)),
        ("mismatched_group", tag(18, 3) + tag(19, 0) + varint(1) + tag(17, 4)),
        ("bad_wire_type", tag(600, 6)),
        ("mismatch_skip_fails", tag(5, 2) + varint(100)),
        ("long_varint", tag(5, 0) + b"\xff" * 10 + b"\x01"),
    ]:
        add(f"err_wire_{name}", ALL, [("f_int32", "int32"), ("r_int32", "int32"), ("f_string", "string"),
                                        ("fgroup", "string"), ("f_double", "float64"), ("p_double", "float64")],
            [b"", data])
    return cases


def _ext_message():
    m = AllTypes(f_int32=1)
    m.Extensions[EXT_INT] = -42
    m.Extensions[EXT_STR].extend(["e1", "e2"])
    return m.SerializeToString()


def encode_cases():
    cases = []

    def add(name, message_type, fields, sizes, values, **kw):
        cases.append({"name": name, "op": "encode", "message_type": message_type,
                      "field_names": [f for f, _ in fields], "input_types": [t for _, t in fields],
                      "sizes": sizes, "values": values, **kw})

    def s(*xs):
        return [x.encode() if isinstance(x, str) else x for x in xs]

    scal = [("f_double", "float64"), ("f_float", "float32"), ("f_int64", "int64"), ("f_int32", "int32"),
            ("f_bool", "bool"), ("f_string", "string"), ("f_message", "string"), ("f_bytes", "string"),
            ("f_enum", "int32"), ("f_sfixed32", "int32"), ("f_sfixed64", "int64"), ("f_sint32", "int32"),
            ("f_sint64", "int64"), ("fgroup", "string")]
    vals = [[[1.5], [-0.0]], [[0.1], [3.0]], [[-5], [2 ** 62]], [[-1], [2 ** 31 - 1]], [[True], [False]],
            [s("a"), s("")], [[Inner(a=3).SerializeToString()], [b""]], [[b"\x00\x01"], [b"z"]], [[-3], [2]],
            [[-1], [5]], [[-(2 ** 63)], [3]], [[-(2 ** 31)], [1]], [[-(2 ** 63)], [-1]],
            [[tag(19, 0) + varint(4)], [b""]]]
    add("scalars", ALL, scal, [[1] * len(scal), [1, 0] * (len(scal) // 2)], vals)
    add("scalars_bytes_source", ALL, scal[:4], [[1, 1, 1, 1], [0, 1, 0, 1]], vals[:4], source="bytes")
    add("wider_types", ALL, [("f_int32", "int64"), ("f_float", "float64"), ("f_sfixed32", "int64"),
                             ("f_sint32", "int64"), ("r_int32", "int64"), ("p_sfixed32", "int64")],
        [[1, 1, 1, 1, 2, 2]], [[[-2 ** 31]], [[0.1]], [[2 ** 40 - 1]], [[-5]], [[2 ** 33 - 1, -7]], [[-1, 2 ** 32]]])
    # Unsigned fields: TensorFlow's uint32 / uint64 tensors (ferroflow has none yet).
    add("unsigned", ALL, [("f_uint64", "uint64"), ("f_fixed64", "uint64"), ("f_fixed32", "uint32"),
                          ("f_uint32", "uint64"), ("p_fixed32", "uint64"), ("p_uint32", "uint32")],
        [[1, 1, 1, 1, 2, 1]], [[[2 ** 64 - 1]], [[2 ** 63]], [[2 ** 32 - 1]], [[2 ** 32 + 5]], [[2 ** 33 + 1, 0]],
                               [[7]]])
    rep_fields = [("r_int32", "int32"), ("p_int32", "int32"), ("r_string", "string"), ("p_double", "float64"),
                  ("rgroup", "string"), ("p_sint64", "int64"), ("p_bool", "bool"), ("r_enum", "int32"),
                  ("p_enum", "int32"), ("p_float", "float64"), ("r_sint32", "int64")]
    rep_vals = [[[1, -2, 3], [4, 5, 6]], [[-1, 2, 300], [0, 0, 0]], [s("x", "yy", "zzz"), s("", "", "")],
                [[0.5, -1.5, 2.0], [1.0, 1.0, 1.0]], [[tag(39, 0) + varint(1), b"", b""], [b"", b"", b""]],
                [[-1, 2 ** 62, -(2 ** 63)], [1, 1, 1]], [[True, False, True], [False, False, False]],
                [[-3, 1, 2], [0, 0, 0]], [[-3, 1, 2], [0, 0, 0]], [[0.1, 1e300, -2.5], [0, 0, 0]],
                [[-(2 ** 31), 2 ** 31 - 1, 2 ** 40], [0, 0, 0]]]
    add("repeated", ALL, rep_fields, [[3, 2, 3, 2, 1, 3, 3, 3, 3, 3, 3], [0, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0]],
        rep_vals)
    add("repeated_rank3", ALL, [("r_int32", "int32"), ("f_string", "string")], [[[2, 1]], [[0, 0]]],
        [[[[5, 6]], [[7, 8]]], [[s("a")], [s("b")]]])
    add("proto3", P3, [("vals", "int32"), ("x", "int64"), ("floats", "float32"), ("shade", "int32")],
        [[3, 1, 2, 1]], [[[1, -2, 3]], [[-9]], [[0.5, 2.0]], [[2]]])
    add("local_int64list", "tensorflow.Int64List", [("value", "int64")], [[2], [0]], [[[5, -6], [0, 0]]],
        source="local")
    add("negative_size", ALL, [("r_int32", "int32"), ("p_int32", "int32")], [[-1, -1]], [[[1]], [[1]]])
    add("err_unknown_type", "ferroflow.test.Nope", [("a", "int32")], [[1]], [[[1]]])
    add("err_unknown_field", ALL, [("nope", "int32")], [[1]], [[[1]]])
    add("err_extension_field", ALL, [("ferroflow.test.ext_int", "int32")], [[1]], [[[1]]])
    add("err_dtype", ALL, [("f_int32", "float32")], [[1]], [[[1.0]]])
    add("err_dtype_double", ALL, [("f_double", "float32")], [[1]], [[[1.0]]])
    add("err_dtype_uint32", ALL, [("f_uint32", "int64")], [[1]], [[[1]]])
    add("err_rank1", ALL, [("f_int32", "int32")], [1], [[1]])
    add("err_sizes_shape", ALL, [("f_int32", "int32"), ("f_int64", "int64")], [[1, 1, 1]], [[[1]], [[2]]])
    add("err_size_too_large", ALL, [("f_int32", "int32"), ("r_int32", "int32")], [[1, 3]], [[[1]], [[1, 2]]])
    add("err_prefix", ALL, [("f_int32", "int32"), ("f_int64", "int64")], [[1, 1]], [[[1]], [[2], [3]]])
    add("err_count", ALL, [("f_int32", "int32")], [[1]], [[[1]], [[2]]])
    cases[-1]["input_types"] = ["int32", "int32"]
    return cases


def main():
    print("TensorFlow", tf.__version__)
    out = []
    for case in decode_cases():
        case["input"] = tensor_json(np.array(case["input"], dtype=object))
        case.update(run_decode(dict(case, input=_strings(case["input"]))))
        out.append(case)
    for case in encode_cases():
        res = run_encode(case)
        for i, (v, t) in enumerate(zip(case["values"], case["input_types"])):
            arr = np.array(v, dtype=object if t == "string" else np.dtype(tf.as_dtype(t).as_numpy_dtype))
            case["values"][i] = tensor_json(arr) if t != "string" else tensor_json(arr)
        case["sizes"] = tensor_json(np.array(case["sizes"], dtype=np.int32))
        case.update(res)
        out.append(case)
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump({"tensorflow_version": tf.__version__, "descriptor_set": "test_messages.desc", "cases": out},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    errors = sum("error" in c for c in out)
    print(f"{len(out)} cases ({errors} errors) -> {os.path.join(HERE, 'cases.json')}")


def _strings(t):
    vals = np.array([base64.b64decode(v) for v in t["values"]], dtype=object)
    return vals.reshape(t["shape"])


if __name__ == "__main__":
    main()
