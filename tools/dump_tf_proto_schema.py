"""Dump the schema (messages, fields, enums) of TensorFlow's own protos to JSON.

Run with a Python that has real TensorFlow installed (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/dump_tf_proto_schema.py \
        tests/fixtures/protos/tf_proto_schema.json

tests/python/test_protos.py checks every message, field and enum value that
ferroflow's .proto files declare against this dump (names, numbers, types,
labels, oneofs, packing and presence).
"""

import importlib
import json
import sys

from google.protobuf import descriptor

MODULES = [
    *(f"tensorflow.core.framework.{m}_pb2" for m in (
        "attr_value cost_graph full_type function graph graph_debug_info node_def op_def resource_handle "
        "step_stats summary tensor tensor_shape tensor_slice types variable versions"
    ).split()),
    *(f"tensorflow.core.protobuf.{m}_pb2" for m in (
        "cluster config device_filters meta_graph rewriter_config saved_model saver struct tensor_bundle "
        "tensorflow_server trackable_object_graph"
    ).split()),
    "tensorflow.core.util.event_pb2",
    "tensorflow.core.example.example_pb2",
    "tensorflow.core.example.feature_pb2",
    "tensorflow.python.training.checkpoint_state_pb2",
    "tensorflow.compiler.xla.tsl.protobuf.histogram_pb2",
]

TYPES = {v: k for k, v in vars(descriptor.FieldDescriptor).items() if k.startswith("TYPE_")}


def _enum(e):
    return {"enum": {v.name: v.number for v in e.values}}


def _message(m, out):
    fields = {}
    for f in m.fields:
        ref = f.message_type or f.enum_type
        fields[f.name] = {
            "number": f.number,
            "type": TYPES[f.type],
            "repeated": f.is_repeated,
            "type_name": ref.full_name if ref else None,
            "oneof": f.containing_oneof.name if f.containing_oneof else None,
            "packed": f.is_packed,
            "presence": f.has_presence,
        }
    out[m.full_name] = {"fields": fields, "map_entry": m.GetOptions().map_entry}
    for n in m.nested_types:
        _message(n, out)
    for e in m.enum_types:
        out[e.full_name] = _enum(e)


def main(path):
    import tensorflow as tf

    out = {}
    for name in MODULES:
        fd = importlib.import_module(name).DESCRIPTOR
        for m in fd.message_types_by_name.values():
            _message(m, out)
        for e in fd.enum_types_by_name.values():
            out[e.full_name] = _enum(e)
    doc = {"tensorflow_version": tf.__version__, "types": dict(sorted(out.items()))}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
