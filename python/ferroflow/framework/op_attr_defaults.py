"""TensorFlow's registered attr defaults, for stripping them from NodeDefs and filling them back in.

The table (``ferroflow/core/_op_attr_defaults.json``) is generated from real
TensorFlow's op registry by ``tools/gen_op_attr_defaults.py`` and covers
every op type ferroflow's graph can hold. Op types missing from it (ferroflow's
own fused ops, nodes of ops TensorFlow does not know) are left alone, as
TensorFlow leaves nodes of unregistered ops alone.
"""

from __future__ import annotations

import functools
import json
import os

__all__ = ["attr_defaults", "missing_defaults", "strip_default_attrs"]

_TABLE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "core", "_op_attr_defaults.json"
)


@functools.cache
def _document():
    """The whole generated table: ``ops`` (attr defaults), ``op_defs`` (signatures), ``not_in_tensorflow``."""
    with open(_TABLE, encoding="utf-8") as f:
        return json.load(f)


def _table():
    return _document()["ops"]


@functools.cache
def attr_defaults(op_type):
    """``{attr name: AttrValue}`` of the attrs of ``op_type`` that have a default; None for an unknown op type."""
    from google.protobuf import text_format

    from ferroflow.core.framework import attr_value_pb2

    entry = _table().get(op_type)
    if entry is None:
        return None
    return {name: text_format.Parse(text, attr_value_pb2.AttrValue()) for name, text in entry.items()}


def _same(a, b):
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def _node_defs(graph_def):
    yield from graph_def.node
    for fn in graph_def.library.function:
        yield from fn.node_def


def strip_default_attrs(graph_def):
    """Removes, in place, every attr of ``graph_def``'s nodes whose value is its op's registered default.

    Nodes that call a function of the graph's library and nodes of op types
    without a table entry keep all their attrs.
    """
    functions = {fn.signature.name for fn in graph_def.library.function}
    for node in _node_defs(graph_def):
        defaults = None if node.op in functions else attr_defaults(node.op)
        if not defaults:
            continue
        for name in [k for k, v in node.attr.items() if k in defaults and _same(v, defaults[k])]:
            del node.attr[name]


def missing_defaults(node_def):
    """``{attr name: AttrValue}``: the registered defaults of the attrs ``node_def`` lacks, for import.

    Type-valued attrs are left out: ferroflow derives a node's type attrs
    from its inputs, and picks the registered default itself for output
    types (``ArgMax``'s ``output_type``, ``Shape``'s ``out_type``), so filling
    in, say, ``Tidx: DT_INT32`` could only contradict an int64 input.
    """
    defaults = attr_defaults(node_def.op) or {}
    return {
        name: value
        for name, value in defaults.items()
        if name not in node_def.attr and value.WhichOneof("value") != "type"
    }
