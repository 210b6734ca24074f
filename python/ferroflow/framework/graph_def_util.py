"""A graph as TensorFlow's ``GraphDef`` / ``MetaGraphDef`` protocol buffers.

The Rust core writes the GraphDef in the form TensorFlow imports and runs
(``ferroflow_records::graph_def::tf_graph_def``): every node gets the type
and length attrs its TensorFlow ``OpDef`` declares (``T``, ``N``, ``Tidx``,
...), the nodes of ops only ferroflow has are written as TensorFlow ops
(``ReducedShape`` as the few ops that compute it; the fused optimizer
updates ``ApplyFused`` / ``SparseApplyFused`` as TensorFlow's per-variable
``ApplyAdam``, ``SparseApplyAdagrad``, ... under a ``NoOp`` that keeps the
original node, ``_ferroflow_fused``), and the function library (control-flow
bodies) as ``FunctionDef``s. Python parses the bytes into ``tf.GraphDef``.
Import puts the fused updates back (``restore_fused_updates``), so a graph
round-tripping through a file still updates all variables in one pooled op.
"""

from __future__ import annotations

from ferroflow import _native
from ferroflow.framework import versions

__all__ = ["as_graph_def", "create_meta_graph_def", "restore_fused_updates"]


def as_graph_def(graph, from_version=None, add_shapes=False):
    """``graph`` as a ``GraphDef``; only the nodes added since ``graph.version == from_version`` if given."""
    from ferroflow.core.framework import graph_pb2

    start = 0 if from_version is None else int(from_version)
    data = _native.graph_def(graph._native, start, bool(add_shapes), versions.GRAPH_DEF_VERSION)
    graph._sync_native()
    graph_def = graph_pb2.GraphDef.FromString(data)
    return graph_def


def restore_fused_updates(nodes):
    """``nodes`` (NodeDefs) with every fused update that export wrote as TensorFlow's update ops put back,
    the nodes written for it dropped. A group whose written nodes or original inputs are not all there (the
    graph was edited since) is kept as TensorFlow's ops. Which groups qualify is decided in Rust
    (``_native.fused_groups``)."""
    from ferroflow.core.framework import node_def_pb2

    nodes = list(nodes)
    groups = [(i, n.SerializeToString()) for i, n in enumerate(nodes)
              if n.op == "NoOp" and _native.TF_FORM_ORIGINAL_ATTR in n.attr]
    if not groups:
        return nodes  # nothing was written for a ferroflow-only op
    restored, dropped = _native.fused_groups([n.name for n in nodes], groups)
    for i, data in restored:
        nodes[i] = node_def_pb2.NodeDef.FromString(data)
    dropped = set(dropped)
    return [n for i, n in enumerate(nodes) if i not in dropped]


def create_meta_graph_def(graph_def=None, graph=None):
    """A minimal ``MetaGraphDef`` around ``graph_def`` (or ``graph``'s), as ``FileWriter`` exports it."""
    from ferroflow.core.protobuf import meta_graph_pb2

    if graph_def is None:
        graph_def = as_graph_def(graph, add_shapes=True)
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.tensorflow_version = versions.VERSION
    meta.meta_info_def.tensorflow_git_version = versions.GIT_VERSION
    meta.graph_def.CopyFrom(graph_def)
    return meta
