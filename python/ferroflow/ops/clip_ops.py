"""Gradient clipping: ``tf.clip_by_value``, ``tf.clip_by_norm``, ``tf.clip_by_global_norm`` and friends.

Every formula keeps TensorFlow's order of operations (specs/optimizers.md, section 5), e.g. ``clip_by_norm``
always returns ``t * clip_norm / max(norm, clip_norm)``, which can differ from ``t`` by one ulp when nothing
is clipped. IndexedSlices are clipped through their ``values`` and keep their indices.
"""

from __future__ import annotations

import collections.abc

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import array_ops, math_ops, nn_ops
from ferroflow.ops.math_ops import clip_by_value

__all__ = [
    "clip_by_average_norm",
    "clip_by_global_norm",
    "clip_by_norm",
    "clip_by_value",
    "global_norm",
]


def _values(t, name):
    return ops.convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescales ``t`` so its L2 norm over ``axes`` (all axes when None) is at most ``clip_norm``.

    Computes ``t * clip_norm / max(l2norm, clip_norm)``, with ``l2norm = sqrt(sum(t*t))`` taken only where
    the sum is positive (an all-zero ``t`` gives zeros and a zero gradient). A negative Python ``clip_norm``
    counts as 0; a tensor ``clip_norm`` becomes ``max(clip_norm, 0)`` cast to ``t``'s dtype.
    """
    with ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        if np.isscalar(clip_norm):
            if clip_norm < 0:
                clip_norm = 0
        else:
            clip_norm = math_ops.cast(math_ops.maximum(clip_norm, 0), dtype=values.dtype)
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        l2sum_safe = array_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.assert_is_compatible_with(intermediate.shape)
        clipped = array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm), name=scope)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(clipped, t.indices, t.dense_shape)
        return clipped


def _check_sequence(t_list):
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")


def global_norm(t_list, name=None):
    """``sqrt(sum_i sum(t_i ** 2))`` over the non-None entries (IndexedSlices by their values, so duplicate
    indices count separately), computed as ``sqrt(sum_i l2_loss(t_i) * 2)``."""
    _check_sequence(t_list)
    t_list = list(t_list)
    with ops.name_scope(name, "global_norm", [t for t in t_list if t is not None]):
        values = [None if t is None else _values(t, f"t_{i}") for i, t in enumerate(t_list)]
        half_squared_norms = []
        for v in values:
            if v is not None:
                with ops.colocate_with(v):
                    half_squared_norms.append(nn_ops.l2_loss(v))
        if half_squared_norms:
            stacked = array_ops.stack(half_squared_norms)
        else:
            # TensorFlow stacks an empty list into a float32 [0] tensor: the norm is 0.
            stacked = constant_op.constant([], dtype=dtypes.float32)
        half_squared_norm = math_ops.reduce_sum(stacked)
        return math_ops.sqrt(
            half_squared_norm * constant_op.constant(2.0, dtype=half_squared_norm.dtype), name="global_norm"
        )


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor of ``t_list`` by ``clip_norm / max(global_norm, clip_norm)``.

    Returns ``(list_clipped, global_norm)``. ``None`` entries stay None and IndexedSlices keep their indices.
    As in TensorFlow the scale is ``clip_norm * min(1/norm, 1/clip_norm) + (norm - norm)``, so an infinite
    or NaN norm turns *every* output into NaN; the returned norm is the raw one. ``use_norm`` must be a
    Tensor (a Python float fails, as in TensorFlow).
    """
    _check_sequence(t_list)
    t_list = list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with ops.name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None] + [clip_norm]) as scope:
        scale_for_finite = clip_norm * math_ops.minimum(
            1.0 / use_norm, constant_op.constant(1.0, dtype=use_norm.dtype) / clip_norm
        )
        scale = scale_for_finite + (use_norm - use_norm)
        values = [None if t is None else _values(t, f"t_{i}") for i, t in enumerate(t_list)]
        values_clipped = []
        for i, v in enumerate(values):
            if v is None:
                values_clipped.append(None)
                continue
            with ops.colocate_with(v):
                values_clipped.append(array_ops.identity(v * math_ops.cast(scale, v.dtype), name=f"{scope}_{i}"))
        list_clipped = [
            IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c
            for c, t in zip(values_clipped, t_list)
        ]
    return list_clipped, use_norm


def clip_by_average_norm(t, clip_norm, name=None):
    """Deprecated: scales ``t`` so its L2 norm divided by its element count is at most ``clip_norm``.

    Computes ``(t * clip_norm) * min(rsqrt(sum(t*t)) * n, 1/clip_norm)`` with ``n`` the element count as
    float32, so only float32 ``t`` works (as in TensorFlow).
    """
    with ops.name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = ops.convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(t * t, math_ops.range(array_ops.rank(t))))
        clipped = array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element, constant_op.constant(1.0) / clip_norm),
            name=scope,
        )
        clipped.set_shape(t.shape)
        return clipped
