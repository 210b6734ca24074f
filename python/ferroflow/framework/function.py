"""Graph functions from Python: TF1's ``Defun`` (``tensorflow.python.framework.function``).

``@Defun(tf.float32, tf.float32)`` turns a Python function into a function of
the graph's library, built once per graph from placeholders of the declared
dtypes; each call adds a ``PartitionedCall`` op (``StatefulPartitionedCall``
when the body has side effects) that runs the compiled function in Rust.
Tensors the body uses from outside become extra arguments, as in
``tf.cond`` branches, and ``tf.gradients`` differentiates through calls.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.func_graph import FuncGraph, call_function_op, to_function

__all__ = ["Defun"]


class Defun:
    """Decorator: ``@Defun(*input_types, func_name=None, out_names=None, ...)``."""

    def __init__(self, *input_types, **kwargs):
        self._input_types = [dtypes.as_dtype(t) for t in input_types]
        self._func_name = kwargs.pop("func_name", None)
        self._out_names = kwargs.pop("out_names", None)
        for unsupported in ("grad_func", "python_grad_func"):
            if kwargs.pop(unsupported, None) is not None:
                raise NotImplementedError(
                    f"Defun({unsupported}=...) is not supported: tf.gradients differentiates the body itself"
                )
        # shape_func, noinline, compiled, separate_compiled_gradients: accepted, no effect here.
        kwargs.clear()

    def __call__(self, func):
        if not callable(func):
            raise ValueError(f"function {func} must be callable")
        return _DefinedFunction(func, self._input_types, self._func_name or func.__name__, self._out_names)


class _DefinedFunction:
    """A Python function defined as a graph function; calling it adds a call op."""

    def __init__(self, func, input_types, name, out_names):
        self._func = func
        self._input_types = input_types
        self._name = name
        self._out_names = out_names
        self._defined = {}  # graph -> (function name, outer tensors it captures, structure)

    @property
    def name(self):
        return self._name

    def _define(self, graph):
        entry = self._defined.get(graph)
        if entry is not None:
            return entry
        body = FuncGraph(self._name, graph)
        with body.as_default():
            args = [body.add_arg(t, None, name=f"arg{i}") for i, t in enumerate(self._input_types)]
            result = self._func(*args)
            if result is None:
                outputs, single = [], False
            elif isinstance(result, (list, tuple)):
                outputs, single = [ops.convert_to_tensor(r) for r in result], False
            else:
                outputs, single = [ops.convert_to_tensor(result)], True
            outputs = [t if t.graph is body else body.capture(t) for t in outputs]
            captures = [outer for outer, _ in body.captures]
            body.inputs = args + [inner for _, inner in body.captures]
        name = to_function(body, outputs, self._name)
        stateful = graph._native.function_is_stateful(name)
        entry = (name, captures, single, bool(outputs), stateful, body.outer_control_inputs)
        self._defined[graph] = entry
        return entry

    def __call__(self, *args, **kwargs):
        name_arg = kwargs.pop("name", None)
        if kwargs:
            raise ValueError(f"Unknown keyword arguments: {sorted(kwargs)}")
        if len(args) != len(self._input_types):
            raise ValueError(
                f"{self._name} takes {len(self._input_types)} arguments, got {len(args)}"
            )
        inputs = [ops.convert_to_tensor(a, dtype=t) for a, t in zip(args, self._input_types)]
        graph = ops._get_graph_from_inputs(inputs)
        fname, captures, single, has_outputs, stateful, controls = self._define(graph)
        op = call_function_op(
            graph, "StatefulPartitionedCall" if stateful else "PartitionedCall", inputs + captures,
            {"f": fname}, name_arg or self._name, [_Controls(controls)],
        )
        if not has_outputs:
            return op
        return op._outputs[0] if single else tuple(op._outputs)


class _Controls:
    """What ``call_function_op`` reads of a body: the outer ops it waits for."""

    def __init__(self, controls):
        self.outer_control_inputs = controls

