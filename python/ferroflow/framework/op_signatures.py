"""TensorFlow's op signatures, as the Rust core's op registry table records them.

The table (``crates/records/src/graph_def/tf_op_registry.json``, generated
from real TensorFlow by ``tools/gen_op_attr_defaults.py`` and read through
``_native.tf_op_registry()``) gives each op's input and output args
(``name``; a fixed ``type``, or the ``type_attr`` / ``number_attr`` /
``type_list_attr`` naming the attr that gives its type or length;
``is_ref``) and each attr's type (``"type"``, ``"int"``, ``"list(type)"``,
...). The Rust core uses it to write GraphDefs TensorFlow imports; Python
reads it to import them (reference inputs, output arg names in function
bodies).
"""

from __future__ import annotations

from ferroflow import _native

__all__ = ["op_signature", "required_attrs", "output_arg_lengths"]


def op_signature(op_type):
    """TensorFlow's signature of ``op_type`` (``{"inputs", "outputs", "attrs"}``); None if TensorFlow lacks it."""
    from ferroflow.framework.op_attr_defaults import _document

    return _document()["op_defs"].get(op_type)


def required_attrs(op_type):
    """``{attr name: attr type}`` of the attrs of ``op_type`` that TensorFlow registers without a default.

    A NodeDef of ``op_type`` that lacks one of them does not import into
    TensorFlow. None for an op type TensorFlow does not know.
    """
    from ferroflow.framework.op_attr_defaults import _document

    doc = _document()
    signature = doc["op_defs"].get(op_type)
    if signature is None:
        return None
    defaults = doc["attr_defaults"][op_type]
    return {name: kind for name, kind in signature["attrs"].items() if name not in defaults}


def output_arg_lengths(op_type, attr, count):
    """How many of ``count`` outputs each output arg of ``op_type`` takes, list lengths taken from ``attr``
    (``{name: AttrValue}``); None when that cannot be told (an op TensorFlow lacks, or list lengths that
    do not add up)."""
    from ferroflow.core.framework import node_def_pb2

    signature = op_signature(op_type)
    if signature is None:
        return None
    node = node_def_pb2.NodeDef(op=op_type)
    for arg in signature["outputs"]:
        key = arg.get("number_attr") or arg.get("type_list_attr")
        if key is not None and key in attr:
            node.attr[key].CopyFrom(attr[key])
    return _native.output_arg_lengths(node.SerializeToString(), count)
