"""A graph as TensorFlow's ``GraphDef`` / ``MetaGraphDef`` protocol buffers.

The GraphDef is serialized by the Rust core from the native graph (node
names, op types, inputs, devices, attributes, and ``_output_shapes`` when
asked), then parsed into the ``tf.GraphDef`` message class.
"""

from __future__ import annotations

from ferroflow import _native


def as_graph_def(graph, from_version=None, add_shapes=False):
    """``graph`` as a ``GraphDef``; only the nodes added since ``graph.version == from_version`` if given."""
    import ferroflow
    from ferroflow.core.framework import graph_pb2

    start = 0 if from_version is None else int(from_version)
    data = _native.graph_def(graph._native, start, bool(add_shapes), ferroflow.GRAPH_DEF_VERSION)
    return graph_pb2.GraphDef.FromString(data)


def create_meta_graph_def(graph_def=None, graph=None):
    """A minimal ``MetaGraphDef`` around ``graph_def`` (or ``graph``'s), as ``FileWriter`` exports it."""
    import ferroflow
    from ferroflow.core.protobuf import meta_graph_pb2

    if graph_def is None:
        graph_def = as_graph_def(graph, add_shapes=True)
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.tensorflow_version = ferroflow.VERSION
    meta.meta_info_def.tensorflow_git_version = "ferroflow-" + ferroflow.__version__
    meta.graph_def.CopyFrom(graph_def)
    return meta
