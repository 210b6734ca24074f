"""``tf.compat.v1.wrap_function``: a TF1-style Python function traced into a graph function.

In TensorFlow 2 the returned ``WrappedFunction`` is how TF1 code (placeholders,
``tf.get_variable``, collections) runs eagerly. ferroflow is graph mode only,
and so is the meaning here, which is what TensorFlow 2.21 itself does with
``disable_v2_behavior()``: ``wrap_function`` traces ``fn`` once, at once, with
an argument for each ``TensorSpec`` of ``signature``; calling the result with
tensors adds a ``PartitionedCall`` (``StatefulPartitionedCall``) op to the
default graph and returns symbolic tensors in the structure ``fn`` returned,
for ``Session.run``. Variables ``fn`` creates are graph variables of the
outermost graph (``tf.global_variables_initializer()`` covers them), listed by
``WrappedFunction.variables``.

``prune(feeds, fetches)`` makes another function from the same body, taking
the tensors ``feeds`` (any tensors of the body, e.g. placeholders ``fn`` made)
as its arguments and returning ``fetches``.
"""

from __future__ import annotations

from ferroflow.eager.concrete_function import ConcreteFunction, trace
from ferroflow.framework import ops
from ferroflow.framework.func_graph import FuncGraph, to_function
from ferroflow.framework.type_spec import TensorSpec
from ferroflow.ops import _nest as nest

__all__ = ["WrappedFunction", "wrap_function"]


class WrappedFunction(ConcreteFunction):
    """A traced TF1-style function (``wrap_function``'s result); calling it adds a call op."""

    def prune(self, feeds, fetches, name=None, input_signature=None):
        """A function over the part of this body that computes ``fetches`` (a structure of tensors or
        operations of ``self.graph``) from ``feeds`` (a structure of tensors of ``self.graph``).

        Tensors the body captured stay captured; an ``_Arg`` of this function that ``fetches``
        need and ``feeds`` do not give is an error. ``input_signature`` is accepted for
        TensorFlow's signature and is not needed here (the feeds' own specs are used).
        """
        from ferroflow.framework import importer  # only prune() needs it: kept out of `import ferroflow`

        del input_signature
        body = self.graph
        flat_feeds = [_body_tensor(body, t, "feeds") for t in nest.flatten(feeds)]
        flat_fetches = nest.flatten(fetches)
        fetch_elements = [_body_element(body, f) for f in flat_fetches]
        captured = {inner._tid: outer for outer, inner in body.captures}
        fed = {t._tid for t in flat_feeds}
        needed = _ops_needed(fetch_elements, fed)
        for op in needed:
            if op.type == "_Arg" and op._outputs[0]._tid not in captured:
                raise ValueError(f"prune: the fetches need the function argument {op.name}, which is not among "
                                 "the feeds")
        graph = ops.get_default_graph()
        pruned = FuncGraph(name or f"{self.name}_pruned", graph)
        keep = {op.name for op in needed if op.type != "_Arg"}
        graph_def = body.as_graph_def()
        subset = type(graph_def)()
        subset.library.CopyFrom(graph_def.library)
        subset.versions.CopyFrom(graph_def.versions)
        subset.node.extend(n for n in graph_def.node if n.name in keep)
        with pruned.as_default():
            args = [pruned.add_arg(t.dtype, t.shape, name=t.op.name.rsplit("/", 1)[-1]) for t in flat_feeds]
            input_map = {t.name: arg for t, arg in zip(flat_feeds, args)}
            needed_ids = {op._id for op in needed}
            for outer, inner in body.captures:
                if inner.op._id in needed_ids:
                    input_map[inner.name] = pruned.capture(outer)
            wanted = [f.name for f in fetch_elements]
            elements = importer.import_graph_def(subset, input_map=input_map, return_elements=wanted, name="")
            outputs = [e for e in elements if isinstance(e, ops.Tensor)]
            structured = [e if isinstance(e, ops.Tensor) else None for e in elements]
            outputs = [t if t.graph is pruned else pruned.capture(t) for t in outputs]
            pruned.inputs = args + [inner for _, inner in pruned.captures]
        fname = to_function(pruned, outputs, name or f"{self.name}_pruned")
        specs = [TensorSpec(t.shape, t.dtype, t.op.name) for t in flat_feeds]
        return WrappedFunction(graph, pruned, fname, specs, (tuple(specs), {}),
                               nest.pack_sequence_as(fetches, structured), outputs, [])


def _body_tensor(body, t, what):
    if isinstance(t, str):
        t = body.as_graph_element(t)
    if not isinstance(t, ops.Tensor) or t.graph is not body:
        raise ValueError(f"prune: {what} must be tensors of the wrapped function's graph, got {t!r}")
    return t


def _body_element(body, f):
    if isinstance(f, str):
        f = body.as_graph_element(f)
    if not isinstance(f, (ops.Tensor, ops.Operation)) or f.graph is not body:
        raise ValueError(f"prune: fetches must be tensors or operations of the wrapped function's graph, got {f!r}")
    return f


def _ops_needed(fetches, fed):
    """The ops of the body that ``fetches`` depend on (through data and control inputs), stopping at
    the fed tensors, in creation order."""
    seen = {}
    stack = [f if isinstance(f, ops.Operation) else f.op for f in fetches if
             isinstance(f, ops.Operation) or f._tid not in fed]
    while stack:
        op = stack.pop()
        if op._id in seen:
            continue
        seen[op._id] = op
        for t in op.inputs:
            if t._tid not in fed:
                stack.append(t.op)
        stack.extend(op.control_inputs)
    return [seen[k] for k in sorted(seen)]


def wrap_function(fn, signature, name=None):
    """Traces ``fn(*signature)`` (each ``TensorSpec`` an argument, other values passed as they are)
    into a function of the default graph; returns a ``WrappedFunction`` whose call adds a call op."""
    if not callable(fn):
        raise TypeError(f"wrap_function expects a callable, got {fn!r}")
    if signature is None:
        signature = []
    traced = trace(fn, list(signature), {}, name or "wrapped_function")
    wrapped = WrappedFunction.__new__(WrappedFunction)
    wrapped.__dict__.update(traced.__dict__)
    return wrapped
