"""TensorFlow's registered attr defaults, for stripping them from NodeDefs and filling them back in.

The table is the Rust core's (``crates/records/src/graph_def/tf_op_registry.json``,
generated from real TensorFlow's op registry by ``tools/gen_op_attr_defaults.py``,
read through ``_native.tf_op_registry()``); it covers every op type ferroflow's
graph can hold. Op types missing from it (ferroflow's own fused ops) are left
alone, as TensorFlow leaves nodes of unregistered ops alone. Which attrs hold
their default, and which defaults a node lacks, is decided in Rust.
"""

from __future__ import annotations

import functools
import json

from ferroflow import _native

__all__ = ["attr_defaults", "missing_defaults", "strip_default_attrs"]


@functools.cache
def _document():
    """The whole table: ``attr_defaults`` (serialized ``AttrValue``s in hex), ``op_defs`` (signatures),
    ``not_in_tensorflow``, ``tensorflow_version``."""
    return json.loads(_native.tf_op_registry())


@functools.cache
def attr_defaults(op_type):
    """``{attr name: AttrValue}`` of the attrs of ``op_type`` that have a default; None for an unknown op type."""
    from ferroflow.core.framework import attr_value_pb2

    entry = _document()["attr_defaults"].get(op_type)
    if entry is None:
        return None
    return {name: attr_value_pb2.AttrValue.FromString(bytes.fromhex(value)) for name, value in entry.items()}


@functools.cache
def _default_names(op_type):
    return tuple(_document()["attr_defaults"].get(op_type, ()))


def strip_default_attrs(graph_def):
    """Removes, in place, every attr of ``graph_def``'s nodes (function bodies included) whose value is its
    op's registered default. Nodes that call a function of the graph's library and nodes of op types
    without a table entry keep all their attrs."""
    nodes = list(graph_def.node) + [n for fn in graph_def.library.function for n in fn.node_def]
    for node, names in zip(nodes, _native.default_valued_attrs(graph_def.SerializeToString())):
        for name in names:
            del node.attr[name]


def missing_defaults(node_def):
    """``{attr name: AttrValue}``: the registered defaults of the attrs ``node_def`` lacks, for import.

    Type-valued attrs are left out: ferroflow derives a node's type attrs
    from its inputs, and picks the registered default itself for output
    types (``ArgMax``'s ``output_type``, ``Shape``'s ``out_type``).
    """
    from ferroflow.core.framework import attr_value_pb2

    attr = node_def.attr
    for name in _default_names(node_def.op):
        if name not in attr:
            break
    else:
        return {}  # nothing missing (the common case): no round trip through the native module
    return {
        name: attr_value_pb2.AttrValue.FromString(data)
        for name, data in _native.missing_default_attrs(node_def.SerializeToString()).items()
    }
