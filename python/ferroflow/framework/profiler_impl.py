"""``tf.profiler.profile`` for the two questions TF1 programs ask it: how many trainable parameters a graph has
(``ProfileOptionBuilder.trainable_variables_parameter()``) and how many floating-point operations its ops do
(``ProfileOptionBuilder.float_operation()``).

Each op's float operations follow TensorFlow's registered statistics (``profiler/internal/flops_registry.py`` and
``nn_ops.py`` of TF 2.21): per output or input element for the elementwise ops, 2·k per output element for
MatMul and the convolutions, the reduction and pooling formulas; ops with other types, or with a shape not fully
known, count 0 (TensorFlow reports how many lacked shapes, as here). The ``scope`` view nests the nodes by name
(a node hidden by the options hands its children to its closest shown ancestor) and the ``op`` view groups them
by op type, as tfprof does. The result is a ``GraphNodeProto``/``MultiGraphNodeProto``-shaped Python object
(``name``, ``float_ops``, ``total_float_ops``, ``parameters``, ``total_parameters``, ``children``), not the
protobuf message. Not provided: timing and memory (``time_and_memory``, ``run_meta`` timings), the ``graph`` and
``code`` views, ``advise`` and the ``Profiler`` class.
"""

from __future__ import annotations

import copy
import re
import sys

import numpy as np

from ferroflow.framework import ops

TRAINABLE_VARIABLES = "_trainable_variables"


# Float operations per op type.
def _num(shape):
    if shape is None or not shape.is_fully_defined():
        raise ValueError("incomplete shape")
    return int(np.prod(shape.as_list(), dtype=np.int64))


def _in(op, i=0):
    return op.inputs[i].shape


def _out(op):
    return op.outputs[0].shape


def _nhwc(op):
    fmt = op.get_attr("data_format") if "data_format" in op.node_def.attr else b"NHWC"
    if fmt not in (b"NHWC", "NHWC"):
        raise ValueError("Only NHWC format is supported in flops computations")


def _reduction(reduce_flops, finalize_flops):
    return lambda op: _num(_in(op)) * reduce_flops + _num(_out(op)) * (finalize_flops - reduce_flops)


def _pool(op):
    _nhwc(op)
    return int(np.prod(op.get_attr("ksize"))) * _num(_out(op))


def _avg_pool_grad(op):
    _nhwc(op)
    return int(np.prod(op.get_attr("ksize"))) * _num(_in(op, 1)) * 2


def _max_pool_grad(op):
    _nhwc(op)
    orig_out = _num(_in(op, 1))
    return int(np.prod(op.get_attr("ksize"))) * orig_out + orig_out


def _strides_hw(op):
    s = op.get_attr("strides")
    return s[1] * s[2]


def _conv_backprop_input(op):
    _nhwc(op)
    out = _out(op)
    n = 2 * _num(out) * _num(_in(op, 1)) / (out.as_list()[-1] * _strides_hw(op))
    return int(n)


def _conv_backprop_filter(op):
    _nhwc(op)
    image = _in(op, 0)
    n = 2 * _num(image) * _num(_out(op)) / (image.as_list()[-1] * _strides_hw(op))
    return int(n)


def _matmul(last):
    def f(op):
        a = _in(op, 0)
        _num(a)
        dims = a.as_list()
        transposed = bool(op.get_attr("adj_x" if "adj_x" in op.node_def.attr else "transpose_a"))
        if last:
            k = dims[-2] if transposed else dims[-1]
        else:
            k = dims[0] if transposed else dims[1]
        return k * _num(_out(op)) * 2

    return f


def _conv(spatial):
    def f(op):
        _num(_in(op, 0))
        filt = _in(op, 1)
        _num(filt)
        dims = filt.as_list()
        return _num(_out(op)) * int(np.prod(dims[: spatial + 1])) * 2

    return f


def _window(op):
    _num(_in(op, 0))
    filt = _in(op, 1)
    _num(filt)
    dims = filt.as_list()
    return _num(_out(op)) * dims[0] * dims[1] * 2


def _add_n(op):
    if not op.inputs:
        return 0
    return _num(_in(op)) * (len(op.inputs) - 1)


_FLOPS = {}
for _t, _k in (
    ("Reciprocal", 1),
    ("Square", 1),
    ("Rsqrt", 2),
    ("Log", 1),
    ("Neg", 1),
    ("AssignSub", 1),
    ("AssignAdd", 1),
    ("Softmax", 5),
):
    _FLOPS[_t] = (lambda k: lambda op: _num(_in(op)) * k)(_k)
for _t, _k in (
    ("Add", 1),
    ("AddV2", 1),
    ("Sub", 1),
    ("Mul", 1),
    ("RealDiv", 1),
    ("Maximum", 1),
    ("Minimum", 1),
    ("Pow", 1),
    ("RsqrtGrad", 4),
    ("GreaterEqual", 1),
    ("Greater", 1),
    ("LessEqual", 1),
    ("Less", 1),
    ("Equal", 1),
    ("NotEqual", 1),
    ("SquaredDifference", 2),
):
    _FLOPS[_t] = (lambda k: lambda op: _num(_out(op)) * k)(_k)
_FLOPS.update(
    {
        "L2Loss": lambda op: _num(_in(op)) * 3 - 1,
        "Mean": _reduction(1, 1),
        "Sum": _reduction(1, 0),
        "ArgMax": _reduction(1, 0),
        "ArgMin": _reduction(1, 0),
        "BiasAddGrad": _reduction(1, 0),
        "AvgPool": _pool,
        "MaxPool": _pool,
        "AvgPoolGrad": _avg_pool_grad,
        "MaxPoolGrad": _max_pool_grad,
        "Conv2DBackpropInput": _conv_backprop_input,
        "Conv2DBackpropFilter": _conv_backprop_filter,
        "AddN": _add_n,
        "MatMul": _matmul(last=False),
        "BatchMatMul": _matmul(last=True),
        "BatchMatMulV2": _matmul(last=True),
        "BatchMatMulV3": _matmul(last=True),
        "Conv2D": _conv(2),
        "Conv3D": _conv(3),
        "DepthwiseConv2dNative": _window,
        "Dilation2D": _window,
        "BiasAdd": lambda op: _num(_in(op)),
    }
)


def op_float_ops(op):
    """TensorFlow's float-operation count of one op (0 for an op type it has no rule for); ValueError when a
    shape the rule needs is not fully known."""
    rule = _FLOPS.get(op.type)
    return 0 if rule is None else int(rule(op))


# Options.
_DEFAULT_OPTIONS = {
    "max_depth": 100,
    "min_bytes": 0,
    "min_micros": 0,
    "min_params": 0,
    "min_float_ops": 0,
    "min_occurrence": 0,
    "order_by": "name",
    "account_type_regexes": [".*"],
    "start_name_regexes": [".*"],
    "trim_name_regexes": [],
    "show_name_regexes": [".*"],
    "hide_name_regexes": [],
    "account_displayed_op_only": False,
    "select": ["micros"],
    "step": -1,
    "output": "stdout",
}


class ProfileOptionBuilder:
    """Builds the options dict ``profile`` takes (TensorFlow's keys and defaults)."""

    def __init__(self, options=None):
        self._options = copy.deepcopy(options if options is not None else _DEFAULT_OPTIONS)

    @staticmethod
    def trainable_variables_parameter():
        return {
            "max_depth": 10000,
            "min_bytes": 0,
            "min_micros": 0,
            "min_params": 0,
            "min_float_ops": 0,
            "min_occurrence": 0,
            "order_by": "name",
            "account_type_regexes": [TRAINABLE_VARIABLES],
            "start_name_regexes": [".*"],
            "trim_name_regexes": [],
            "show_name_regexes": [".*"],
            "hide_name_regexes": [],
            "account_displayed_op_only": True,
            "select": ["params"],
            "step": -1,
            "output": "stdout",
        }

    @staticmethod
    def float_operation():
        return {
            "max_depth": 10000,
            "min_bytes": 0,
            "min_micros": 0,
            "min_params": 0,
            "min_float_ops": 1,
            "min_occurrence": 0,
            "order_by": "float_ops",
            "account_type_regexes": [".*"],
            "start_name_regexes": [".*"],
            "trim_name_regexes": [],
            "show_name_regexes": [".*"],
            "hide_name_regexes": [],
            "account_displayed_op_only": True,
            "select": ["float_ops"],
            "step": -1,
            "output": "stdout",
        }

    def build(self):
        return copy.deepcopy(self._options)

    def _set(self, key, value):
        self._options[key] = value
        return self

    def with_max_depth(self, max_depth):
        return self._set("max_depth", max_depth)

    def with_min_parameters(self, min_params):
        return self._set("min_params", min_params)

    def with_min_float_operations(self, min_float_ops):
        return self._set("min_float_ops", min_float_ops)

    def with_min_occurrence(self, min_occurrence):
        return self._set("min_occurrence", min_occurrence)

    def with_accounted_types(self, account_type_regexes):
        return self._set("account_type_regexes", list(account_type_regexes))

    def with_node_names(
        self, start_name_regexes=None, show_name_regexes=None, hide_name_regexes=None, trim_name_regexes=None
    ):
        for key, value in (
            ("start_name_regexes", start_name_regexes),
            ("show_name_regexes", show_name_regexes),
            ("hide_name_regexes", hide_name_regexes),
            ("trim_name_regexes", trim_name_regexes),
        ):
            if value is not None:
                self._options[key] = list(value)
        return self

    def account_displayed_op_only(self, is_true):
        return self._set("account_displayed_op_only", bool(is_true))

    def with_empty_output(self):
        return self._set("output", "none")

    def with_stdout_output(self):
        return self._set("output", "stdout")

    def with_file_output(self, outfile):
        return self._set("output", "file:outfile=" + outfile)

    def order_by(self, attribute):
        return self._set("order_by", attribute)

    def select(self, attributes):
        return self._set("select", list(attributes))

    def with_step(self, step):
        return self._set("step", step)


# The result.
class GraphNodeProto:
    """One node of a profile: its own and its subtree's parameter and float-operation counts."""

    def __init__(self, name, parameters=0, float_ops=0, shape=None):
        self.name = name
        self.parameters = parameters
        self.float_ops = float_ops
        self.total_parameters = parameters
        self.total_float_ops = float_ops
        self.shapes = [] if shape is None else [shape]
        self.children = []
        self.run_count = self.total_run_count = self.exec_micros = self.total_exec_micros = 0
        self.requested_bytes = self.total_requested_bytes = 0

    def __repr__(self):
        return (
            f"<{type(self).__name__} {self.name!r} total_parameters={self.total_parameters} "
            f"total_float_ops={self.total_float_ops} children={len(self.children)}>"
        )


class MultiGraphNodeProto(GraphNodeProto):
    """A node of the ``op`` view: all ops of one type."""


def _fmt(n):
    if n < 1000:
        return str(int(n))
    for div, suffix in ((1e9, "b"), (1e6, "m"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.2f}{suffix}"
    return str(int(n))


def _matches(regexes, text):
    return any(re.fullmatch(r, text) for r in regexes)


class _Node:
    def __init__(self, name):
        self.name = name
        self.is_op = False
        self.types = []
        self.params = 0
        self.flops = 0
        self.shape = None
        self.children = {}


def _collect(graph, options):
    """(node name -> _Node with its own counts) for the graph's ops, and how many ops lacked shapes."""
    nodes, missing = {}, 0
    trainable = {v.op.name: v for v in graph.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES)}
    for op in graph.get_operations():
        node = _Node(op.name)
        node.is_op = True
        node.types = [op.type]
        try:
            node.flops = op_float_ops(op)
        except ValueError:
            missing += 1
        if op.name in trainable:
            node.types.append(TRAINABLE_VARIABLES)
            shape = trainable[op.name].shape
            node.params = _num(shape) if shape.is_fully_defined() else 0
            node.shape = shape.as_list()
        nodes[op.name] = node
    if missing:
        sys.stderr.write(f"{missing} ops no flops stats due to incomplete shapes.\n")
    return nodes


def _accounted(node, options):
    return node.is_op and any(_matches(options["account_type_regexes"], t) for t in node.types)


def _shown(node, options, depth):
    if depth > options["max_depth"] or not node.is_op:
        return False
    if _matches(options["hide_name_regexes"], node.name) or not _matches(
        options["show_name_regexes"], node.name
    ):
        return False
    if not _accounted(node, options):
        return False
    select = options["select"]
    if node.params < options["min_params"] and "params" in select:
        return False
    if node.flops < options["min_float_ops"]:
        return False
    return True


def _sort(children, options):
    key = options["order_by"]
    if key == "float_ops":
        return sorted(children, key=lambda c: (-c.total_float_ops, c.name))
    if key == "params":
        return sorted(children, key=lambda c: (-c.total_parameters, c.name))
    return sorted(children, key=lambda c: c.name)


def _scope_view(nodes, options):
    root = _Node("_TFProfRoot")
    by_name = {}
    for name in sorted(nodes):
        parts = name.split("/")
        parent = root
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            child = by_name.get(prefix)
            if child is None:
                child = nodes.get(prefix) or _Node(prefix)
                by_name[prefix] = child
                parent.children[prefix] = child
            parent = child

    def build(node, depth):
        """The shown nodes of ``node``'s subtree, with their totals."""
        shown_children = []
        for child in node.children.values():
            shown_children.extend(build(child, depth + 1))
        if node is root:
            return shown_children
        if node.is_op:
            own_shown = _shown(node, options, depth)
        else:  # a name scope: shown above shown nodes when its own zero counts pass the thresholds
            own_shown = (
                bool(shown_children)
                and depth <= options["max_depth"]
                and options["min_float_ops"] <= 0
                and options["min_params"] <= 0
                and _matches(options["show_name_regexes"], node.name)
                and not _matches(options["hide_name_regexes"], node.name)
            )
        if not own_shown:
            return shown_children
        proto = GraphNodeProto(node.name)
        if _accounted(node, options):
            proto.parameters, proto.float_ops = node.params, node.flops
            if node.shape is not None:
                proto.shapes = [node.shape]
        proto.children = _sort(shown_children, options)
        proto.total_parameters = proto.parameters + sum(c.total_parameters for c in shown_children)
        proto.total_float_ops = proto.float_ops + sum(c.total_float_ops for c in shown_children)
        return [proto]

    out = GraphNodeProto("_TFProfRoot")
    out.children = _sort(build(root, 0), options)
    out.total_parameters = sum(c.total_parameters for c in out.children)
    out.total_float_ops = sum(c.total_float_ops for c in out.children)
    return out


def _op_view(nodes, options):
    groups = {}
    for node in nodes.values():
        if not _accounted(node, options):
            continue
        g = groups.setdefault(node.types[0], MultiGraphNodeProto(node.types[0]))
        g.parameters += node.params
        g.float_ops += node.flops
    shown = [
        g
        for g in groups.values()
        if g.float_ops >= options["min_float_ops"]
        and not ("params" in options["select"] and g.parameters < options["min_params"])
    ]
    for g in shown:
        g.total_parameters, g.total_float_ops = g.parameters, g.float_ops
    # tfprof returns the op types as a chain in display order: each type's node holds the next one, so its
    # totals cover the types after it.
    ordered = _sort(shown, options)
    for i in range(len(ordered) - 2, -1, -1):
        ordered[i].children = [ordered[i + 1]]
        ordered[i].total_parameters += ordered[i + 1].total_parameters
        ordered[i].total_float_ops += ordered[i + 1].total_float_ops
    out = MultiGraphNodeProto("_TFProfRoot")
    out.children = ordered[:1]
    out.total_parameters = sum(g.parameters for g in shown)
    out.total_float_ops = sum(g.float_ops for g in shown)
    return out


def _report(result, options, cmd):
    output = options.get("output", "stdout")
    if output in ("none", "") or not output:
        return
    select = options["select"]
    what = "float_ops" if "float_ops" in select else "params" if "params" in select else select[0]
    lines = [f"node name | # {'float_ops' if what == 'float_ops' else 'parameters'}"]

    def line(node, depth):
        own, total = (
            (node.float_ops, node.total_float_ops)
            if what == "float_ops"
            else (node.parameters, node.total_parameters)
        )
        unit = "flops" if what == "float_ops" else "params"
        own_text = "--" if own == 0 and node.children else _fmt(own)
        shape = f"{'x'.join(str(d) for d in node.shapes[0])}, " if node.shapes and what == "params" else ""
        lines.append(f"{'  ' * depth}{node.name} ({shape}{own_text}/{_fmt(total)} {unit})")
        for c in node.children:
            line(c, depth + 1)

    line(result, 0)
    text = "\n".join(lines) + "\n"
    if output.startswith("file:outfile="):
        with open(output[len("file:outfile=") :], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def profile(graph=None, run_meta=None, op_log=None, cmd="scope", options=None):
    """Profiles ``graph`` (default: the default graph) with ``options`` (ProfileOptionBuilder's dicts) in the
    ``scope`` or ``op`` view; returns the root node (``_TFProfRoot``) with its totals and shown children."""
    if graph is None:
        graph = ops.get_default_graph()
    if options is None:
        options = _DEFAULT_OPTIONS
    options = dict(_DEFAULT_OPTIONS, **options)
    if cmd not in ("scope", "op"):
        raise NotImplementedError(
            f"tf.profiler.profile: the {cmd!r} view is not supported by ferroflow (scope and op are)"
        )
    nodes = _collect(graph, options)
    result = _scope_view(nodes, options) if cmd == "scope" else _op_view(nodes, options)
    _report(result, options, cmd)
    return result
