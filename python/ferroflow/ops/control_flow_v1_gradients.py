"""Gradients of imported TF1 while loops, recomputed with ferroflow's ``tf.gradients``.

The TF1 control-flow importer (``framework/control_flow_v1_import.py``)
drops the gradient of a TF1 ``tf.while_loop`` (stack pushes and pops and
TF1's gradient TensorArrays have no ferroflow counterpart). It names, for
each gradient tensor that the optimizer's nodes read, what it was the
gradient of; this module, registered with the importer, builds each such
gradient again on the imported graph, whose loops are now ``While`` ops with
ferroflow gradients, so a TF1 training graph keeps training.
"""

from __future__ import annotations

from ferroflow.framework import control_flow_v1_import, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import gradients_impl


def rebuild_gradients(graph, requests):
    """``requests``: ``(ys, grad_ys or None, x, component)`` per gradient (Tensors of ``graph``).
    Returns, for each, the gradient of ``ys`` (weighted by ``grad_ys``) with respect to ``x``: dense
    when ``component`` is None, else that part (``"values"``, ``"indices"``, ``"dense_shape"``) of
    a sparse gradient; None where ``ys`` do not depend on ``x`` or the gradient is not sparse."""
    groups = {}
    for i, (ys, grad_ys, _, _) in enumerate(requests):
        key = (tuple(y._tid for y in ys), tuple(g._tid for g in grad_ys) if grad_ys else None)
        groups.setdefault(key, []).append(i)
    results = [None] * len(requests)
    with graph.as_default(), ops.control_dependencies(None):
        for members in groups.values():
            ys, grad_ys, _, _ = requests[members[0]]
            xs = {}
            for i in members:
                xs.setdefault(requests[i][2]._tid, requests[i][2])
            grads = gradients_impl.gradients(list(ys), list(xs.values()), grad_ys=list(grad_ys) if grad_ys else None)
            by_x = dict(zip(xs, grads))
            for i in members:
                g = by_x[requests[i][2]._tid]
                component = requests[i][3]
                if g is None:
                    continue
                if component is not None:
                    g = getattr(g, component, None) if isinstance(g, IndexedSlices) else None
                elif isinstance(g, IndexedSlices):
                    g = ops.convert_to_tensor(g)
                results[i] = g
    return results


control_flow_v1_import.register_gradient_rebuilder(rebuild_gradients)
