"""Scoped ``MetaGraphDef`` export and import: the graph, its collections and the Saver's ``SaverDef``.

A MetaGraphDef bundles the ``GraphDef``, the Saver's ``SaverDef`` and the
graph's collections, so a training graph can be rebuilt in a fresh process
and its checkpoint restored. Collections are stored as TensorFlow stores
them: variables as serialized ``VariableDef`` protos in a ``bytes_list``,
ops and tensors by name in a ``node_list``, numbers and strings in the
matching list kinds. A collection whose items need a proto of their own (variables, queue
runners) is encoded by the functions its owner registers with ``ops.register_proto_function``.

``tf.train.export_meta_graph`` is ``export_meta_graph`` here; ``tf.train.import_meta_graph``
(which also rebuilds the Saver) lives in ``training/saver.py``.
"""

from __future__ import annotations

import inspect
import logging
import os

from google.protobuf import message, text_format

from ferroflow.core.framework import graph_debug_info_pb2, graph_pb2, variable_pb2
from ferroflow.core.protobuf import meta_graph_pb2
from ferroflow.framework import (
    control_flow_v1_import,
    dtypes,
    errors,
    op_attr_defaults,
    ops,
    tensor_util,
    versions,
)
from ferroflow.framework.function_library import _output_index, _parse_function_input, import_function_library
from ferroflow.framework.graph_def_util import restore_fused_updates
from ferroflow.platform import gfile

__all__ = ["create_meta_graph_def", "export_meta_graph", "import_scoped_meta_graph", "read_meta_graph_file"]

_logger = logging.getLogger("ferroflow")

# Collections whose items are Variables (stored as VariableDef protos).
_VARIABLE_KEYS = set(ops.GraphKeys._VARIABLE_COLLECTIONS) | {ops.GraphKeys.GLOBAL_STEP}


def _is_variable(x):
    return hasattr(x, "_ref") and hasattr(x, "initializer") and not isinstance(x, ops.Tensor)


def _add_collection_def(meta, key, graph, export_scope=None):
    """Adds collection ``key`` of ``graph`` to ``meta`` in TensorFlow's encoding (skips what cannot be encoded)."""
    if not isinstance(key, (str, bytes)) or key.startswith("__"):
        # Private bookkeeping (the variable store, scopes): TensorFlow keys these by tuples and skips them.
        return
    values = graph.get_collection(key)
    if not values:
        return
    col = meta.collection_def[key]
    try:
        first = values[0]
        to_proto = ops.get_to_proto_function(key)
        if to_proto is None and _is_variable(first):
            to_proto = ops.get_to_proto_function(ops.GraphKeys.GLOBAL_VARIABLES)
        if to_proto is not None:
            for v in values:
                proto = to_proto(v, export_scope=export_scope)
                if proto is not None:
                    col.bytes_list.value.append(proto.SerializeToString())
        elif isinstance(first, (ops.Tensor, ops.Operation)):
            for v in values:
                if ops.is_in_name_scope(v.name, export_scope):
                    col.node_list.value.append(ops.strip_name_scope(v.name, export_scope))
        elif hasattr(first, "type_url") and hasattr(first, "Unpack"):  # protos packed in google.protobuf.Any
            for v in values:
                col.any_list.value.add().MergeFromString(v.SerializeToString())
        elif isinstance(first, bool):
            raise TypeError("bool collections have no CollectionDef kind")
        elif isinstance(first, int):
            col.int64_list.value.extend(int(v) for v in values)
        elif isinstance(first, float):
            col.float_list.value.extend(float(v) for v in values)
        elif isinstance(first, (str, bytes)):
            col.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
        elif hasattr(first, "to_proto"):
            for v in values:
                proto = v.to_proto(export_scope=export_scope) if _takes_scope(v.to_proto) else v.to_proto()
                if proto is not None:
                    col.bytes_list.value.append(proto.SerializeToString())
        else:
            raise TypeError(f"no CollectionDef encoding for {type(first).__name__}")
    except (TypeError, ValueError, AttributeError) as e:
        _logger.warning("Issue encountered when serializing: %s.\n%s", key, e)
        del meta.collection_def[key]
        return
    if not col.ListFields():
        del meta.collection_def[key]


def _takes_scope(fn):
    try:
        return "export_scope" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _filter_graph_def(graph_def, export_scope, clear_devices):
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if not ops.is_in_name_scope(node.name, export_scope):
            continue
        n = out.node.add()
        n.CopyFrom(node)
        n.name = ops.strip_name_scope(node.name, export_scope)
        del n.input[:]
        n.input.extend(ops.strip_name_scope(i, export_scope) for i in node.input)
        if clear_devices:
            n.device = ""
    return out


def create_meta_graph_def(meta_info_def=None, graph_def=None, saver_def=None, collection_list=None, graph=None,
                          export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                          strip_default_attrs=False):
    """The ``MetaGraphDef`` of ``graph`` (default graph): meta info, graph, saver and collections."""
    graph = graph or ops.get_default_graph()
    meta = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    if not meta.meta_info_def.tensorflow_version:
        meta.meta_info_def.tensorflow_version = versions.VERSION
    if not meta.meta_info_def.tensorflow_git_version:
        meta.meta_info_def.tensorflow_git_version = versions.GIT_VERSION
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if export_scope or clear_devices:
        graph_def = _filter_graph_def(graph_def, export_scope, clear_devices)
    meta.graph_def.CopyFrom(graph_def)
    if strip_default_attrs:
        op_attr_defaults.strip_default_attrs(meta.graph_def)
        meta.meta_info_def.stripped_default_attrs = True
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in sorted(set(keys)):
        if clear_extraneous_savers and key == ops.GraphKeys.SAVERS:
            continue
        _add_collection_def(meta, key, graph, export_scope)
    return meta


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, save_debug_info=False, **kwargs):
    """Builds the ``MetaGraphDef`` of ``graph`` and, if ``filename`` is given, writes it (binary or text).

    ``export_scope`` keeps only the nodes under that scope (names made
    relative to it); ``clear_devices`` empties every node's device;
    ``strip_default_attrs`` drops the attrs whose value is their op's
    registered default (and sets ``meta_info_def.stripped_default_attrs``).
    With ``save_debug_info`` and a ``filename``, the nodes' creation stack
    traces go to a ``GraphDebugInfo`` next to it: ``filename`` with its
    extension replaced by ``.debug`` (binary or text, as the meta graph).
    Returns the MetaGraphDef.
    """
    if kwargs:
        raise TypeError(f"export_meta_graph got unexpected keyword arguments: {sorted(kwargs)}")
    meta = create_meta_graph_def(
        meta_info_def=meta_info_def, graph_def=graph_def, saver_def=saver_def, collection_list=collection_list,
        graph=graph, export_scope=export_scope, clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers, strip_default_attrs=strip_default_attrs,
    )
    if filename:
        filename = os.fspath(filename)
        if as_text:
            data = text_format.MessageToString(meta).encode()
        else:
            data = meta.SerializeToString()
        os.makedirs(os.path.dirname(filename) or ".", exist_ok=True)
        gfile.atomic_write_string_to_file(filename, data)
        if save_debug_info:
            graph = graph or ops.get_default_graph()
            named_ops = [
                (node.name, _creating_op(graph, ops.prepend_name_scope(node.name, export_scope)))
                for node in meta.graph_def.node
            ]
            info = create_graph_debug_info_def(named_ops)
            debug_data = text_format.MessageToString(info).encode() if as_text else info.SerializeToString()
            gfile.atomic_write_string_to_file(os.path.splitext(filename)[0] + ".debug", debug_data)
    return meta


def _creating_op(graph, name):
    """The Operation behind the exported node ``name``.

    A node the export added in place of one op (the TensorFlow ops written
    for a ``ReducedShape``, named under its name) gets that op.
    """
    op = graph._get_operation_by_name_unsafe(name)
    while op is None and "/" in name:
        name = name.rsplit("/", 1)[0]
        op = graph._get_operation_by_name_unsafe(name)
    if op is None:
        raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
    return op


def create_graph_debug_info_def(named_ops):
    """A ``GraphDebugInfo`` holding the creation stack trace of each ``(node name, Operation)`` pair.

    Laid out as TensorFlow 2.x writes it: ``files`` lists each file once,
    ``frames_by_id`` each distinct (file, line, function) once,
    ``traces_by_id`` each distinct trace once (frames outermost first), and
    ``name_to_trace_id`` maps ``"<node name>@"`` (a node of the graph itself,
    not of a library function) to its trace. Ids count up from 0.
    """
    info = graph_debug_info_pb2.GraphDebugInfo()
    files, frames, traces = {}, {}, {}
    for name, op in named_ops:
        frame_ids = []
        for filename, line, func in op._creation_frames():
            key = (filename, line, func)
            if key not in frames:
                if filename not in files:
                    files[filename] = len(files)
                    info.files.append(filename)
                frames[key] = len(frames)
                frame = info.frames_by_id[frames[key]]
                frame.file_index, frame.line, frame.func = files[filename], line, func
            frame_ids.append(frames[key])
        trace_key = tuple(frame_ids)
        if trace_key not in traces:
            traces[trace_key] = len(traces)
            info.traces_by_id[traces[trace_key]].frame_id.extend(frame_ids)
        info.name_to_trace_id[name + "@"] = traces[trace_key]
    return info


def _attr_from_proto(value, node_name, key):
    """A ``tf.AttrValue`` as the value ferroflow's graph takes for an op attribute."""
    kind = value.WhichOneof("value")
    if kind == "s":
        return value.s
    if kind == "i":
        return int(value.i)
    if kind == "f":
        return float(value.f)
    if kind == "b":
        return bool(value.b)
    if kind == "type":
        return ("type", int(value.type))
    if kind == "shape":
        return ("shape", _shape_from_proto(value.shape))
    if kind == "func":
        return value.func.name
    if kind == "tensor":
        dtype = dtypes.as_dtype(value.tensor.dtype)
        return tensor_util.tensor_attr(tensor_util.make_ndarray(value.tensor), dtype)
    if kind == "list":
        lst = value.list
        if lst.type:
            return ("list_type", [int(t) for t in lst.type])
        if lst.shape:
            return ("list_shape", [_shape_from_proto(x) for x in lst.shape])
        if lst.s:
            return list(lst.s)
        if lst.i:
            return [int(x) for x in lst.i]
        if lst.f:
            return [float(x) for x in lst.f]
        if lst.b:
            return [bool(x) for x in lst.b]
        if lst.func:  # Case's branches: function names, as the graph keeps them
            return [f.name.encode() for f in lst.func]
        if lst.tensor:
            raise ValueError(f"node {node_name}: list attribute '{key}' of tensors is not supported")
        return []
    raise ValueError(f"node {node_name}: attribute '{key}' of kind {kind} is not supported")


def _shape_from_proto(shape):
    if shape.unknown_rank:
        return None
    return [None if d.size < 0 else int(d.size) for d in shape.dim]


def _parse_input(name):
    """``"^a"`` -> ("a", None, True); ``"a:1"`` -> ("a", 1, False); ``"a"`` -> ("a", 0, False)."""
    if name.startswith("^"):
        return name[1:], None, True
    op, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return op, int(idx), False
    return name, 0, False


def import_graph_def_nodes(graph_def, graph=None, import_scope=None, clear_devices=False, input_map=None,
                           uniquify_names=False):
    """Adds every node of ``graph_def`` to ``graph`` (op type, attributes, inputs, control inputs, device).

    Fused optimizer updates that export wrote as TensorFlow's per-variable
    ops become fused again (``graph_def_util.restore_fused_updates``). The
    function library (control-flow bodies) is imported first. Names get
    ``import_scope/`` in front. Nodes are added in dependency order. Raises
    ValueError naming the node for an unknown input or an attribute
    ferroflow cannot represent.

    ``input_map`` (``tf.import_graph_def``'s) maps ``(node name, output
    index)`` to a Tensor of ``graph`` that replaces that input wherever a node
    reads it, and ``(node name, None)`` to an Operation that replaces the
    control input ``^name``; a mapped input need not name a node of the
    GraphDef. With ``uniquify_names`` a node whose name is taken in ``graph``
    gets a fresh one (``name_1``, ...), as TensorFlow's importer does.
    Returns ``{GraphDef node name: Operation}``.
    """
    graph = graph or ops.get_default_graph()
    conversion = None
    if control_flow_v1_import.has_v1_control_flow(graph_def):
        # TF1's Switch/Merge/Enter/Exit/... become If/While ops over new library functions.
        conversion = control_flow_v1_import.functionalize(graph_def, graph._native.function_names())
        graph_def = conversion.graph_def
    if graph_def.library.function:
        import_function_library(graph_def.library, graph, _create_function_nodes)
    created = _create_nodes(restore_fused_updates(graph_def.node), graph, _parse_input, None, import_scope,
                            clear_devices, input_map or {}, uniquify_names)
    if conversion is not None:
        graph._v1_control_flow_removed = dict(getattr(graph, "_v1_control_flow_removed", {}), **{
            ops.prepend_name_scope(k, import_scope): v for k, v in conversion.removed.items()})
        if conversion.after_gradients:
            created.update(_import_after_gradients(conversion, graph, created, import_scope, clear_devices,
                                                   input_map or {}, uniquify_names))
    return created


def _import_after_gradients(conversion, graph, created, import_scope, clear_devices, input_map, uniquify_names):
    """Imports the nodes that read TF1 loop gradients (the optimizer) on gradients recomputed by the
    registered rebuilder, or the NoOps that say they were not imported when it cannot."""
    def tensor(name):
        op_name, idx, _ = _parse_input(name)
        return created[op_name].outputs[idx]

    rebuilder = control_flow_v1_import.gradient_rebuilder()
    grads = None
    if rebuilder is not None:
        with graph.as_default():
            grads = rebuilder(graph, [(
                [tensor(y) for y in r.ys], [tensor(gy) for gy in r.grad_ys] if r.grad_ys else None, tensor(r.x),
                r.component) for r in conversion.gradient_requests])
    nodes = conversion.after_gradients
    mapping = dict(input_map)
    if grads is None or any(gr is None or not r.matches(gr) for r, gr in zip(conversion.gradient_requests, grads)):
        _logger.warning("TF1 loop gradients could not be rebuilt; importing %s as ops that fail when run",
                        ", ".join(n.name for n in conversion.fallback_nodes if n.op == "NoOp"))
        nodes = conversion.fallback_nodes
    else:
        for r, gr in zip(conversion.gradient_requests, grads):
            op_name, idx, _ = _parse_input(r.tensor)
            mapping[(op_name, idx)] = gr
    names = {n.name for n in nodes}
    for n in nodes:
        for inp in n.input:
            dep, idx, is_control = _parse_input(inp)
            key = _input_key(dep, idx, is_control)
            if dep in names or key in mapping or dep not in created:
                continue
            mapping[key] = created[dep] if is_control else created[dep].outputs[idx]
    return _create_nodes(nodes, graph, _parse_input, None, import_scope, clear_devices, mapping, uniquify_names)


def _create_function_nodes(node_defs, graph, resolve):
    return _create_nodes(node_defs, graph, _parse_function_input, resolve, None, False)


def _input_key(dep, idx, is_control):
    return (dep, None if is_control else idx)


def _create_nodes(all_nodes, graph, parse, resolve, import_scope, clear_devices, input_map=None,
                  uniquify_names=False):
    """Creates ``all_nodes`` in ``graph`` in dependency order; an input naming no node comes from
    ``resolve(name, index)`` (function arguments), or is an error when ``resolve`` is None.
    ``input_map`` and ``uniquify_names``: see ``import_graph_def_nodes``."""
    input_map = input_map or {}
    nodes = {n.name: n for n in all_nodes}
    order, state = [], {}
    for root in all_nodes:
        stack = [(root.name, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(nodes[name])
                continue
            if state.get(name):
                if state[name] == 1:
                    raise ValueError(f"the GraphDef has a cycle through node {name}")
                continue
            state[name] = 1
            stack.append((name, True))
            for inp in nodes[name].input:
                parsed = parse(inp)
                dep = parsed[0]
                if input_map and _input_key(*parsed) in input_map:
                    continue
                if dep not in nodes:
                    if resolve is not None:
                        continue
                    raise ValueError(f"node {name} has input '{inp}', which is not a node of the GraphDef")
                if not state.get(dep):
                    stack.append((dep, False))
                elif state[dep] == 1:
                    raise ValueError(f"the GraphDef has a cycle through node {dep}")
    created = {}
    final_names = {ops.prepend_name_scope(n.name, import_scope) for n in all_nodes} if uniquify_names else ()
    with graph.as_default(), ops.control_dependencies(None):
        for node in order:
            inputs, controls = [], []
            for inp in node.input:
                dep, idx, is_control = parse(inp)
                mapped = input_map.get(_input_key(dep, idx, is_control)) if input_map else None
                if mapped is not None:
                    if is_control:
                        controls.append(mapped if isinstance(mapped, ops.Operation) else mapped.op)
                    else:
                        inputs.append(mapped)
                    continue
                if dep not in created:
                    t = resolve(dep, idx)
                    if not is_control:
                        inputs.append(t)
                    continue
                op = created[dep]
                if is_control:
                    controls.append(op)
                else:
                    if isinstance(idx, tuple):  # a FunctionDef's "node:out_arg:k"
                        idx = _output_index(op, *idx)
                    if idx >= len(op.outputs):
                        raise ValueError(f"node {node.name} has input '{inp}' but {dep} has {len(op.outputs)} outputs")
                    inputs.append(op.outputs[idx])
            attrs = {k: _attr_from_proto(v, node.name, k) for k, v in node.attr.items()
                     if k not in ("_output_shapes", "_class")}
            # A graph exported with strip_default_attrs=True lacks the attrs that had their default value.
            for k, v in op_attr_defaults.missing_defaults(node).items():
                attrs[k] = _attr_from_proto(v, node.name, k)
            device = "" if clear_devices else node.device
            name = ops.prepend_name_scope(node.name, import_scope)
            if uniquify_names and graph._get_operation_by_name_unsafe(name) is not None:
                name = _fresh_name(graph, name, final_names)
            with ops.device(device or None):
                op = graph._create_op(node.op, inputs, attrs, name=name + "/", control_inputs=controls)
            created[node.name] = op
    return created


def _fresh_name(graph, name, reserved):
    """A name like ``name_1`` that is free in ``graph`` and not among the ``reserved`` names still to be created."""
    while True:
        candidate = graph._native.unique_name(name, True)
        if candidate not in reserved and graph._get_operation_by_name_unsafe(candidate) is None:
            return candidate


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None, import_scope=None):
    """Adds a MetaGraphDef's graph and collections to ``graph``; returns ``{name: Variable}`` of what it built."""
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        meta = meta_graph_or_file
    else:
        meta = read_meta_graph_file(meta_graph_or_file)
    graph = graph or ops.get_default_graph()
    import_graph_def_nodes(meta.graph_def, graph, import_scope, clear_devices)
    # TF1's WhileContextDef/CondContextDef name the Switch/Merge/Enter/... nodes that became If/While ops.
    converted = control_flow_v1_import.has_v1_control_flow(meta.graph_def)
    variables = {}
    for key in sorted(meta.collection_def):
        col = meta.collection_def[key]
        if converted and key in control_flow_v1_import.CONTEXT_COLLECTIONS:
            continue
        kind = col.WhichOneof("kind")
        if kind == "node_list":
            removed = getattr(graph, "_v1_control_flow_removed", {})
            for name in col.node_list.value:
                full = ops.prepend_name_scope(name, import_scope)
                why = removed.get(full.split(":")[0]) if removed else None
                if why is not None and graph._get_operation_by_name_unsafe(full.split(":")[0]) is None:
                    _logger.warning("collection %r: %s is left out: %s", key, name, why)
                    continue
                graph.add_to_collection(key, graph.as_graph_element(full))
        elif kind == "bytes_list":
            from_proto = ops.get_from_proto_function(key)
            if key in _VARIABLE_KEYS:
                from_proto = from_proto or ops.get_from_proto_function(ops.GraphKeys.GLOBAL_VARIABLES)
                for data in col.bytes_list.value:
                    d = variable_pb2.VariableDef.FromString(data)
                    if d.variable_name not in variables:
                        with graph.as_default():
                            variables[d.variable_name] = from_proto(d, import_scope=import_scope)
                    graph.add_to_collection(key, variables[d.variable_name])
            elif key == ops.GraphKeys.SAVERS:
                continue
            elif from_proto is not None:
                proto_type = ops.get_collection_proto_type(key)
                with graph.as_default():
                    for data in col.bytes_list.value:
                        graph.add_to_collection(key, from_proto(proto_type.FromString(data), import_scope=import_scope))
            else:
                for data in col.bytes_list.value:
                    graph.add_to_collection(key, data)
        elif kind == "int64_list":
            for x in col.int64_list.value:
                graph.add_to_collection(key, int(x))
        elif kind == "float_list":
            for x in col.float_list.value:
                graph.add_to_collection(key, float(x))
        elif kind == "any_list":
            for x in col.any_list.value:
                graph.add_to_collection(key, x)
    return meta, variables


def read_meta_graph_file(filename):
    """The ``MetaGraphDef`` in ``filename`` (binary, or text format as a fallback)."""
    filename = os.fspath(filename)
    if not os.path.exists(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(data)
        return meta
    except message.DecodeError:
        pass
    try:
        text_format.Merge(data.decode("utf-8"), meta)
    except (UnicodeDecodeError, text_format.ParseError) as e:
        raise errors.DataLossError(None, None, f"{filename} is not a MetaGraphDef (binary or text): {e}") from None
    return meta
