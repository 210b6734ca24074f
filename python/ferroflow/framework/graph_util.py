"""``tf.compat.v1.graph_util``: freezing and pruning ``GraphDef``s for inference.

``convert_variables_to_constants`` freezes a trained graph: it keeps what
the outputs need (``extract_sub_graph``) and turns each variable into a
``Const`` holding the session's value, which is what converters such as
``tf.lite`` read. ``remove_training_nodes`` drops ``CheckNumerics`` and
splices out ``Identity``/``StopGradient`` nodes. All of them take and
return ``GraphDef`` protos and keep TensorFlow's node order, so their output
matches TensorFlow's node for node.
"""

from __future__ import annotations

import logging

import numpy as np

from ferroflow.framework import dtypes
from ferroflow.framework.importer import import_graph_def

__all__ = [
    "convert_variables_to_constants",
    "extract_sub_graph",
    "import_graph_def",
    "must_run_on_cpu",
    "remove_training_nodes",
    "tensor_shape_from_node_def_name",
]

_logger = logging.getLogger("ferroflow")

# Ops TensorFlow pins to the CPU with pin_variables_on_cpu (graph_util_impl's _VARIABLE_OPS).
_VARIABLE_OPS = frozenset({
    "Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub", "ScatterUpdate", "TruncatedNormal",
    "Variable", "VariableV2",
})
# Nodes that hold a variable's value; convert_variables_to_constants turns them into Const nodes.
_FREEZABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")
# Ops that pass a value through unchanged: a converted variable's dtype flows through their "T" attr.
_PASS_THROUGH_OPS = frozenset({"Enter", "Exit", "Identity", "NextIteration", "Switch", "_SwitchN", "Merge"})
# Ops that call a function of the library with their inputs.
_FUNCTION_CALL_OPS = frozenset({
    "If", "StatelessIf", "While", "StatelessWhile", "Case", "PartitionedCall", "StatefulPartitionedCall",
})


def _graph_pb2():
    from ferroflow.core.framework import graph_pb2

    return graph_pb2


def _node_name(name):
    """The node an input string names: ``"^a"`` -> ``a``, ``"a:1"`` -> ``a``."""
    return name[1:] if name.startswith("^") else name.split(":")[0]


def _colocated_names(node):
    """The nodes ``node``'s ``_class`` attr colocates it with (``loc:@name`` entries, prefix dropped)."""
    if "_class" not in node.attr:
        return []
    names = []
    for entry in node.attr["_class"].list.s:
        entry = entry.decode("utf-8")
        names.append(entry[len("loc:@"):] if entry.startswith("loc:@") else entry)
    return names


def _as_type(value):
    if value is None:
        return None
    try:
        return dtypes.as_dtype(value).base_dtype
    except (TypeError, ValueError):
        return None


def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """Whether TensorFlow must place ``node`` (a ``NodeDef`` or an ``Operation``) on the CPU.

    True for variable ops when ``pin_variables_on_cpu``, for string and int32
    ``Const`` nodes, int32 ``DynamicStitch``/``ParallelDynamicStitch`` and
    ``Cast`` from int32, as TensorFlow's rule says.
    """
    from ferroflow.framework import ops

    if isinstance(node, ops.Operation):
        op_type = node.type

        def type_attr(name):
            if op_type == "Cast":
                return _as_type(node.inputs[0].dtype) if node.inputs else None
            return _as_type(node.outputs[0].dtype) if node.outputs else None
    elif hasattr(node, "attr") and hasattr(node, "op"):
        op_type = node.op

        def type_attr(name):
            return _as_type(node.attr[name].type) if name in node.attr else None
    else:
        raise TypeError(f"must_run_on_cpu: node must be a NodeDef or an Operation, got {type(node).__name__}")

    if pin_variables_on_cpu and op_type in _VARIABLE_OPS:
        return True
    if op_type == "Const":
        return type_attr("dtype") in (dtypes.string, dtypes.int32)
    if op_type in ("DynamicStitch", "ParallelDynamicStitch"):
        return type_attr("T") == dtypes.int32
    if op_type == "Cast":
        return type_attr("SrcT") == dtypes.int32
    return False


def extract_sub_graph(graph_def, dest_nodes):
    """The part of ``graph_def`` that ``dest_nodes`` (node names) depend on, in ``graph_def``'s node order.

    Follows data inputs, control inputs and ``_class`` colocations; keeps the
    function library and versions. Raises TypeError when ``graph_def`` is not a
    GraphDef or ``dest_nodes`` is a single string, and AssertionError (as
    TensorFlow) naming a destination that is not a node of the graph.
    """
    graph_pb2 = _graph_pb2()
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"graph_def must be a graph_pb2.GraphDef proto, but got type {type(graph_def)}.")
    if isinstance(dest_nodes, (str, bytes)):
        raise TypeError(f"dest_nodes must be an iterable of strings, but got type {type(dest_nodes)}.")
    dest_nodes = list(dest_nodes)

    position, deps = {}, {}
    for i, node in enumerate(graph_def.node):
        name = _node_name(node.name)
        position[name] = i
        deps[name] = [_node_name(x) for x in node.input] + _colocated_names(node)
    for name in dest_nodes:
        if name not in position:
            raise AssertionError(f"{name} is not in graph")

    keep, queue = set(), list(dest_nodes)
    while queue:
        name = queue.pop()
        if name in keep or name not in position:
            continue
        keep.add(name)
        queue.extend(deps[name])

    out = graph_pb2.GraphDef()
    out.node.extend(graph_def.node[i] for i in sorted(position[n] for n in keep))
    out.library.CopyFrom(graph_def.library)
    out.versions.CopyFrom(graph_def.versions)
    return out


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of the tensor a NodeDef input string names (``"op"`` means ``"op:0"``)."""
    name = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(name).get_shape()


def remove_training_nodes(input_graph, protected_nodes=None):
    """``input_graph`` without the nodes only training needs, as TensorFlow prunes them.

    ``CheckNumerics`` nodes are dropped along with every input that names
    them. ``Identity`` and ``StopGradient`` nodes are spliced out (their
    consumers read their first input instead) unless they are protected,
    have control inputs, are control inputs of another node, or another node
    is colocated with them. Names in ``protected_nodes`` are kept as they
    are. The result holds only the nodes (no library or versions), as
    TensorFlow's does.
    """
    graph_pb2 = _graph_pb2()
    protected = set(protected_nodes or ())

    dropped = {n.name for n in input_graph.node if n.op == "CheckNumerics" and n.name not in protected}
    nodes = []
    for node in input_graph.node:
        if node.name in dropped:
            continue
        kept = [x for x in node.input if (x[1:] if x.startswith("^") else x) not in dropped]
        copy = type(node)()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(kept)
        nodes.append(copy)

    control_sources, with_controls, colocated = set(), set(), set()
    for node in nodes:
        for x in node.input:
            if "^" in x:
                control_sources.add(x.replace("^", ""))
                with_controls.add(node.name)
        colocated.update(_colocated_names(node))

    # TensorFlow takes input[0] unconditionally; an Identity whose only input was a dropped CheckNumerics has
    # none, and is kept here.
    splice = {
        node.name: node.input[0]
        for node in nodes
        if node.op in ("Identity", "StopGradient") and node.name not in protected and node.name not in colocated
        and node.name not in with_controls and node.name not in control_sources and node.input
    }

    out = graph_pb2.GraphDef()
    for node in nodes:
        if node.name in splice:
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        for x in node.input:
            while (x[1:] if x.startswith("^") else x) in splice:
                x = splice[x[1:] if x.startswith("^") else x]
            copy.input.append(x)
    return out


class _Freezer:
    """Rewrites a GraphDef's variables into constants and fixes up what reads them (TensorFlow's rules)."""

    def __init__(self, graph_def):
        self.graph_def = graph_def
        self.nodes = {n.name: n for n in graph_def.node}
        self.readers = {}  # node name -> [(reader NodeDef, input position)], data inputs only
        for node in graph_def.node:
            for i, x in enumerate(node.input):
                if not x.startswith("^"):
                    self.readers.setdefault(_node_name(x), []).append((node, i))
        self.frozen_from_resource = False

    def freeze(self, node, value):
        from ferroflow.framework import tensor_util

        dtype_attr = type(node.attr["dtype"])()
        dtype_attr.CopyFrom(node.attr["dtype"])
        proto = tensor_util.make_tensor_proto(value, dtypes.as_dtype(dtype_attr.type), value.shape)
        self.frozen_from_resource = node.op == "VarHandleOp"
        name = node.name
        node.Clear()
        node.name, node.op = name, "Const"
        node.attr["dtype"].CopyFrom(dtype_attr)
        node.attr["value"].tensor.CopyFrom(proto)
        self._flow(name, dtype_attr, set())

    def _flow(self, name, dtype_attr, seen):
        """The value of node ``name`` is now a tensor of ``dtype_attr``'s type: update its readers."""
        if name in seen:
            return
        seen.add(name)
        for reader, index in self.readers.get(name, ()):
            if reader.op == "ReadVariableOp":
                old = type(reader)()
                old.CopyFrom(reader)
                reader.Clear()
                reader.name, reader.op = old.name, "Identity"
                reader.input.append(old.input[0])
                reader.attr["T"].CopyFrom(old.attr["dtype"])
                if "_class" in old.attr:
                    reader.attr["_class"].CopyFrom(old.attr["_class"])
            elif reader.op in _PASS_THROUGH_OPS:
                self._set_type(reader, 0 if reader.op == "Merge" else index, dtype_attr.type)
                if "_output_shapes" in reader.attr:
                    del reader.attr["_output_shapes"]
                self._flow(reader.name, dtype_attr, seen)
            elif reader.op in ("ResourceGather", "ResourceGatherNd"):
                self._gather(reader)
            elif reader.op in _FUNCTION_CALL_OPS and self.frozen_from_resource:
                raise ValueError(f"convert_variables_to_constants: node {reader.name} ({reader.op}) passes a "
                                 "resource variable to a function; freezing function arguments is not supported")

    @staticmethod
    def _set_type(node, index, dtype):
        attr = node.attr["T"]
        if attr.HasField("list"):
            if index < len(attr.list.type):
                attr.list.type[index] = dtype
                return
            count = len(attr.list.type)
        elif attr.HasField("type"):
            if index == 0:
                attr.type = dtype
                return
            count = 1
        else:
            count = 0
        raise ValueError(f"`index` {index:d} is out of range for node({node.name}).attr(T), which has {count:d} "
                         "elements.")

    def _gather(self, node):
        """A ResourceGather(Nd) on a frozen variable becomes GatherV2 (with a 0 axis Const) or GatherNd."""
        from ferroflow.framework import tensor_util

        old = type(node)()
        old.CopyFrom(node)
        node.Clear()
        node.name = old.name
        node.input.extend(old.input[:2])
        node.attr["Tparams"].CopyFrom(old.attr["dtype"])
        node.attr["Tindices"].CopyFrom(old.attr["Tindices"])
        if old.op == "ResourceGather":
            if old.attr["batch_dims"].i != 0:
                raise ValueError(f"batch_dims must be 0 for freeze_graph, but got node({old.name}).attr('batch_dims') "
                                 f"= {old.attr['batch_dims'].i}.")
            axis_name = old.name + "/axis"
            node.op = "GatherV2"
            node.input.append(axis_name)
            node.attr["Taxis"].CopyFrom(old.attr["Tindices"])
            if axis_name not in self.nodes:
                axis = self.graph_def.node.add()
                axis.name, axis.op = axis_name, "Const"
                axis.attr["dtype"].CopyFrom(old.attr["Tindices"])
                axis.attr["value"].tensor.CopyFrom(
                    tensor_util.make_tensor_proto(0, dtypes.as_dtype(old.attr["Tindices"].type), []))
                self.nodes[axis_name] = axis
        else:
            node.op = "GatherNd"
        if "_class" in old.attr:
            node.attr["_class"].CopyFrom(old.attr["_class"])


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """Freezes a graph: ``output_node_names``' subgraph with every variable replaced by a ``Const``.

    Each ``Variable``/``VariableV2`` node becomes a ``Const`` of the value
    ``sess`` holds for it (same name, its ``dtype`` attr kept), so the
    ``Identity`` that read the variable now reads the constant. A
    ``VarHandleOp`` (a resource variable, read through
    ``<name>/Read/ReadVariableOp``) becomes a ``Const`` too, and each
    ``ReadVariableOp`` of it an ``Identity``. Only the variables named in
    ``variable_names_whitelist`` (when given) and not in
    ``variable_names_blacklist`` are frozen. Returns a new ``GraphDef``;
    ``input_graph_def`` is not changed.
    """
    graph_def = extract_sub_graph(input_graph_def, output_node_names)

    def wanted(name):
        return ((variable_names_whitelist is None or name in variable_names_whitelist)
                and (variable_names_blacklist is None or name not in variable_names_blacklist))

    variables = [n for n in graph_def.node if n.op in _FREEZABLE_OPS and wanted(n.name)]
    fetches = [n.name + ("/Read/ReadVariableOp" if n.op == "VarHandleOp" else "") + ":0" for n in variables]
    values = sess.run(fetches) if fetches else []
    _logger.info("Froze %d variables.", len(variables))

    freezer = _Freezer(graph_def)
    for node, value in zip(variables, values):
        freezer.freeze(node, np.asarray(value))
    _logger.info("Converted %d variables to const ops.", len(variables))
    return graph_def
