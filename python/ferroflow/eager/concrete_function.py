"""Traced graph functions: what ``tf.function`` and ``tf.compat.v1.wrap_function`` build.

``trace`` runs a Python function once with a ``FuncGraph`` as the default
graph: each ``TensorSpec`` among its arguments becomes an ``_Arg`` of that
shape and dtype, every other argument is passed as it is (and so is baked into
the trace). What it returns becomes the function's outputs: every leaf is
converted to a tensor (a variable gives its value, a Python number a constant,
a tensor of an enclosing graph is captured) except ``None`` and Operations,
which every call hands back unchanged in the same structure. The body goes into the function library
of the graph the trace was made in, as Defun's do (``framework/function.py``),
and a call adds one ``PartitionedCall`` op (``StatefulPartitionedCall`` when the
body has stateful ops) there; ``tf.gradients`` differentiates through it.

Variables the function creates go to the outermost graph (``init_scope``), as
graph variables with their initializers: ``tf.global_variables_initializer()``
initializes them.

There is no AutoGraph: a Python ``if``/``while`` on a Tensor while tracing
raises ``OperatorNotAllowedInGraphError`` (TensorFlow's error for the same code
traced with ``autograph=False``); write ``tf.cond`` and ``tf.while_loop``.
"""

from __future__ import annotations

from ferroflow.framework import errors, ops
from ferroflow.framework.func_graph import FuncGraph, call_function_op, to_function
from ferroflow.framework.type_spec import TensorSpec
from ferroflow.ops import _nest as nest

__all__ = ["ConcreteFunction", "trace"]

# The start of Tensor.__bool__'s TypeError (framework/ops.py).
_PYTHON_CONTROL_FLOW = "Using a `tf.Tensor` as a Python `bool`"


class _Controls:
    """What ``call_function_op`` reads of a body: the outer ops it waits for."""

    def __init__(self, controls):
        self.outer_control_inputs = controls


class ConcreteFunction:
    """One trace of a Python function: a function of a graph's library and how to call it.

    Calling it with tensors (or values convertible to the argument dtypes) adds a call op to
    the default graph and returns the Python function's result with each output tensor
    replaced by the call's.
    """

    def __init__(self, graph, body, function_name, input_specs, structured_input, structured_outputs, outputs,
                 variables):
        self._graph = graph
        self.graph = body
        self.name = function_name
        self._input_specs = input_specs
        self.structured_input_signature = structured_input
        self.structured_outputs = structured_outputs
        self.outputs = outputs
        self.variables = tuple(variables)
        self.trainable_variables = tuple(v for v in variables if v.trainable)
        self._captures = [outer for outer, _ in body.captures]
        self._controls = list(body.outer_control_inputs)
        self._stateful = graph._native.function_is_stateful(function_name)

    @property
    def inputs(self):
        """The body's argument tensors: one per TensorSpec of the signature, then the captures."""
        return list(self.graph.inputs)

    @property
    def captured_inputs(self):
        """The tensors of the calling graph passed to every call (variables, constants the body used)."""
        return list(self._captures)

    def __call__(self, *args, **kwargs):
        name = kwargs.pop("name", None)
        if kwargs:
            raise TypeError(f"{self.name}: unexpected keyword arguments {sorted(kwargs)}; a concrete function "
                            "takes its arguments by position")
        # One tensor per argument (a list is one value to convert), else the arguments' structure flattened.
        flat = list(args) if len(args) == len(self._input_specs) else nest.flatten(list(args))
        if len(flat) != len(self._input_specs):
            raise TypeError(f"{self.name} takes {len(self._input_specs)} tensor arguments, got {len(flat)}")
        return self._call_flat([_convert(a, spec, self.name) for a, spec in zip(flat, self._input_specs)], name)

    def _call_flat(self, tensors, name=None):
        graph = ops.get_default_graph()
        if graph is not self._graph:
            if not ops._encloses(self._graph, graph):
                raise ValueError(f"Function {self.name} was traced in another graph than the default graph; "
                                 "call it where it was built (or trace it again there)")
            if self.name not in graph._native.function_names():
                graph._native.add_function(self.name, self.graph._native, [t._tid for t in self.graph.inputs],
                                           [t._tid for t in self.outputs])
        op_type = "StatefulPartitionedCall" if self._stateful else "PartitionedCall"
        op = call_function_op(graph, op_type, list(tensors) + self._captures, {"f": self.name}, name or op_type,
                              [_Controls(self._controls)])
        results = iter(op._outputs)
        return nest.map_structure(lambda leaf: next(results) if isinstance(leaf, ops.Tensor) else leaf,
                                  self.structured_outputs)

    def __repr__(self):
        return f"<ConcreteFunction {self.name} inputs={self._input_specs} outputs={self.outputs}>"


def _convert(value, spec, fname):
    """``value`` as a tensor for an argument of ``spec``: TensorFlow's ValueErrors when a tensor's dtype
    or shape does not fit, TypeError when a Python value does not convert."""
    from ferroflow.ops.variables import Variable

    if isinstance(value, Variable):
        value = value._as_tensor()
    tensor = ops.convert_to_tensor(value, dtype=spec.dtype)
    if not spec.shape.is_compatible_with(tensor.shape):
        raise ValueError(f"Tensor {tensor} is not compatible with the shape this function ({fname}) was traced "
                         f"with. Expected shape {spec.shape}, but got shape {tensor.shape}.")
    return tensor


def trace(python_function, args, kwargs, name, arg_names=None):
    """Traces ``python_function(*args, **kwargs)`` into a function of the default graph's library.

    Every ``TensorSpec`` leaf of ``args``/``kwargs`` becomes an argument of the function
    (in flattening order: positional, then keyword arguments by sorted name); other leaves
    are passed as they are. ``arg_names`` names the top-level positional arguments
    (placeholder names). Returns a ``ConcreteFunction``.
    """
    from ferroflow.ops.variables import Variable

    graph = ops.get_default_graph()
    body = FuncGraph(name, graph)
    outermost = graph
    while getattr(outermost, "outer_graph", None) is not None:
        outermost = outermost.outer_graph
    keys = (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.LOCAL_VARIABLES)
    before = {id(v) for key in keys for v in outermost.get_collection(key)}
    specs, arg_tensors = [], []
    with body.as_default():

        def placeholder(leaf, arg_name):
            if not isinstance(leaf, TensorSpec):
                return leaf
            specs.append(leaf)
            arg_tensors.append(body.add_arg(leaf.dtype, leaf.shape, name=leaf.name or arg_name))
            return arg_tensors[-1]

        names = list(arg_names or ()) + [f"args_{i}" for i in range(len(args))]
        inner_args = [nest.map_structure(lambda x, n=n: placeholder(x, n), a) for a, n in zip(args, names)]
        inner_kwargs = {k: nest.map_structure(lambda x, n=k: placeholder(x, n), kwargs[k]) for k in sorted(kwargs)}
        try:
            result = python_function(*inner_args, **inner_kwargs)
        except TypeError as e:
            if str(e).startswith(_PYTHON_CONTROL_FLOW):
                raise errors.OperatorNotAllowedInGraphError(
                    f"{e} (while tracing {name}: ferroflow's tf.function does not convert Python control flow "
                    "on tensors, as TensorFlow's AutoGraph would; use tf.cond, tf.case or tf.while_loop)"
                ) from None
            raise
        flat_outputs = []

        def output(leaf):
            if isinstance(leaf, ops.Operation) or leaf is None:
                return leaf
            try:
                t = leaf._as_tensor() if isinstance(leaf, Variable) else ops.convert_to_tensor(leaf)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{name}: a traced function must return Tensors, values convertible to Tensors, "
                                f"None or Operations; it returned {leaf!r} ({e})") from None
            if t.graph is not body:
                t = body.capture(t)
            flat_outputs.append(t)
            return t

        structured = nest.map_structure(output, result)
        body.inputs = arg_tensors + [inner for _, inner in body.captures]
    function_name = to_function(body, flat_outputs, name)
    created = [v for key in keys for v in outermost.get_collection(key) if id(v) not in before]
    structured_input = (tuple(args), dict(kwargs))
    return ConcreteFunction(graph, body, function_name, specs, structured_input, structured, flat_outputs, created)
