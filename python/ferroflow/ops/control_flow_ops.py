"""Grouping and ordering ops: ``group``, ``tuple``, ``no_op``, ``Assert``, ``Print``."""

from __future__ import annotations

import builtins
import sys

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make, make_op


def no_op(name=None):
    """An op that does nothing (a target for control dependencies)."""
    return make_op("NoOp", [], {}, name)


def _flatten(items):
    for x in items:
        if isinstance(x, (list, builtins.tuple)):
            yield from _flatten(x)
        elif isinstance(x, dict):
            yield from _flatten(list(x.values()))
        else:
            yield x


def group(*inputs, **kwargs):
    """An op that runs all of ``inputs`` (Operations, Tensors or Variables, possibly nested)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs.keys()))
    flat = list(_flatten(inputs))
    for x in flat:
        if not hasattr(x, "device"):
            raise TypeError(
                f"'inputs' should be zero or more (nested) Tensors. Received '{x!r}' with type '{type(x)}'."
            )
    g = ops._get_graph_from_inputs([x for x in flat if isinstance(x, (ops.Tensor, ops.Operation))])
    with g.as_default(), ops.name_scope(name, "group_deps", None) as scope:
        if not flat:
            return no_op(name=scope)
        with ops.control_dependencies(flat):
            return no_op(name=scope)


def with_dependencies(dependencies, output_tensor, name=None):
    """``output_tensor``, but only after ``dependencies`` have run."""
    with ops.name_scope(name, "control_dependency", list(dependencies) + [output_tensor]) as scope:
        with ops.control_dependencies(dependencies):
            t = ops.convert_to_tensor(output_tensor)
            return array_ops.identity(t, name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TensorFlow's name
    """The tensors, each available only once all of them (and ``control_inputs``) are computed."""
    with ops.name_scope(name, "tuple", [t for t in tensors if t is not None]):
        gating = [t.op for t in tensors if t is not None]
        for c in control_inputs or []:
            if isinstance(c, ops.Tensor):
                c = c.op
            elif not isinstance(c, ops.Operation):
                raise TypeError(f"'control_inputs' must only contain Operation or Tensor. Received: {type(c)}")
            gating.append(c)
        gating = sorted({op._id: op for op in gating}.values(), key=lambda op: op._id)
        if not gating:
            raise ValueError(f"'tensors' must have at least one Tensor. Received: {tensors}.")
        gate = group(*gating)
        return [None if t is None else with_dependencies([gate], t) for t in tensors]


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """An op that fails with InvalidArgumentError (showing ``data``) when ``condition`` is false."""
    with ops.name_scope(name, "Assert", [condition] + list(data)):
        cond = ops.convert_to_tensor(condition, name="Condition")
        if cond.dtype != dtypes.bool:
            raise TypeError(f"Assert condition must be bool, got {cond.dtype.name}")
        values = [ops.convert_to_tensor(d) for d in data]
        summarize = 3 if summarize is None else int(summarize)
        return make_op("Assert", [cond] + values, {"summarize": summarize}, "Assert")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Passes ``input_`` through, printing ``message`` and ``data`` to stderr when run."""
    x = ops.convert_to_tensor(input_)
    values = [ops.convert_to_tensor(d) for d in data]
    attrs = {
        "message": message or "",
        "first_n": -1 if first_n is None else int(first_n),
        "summarize": 3 if summarize is None else int(summarize),
    }
    return make("Print", [x] + values, attrs, name)


def print_v2(*inputs, **kwargs):
    """``tf.print``: an op printing its inputs (strings and tensors) when run."""
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    output_stream = kwargs.pop("output_stream", sys.stderr)
    name = kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    tensors = [x for x in inputs if isinstance(x, ops.Tensor) or hasattr(x, "_as_tensor")]
    template = sep.join("{}" if (isinstance(x, ops.Tensor) or hasattr(x, "_as_tensor")) else str(x) for x in inputs) + end
    target = "stdout" if output_stream is sys.stdout else "stderr"
    values = [ops.convert_to_tensor(t) for t in tensors]
    return make_op("PrintV2", values, {"template": template, "summarize": int(summarize), "output_stream": target}, name)


def timestamp(name=None):
    """The time the op runs, in seconds since the Unix epoch (float64; TF's ``Timestamp`` op)."""
    return make("Timestamp", [], {}, name)
