"""Write python/ferroflow/core/_op_attr_defaults.json: TensorFlow's attr defaults and op signatures for ferroflow's op types.

``Saver.save(strip_default_attrs=True)`` and ``export_meta_graph(...)``
drop every NodeDef attribute whose value equals the default TensorFlow
registers for that op, and ``import_meta_graph`` fills missing ones back in;
both read the table this script writes. It lists every op type ferroflow's
native graph can hold (``ferroflow._native.registered_ops()``), and for each
one that TensorFlow also registers, the default of every attr that has one,
as a text-format ``AttrValue``. Ops that only ferroflow has (its fused
optimizer updates) are listed under ``not_in_tensorflow`` and are never
stripped, as TensorFlow leaves nodes of unknown ops alone.

Under ``op_defs`` it also records each such op's signature as TensorFlow's
``OpDef`` declares it, which ``ferroflow.framework.op_signatures`` reads to
give every exported NodeDef the attrs TensorFlow requires (``T``, ``N``,
``Tidx``, ...): its input and output args (``name``; ``type`` for a fixed
dtype, or ``type_attr`` / ``number_attr`` / ``type_list_attr``; ``is_ref``)
and the type of each attr (``"type"``, ``"int"``, ``"list(type)"``, ...).

Run it from the repository root with a Python that has real TensorFlow and
can import ferroflow (never needed by the tests or at run time):

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_op_attr_defaults.py

Rerun it after registering a new op type; ``tests/python/test_strip_default_attrs.py``
fails while an op type is missing from the table.
"""

import json
import pathlib
import sys

OUT = (
    pathlib.Path(__file__).resolve().parent.parent
    / "python"
    / "ferroflow"
    / "core"
    / "_op_attr_defaults.json"
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
    from google.protobuf import text_format
    from tensorflow.python.framework import op_def_registry

    from ferroflow import _native

    ops, op_defs, missing = {}, {}, []
    for name in _native.registered_ops():
        op_def = op_def_registry.get(name)
        if op_def is None:
            missing.append(name)
            continue
        ops[name] = {
            a.name: text_format.MessageToString(a.default_value, as_one_line=True)
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
        "ops": ops,
        "op_defs": op_defs,
        "not_in_tensorflow": missing,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {out}: {len(ops)} op types, {len(missing)} only in ferroflow ({', '.join(missing)})")


if __name__ == "__main__":
    main(*sys.argv[1:])
