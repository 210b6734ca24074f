"""``tf.compat.v1.train.do_quantize_training_on_graphdef``: TensorFlow 1's quantized-training rewrite.

TensorFlow 2.21 still runs this rewrite (deprecated, not removed): every data
input of a ``MatMul`` or ``Conv2D`` outside the backward pass (nodes whose name
starts with ``gradients``) is routed through a ``QuantizeAndDequantizeV2`` of
``num_bits`` bits, one per source node (named ``<source>/QuantizeAndDequantizeV2``).
Its range depends on where the input comes from, looking through ``Identity``,
pooling, ``Reshape`` and ``ConcatV2``:

* ``Relu6`` [0, 6], ``Sigmoid`` [0, 1] (unsigned) and ``Tanh`` [-1, 1]: the
  range is given (``<source>/InputMin`` and ``/InputMax`` constants);
* constants and variables (signed), ``Relu`` (unsigned), and anything else
  (signed; taken for a model input, of which at most two are accepted): the
  range is learned, as an exponential moving average (decay 0.999) of the
  input's min and max kept in two new variables (``<source>/Min/Variable``,
  ``<source>/Max/Variable``) that take the first value seen as they are
  (``IsVariableInitialized`` -> ``Switch`` -> ``Merge`` -> ``Assign``).

When the graph has a ``tf.train.Saver`` (one ``SaveV2`` op and its
``restore_all``), the new variables are added to what it saves and restores.
This module rewrites the ``GraphDef`` protocol buffer directly, node for node
as TensorFlow's C++ rewrite does (the same names, attrs, node order and
TensorFlow's quirks: the quantize op reads output 0 of its source node), so
the result equals TensorFlow's. Errors are the Python exceptions TensorFlow's
binding raises for its status codes: ValueError (invalid argument: two
Savers, a Saver without ``restore_all``, a non-float input), IndexError
(``num_bits`` outside [1, 63]) and NotImplementedError (a third input of
unknown kind).
"""

from __future__ import annotations

import heapq

from ferroflow.core.framework import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2, types_pb2
from ferroflow.framework import tensor_util
from ferroflow.framework.op_attr_defaults import missing_defaults

__all__ = ["do_quantize_training_on_graphdef"]

_ALLOWED_INPUTS = 2
_EMA_DECAY = 0.999
_REWRITTEN = ("MatMul", "Conv2D")
_FLOAT = types_pb2.DT_FLOAT


def _parse_input(name):
    """``"^a"`` -> ``("a", -1)``, ``"a:2"`` -> ``("a", 2)``, ``"a"`` -> ``("a", 0)``."""
    if name.startswith("^"):
        return name[1:], -1
    node, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return name, 0


def _input_name(node, index):
    return f"^{node}" if index < 0 else node if index == 0 else f"{node}:{index}"


def _attr(**kw):
    (kind, value), = kw.items()
    a = attr_value_pb2.AttrValue()
    if kind == "type":
        a.type = value
    elif kind == "b":
        a.b = value
    elif kind == "i":
        a.i = value
    elif kind == "s":
        a.s = value
    elif kind == "shape":
        a.shape.SetInParent()
    elif kind == "types":
        a.list.type.extend(value)
    elif kind == "tensor":
        a.tensor.CopyFrom(value)
    return a


def _scalar(dtype, value):
    t = tensor_pb2.TensorProto(dtype=dtype)
    t.tensor_shape.SetInParent()
    if dtype == _FLOAT:
        t.float_val.append(value)
    else:
        t.int_val.append(value)
    return t


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _strings(values):
    """A string vector as TensorFlow writes a Tensor attr: one element in ``string_val``, more in
    ``tensor_content`` (every length as a varint, then the bytes)."""
    values = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING)
    t.tensor_shape.dim.add(size=len(values))
    if len(values) > 1:
        t.tensor_content = b"".join(_varint(len(v)) for v in values) + b"".join(values)
    else:
        t.string_val.extend(values)
    return t


def _string_values(tensor):
    """The strings of a string TensorProto written either way."""
    if tensor.string_val or not tensor.tensor_content:
        return list(tensor.string_val)
    n = 1
    for d in tensor.tensor_shape.dim:
        n *= d.size
    return tensor_util.string_tensor_content(tensor.tensor_content, n)


class _Node:
    __slots__ = ("node_def", "inputs")

    def __init__(self, node_def, inputs):
        self.node_def = node_def
        self.inputs = inputs  # [(source name, output index or -1 for a control input)]

    @property
    def name(self):
        return self.node_def.name

    @property
    def op(self):
        return self.node_def.op


class _Graph:
    """The nodes of a GraphDef in TensorFlow's construction order, edges as (source, index) pairs."""

    def __init__(self, graph_def):
        self.nodes = {}
        self.order = []
        self.counter = 0  # TensorFlow's Graph::NewName counter
        seen = set()
        for nd in graph_def.node:
            if nd.name in seen:
                raise ValueError(f"Node '{nd.name}' is not unique")
            seen.add(nd.name)
        index = {nd.name: i for i, nd in enumerate(graph_def.node)}
        for nd in graph_def.node:
            for inp in nd.input:
                src, _ = _parse_input(inp)
                if src not in index:
                    raise ValueError(f"Node '{nd.name}': Unknown input node '{inp}'")
        for i in self._construction_order(graph_def, index):
            nd = graph_def.node[i]
            copy = type(nd)()
            copy.CopyFrom(nd)
            for key, value in (missing_defaults(copy) or {}).items():
                copy.attr[key].CopyFrom(value)
            self.add(_Node(copy, [_parse_input(x) for x in nd.input]))

    @staticmethod
    def _construction_order(graph_def, index):
        """TensorFlow's GraphConstructor order: the ready node of lowest GraphDef index first (a
        ``Merge`` waits only for inputs that do not come from ``NextIteration``)."""
        nodes = graph_def.node
        pending = []
        users = [[] for _ in nodes]
        for i, nd in enumerate(nodes):
            count = 0
            for inp in nd.input:
                j = index[_parse_input(inp)[0]]
                if nd.op == "Merge" and nodes[j].op in ("NextIteration", "RefNextIteration"):
                    continue
                users[j].append(i)
                count += 1
            pending.append(count)
        ready = [i for i, c in enumerate(pending) if c == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for u in users[i]:
                pending[u] -= 1
                if pending[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) != len(nodes):
            stuck = sorted(nodes[i].name for i, c in enumerate(pending) if c > 0)
            raise ValueError(f"GraphDef has a cycle through nodes {stuck[:5]}")
        return order

    def add(self, node):
        self.nodes[node.name] = node
        self.order.append(node.name)
        return node

    def remove(self, name):
        del self.nodes[name]
        self.order.remove(name)

    def new_name(self, prefix):
        name = f"{prefix}/_{self.counter}"
        self.counter += 1
        return name

    def build(self, name, op, inputs, attrs):
        nd = node_def_pb2.NodeDef(name=name, op=op)
        for key, value in attrs.items():
            nd.attr[key].CopyFrom(value)
        return self.add(_Node(nd, list(inputs)))

    def output_type(self, name):
        """The dtype of output 0 of node ``name`` (its ``T`` or ``dtype`` attr), ref-ness dropped."""
        nd = self.nodes[name].node_def
        for key in ("T", "dtype", "out_type"):
            if key in nd.attr and nd.attr[key].type:
                t = nd.attr[key].type
                return t - 100 if t > 100 else t
        if "dtypes" in nd.attr and nd.attr["dtypes"].list.type:
            return nd.attr["dtypes"].list.type[0]
        return None

    def to_graph_def(self, source):
        out = graph_pb2.GraphDef()
        out.versions.CopyFrom(source.versions)
        out.library.CopyFrom(source.library)
        for name in self.order:
            node = self.nodes[name]
            nd = out.node.add()
            nd.CopyFrom(node.node_def)
            del nd.input[:]
            data = [i for i in node.inputs if i[1] >= 0]
            controls = sorted({src for src, idx in node.inputs if idx < 0})
            nd.input.extend(_input_name(src, idx) for src, idx in data)
            nd.input.extend(f"^{src}" for src in controls)
        return out


def _find_type(graph, name):
    """``(known, signed_input, range_given, input_min, input_max)`` for an input coming from node ``name``."""
    op = graph.nodes[name].op
    if op in ("Const", "Variable", "VariableV2"):
        return True, True, False, 0.0, 0.0
    if op == "Relu":
        return True, False, False, 0.0, 0.0
    if op == "Relu6":
        return True, False, True, 0.0, 6.0
    if op == "Sigmoid":
        return True, False, True, 0.0, 1.0
    if op == "Tanh":
        return True, True, True, -1.0, 1.0
    if op in ("Reshape", "ConcatV2", "Identity", "MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D"):
        result = (True, False, False, 0.0, 0.0)
        for position, (src, _) in enumerate(i for i in graph.nodes[name].inputs if i[1] >= 0):
            if op in ("Reshape", "ConcatV2") and position != 0:
                continue
            _, *params = _find_type(graph, src)
            result = (True, *params)
        return result
    return False, True, False, 0.0, 0.0


def _const(graph, name, tensor):
    return graph.build(name, "Const", [], {"dtype": _attr(type=tensor.dtype), "value": _attr(tensor=tensor)})


def _ema_variable(graph, name, decay, init_val, added):
    """An EMA variable initialized by the first value it sees; returns the name of its ``Assign``."""
    var = graph.build(f"{name}/Variable", "VariableV2", [], {
        "shape": _attr(shape=()), "dtype": _attr(type=_FLOAT), "container": _attr(s=b""),
        "shared_name": _attr(s=b"")})
    added.append(var.name)
    is_init = graph.build(f"{name}/IsInitialized", "IsVariableInitialized", [(var.name, 0)],
                          {"dtype": _attr(type=_FLOAT)})
    switch = graph.build(f"{name}/Switch", "Switch", [(init_val, 0), (is_init.name, 0)], {"T": _attr(type=_FLOAT)})
    prefix = f"{name}/EMA"
    t = {"T": _attr(type=_FLOAT)}
    one = _const(graph, f"{prefix}/OneConst", _scalar(_FLOAT, 1.0))
    complement = graph.build(f"{prefix}/DecayComplement", "Sub", [(one.name, 0), (decay, 0)], t)
    diff = graph.build(f"{prefix}/ValueDiff", "Sub", [(var.name, 0), (switch.name, 1)], t)
    update = graph.build(f"{prefix}/UpdateValue", "Mul", [(diff.name, 0), (complement.name, 0)], t)
    ema = graph.build(f"{prefix}/EMAValue", "Sub", [(var.name, 0), (update.name, 0)], t)
    merge = graph.build(f"{name}/Merge", "Merge", [(switch.name, 0), (ema.name, 0)],
                        {"T": _attr(type=_FLOAT), "N": _attr(i=2)})
    assign = graph.build(f"{name}/AssignValue", "Assign", [(var.name, 0), (merge.name, 0)], {
        "T": _attr(type=_FLOAT), "validate_shape": _attr(b=True), "use_locking": _attr(b=True)})
    return assign.name


def _quantize_op(graph, src, num_bits, signed_input, range_given, input_min, input_max, added):
    dtype = graph.output_type(src)
    if dtype != _FLOAT:
        raise ValueError(f"Quantized training needs float32 inputs: node '{src}' ({graph.nodes[src].op}) outputs "
                         f"{types_pb2.DataType.Name(dtype) if dtype else 'an unknown type'}")
    if range_given:
        lo = _const(graph, f"{src}/InputMin", _scalar(_FLOAT, input_min)).name
        hi = _const(graph, f"{src}/InputMax", _scalar(_FLOAT, input_max)).name
    else:
        decay = _const(graph, f"{src}/Decay", _scalar(_FLOAT, _EMA_DECAY)).name
        axes = f"{src}/ReductionAxes"
        start = _const(graph, f"{axes}/RangeStart", _scalar(types_pb2.DT_INT32, 0))
        delta = _const(graph, f"{axes}/RangeDelta", _scalar(types_pb2.DT_INT32, 1))
        rank = graph.build(f"{axes}/InputRank", "Rank", [(src, 0)], {"T": _attr(type=_FLOAT)})
        reduce_axes = graph.build(f"{axes}/ReductionAxes", "Range", [(start.name, 0), (rank.name, 0), (delta.name, 0)],
                                  {"Tidx": _attr(type=types_pb2.DT_INT32)})
        reduce_attrs = {"keep_dims": _attr(b=False), "T": _attr(type=_FLOAT), "Tidx": _attr(type=types_pb2.DT_INT32)}
        mn = graph.build(f"{src}/Min", "Min", [(src, 0), (reduce_axes.name, 0)], reduce_attrs)
        mx = graph.build(f"{src}/Max", "Max", [(src, 0), (reduce_axes.name, 0)], reduce_attrs)
        lo = _ema_variable(graph, mn.name, decay, mn.name, added)
        hi = _ema_variable(graph, mx.name, decay, mx.name, added)
    return graph.build(f"{src}/QuantizeAndDequantizeV2", "QuantizeAndDequantizeV2", [(src, 0), (lo, 0), (hi, 0)], {
        "signed_input": _attr(b=signed_input), "num_bits": _attr(i=num_bits), "range_given": _attr(b=True),
        "T": _attr(type=_FLOAT), "round_mode": _attr(s=b"HALF_TO_EVEN"), "narrow_range": _attr(b=False),
        "axis": _attr(i=-1)}).name


def _add_save_and_restore(graph, added):
    saves = [graph.nodes[n] for n in graph.order if graph.nodes[n].op == "SaveV2"]
    if len(saves) > 1:
        raise ValueError("Input graph has multiple SaveV2 ops.")
    if not saves:
        return
    save = saves[0]
    in_edges = [i for i in save.inputs if i[1] >= 0]
    prefix_op = in_edges[0][0]
    scope = save.name[: save.name.rfind("/")] if "/" in save.name else save.name
    restore_all = graph.nodes.get(f"{scope}/restore_all")
    if restore_all is None:
        raise ValueError("graph has SaveOp, but no restore_all NoOp")
    for var in added:
        restore_name = graph.new_name(f"{scope}/RestoreV2") + "_qt"
        assign_name = graph.new_name(f"{scope}/Assign") + "_qt"
        names = _const(graph, f"{restore_name}/tensor_names", _strings([var]))
        slices = _const(graph, f"{restore_name}/shape_and_slices", _strings([""]))
        restore = graph.build(restore_name, "RestoreV2", [(prefix_op, 0), (names.name, 0), (slices.name, 0)],
                              {"dtypes": _attr(types=[_FLOAT])})
        assign = graph.build(assign_name, "Assign", [(var, 0), (restore.name, 0)], {
            "T": _attr(type=_FLOAT), "validate_shape": _attr(b=True), "use_locking": _attr(b=True)})
        restore_all.inputs.append((assign.name, -1))

    tensor_names = graph.nodes[in_edges[1][0]].node_def
    shape_and_slices = graph.nodes[in_edges[2][0]].node_def
    old_names = _string_values(tensor_names.attr["value"].tensor)
    old_slices = _string_values(shape_and_slices.attr["value"].tensor)
    dtypes = list(save.node_def.attr["dtypes"].list.type) + [_FLOAT] * len(added)
    users = [n for n in graph.order if any(src == save.name for src, _ in graph.nodes[n].inputs)]
    graph.remove(save.name)
    # TensorFlow's NodeBuilder takes each input's node, i.e. its output 0.
    inputs = [(src, 0) for src, _ in in_edges] + [(var, 0) for var in added]
    graph.build(save.name, "SaveV2", inputs, {"dtypes": _attr(types=dtypes)})
    tensor_names.attr["value"].tensor.CopyFrom(_strings(old_names + [v.encode() for v in added]))
    shape_and_slices.attr["value"].tensor.CopyFrom(_strings(old_slices + [b""] * len(added)))
    for user in users:
        node = graph.nodes[user]
        node.inputs = [(src, idx) for src, idx in node.inputs if src != save.name] + [(save.name, -1)]


def do_quantize_training_on_graphdef(input_graph, num_bits):
    """``input_graph`` (a ``GraphDef``) with fake quantization of ``num_bits`` bits inserted before
    every ``MatMul`` and ``Conv2D`` input of the forward pass (see the module docstring); a new
    ``GraphDef``. Deprecated in TensorFlow too (tf.quantization and TFLite's tools replace it)."""
    if not isinstance(input_graph, graph_pb2.GraphDef):
        raise TypeError(f"input_graph must be a GraphDef, got {type(input_graph).__name__}")
    num_bits = int(num_bits)
    if num_bits < 1 or num_bits > 63:
        raise IndexError(f"num_bits should be in range [1, 63] but is: {num_bits}")
    graph = _Graph(input_graph)
    targets = []
    unknown = 0
    for name in list(graph.order):
        node = graph.nodes[name]
        if node.op not in _REWRITTEN or name.startswith("gradients"):
            continue
        for position, (src, idx) in enumerate(node.inputs):
            if idx < 0:
                continue
            known, *params = _find_type(graph, src)
            if not known:
                unknown += 1
                if unknown > _ALLOWED_INPUTS:
                    raise NotImplementedError(
                        f"Found an unknown op: {src} with type: {graph.nodes[src].op}; Unknown ops are considered as "
                        f"model input for now and only {_ALLOWED_INPUTS} inputs are supported currently.")
            targets.append((name, position, src, params))
    converted = {}
    added = []
    for name, position, src, params in targets:
        quant = converted.get(src)
        if quant is None:
            quant = converted[src] = _quantize_op(graph, src, num_bits, *params, added)
        node = graph.nodes[name]
        node.inputs[position] = (quant, 0)
    _add_save_and_restore(graph, added)
    return graph.to_graph_def(input_graph)
