"""Graph functions: the graphs ``tf.cond`` branches and ``tf.while_loop`` bodies are built in.

A ``FuncGraph`` is a graph of its own, built while the user's Python function
runs with it as the default graph. Its arguments are ``_Arg`` ops. A tensor
of an enclosing graph used inside it is *captured*: the body gets an extra
argument standing for it, and the op that calls the function passes the
outer tensor in (a variable's reference stays a reference, so the body reads
the variable's current value and may assign to it). Control inputs on ops of
an enclosing graph become control inputs of the calling op.

``to_function`` copies a finished body into the enclosing graph's function
library under a unique name; the Rust executor compiles it once into a plan.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops

_FUNCTION_NAME_CHARS = str.maketrans({c: "_" for c in "/:.- "})


class FuncGraph(ops.Graph):
    """The graph of one function body, built inside ``outer_graph``."""

    def __init__(self, name, outer_graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self._building_function = True
        # What belongs to the program rather than to the body is shared:
        # collections (variable stores, summaries), the graph seed, the
        # gradient overrides and the name scope the body starts in.
        self._collections = outer_graph._collections
        self._seed = outer_graph._seed
        self._gradient_override_map = outer_graph._gradient_override_map
        self._attr_scope_map = outer_graph._attr_scope_map
        self._name_stack = outer_graph._name_stack
        self.inputs = []
        self.outputs = []
        self._captured = {}
        #: ``(outer tensor, argument)`` pairs, in capture order.
        self.captures = []
        #: Ops of enclosing graphs the body waits for.
        self.outer_control_inputs = []

    # -- arguments and captures ------------------------------------------------
    def add_arg(self, dtype, shape=None, name="arg", is_ref=False, is_list=False):
        """Adds an argument of ``dtype`` and ``shape`` (a list: a TensorArray's flow); returns its tensor."""
        from ferroflow.framework.tensor_shape import as_shape

        dtype = dtypes.as_dtype(dtype).base_dtype
        saved = self._control_dependencies_stack
        self._control_dependencies_stack = []
        try:
            op = ops.Graph._create_op(
                self, "_Arg", [], {"T": ("type", dtype.as_datatype_enum),
                 "shape": ("shape", None if shape is None else as_shape(shape)._as_native()), "is_ref": bool(is_ref),
                 "is_list": bool(is_list)},
                name=name,
            )
        finally:
            self._control_dependencies_stack = saved
        return op._outputs[0]

    def capture(self, tensor):
        """The argument standing for ``tensor`` of an enclosing graph (made on first use)."""
        key = (id(tensor.graph), tensor._tid)
        inner = self._captured.get(key)
        if inner is None:
            name = tensor.op.name.rsplit("/", 1)[-1]
            inner = self.add_arg(tensor.dtype, tensor.shape, name=name, is_ref=_is_ref(tensor),
                                 is_list=tensor.graph._native.is_list(tensor._tid))
            self._captured[key] = inner
            self.captures.append((tensor, inner))
        return inner

    @property
    def external_captures(self):
        return [outer for outer, _ in self.captures]

    # -- building --------------------------------------------------------------
    def _create_op(self, op_type, inputs, attrs, name=None, control_inputs=()):
        inputs = [t if t.graph is self else self.capture(t) for t in inputs]
        own = []
        for c in control_inputs:
            if c.graph is self:
                own.append(c)
            elif c not in self.outer_control_inputs:
                self.outer_control_inputs.append(c)
        return super()._create_op(op_type, inputs, attrs, name=name, control_inputs=own)

    def control_dependencies(self, control_inputs):
        if control_inputs is None:
            return super().control_dependencies(None)
        own = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (ops.Tensor, ops.Operation)):
                c = c._as_graph_element()
            if hasattr(c, "op") and type(c).__name__ == "IndexedSlices":
                c = c.op
            if isinstance(c, ops.Tensor):
                c = c.op
            if isinstance(c, ops.Operation) and c.graph is not self:
                if c not in self.outer_control_inputs:
                    self.outer_control_inputs.append(c)
                continue
            own.append(c)
        return super().control_dependencies(own)


def to_function(func_graph, outputs, base_name):
    """Adds ``func_graph`` (returning ``outputs``) to its outer graph's library; returns the name."""
    outer = func_graph.outer_graph
    base = (base_name or "fn").translate(_FUNCTION_NAME_CHARS).strip("_") or "fn"
    name = outer._native.unique_function_name(base)
    func_graph.outputs = list(outputs)
    outer._native.add_function(
        name, func_graph._native, [t._tid for t in func_graph.inputs], [t._tid for t in outputs]
    )
    return name


def leaf_to_tensor(x):
    """A function result (a leaf of what a branch or body returned) as a tensor of the function graph
    being built, an outer tensor captured; an Operation stays one."""
    if isinstance(x, ops.Operation):
        return x
    t = ops.convert_to_tensor(x)
    g = ops.get_default_graph()
    if t.graph is not g:
        t = g.capture(t)
    return t


def unify_captures(graphs):
    """The outer tensors any of ``graphs`` captured, each once, in capture order (every graph then
    gets an argument for each, so they share one argument list)."""
    outer = []
    seen = set()
    for g in graphs:
        for t, _ in g.captures:
            key = (id(t.graph), t._tid)
            if key not in seen:
                seen.add(key)
                outer.append(t)
    return outer


def call_function_op(outer_graph, op_type, inputs, attrs, name, graphs):
    """Creates the op calling function graphs in ``outer_graph`` (refs passed as references).

    An input of a graph enclosing ``outer_graph`` (a variable used by a cond
    nested in a cond) reaches the op through ``outer_graph``'s capture of it,
    which is a reference when the input is: it is passed as one too."""
    ref_inputs = [
        i for i, t in enumerate(inputs)
        if (outer_graph is t.graph or isinstance(outer_graph, FuncGraph)) and _is_ref(t)
    ]
    attrs = dict(attrs)
    attrs["_ref_inputs"] = ref_inputs
    controls = []
    for g in graphs:
        for c in g.outer_control_inputs:
            if c not in controls:
                controls.append(c)
    return outer_graph._create_op(op_type, list(inputs), attrs, name=name, control_inputs=controls)


def _is_ref(t):
    """Whether ``t`` is a variable reference."""
    return bool(t.graph._native.output_info(t._tid)[2])
