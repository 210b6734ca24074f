"""``tf.gradients``: symbolic differentiation, done by the Rust core."""

from __future__ import annotations

import enum

from ferroflow.framework import gradient_registry, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import array_ops


class AggregationMethod:
    """How gradient contributions are summed (ferroflow always uses AddN, which is exact)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What ``gradients`` returns for an ``x`` that ``ys`` do not depend on."""

    NONE = "none"
    ZERO = "zero"


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_x(x):
    # Variables are differentiated at their reference (the VariableV2
    # output), which every read of them passes through.
    if hasattr(x, "_ref") and not isinstance(x, ops.Tensor):
        return x._ref()
    if isinstance(x, IndexedSlices):
        raise TypeError("Cannot differentiate with respect to an IndexedSlices")
    return ops.convert_to_tensor(x, name="x")


# The start of the core's message for an op type with no registered gradient.
_NO_GRADIENT = "No gradient defined for operation"


def _as_grad_y(g, y):
    """``grad_ys`` entry for ``y``: converted to ``y``'s dtype; a tensor of another dtype is a TypeError."""
    if isinstance(g, ops.Tensor) and g.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError(f"Gradient type {g.dtype.name} of grad_ys {g.name} does not match the type "
                        f"{y.dtype.name} of y {y.name}")
    return ops.convert_to_tensor(g, dtype=y.dtype, name="grad_y")


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Symbolic derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Returns one entry per ``x``: a Tensor, an ``IndexedSlices`` (for rows
    gathered from ``x``), or None when ``ys`` do not depend on ``x``.
    """
    ys = [ops.convert_to_tensor(y, name="y") for y in _as_list(ys)]
    xs = [_as_x(x) for x in _as_list(xs)]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    else:
        grad_ys = _as_list(grad_ys)
        if len(grad_ys) != len(ys):
            raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
        grad_ys = [None if g is None else _as_grad_y(g, y) for g, y in zip(grad_ys, ys)]
    stop = [] if stop_gradients is None else [ops.convert_to_tensor(s) for s in _as_list(stop_gradients)]
    unconnected = UnconnectedGradients(unconnected_gradients)
    graph = ops._get_graph_from_inputs(ys + xs)
    default = ops.get_default_graph()
    if default is graph or ops._encloses(graph, default):
        # Inside a function body (a while loop's, a branch's: MAML's inner step in map_fn), tensors of
        # the enclosing graphs stand for the body's arguments that capture them.
        graph = default
        xs = [_captured(graph, x) for x in xs]
        ys = [_captured(graph, y) for y in ys]
        grad_ys = [None if g is None else _captured(graph, g) for g in grad_ys]
        stop = [_captured(graph, s) for s in stop]
    for t in ys + xs + [g for g in grad_ys if g is not None] + stop:
        if t.graph is not graph:
            raise ValueError(f"Tensor {t} is not from the graph of the others passed to gradients")
    with graph.as_default(), ops.name_scope(name, "gradients", None) as scope:
        controls = [op._id for op in graph._control_dependencies_for_inputs([])]
        try:
            run = graph._native.gradients_start(
                [y._tid for y in ys],
                [x._tid for x in xs],
                [None if g is None else g._tid for g in grad_ys],
                scope.rstrip("/"),
                [s._tid for s in stop],
                unconnected is UnconnectedGradients.ZERO,
                controls,
                gradient_registry.python_gradient_names(),
                bool(gate_gradients),
            )
            while True:
                step = run.step()
                graph._sync_native()
                if step[0] == "done":
                    result = step[1]
                    break
                run.resume(_python_gradient(graph, *step[1:]))
        except ValueError as e:
            # TensorFlow raises LookupError for an op type without a registered gradient.
            if str(e).startswith(_NO_GRADIENT):
                raise LookupError(f"{e}. Every op between ys and xs needs a gradient; to treat this op as a "
                                  "constant, wrap its output (or input) in tf.stop_gradient.") from None
            raise
        finally:
            # Nodes added before a failure are in the core graph too: mirror them either way.
            graph._sync_native()
    out = []
    for r in result:
        if r is None:
            out.append(None)
        elif isinstance(r, tuple):
            v, i, d = (graph._tensor_from_tid(t) for t in r)
            out.append(IndexedSlices(v, i, d))
        else:
            out.append(graph._tensor_from_tid(r))
    return out


def _captured(graph, t):
    """``t`` as a tensor of ``graph``: the argument capturing it when it belongs to an enclosing graph."""
    if t.graph is graph or not ops._encloses(t.graph, graph):
        return t
    return graph.capture(t)


def _python_gradient(graph, op_id, grad_type, out_grads, scope):
    """Calls the Python gradient registered as ``grad_type`` for one op; returns its input grads as ids.

    Outputs nothing flowed back to get zeros (TensorFlow hands Python
    gradient functions a tensor for every float output).
    """
    op = graph._ops[op_id]
    fn = gradient_registry.get_gradient_function(grad_type)
    if fn is None:
        return [None] * len(op.inputs)
    with ops.name_scope(scope + "/"):
        grads = []
        for out, g in zip(op.outputs, out_grads):
            if g is not None:
                grads.append(graph._tensor_from_tid(g))
            elif out.dtype.is_floating or out.dtype.is_complex:
                grads.append(array_ops.zeros_like(out))
            else:
                grads.append(None)
        in_grads = fn(op, *grads)
    if not isinstance(in_grads, (list, tuple)):
        in_grads = [in_grads]
    if len(in_grads) != len(op.inputs):
        raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.name} do not match num inputs "
                         f"{len(op.inputs)} (gradient function registered as {grad_type!r})")
    out = []
    for g, x in zip(in_grads, op.inputs):
        if g is None:
            out.append(None)
        elif isinstance(g, IndexedSlices):
            shape = g.dense_shape if g.dense_shape is not None else array_ops.shape(x, out_type=g.indices.dtype)
            out.append((g.values._tid, g.indices._tid, ops.convert_to_tensor(shape)._tid))
        else:
            out.append(ops.convert_to_tensor(g, dtype=x.dtype.base_dtype)._tid)
    return out


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """Second derivatives of ``sum(ys)``: for each ``x``, a tensor of shape ``x.shape + x.shape``.

    Built by differentiating each element of the gradient again (unrolled:
    ``x`` needs a fully known static shape).
    """
    xs = _as_list(xs)
    with ops.name_scope(name, "hessians"):
        out = []
        for x in xs:
            xt = _as_x(x)
            shape = xt.shape
            if not shape.is_fully_defined():
                raise ValueError(f"hessians needs a fully defined shape for {xt.name}, got {shape}")
            n = shape.num_elements()
            (g,) = gradients(ys, [x])
            if g is None:
                out.append(None)
                continue
            flat = array_ops.reshape(ops.convert_to_tensor(g), [-1])
            rows = []
            for j in range(n):
                (h,) = gradients(flat[j], [x], unconnected_gradients=UnconnectedGradients.ZERO)
                rows.append(array_ops.reshape(ops.convert_to_tensor(h), [-1]))
            out.append(array_ops.reshape(array_ops.stack(rows), shape.concatenate(shape).as_list()))
        return out
