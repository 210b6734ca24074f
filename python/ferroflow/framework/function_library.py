"""A graph's function library in a ``GraphDef`` (``library.function``) and back.

Export writes each function of the graph's library (cond branches, loop
bodies, their gradients, nested ones included) as a ``FunctionDef``: its
``_Arg`` nodes become the signature's input args (``arg_<k>``; a list value as
``DT_VARIANT``, a variable passed by reference with ``is_ref``, the static
shape in ``arg_attr``), its other nodes its ``node_def``, and its outputs
``ret`` entries named ``output_<i>``. Inside a function a node's input is
written ``node:<output arg>:<i>`` with the output arg names of TensorFlow's
signature of the op (``output`` for ferroflow's own ops), and an argument by
its name; nodes get the attrs TensorFlow's signatures require. Attributes naming functions (``then_branch``,
``else_branch``, ``cond``, ``body``, ``body_grad``) are written as ``func``
attributes, and lists of them (``Case``'s ``branches``) as lists of ``func``, as TensorFlow writes them.

Import rebuilds every function, nested ones first, before the graph's nodes.
TensorFlow runs the functions of forward control flow (``tf.cond`` and
``tf.while_loop`` over tensors); functions that use ferroflow's own ops
(TensorArray lists, ``WhileGrad``/``IfGrad``) import into ferroflow only.
"""

from __future__ import annotations

from ferroflow.framework import dtypes

#: Attributes whose value names a function of the library.
FUNCTION_ATTRS = (
    "then_branch", "else_branch", "cond", "body", "body_grad", "f",
    "saving_body", "body_grad_saved", "then_grad", "else_grad", "then_saving", "else_saving",
    "then_grad_saved", "else_grad_saved",
    # tf.data: FilterDataset's predicate, OneShotIterator's dataset_factory.
    "predicate", "dataset_factory",
)
#: Attributes whose value is a list of function names (an empty name: none).
FUNCTION_LIST_ATTRS = ("branches", "branch_grads", "branch_savings", "branch_grads_saved")

_DT_VARIANT = 21


def mark_function_attrs(node):
    """Rewrites ``node``'s function-name attributes from strings to ``func`` values, in place."""
    for key in FUNCTION_ATTRS:
        value = node.attr.get(key)
        if value is not None and value.WhichOneof("value") == "s":
            name = value.s.decode()
            value.Clear()
            value.func.name = name
    for key in FUNCTION_LIST_ATTRS:
        value = node.attr.get(key)
        if value is not None and value.WhichOneof("value") == "list" and value.list.s:
            names = [s.decode() for s in value.list.s]
            value.Clear()
            for name in names:
                value.list.func.add().name = name


def function_names_in(value):
    """The function names an attribute value holds (a ``func``, a string, or a list of them)."""
    kind = value.WhichOneof("value")
    if kind == "func":
        return [value.func.name]
    if kind == "s":
        return [value.s.decode()]
    if kind == "list":
        return [f.name for f in value.list.func] + [s.decode() for s in value.list.s]
    return []


def add_function_library(graph_def, native_graph, producer, add_shapes=False):
    """Adds every function of ``native_graph``'s library to ``graph_def.library``."""
    from ferroflow import _native
    from ferroflow.core.framework import graph_pb2
    from ferroflow.framework.op_signatures import add_signature_attrs

    shift = _native.TID_SHIFT
    mask = (1 << shift) - 1
    for name in native_graph.function_names():
        fgraph, arg_tids, out_tids = native_graph.function_graph(name)
        body = graph_pb2.GraphDef.FromString(_native.graph_def(fgraph, 0, bool(add_shapes), producer))
        fdef = graph_def.library.function.add()
        fdef.signature.name = name
        arg_names = {}
        for k, tid in enumerate(arg_tids):
            node = body.node[tid >> shift]
            arg = fdef.signature.input_arg.add()
            # FunctionDef argument names are plain identifiers.
            arg.name = arg_names[tid >> shift] = f"arg_{k}"
            arg.type = _DT_VARIANT if node.attr["is_list"].b else node.attr["T"].type
            arg.is_ref = node.attr["is_ref"].b
            fdef.arg_attr[k].attr["_output_shapes"].list.shape.add().CopyFrom(node.attr["shape"].shape)

        summaries = {item[0]: item for item in fgraph.node_summaries(0)}

        def ref(node_id, index, arg_names=arg_names, body=body, summaries=summaries):
            if node_id in arg_names:
                return arg_names[node_id]
            node = body.node[node_id]
            arg, k = _output_arg(node, index, len(summaries[node_id][6]))
            return f"{node.name}:{arg}:{k}"

        by_name = {n.name: i for i, n in enumerate(body.node)}
        for i, node in enumerate(body.node):
            if i in arg_names:
                continue
            nd = fdef.node_def.add()
            nd.CopyFrom(node)
            del nd.input[:]
            for inp in node.input:
                if inp.startswith("^"):
                    nd.input.append(inp)
                    continue
                src, _, idx = inp.partition(":")
                nd.input.append(ref(by_name[src], int(idx or 0)))
            mark_function_attrs(nd)
            _, _, _, in_tids, _, _, out_specs = summaries[i]
            in_types = [fgraph.output_info(t)[0] for t in in_tids]
            add_signature_attrs(nd, in_types, [spec[0] for spec in out_specs])
        for j, tid in enumerate(out_tids):
            out = fdef.signature.output_arg.add()
            out.name = f"output_{j}"
            out.type = _DT_VARIANT if fgraph.is_list(tid) else fgraph.output_info(tid)[0]
            fdef.ret[out.name] = ref(tid >> shift, tid & mask)


def _output_arg(node_def, index, count):
    """``(output arg name, index within it)`` of output ``index`` of ``node_def`` (``count`` outputs),
    as TensorFlow's signature of the op names it; ``("output", index)`` for ops TensorFlow lacks."""
    from ferroflow.framework.op_signatures import _arg_lengths, op_signature

    signature = op_signature(node_def.op)
    lengths = signature and _arg_lengths(signature["outputs"], count, node_def.attr)
    if not lengths:
        return "output", index
    start = 0
    for arg, length in zip(signature["outputs"], lengths):
        if index < start + length:
            return arg["name"], index - start
        start += length
    return "output", index


def _output_index(op, arg_name, k):
    """The output number of ``op`` that FunctionDef input ``op:arg_name:k`` names."""
    from ferroflow.framework.op_signatures import op_signature

    signature = op_signature(op.type)
    names = [a["name"] for a in signature["outputs"]] if signature else []
    if arg_name not in names:
        return k
    start = 0
    for arg in signature["outputs"]:
        if arg["name"] == arg_name:
            return start + k
        list_attr = arg.get("number_attr") or arg.get("type_list_attr")
        if list_attr is None:
            start += 1
        else:
            value = op.get_attr(list_attr)
            start += value if isinstance(value, int) else len(value)
    return k


def _parse_function_input(name):
    """``"^a"`` -> ("a", 0, True); ``"a:out_arg:1"`` -> ("a", ("out_arg", 1), False) (the output
    within the op's output arg, resolved once the op exists); ``"a:1"`` -> ("a", 1, False)."""
    if name.startswith("^"):
        return name[1:], 0, True
    parts = name.split(":")
    if len(parts) == 3:
        return parts[0], (parts[1], int(parts[2])), False
    if len(parts) == 2 and parts[1].isdigit():
        return parts[0], int(parts[1]), False
    return name, 0, False


def import_function_library(library, graph, create_nodes):
    """Adds every ``FunctionDef`` of ``library`` to ``graph``'s library (ones already there are kept).

    ``create_nodes(node_defs, graph, resolve)`` creates NodeDefs in dependency
    order in ``graph``, taking each input from ``resolve(name, index)`` for a
    name not among the nodes themselves; it returns the created ops by name.
    """
    from ferroflow.framework.func_graph import FuncGraph
    from ferroflow.framework.tensor_shape import TensorShape

    fdefs = {f.signature.name: f for f in library.function}

    def build(name, target):
        if name in target._native.function_names():
            return
        if name not in fdefs:
            raise ValueError(f"function '{name}' is used but not in the GraphDef's library")
        fdef = fdefs[name]
        fg = FuncGraph(name, graph)
        args = {}
        arg_list = []
        for k, arg in enumerate(fdef.signature.input_arg):
            shapes = fdef.arg_attr[k].attr["_output_shapes"].list.shape if k in fdef.arg_attr else []
            shape = None
            if shapes and not shapes[0].unknown_rank:
                shape = TensorShape([d.size if d.size >= 0 else None for d in shapes[0].dim])
            is_list = arg.type == _DT_VARIANT
            t = fg.add_arg(dtypes.float32 if is_list else dtypes.as_dtype(arg.type), shape, name=arg.name,
                           is_ref=arg.is_ref, is_list=is_list)
            args[arg.name] = t
            arg_list.append(t)
        for node in fdef.node_def:
            for key in FUNCTION_ATTRS + FUNCTION_LIST_ATTRS:
                value = node.attr.get(key)
                if value is not None:
                    for fn in function_names_in(value):
                        if fn:
                            build(fn, fg)

        def resolve(src, index):
            if src in args:
                return args[src]
            raise ValueError(f"function '{name}': input '{src}' is neither a node nor an argument")

        with fg.as_default():
            created = create_nodes(list(fdef.node_def), fg, resolve)
        outputs = []
        for out in fdef.signature.output_arg:
            src, index, _ = _parse_function_input(fdef.ret[out.name])
            if src in args:
                outputs.append(args[src])
                continue
            if isinstance(index, tuple):
                index = _output_index(created[src], *index)
            outputs.append(created[src].outputs[index])
        fg.inputs = arg_list
        target._native.add_function(name, fg._native, [t._tid for t in arg_list], [t._tid for t in outputs])

    for name in fdefs:
        build(name, graph)

