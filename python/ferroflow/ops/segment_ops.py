"""Segment reductions, scatters and ``dynamic_partition`` / ``dynamic_stitch``, as TensorFlow's.

``segment_*`` take sorted ``segment_ids`` (``InvalidArgumentError`` otherwise, as TF's CPU kernel);
``unsorted_segment_*`` take any ids (negative ones are dropped) and ``num_segments``;
``unsorted_segment_mean`` / ``sqrt_n`` are composed from ``UnsortedSegmentSum`` as TF composes them.
``scatter_*`` update variable references in place; ``tensor_scatter_*`` return new tensors.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops.state_ops import _ref

__all__ = [
    "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
    "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max", "unsorted_segment_min",
    "unsorted_segment_prod", "unsorted_segment_sqrt_n",
    "scatter_nd", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update",
    "scatter_mul", "scatter_div", "scatter_max", "scatter_min",
    "tensor_scatter_update", "tensor_scatter_nd_update", "tensor_scatter_add", "tensor_scatter_nd_add",
    "tensor_scatter_sub", "tensor_scatter_nd_sub", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
    "batch_gather", "batch_scatter_update", "dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch",
]


# --- segment reductions -----------------------------------------------------------------------------------------


def _segment(op_type, data, segment_ids, name):
    with ops.name_scope(name, op_type, [data, segment_ids]) as scope:
        d = ops.convert_to_tensor(data, name="data")
        ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        return make(op_type, [d, ids], {}, scope)


def segment_sum(data, segment_ids, name=None):
    """``output[i] = sum of data[j] over j with segment_ids[j] == i``; ids sorted, empty segments 0."""
    return _segment("SegmentSum", data, segment_ids, name)


def segment_mean(data, segment_ids, name=None):
    """The mean of each segment's rows (sorted ids; empty segments 0)."""
    return _segment("SegmentMean", data, segment_ids, name)


def segment_max(data, segment_ids, name=None):
    """The elementwise maximum of each segment's rows (sorted ids; empty segments 0, as TF's CPU kernel)."""
    return _segment("SegmentMax", data, segment_ids, name)


def segment_min(data, segment_ids, name=None):
    """The elementwise minimum of each segment's rows (sorted ids; empty segments 0, as TF's CPU kernel)."""
    return _segment("SegmentMin", data, segment_ids, name)


def segment_prod(data, segment_ids, name=None):
    """The elementwise product of each segment's rows (sorted ids; empty segments 1)."""
    return _segment("SegmentProd", data, segment_ids, name)


def _unsorted(op_type, data, segment_ids, num_segments, name):
    if getattr(type(data), "_ragged_elementwise", False):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.unsorted_segment(op_type, data, segment_ids, num_segments, name)
    with ops.name_scope(name, op_type, [data, segment_ids, num_segments]) as scope:
        d = ops.convert_to_tensor(data, name="data")
        ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        n = ops.convert_to_tensor(num_segments, name="num_segments")
        if n.dtype not in (dtypes.int32, dtypes.int64):
            n = ops.convert_to_tensor(num_segments, dtype=ids.dtype, name="num_segments")
        return make(op_type, [d, ids, n], {}, scope)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """``output[segment_ids[i...]] += data[i...]`` into ``num_segments`` rows; negative ids are dropped."""
    return _unsorted("UnsortedSegmentSum", data, segment_ids, num_segments, name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The maximum per segment; empty segments hold the dtype's lowest value."""
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The minimum per segment; empty segments hold the dtype's highest value."""
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product per segment; empty segments hold 1."""
    return _unsorted("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def _unsorted_segment_n(data, segment_ids, num_segments):
    """Each segment's row count (at least 1), shaped to broadcast against the sums (TF's ``_unsorted_segment_N``)."""
    from ferroflow.ops import array_ops, math_ops

    num_segments = ops.convert_to_tensor(num_segments)
    ones = array_ops.ones(array_ops.shape(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones, segment_ids, num_segments)
    extra = array_ops.ones([array_ops.rank(data) - array_ops.rank(segment_ids)], dtype=num_segments.dtype)
    shape = array_ops.concat([array_ops.expand_dims(num_segments, 0), extra], axis=0)
    return math_ops.maximum(array_ops.reshape(n, shape), 1)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean per segment (``unsorted_segment_sum`` divided by the row count; empty segments 0)."""
    with ops.name_scope(name, "UnsortedSegmentMean"):
        data = ops.convert_to_tensor(data)
        segment_ids = ops.convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        out = summed / n
        out.set_shape(summed.shape)
        return out


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum per segment divided by the square root of its row count (empty segments 0)."""
    from ferroflow.ops import math_ops

    with ops.name_scope(name, "UnsortedSegmentSqrtN"):
        data = ops.convert_to_tensor(data)
        segment_ids = ops.convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        out = summed / math_ops.sqrt(n)
        out.set_shape(summed.shape)
        return out


# --- scatters ---------------------------------------------------------------------------------------------------


def _policy(bad_indices_policy):
    return {"bad_indices_policy": bad_indices_policy} if bad_indices_policy else {}


def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None):
    """A zero tensor of ``shape`` with ``updates`` added at the n-dimensional ``indices``."""
    with ops.name_scope(name, "ScatterNd", [indices, updates, shape]) as scope:
        i = ops.convert_to_tensor(indices, name="indices")
        u = ops.convert_to_tensor(updates, name="updates")
        s = ops.convert_to_tensor(shape, dtype=i.dtype, name="shape")
        return make("ScatterNd", [i, u, s], _policy(bad_indices_policy), scope)


def _scatter_ref(op_type, ref, indices, updates, use_locking, name):
    r = _ref(ref)
    with ops.name_scope(name, op_type, [r, indices, updates]) as scope:
        i = ops.convert_to_tensor(indices, name="indices")
        u = ops.convert_to_tensor(updates, dtype=r.dtype.base_dtype, name="updates")
        return make(op_type, [r, i, u], {"use_locking": bool(use_locking)}, scope)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] *= updates`` in place."""
    return _scatter_ref("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] /= updates`` in place."""
    return _scatter_ref("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] = max(ref[indices], updates)`` in place."""
    return _scatter_ref("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] = min(ref[indices], updates)`` in place."""
    return _scatter_ref("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """``ref[indices[i]] = updates[i]`` at n-dimensional indices, in place."""
    return _scatter_ref("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices[i]] += updates[i]`` at n-dimensional indices, in place."""
    return _scatter_ref("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices[i]] -= updates[i]`` at n-dimensional indices, in place."""
    return _scatter_ref("ScatterNdSub", ref, indices, updates, use_locking, name)


def _tensor_scatter(op_type, tensor, indices, updates, bad_indices_policy, name):
    with ops.name_scope(name, op_type, [tensor, indices, updates]) as scope:
        t = ops.convert_to_tensor(tensor, name="tensor")
        i = ops.convert_to_tensor(indices, name="indices")
        u = ops.convert_to_tensor(updates, dtype=t.dtype, name="updates")
        return make(op_type, [t, i, u], _policy(bad_indices_policy), scope)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` written at the n-dimensional ``indices``."""
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, "", name)


def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None):
    """A copy of ``tensor`` with ``updates`` added at ``indices``."""
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, bad_indices_policy, name)


def tensor_scatter_nd_sub(tensor, indices, updates, bad_indices_policy="", name=None):
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``."""
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, bad_indices_policy, name)


def tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy="", name=None):
    """A copy of ``tensor`` with the elementwise maximum of it and ``updates`` at ``indices``."""
    return _tensor_scatter("TensorScatterMax", tensor, indices, updates, bad_indices_policy, name)


def tensor_scatter_nd_min(tensor, indices, updates, bad_indices_policy="", name=None):
    """A copy of ``tensor`` with the elementwise minimum of it and ``updates`` at ``indices``."""
    return _tensor_scatter("TensorScatterMin", tensor, indices, updates, bad_indices_policy, name)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


# --- batch gather / scatter -------------------------------------------------------------------------------------


def batch_gather(params, indices, name=None):
    """``params[i..., indices[i..., j], ...]``: ``gather`` with ``batch_dims = rank(indices) - 1`` (TF1's)."""
    from ferroflow.ops import array_ops

    with ops.name_scope(name, "BatchGather", [params, indices]):
        indices = ops.convert_to_tensor(indices, name="indices")
        params = ops.convert_to_tensor(params, name="params")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        return array_ops.gather(params, indices, batch_dims=indices.shape.ndims - 1)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """``ref[i..., indices[i..., j]] = updates[i..., j]`` in place, as TF's: the leading dimensions
    are enumerated into n-dimensional indices for ``scatter_nd_update``."""
    from ferroflow.ops import array_ops, math_ops

    with ops.name_scope(name):
        indices = ops.convert_to_tensor(indices, name="indices")
        indices_shape = array_ops.shape(indices)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = array_ops.expand_dims(indices, axis=-1)
        parts = []
        for dim in range(ndims - 1):
            size = indices_shape[dim]
            bshape = [1] * (ndims + 1)
            bshape[dim] = size
            r = array_ops.reshape(math_ops.range(0, size, 1), bshape)
            if r.dtype != nd_indices.dtype:
                r = math_ops.cast(r, nd_indices.dtype)
            parts.append(r * array_ops.ones_like(nd_indices))
        parts.append(nd_indices)
        final = array_ops.concat(parts, axis=-1)
        return scatter_nd_update(ref, final, updates, use_locking=use_locking)


# --- partition / stitch -----------------------------------------------------------------------------------------


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits ``data`` into ``num_partitions`` tensors by the int32 ``partitions`` (a prefix of its shape)."""
    if not isinstance(num_partitions, int) or num_partitions < 1:
        raise ValueError(f"num_partitions must be an int >= 1, got {num_partitions!r}")
    with ops.name_scope(name, "DynamicPartition", [data, partitions]) as scope:
        d = ops.convert_to_tensor(data, name="data")
        p = ops.convert_to_tensor(partitions, dtype=dtypes.int32, name="partitions")
        op = make_op("DynamicPartition", [d, p], {"num_partitions": int(num_partitions)}, scope)
        return list(op.outputs)


def _stitch(op_type, indices, data, name):
    if len(indices) != len(data) or not indices:
        raise ValueError(f"{op_type} needs as many data tensors as indices, got {len(indices)} and {len(data)}")
    with ops.name_scope(name, op_type, list(indices) + list(data)) as scope:
        idx = [ops.convert_to_tensor(i, dtype=dtypes.int32, name="indices") for i in indices]
        first = ops.convert_to_tensor(data[0], name="data")
        vals = [first] + [ops.convert_to_tensor(x, dtype=first.dtype, name="data") for x in data[1:]]
        return make(op_type, idx + vals, {"N": len(idx)}, scope)


def dynamic_stitch(indices, data, name=None):
    """``merged[indices[m][i...]] = data[m][i...]``; later pieces win where indices repeat."""
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices, data, name=None):
    """``dynamic_stitch`` (TensorFlow's ``ParallelDynamicStitch`` op; same result on CPU)."""
    return _stitch("ParallelDynamicStitch", indices, data, name)
