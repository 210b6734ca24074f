"""A graph as TensorFlow's ``GraphDef`` / ``MetaGraphDef`` protocol buffers.

The GraphDef is serialized by the Rust core from the native graph (node
names, op types, inputs, devices, attributes, and ``_output_shapes`` when
asked), then parsed into the ``tf.GraphDef`` message class and made
importable by real TensorFlow: every node gets the type and length attrs
its TensorFlow ``OpDef`` declares (``T``, ``N``, ``Tidx``, ..., see
``op_signatures``), and the nodes of ``ReducedShape``, an op only ferroflow
has (its reduction gradients use it), are written as the few TensorFlow ops
that compute the same thing.

Only ferroflow's fused optimizer updates (``ApplyFused``,
``SparseApplyFused``, made by ``Optimizer.minimize`` / ``apply_gradients``)
stay as they are: a GraphDef holding one imports into ferroflow but not into
TensorFlow, which has no such op.
"""

from __future__ import annotations

from ferroflow import _native

__all__ = ["as_graph_def", "create_meta_graph_def"]


def as_graph_def(graph, from_version=None, add_shapes=False):
    """``graph`` as a ``GraphDef``; only the nodes added since ``graph.version == from_version`` if given."""
    import ferroflow
    from ferroflow.core.framework import graph_pb2

    start = 0 if from_version is None else int(from_version)
    data = _native.graph_def(graph._native, start, bool(add_shapes), ferroflow.GRAPH_DEF_VERSION)
    graph_def = graph_pb2.GraphDef.FromString(data)
    graph._sync_native()
    _make_tensorflow_compatible(graph_def, graph, start, add_shapes)
    return graph_def


def _make_tensorflow_compatible(graph_def, graph, start, add_shapes):
    """Adds TensorFlow's required attrs to ``graph_def``'s nodes (those of ``graph`` from ``start`` on) and
    expands its ``ReducedShape`` nodes, in place."""
    from ferroflow.framework.op_signatures import add_signature_attrs

    ops = graph._ops[start:]
    if len(ops) != len(graph_def.node):  # not expected; match the nodes up by name instead
        ops = [graph._get_operation_by_name_unsafe(n.name) for n in graph_def.node]
    expanded = None
    for i, (node, op) in enumerate(zip(graph_def.node, ops)):
        if op is None:
            continue
        in_types = [t.dtype.as_datatype_enum for t in op._inputs]
        if node.op == "ReducedShape":
            expanded = expanded or {}
            expanded[i] = _reduced_shape_nodes(node, in_types, add_shapes)
            continue
        add_signature_attrs(node, in_types, [t.dtype.as_datatype_enum for t in op._outputs])
    if expanded:
        nodes = []
        for i, node in enumerate(graph_def.node):
            nodes.extend(expanded.get(i, [node]))
        del graph_def.node[:]
        graph_def.node.extend(nodes)


def _reduced_shape_nodes(node, in_types, add_shapes):
    """TensorFlow ops computing what the ``ReducedShape`` ``node`` does; the last one takes its name.

    ``ReducedShape(input_shape, axes)`` is ``input_shape`` with the entries
    at ``axes`` (negative ones counting from the end) set to 1. As TensorFlow
    ops: ``rank = Size(input_shape)``, the axes flattened and made
    non-negative (``rank`` added to the negative ones; not ``FloorMod``,
    which ferroflow's kernel refuses for a rank 0 even with no axes), a ``[rank, len(axes)]``
    table of ``Range(rank)[:, None] == axes``, ``Any`` over its rows, and
    ``SelectV2(hit, 1, input_shape)``. The helper nodes are named under
    ``node``'s name and share its device and control inputs.
    """
    from ferroflow.core.framework import node_def_pb2, types_pb2

    int32 = types_pb2.DT_INT32
    shape_type, axes_type = in_types[0] % 100, in_types[1] % 100
    shape_in, axes_in = node.input[0], node.input[1]
    controls = [i for i in node.input if i.startswith("^")]
    out = []

    def add(suffix, op, inputs, attrs, shape):
        n = node_def_pb2.NodeDef(name=node.name + suffix, op=op, input=list(inputs) + controls, device=node.device)
        for key, (kind, value) in attrs.items():
            if kind == "tensor":
                n.attr[key].tensor.CopyFrom(value)
            else:
                setattr(n.attr[key], kind, value)
        if add_shapes:
            if shape is None:
                n.attr["_output_shapes"].CopyFrom(node.attr["_output_shapes"])
            else:
                dims = n.attr["_output_shapes"].list.shape.add()
                for size in shape:
                    dims.dim.add().size = size
        out.append(n)
        return n.name

    def const(suffix, dtype, values, shape):
        from ferroflow.core.framework import tensor_pb2

        proto = tensor_pb2.TensorProto(dtype=dtype)
        for size in shape:
            proto.tensor_shape.dim.add().size = size
        (proto.int64_val if dtype == types_pb2.DT_INT64 else proto.int_val).extend(values)
        return add(suffix, "Const", [], {"dtype": ("type", dtype), "value": ("tensor", proto)}, shape)

    if axes_type != shape_type:
        axes_in = add("/axes", "Cast", [axes_in], {"SrcT": ("type", axes_type), "DstT": ("type", shape_type),
                                                   "Truncate": ("b", False)}, [-1])
    flat_shape = const("/flat_shape", int32, [-1], [1])
    zero = const("/zero", shape_type, [0], [])
    one = const("/one", shape_type, [1], [])
    column = const("/column", int32, [1], [])
    rank = add("/rank", "Size", [shape_in], {"T": ("type", shape_type), "out_type": ("type", shape_type)}, [])
    flat = add("/flat_axes", "Reshape", [axes_in, flat_shape], {"T": ("type", shape_type),
                                                                "Tshape": ("type", int32)}, [-1])
    shifted = add("/shifted_axes", "AddV2", [flat, rank], {"T": ("type", shape_type)}, [-1])
    negative = add("/negative_axes", "Less", [flat, zero], {"T": ("type", shape_type)}, [-1])
    axes = add("/reduced_axes", "SelectV2", [negative, shifted, flat], {"T": ("type", shape_type)}, [-1])
    dims = add("/dims", "Range", [zero, rank, one], {"Tidx": ("type", shape_type)}, [-1])
    dims = add("/dims_column", "ExpandDims", [dims, column], {"T": ("type", shape_type),
                                                             "Tdim": ("type", int32)}, [-1, 1])
    hits = add("/hits", "Equal", [dims, axes], {"T": ("type", shape_type),
                                                "incompatible_shape_error": ("b", True)}, [-1, -1])
    reduced = add("/reduced", "Any", [hits, column], {"Tidx": ("type", int32), "keep_dims": ("b", False)}, [-1])
    add("", "SelectV2", [reduced, one, shape_in], {"T": ("type", shape_type)}, None)
    return out


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
