"""Write crates/records/src/graph_def/tf_op_registry.json: TensorFlow's op signatures and attr defaults for ferroflow's op types.

The Rust core embeds the table (``ferroflow_records::graph_def::registry``)
to write GraphDefs TensorFlow imports: every exported NodeDef gets the attrs
TensorFlow's ``OpDef`` requires (``T``, ``N``, ``Tidx``, ...), and
``strip_default_attrs=True`` exports drop every attr whose value equals the
registered default, which import fills back in. Python reads the same table
through ``_native.tf_op_registry()``. It lists every op type ferroflow's
native graph can hold (``ferroflow._native.registered_ops()``); for each one
that TensorFlow also registers, ``op_defs`` has its signature (input and
output args: ``name``; ``type`` for a fixed dtype, or ``type_attr`` /
``number_attr`` / ``type_list_attr``; ``is_ref``; and each attr's type,
``"type"``, ``"int"``, ``"list(type)"``, ...) and ``attr_defaults`` the
default of every attr that has one, as a serialized ``AttrValue`` in hex.
Ops that only ferroflow has (its fused optimizer updates) are listed under
``not_in_tensorflow`` and are never stripped, as TensorFlow leaves nodes of
unknown ops alone.

Run it from the repository root with a Python that has real TensorFlow and
can import ferroflow (never needed by the tests or at run time):

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_op_attr_defaults.py

Rerun it (and rebuild the native module) after registering a new op type;
``tests/python/test_meta_graph_export_options.py``
fails while an op type is missing from the table.
"""

import json
import pathlib
import sys

OUT = (
    pathlib.Path(__file__).resolve().parent.parent
    / "crates"
    / "records"
    / "src"
    / "graph_def"
    / "tf_op_registry.json"
)


def _arg(arg):
    """An ``OpDef.ArgDef`` as a dict of its set fields (a fixed dtype by its ``DT_*`` name)."""
    from tensorflow.core.framework import types_pb2

    out = {"name": arg.name}
    if arg.type:
        out["type"] = types_pb2.DataType.Name(arg.type)
    for field in ("type_attr", "number_attr", "type_list_attr"):
        if getattr(arg, field):
            out[field] = getattr(arg, field)
    if arg.is_ref:
        out["is_ref"] = True
    return out


def main(out=OUT):
    import tensorflow as tf
    from tensorflow.python.framework import op_def_registry

    from ferroflow import _native

    ops, op_defs, missing = {}, {}, []
    for name in _native.registered_ops():
        op_def = op_def_registry.get(name)
        if op_def is None:
            missing.append(name)
            continue
        ops[name] = {
            a.name: a.default_value.SerializeToString(deterministic=True).hex()
            for a in op_def.attr
            if a.HasField("default_value")
        }
        op_defs[name] = {
            "inputs": [_arg(a) for a in op_def.input_arg],
            "outputs": [_arg(a) for a in op_def.output_arg],
            "attrs": {a.name: a.type for a in op_def.attr},
        }
    doc = {
        "generated_by": "tools/gen_op_attr_defaults.py",
        "tensorflow_version": tf.__version__,
        "attr_defaults": ops,
        "op_defs": op_defs,
        "not_in_tensorflow": missing,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {out}: {len(ops)} op types, {len(missing)} only in ferroflow ({', '.join(missing)})")


if __name__ == "__main__":
    main(*sys.argv[1:])
