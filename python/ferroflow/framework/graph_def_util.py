"""A graph as TensorFlow's ``GraphDef`` / ``MetaGraphDef`` protocol buffers.

The GraphDef is serialized by the Rust core from the native graph (node
names, op types, inputs, devices, attributes, and ``_output_shapes`` when
asked), then parsed into the ``tf.GraphDef`` message class and made
importable by real TensorFlow: every node gets the type and length attrs
its TensorFlow ``OpDef`` declares (``T``, ``N``, ``Tidx``, ..., see
``op_signatures``), and the nodes of ``ReducedShape``, an op only ferroflow
has (its reduction gradients use it), are written as the few TensorFlow ops
that compute the same thing.

ferroflow's fused dense optimizer update (``ApplyFused``, one op for all
the variables of a step, made by ``Optimizer.minimize`` /
``apply_gradients``) is written as TensorFlow's own per-variable update ops
(``ApplyAdam``, ``ApplyMomentum``, ...) under a ``NoOp`` that keeps its name
and control edges. The ``NoOp`` also carries the original node
(``_ferroflow_fused``) and the names of the nodes written for it
(``_ferroflow_expansion``); TensorFlow ignores attrs starting with ``_``, and
ferroflow's import puts the fused op back (``restore_fused_updates``), so a
graph round-tripping through a file still updates all variables in one pooled
op. The sparse update of one variable (``SparseApplyFused``) is written the
same way, as the ops TensorFlow 1's optimizers build for an ``IndexedSlices``
gradient: ``Unique`` and ``UnsortedSegmentSum`` summing duplicate rows, then
``SparseApplyAdagrad``, ``SparseApplyMomentum``, ...; ``ScatterSub`` for
plain SGD (duplicates applied one by one); and for Adam the decay of both
moments, their scatter-adds and the update of every row.
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
    graph_def = graph_pb2.GraphDef.FromString(data)
    graph._sync_native()
    _make_tensorflow_compatible(graph_def, graph, start, add_shapes)
    if start == 0 and graph._native.function_names():
        from ferroflow.framework.function_library import add_function_library, mark_function_attrs

        for node in graph_def.node:
            mark_function_attrs(node)
        add_function_library(graph_def, graph._native, versions.GRAPH_DEF_VERSION, add_shapes)
    return graph_def


def _make_tensorflow_compatible(graph_def, graph, start, add_shapes):
    """Adds TensorFlow's required attrs to ``graph_def``'s nodes (those of ``graph`` from ``start`` on) and
    expands its ``ReducedShape``, ``ApplyFused`` and ``SparseApplyFused`` nodes, in place."""
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
        if node.op == "ApplyFused":
            expanded = expanded or {}
            expanded[i] = _fused_update_nodes(node, op, in_types, add_shapes)
            continue
        if node.op == "SparseApplyFused":
            expanded = expanded or {}
            expanded[i] = _sparse_update_nodes(node, in_types, add_shapes)
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


_FUSED_ATTR = "_ferroflow_fused"
_EXPANSION_ATTR = "_ferroflow_expansion"


class _Writer:
    """Builds the NodeDefs that stand for one fused node: named under it, on its device."""

    def __init__(self, node, add_shapes):
        self.node, self.add_shapes, self.out = node, add_shapes, []

    def add(self, suffix, op, inputs, in_types, out_types, attrs=None, controls=(), shapes=None):
        """A node of ``op`` with TensorFlow's type attrs for ``in_types``/``out_types``; returns its name.
        ``shapes`` (one list of dims per output) default to unknown when shapes are written."""
        from ferroflow.core.framework import node_def_pb2
        from ferroflow.framework.op_signatures import add_signature_attrs

        n = node_def_pb2.NodeDef(name=self.node.name + "/" + suffix, op=op,
                                 input=list(inputs) + ["^" + c for c in controls], device=self.node.device)
        for key, value in (attrs or {}).items():
            if isinstance(value, bool):
                n.attr[key].b = value
            else:
                n.attr[key].type = value
        add_signature_attrs(n, in_types, out_types)
        if self.add_shapes:
            listed = n.attr["_output_shapes"].list
            listed.SetInParent()
            for dims in shapes or [None] * len(out_types):
                shape = listed.shape.add()
                if dims is None:
                    shape.unknown_rank = True
                else:
                    for size in dims:
                        shape.dim.add().size = -1 if size is None else size
        self.out.append(n)
        return n.name

    def const(self, suffix, dtype, value):
        import numpy as np

        from ferroflow.core.framework import node_def_pb2
        from ferroflow.framework import dtypes

        n = node_def_pb2.NodeDef(name=self.node.name + "/" + suffix, op="Const", device=self.node.device)
        n.attr["dtype"].type = dtype
        tensor = n.attr["value"].tensor
        tensor.dtype = dtype
        tensor.tensor_content = np.asarray(value, dtype=dtypes.as_dtype(dtype).as_numpy_dtype).tobytes()
        if self.add_shapes:
            n.attr["_output_shapes"].list.shape.add()
        self.out.append(n)
        return n.name

    def finish(self, updates):
        """The ``NoOp`` taking the fused node's name, after ``updates``, carrying the original (module docs)."""
        from ferroflow.core.framework import node_def_pb2

        node = self.node
        controls = [i for i in node.input if i.startswith("^")]
        group = node_def_pb2.NodeDef(name=node.name, op="NoOp", input=["^" + u for u in updates] + controls,
                                     device=node.device)
        group.attr[_FUSED_ATTR].s = node.SerializeToString()
        group.attr[_EXPANSION_ATTR].list.s.extend(x.name.encode() for x in self.out)
        if self.add_shapes:
            group.attr["_output_shapes"].list.SetInParent()
        return self.out + [group]


def _tf_update_op(node, sparse):
    """The TensorFlow update op (a dict, see ``_native.tf_update_ops``) for a fused update ``node``, and the
    number of slots it takes."""
    attr = node.attr
    key = (attr["rule"].s.decode(), "centered" in attr and attr["centered"].b,
           "shrinkage" in attr and attr["shrinkage"].b)
    for spec in _native.tf_update_ops():
        if (spec["rule"], spec["centered"], spec["shrinkage"]) == key and (spec["indices"] is not None) == sparse:
            # The leading inputs that are neither gradient, indices nor hyper-parameters: var and slots.
            slots = sum(1 for i in range(1, len(spec["inputs"]))
                        if i not in (spec["grad"], spec["indices"]) and i not in spec["hypers"])
            return spec, slots
    raise ValueError(f"{node.name}: no TensorFlow update op for the '{key[0]}' rule")


def _hyper_inputs(w, spec, hypers, hyper_types):
    """``{input position: (tensor name, dtype)}`` of the update op ``spec``'s hyper-parameters, given the
    fused op's (TensorFlow's AdagradDA is fed the step counting from 1; the fused op adds the 1 itself)."""
    from ferroflow.core.framework import types_pb2

    out = {}
    for pos, name, typ in zip(spec["hypers"], hypers, hyper_types):
        if pos is None:  # ApplyFtrl has no l2 shrinkage input
            continue
        if spec["inputs"][pos] == "global_step":
            one = w.const("one", types_pb2.DT_INT64, 1)
            name = w.add("global_step_plus_one", "AddV2", [name, one], [typ, typ], [typ])
        out[pos] = (name, typ)
    return out


def _nesterov(spec, node):
    """The ``use_nesterov`` attr for a momentum update op, if the fused ``node`` sets it."""
    if spec["rule"] == "momentum" and "use_nesterov" in node.attr:
        return {"use_nesterov": node.attr["use_nesterov"].b}
    return None


def _fused_update_nodes(node, op, in_types, add_shapes):
    """TensorFlow's per-variable update ops for the ``ApplyFused`` ``node`` (of Operation ``op``),
    then a ``NoOp`` taking its name that depends on them all (see the module docs)."""
    spec, slots = _tf_update_op(node, sparse=False)
    n = node.attr["N"].i
    data = [i for i in node.input if not i.startswith("^")]
    first_grad, first_hyper = n * (1 + slots), n * (2 + slots)
    dtype = in_types[0] % 100
    w = _Writer(node, add_shapes)
    hyper_input = _hyper_inputs(w, spec, data[first_hyper:], in_types[first_hyper:len(data)])
    # The fused op changes no variable before every gradient is computed. With reference variables a
    # gradient may still read a variable another update is writing, so each per-variable update waits
    # for all the gradients, as the fused op does.
    grad_nodes = sorted({g.split(":")[0] for g in data[first_grad:first_grad + n]})
    ready = w.add("gradients_ready", "NoOp", [], [], [], controls=grad_nodes)
    updates = []
    for k in range(n):
        inputs, types = [], []
        for pos in range(len(spec["inputs"])):
            if pos <= slots:
                inputs.append(data[k if pos == 0 else n + k * slots + pos - 1])
                types.append(dtype + 100)
            elif pos == spec["grad"]:
                inputs.append(data[first_grad + k])
                types.append(in_types[first_grad + k])
            else:
                inputs.append(hyper_input[pos][0])
                types.append(hyper_input[pos][1])
        shape = op._inputs[k].shape
        updates.append(w.add(spec["op"] + (f"_{k}" if k else ""), spec["op"], inputs, types, [dtype + 100],
                             _nesterov(spec, node), controls=[ready],
                             shapes=[None if shape.dims is None else shape.as_list()]))
    return w.finish(updates)


def _sparse_update_nodes(node, in_types, add_shapes):
    """TensorFlow's ops for the ``SparseApplyFused`` ``node`` (one variable, an ``IndexedSlices``
    gradient), then a ``NoOp`` taking its name (see the module docs)."""
    from ferroflow.core.framework import types_pb2

    rule = node.attr["rule"].s.decode()
    data = [i for i in node.input if not i.startswith("^")]
    types = in_types[:len(data)]
    dtype, ref = types[0] % 100, types[0] % 100 + 100
    int32 = types_pb2.DT_INT32
    w = _Writer(node, add_shapes)
    if rule == "sgd":
        # var, values, indices, lr: duplicates apply one after another, as ScatterSub does.
        var, values, indices, lr = data
        scaled = w.add("mul", "Mul", [values, lr], [dtype, dtype], [dtype])
        update = w.add("ScatterSub", "ScatterSub", [var, indices, scaled], [ref, types[2], dtype], [ref])
        return w.finish([update])
    # (TensorFlow has no sparse Adam op: its optimizer writes the update out in ops, as below.)
    spec, slots = (None, 2) if rule == "adam" else _tf_update_op(node, sparse=True)
    var, slot_refs = data[0], data[1:1 + slots]
    values, indices = data[1 + slots], data[2 + slots]
    hypers = data[3 + slots:]
    hyper_types = types[3 + slots:]
    # Duplicate rows summed in index order, as TensorFlow 1's optimizers do before the update.
    unique = w.add("Unique", "Unique", [indices], [types[2 + slots]], [types[2 + slots], int32],
                   {"out_idx": int32})
    count = w.add("Size", "Size", [unique], [types[2 + slots]], [int32], {"out_type": int32})
    summed = w.add("UnsortedSegmentSum", "UnsortedSegmentSum", [values, unique + ":1", count],
                   [dtype, int32, int32], [dtype])
    if rule == "adam":
        p1, p2, lr, beta1, beta2, eps = hypers
        m, v = slot_refs
        one = w.const("one", dtype, 1.0)
        b1c = w.add("one_minus_beta1", "Sub", [one, beta1], [dtype] * 2, [dtype])
        b2c = w.add("one_minus_beta2", "Sub", [one, beta2], [dtype] * 2, [dtype])
        root = w.add("sqrt_one_minus_beta2_power", "Sqrt",
                     [w.add("one_minus_beta2_power", "Sub", [one, p2], [dtype] * 2, [dtype])], [dtype], [dtype])
        alpha = w.add("alpha", "RealDiv", [w.add("lr_root", "Mul", [lr, root], [dtype] * 2, [dtype]),
                                            w.add("one_minus_beta1_power", "Sub", [one, p1], [dtype] * 2, [dtype])],
                      [dtype] * 2, [dtype])
        m_decay = w.add("m_decay", "Assign", [m, w.add("m_beta1", "Mul", [m, beta1], [ref, dtype], [dtype])],
                        [ref, dtype], [ref])
        m_new = w.add("m_scatter", "ScatterAdd",
                      [m_decay, unique, w.add("m_scaled", "Mul", [summed, b1c], [dtype] * 2, [dtype])],
                      [ref, types[2 + slots], dtype], [ref])
        v_decay = w.add("v_decay", "Assign", [v, w.add("v_beta2", "Mul", [v, beta2], [ref, dtype], [dtype])],
                        [ref, dtype], [ref])
        g_b2c = w.add("g_b2c", "Mul", [summed, b2c], [dtype] * 2, [dtype])
        v_new = w.add("v_scatter", "ScatterAdd",
                      [v_decay, unique, w.add("v_scaled", "Mul", [summed, g_b2c], [dtype] * 2, [dtype])],
                      [ref, types[2 + slots], dtype], [ref])
        den = w.add("denominator", "AddV2", [w.add("v_sqrt", "Sqrt", [v_new], [ref], [dtype]), eps],
                    [dtype] * 2, [dtype])
        step = w.add("step", "RealDiv", [w.add("alpha_m", "Mul", [alpha, m_new], [dtype, ref], [dtype]), den],
                     [dtype] * 2, [dtype])
        update = w.add("AssignSub", "AssignSub", [var, step], [ref, dtype], [ref])
        return w.finish([update])
    hyper_input = _hyper_inputs(w, spec, hypers, hyper_types)
    inputs, in_t = [], []
    for pos in range(len(spec["inputs"])):
        if pos <= slots:
            inputs.append(data[pos])
            in_t.append(ref)
        elif pos == spec["grad"]:
            inputs.append(summed)
            in_t.append(dtype)
        elif pos == spec["indices"]:
            inputs.append(unique)
            in_t.append(types[2 + slots])
        else:
            inputs.append(hyper_input[pos][0])
            in_t.append(hyper_input[pos][1])
    update = w.add(spec["op"], spec["op"], inputs, in_t, [ref], _nesterov(spec, node))
    return w.finish([update])


def restore_fused_updates(nodes):
    """``nodes`` (NodeDefs) with every ``ApplyFused`` that export wrote as TensorFlow's update ops put
    back, the nodes written for it dropped (see the module docs). A group whose written nodes or original
    inputs are not all there (the graph was edited since) is kept as TensorFlow's ops."""
    from ferroflow.core.framework import node_def_pb2

    nodes = list(nodes)
    names = {n.name for n in nodes}
    restored, drop = {}, set()
    for n in nodes:
        if n.op != "NoOp" or _FUSED_ATTR not in n.attr:
            continue
        original = node_def_pb2.NodeDef.FromString(n.attr[_FUSED_ATTR].s)
        written = {x.decode() for x in n.attr[_EXPANSION_ATTR].list.s}
        needed = {i.lstrip("^").split(":")[0] for i in original.input}
        if original.op not in ("ApplyFused", "SparseApplyFused") or original.name != n.name or not written <= names or not needed <= names:
            continue
        original.device = n.device
        restored[n.name] = original
        drop |= written
    if not restored:
        return nodes
    return [restored.get(n.name, n) for n in nodes if n.name not in drop]


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
