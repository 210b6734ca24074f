"""A graph's function library in a ``GraphDef`` (``library.function``), imported.

The Rust core writes the library on export
(``ferroflow_records::graph_def::library``): each function's arguments as
``arg_<k>``, its outputs as ``output_<i>``, a node's input inside a function
as ``node:<output arg>:<i>`` with the output arg names of TensorFlow's
signature of the op, and function-valued attributes as ``func`` values.
Import rebuilds every function, nested ones first, before the graph's nodes.
TensorFlow runs the functions of forward control flow (``tf.cond`` and
``tf.while_loop`` over tensors); functions that use ferroflow's own ops
(TensorArray lists, ``WhileGrad``/``IfGrad``) import into ferroflow only.
"""

from __future__ import annotations

from ferroflow import _native
from ferroflow.framework import dtypes

#: Attributes whose value names a function of the library; attributes whose value is a list of function
#: names (an empty name: none). The Rust core's lists.
FUNCTION_ATTRS, FUNCTION_LIST_ATTRS = (tuple(names) for names in _native.function_attr_names())

_DT_VARIANT = 21


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

