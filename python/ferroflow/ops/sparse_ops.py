"""Ops on ``tf.SparseTensor``: TF1's top-level ``tf.sparse_*`` names (re-exported from ``__all__``) and the
functions behind ``tf.sparse``.

Each op takes and returns a sparse tensor's three parts; the kernels are Rust
(``crates/runtime/src/kernels/sparse.rs``) under TensorFlow's op names, inputs
and attrs, so GraphDefs interoperate. Gradients flow to ``values`` and to
dense operands where TensorFlow defines them (``crates/autodiff/src/grads/sparse.rs``).
"""

from __future__ import annotations

import numbers

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, make_op

__all__ = [
    "sparse_add",
    "sparse_concat",
    "sparse_fill_empty_rows",
    "sparse_mask",
    "sparse_matmul",
    "sparse_maximum",
    "sparse_merge",
    "sparse_minimum",
    "sparse_placeholder",
    "sparse_reduce_max",
    "sparse_reduce_max_sparse",
    "sparse_reduce_sum",
    "sparse_reduce_sum_sparse",
    "sparse_reorder",
    "sparse_reset_shape",
    "sparse_reshape",
    "sparse_retain",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "sparse_slice",
    "sparse_softmax",
    "sparse_split",
    "sparse_tensor_dense_matmul",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
    "sparse_to_indicator",
    "sparse_transpose",
]


def _sp(x, name="sp_input"):
    """``x`` as a SparseTensor (a SparseTensorValue becomes constants); TypeError for anything else."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    if not isinstance(x, SparseTensor):
        raise TypeError(f"Input {name} must be a SparseTensor, got {type(x).__name__}.")
    return x


def _int64(x, name):
    return ops.convert_to_tensor(x, dtype=dtypes.int64, name=name)


def _static_rank(sp):
    """The rank of ``sp`` if known at construction time."""
    return sp.dense_shape.get_shape().as_list()[0] if sp.dense_shape.get_shape().rank else None


def _with_shape(result, shape):
    """``result`` with static dense shape ``shape`` (where it is more than what ``dense_shape`` tells)."""
    if shape is not None and shape.rank is not None:
        try:
            result.set_shape(shape)
        except ValueError:
            pass
    return result


# --- conversion ------------------------------------------------------------------------------------------------


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True, name=None):
    """A dense tensor of shape ``output_shape`` holding ``sparse_values`` at ``sparse_indices`` and
    ``default_value`` elsewhere (``SparseToDense``)."""
    with ops.name_scope(name, "SparseToDense", [sparse_indices, output_shape, sparse_values, default_value]) as scope:
        ind = ops.convert_to_tensor(sparse_indices, name="sparse_indices")
        if ind.dtype not in (dtypes.int32, dtypes.int64):
            ind = math_ops.cast(ind, dtypes.int64)
        shape = ops.convert_to_tensor(output_shape, dtype=ind.dtype, name="output_shape")
        vals = ops.convert_to_tensor(sparse_values, name="sparse_values")
        default = ops.convert_to_tensor(default_value, dtype=vals.dtype, name="default_value")
        return make("SparseToDense", [ind, shape, vals, default], {"validate_indices": bool(validate_indices)}, scope)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """``sp_input`` as a dense tensor, ``default_value`` (zero, or "" for strings) where it has no entry."""
    sp = _sp(sp_input)
    if default_value is None:
        default_value = "" if sp.dtype == dtypes.string else np.zeros((), sp.dtype.as_numpy_dtype)
    with ops.name_scope(name, "sparse_tensor_to_dense", [sp.indices, sp.values, sp.dense_shape]) as scope:
        default = ops.convert_to_tensor(default_value, dtype=sp.dtype, name="default_value")
        return make("SparseToDense", [sp.indices, sp.dense_shape, sp.values, default],
                    {"validate_indices": bool(validate_indices)}, scope)


def from_dense(tensor, name=None):
    """The non-zero (non-empty) entries of a dense ``tensor`` as a SparseTensor."""
    with ops.name_scope(name, "dense_to_sparse", [tensor]):
        tensor = ops.convert_to_tensor(tensor)
        indices = array_ops.where(math_ops.not_equal(tensor, array_ops.zeros_like(tensor)))
        values = array_ops.gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        return _with_shape(SparseTensor(indices, values, shape), tensor.get_shape())


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders (``indices``, ``values``, ``dense_shape``) to feed a
    ``SparseTensorValue`` into. With a ``shape`` (entries may be None or -1), ``dense_shape`` defaults to it
    and the static shape is known; it can still be fed."""
    dtype = dtypes.as_dtype(dtype)
    sub = (lambda part: f"{name}/{part}") if name is not None else (lambda part: None)
    if shape is None:
        dense_shape = array_ops.placeholder(dtypes.int64, shape=[None], name=sub("shape"))
        rank = None
        default = None
    else:
        if isinstance(shape, ops.Tensor):
            rank = shape.get_shape().as_list()[0]
            default = tensor_util.constant_value_as_shape(shape)
            value = shape
        else:
            dims = as_shape(shape).as_list() if not isinstance(shape, (list, tuple)) else list(shape)
            dims = [None if d is None or d == -1 else int(d) for d in
                    (getattr(d, "value", d) for d in dims)]
            rank = len(dims)
            default = TensorShape(dims)
            value = ops.convert_to_tensor([-1 if d is None else d for d in dims], dtype=dtypes.int64,
                                          name=sub("shape_default"))
        dense_shape = array_ops.placeholder_with_default(value, shape=[rank], name=sub("shape"))
    result = SparseTensor(
        indices=array_ops.placeholder(dtypes.int64, shape=[None, rank], name=sub("indices")),
        values=array_ops.placeholder(dtype, shape=[None], name=sub("values")),
        dense_shape=dense_shape,
    )
    if default is not None:
        result._dense_shape_default = default
    return result


# --- structure -------------------------------------------------------------------------------------------------


def sparse_reorder(sp_input, name=None):
    """``sp_input`` with its entries in row-major order (``SparseReorder``)."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseReorder", [sp.indices, sp.values]) as scope:
        op = make_op("SparseReorder", [sp.indices, sp.values, sp.dense_shape], {}, scope)
        return _with_shape(SparseTensor(op._outputs[0], op._outputs[1], sp.dense_shape), sp.get_shape())


def sparse_reshape(sp_input, shape, name=None):
    """``sp_input`` reshaped to ``shape`` (one entry may be -1), entries in the same order (``SparseReshape``)."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseReshape", [sp]) as scope:
        new_shape = _int64(shape, "shape")
        op = make_op("SparseReshape", [sp.indices, sp.dense_shape, new_shape], {}, scope)
        out = SparseTensor(op._outputs[0], sp.values, op._outputs[1])
    target = tensor_util.constant_value(new_shape)
    in_shape = sp.get_shape()
    if target is not None and in_shape.is_fully_defined():
        target = [int(d) for d in target]
        total = int(np.prod(in_shape.as_list()))
        if target.count(-1) == 1:
            known = int(np.prod([d for d in target if d != -1]))
            if known and total % known == 0:
                target[target.index(-1)] = total // known
        if -1 not in target and int(np.prod(target)) != total:
            raise ValueError(
                f"Cannot reshape a tensor with {total} elements to shape {target} ({int(np.prod(target))} elements)."
            )
        if -1 not in target:
            out.set_shape(TensorShape(target))
    return out


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None, expand_nonconcat_dims=None):
    """The SparseTensors ``sp_inputs`` concatenated along ``axis`` (``SparseConcat``). With
    ``expand_nonconcat_dim`` the other dimensions grow to the largest among the inputs."""
    if concat_dim is not None:
        if axis is not None and axis != concat_dim:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    if not isinstance(sp_inputs, list):
        raise TypeError("Inputs must be a list")
    if not sp_inputs:
        raise ValueError("Inputs must have at least one SparseTensor")
    sps = [_sp(s, "sp_inputs") for s in sp_inputs]
    axis = int(axis)
    shapes = [s.dense_shape for s in sps]
    static = [s.get_shape() for s in sps]
    with ops.name_scope(name, "SparseConcat", [s.values for s in sps]) as scope:
        if expand_nonconcat_dim:
            rank = next((s.rank for s in static if s.rank is not None), None)
            if rank is None:
                raise ValueError("sparse_concat with expand_nonconcat_dim needs inputs of known rank")
            ax = axis % rank
            max_shape = math_ops.reduce_max(array_ops.stack(shapes), 0)
            pick = ops.convert_to_tensor(np.eye(rank, dtype=np.int64)[ax])
            shapes = [max_shape * (1 - pick) + s * pick for s in shapes]
        op = make_op("SparseConcat", [s.indices for s in sps] + [s.values for s in sps] + shapes,
                     {"concat_dim": axis, "N": len(sps)}, scope)
        out = SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])
    if all(s.is_fully_defined() for s in static):
        dims = [s.as_list() for s in static]
        rank = len(dims[0])
        ax = axis % rank
        res = [max(d[k] for d in dims) if expand_nonconcat_dim else dims[0][k] for k in range(rank)]
        res[ax] = sum(d[ax] for d in dims)
        _with_shape(out, TensorShape(res))
    return out


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None, split_dim=None):
    """``sp_input`` split into ``num_split`` SparseTensors along ``axis`` (the first ``size % num_split`` get
    one more slice), ``SparseSplit``. Arguments must be passed by keyword, as in TensorFlow."""
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if split_dim is not None:
        if axis is not None and axis != split_dim:
            raise ValueError("Cannot specify both 'axis' and 'split_dim'")
        axis = split_dim
    if axis is None:
        raise ValueError("axis is required")
    sp = _sp(sp_input)
    k = int(num_split)
    with ops.name_scope(name, "SparseSplit", [sp]) as scope:
        dim = _int64(axis, "split_dim")
        op = make_op("SparseSplit", [dim, sp.indices, sp.values, sp.dense_shape], {"num_split": k}, scope)
        outs = op._outputs
        return [SparseTensor(outs[i], outs[k + i], outs[2 * k + i]) for i in range(k)]


def sparse_slice(sp_input, start, size, name=None):
    """The entries of ``sp_input`` within ``[start, start + size)``, shifted to start at 0 (``SparseSlice``)."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseSlice", [sp]) as scope:
        op = make_op("SparseSlice", [sp.indices, sp.values, sp.dense_shape, _int64(start, "start"),
                                     _int64(size, "size")], {}, scope)
        return SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])


def sparse_retain(sp_input, to_retain):
    """The entries of ``sp_input`` where the boolean vector ``to_retain`` is True (same dense shape)."""
    sp = _sp(sp_input)
    to_retain = ops.convert_to_tensor(to_retain)
    retain_shape = to_retain.get_shape()
    retain_shape.assert_has_rank(1)
    if sp.values.get_shape().rank is not None:
        sp.values.get_shape()[0].assert_is_compatible_with(retain_shape[0])
    where_true = array_ops.reshape(array_ops.where(to_retain), [-1])
    new_indices = array_ops.gather(sp.indices, where_true)
    new_values = array_ops.gather(sp.values, where_true)
    return _with_shape(SparseTensor(new_indices, new_values, array_ops.identity(sp.dense_shape)), sp.get_shape())


def sparse_reset_shape(sp_input, new_shape=None):
    """``sp_input`` with dense shape ``new_shape`` (at least the current one in every dimension), or, without
    one, the tightest shape holding its entries."""
    sp = _sp(sp_input)
    in_indices = array_ops.identity(sp.indices)
    in_values = array_ops.identity(sp.values)
    in_shape = array_ops.identity(sp.dense_shape)
    if new_shape is None:
        dim_low_bound = math_ops.reduce_max(in_indices, axis=0)
        output_shape = math_ops.add(dim_low_bound, array_ops.ones_like(in_shape))
        return SparseTensor(in_indices, in_values, output_shape)
    output_shape = _int64(new_shape, "new_shape")
    output_shape.get_shape().assert_has_rank(1)
    static_new = tensor_util.constant_value(output_shape)
    static_old = sp.get_shape()
    if static_new is not None and static_old.rank is not None:
        if len(static_new) != static_old.rank:
            raise ValueError(f"new_shape {list(static_new)} must have the rank {static_old.rank} of the input")
        if static_old.is_fully_defined() and np.any(np.asarray(static_old.as_list()) > static_new):
            raise ValueError("Shape of new_shape must be at least the current shape in every dimension")
        out = SparseTensor(in_indices, in_values, output_shape)
        return out
    from ferroflow.ops import check_ops, control_flow_ops

    check = check_ops.assert_less_equal(in_shape, output_shape,
                                        message="new_shape must be at least the current shape in every dimension")
    output_shape = control_flow_ops.with_dependencies([check], output_shape)
    return SparseTensor(in_indices, in_values, output_shape)


def sparse_transpose(sp_input, perm=None, name=None):
    """``sp_input`` with its dimensions permuted by ``perm`` (default: reversed), entries reordered."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseTranspose", [sp]):
        if perm is None:
            rank = _static_rank(sp)
            if rank is not None:
                perm = list(range(rank - 1, -1, -1))
            else:
                r = math_ops.cast(array_ops.size(sp.dense_shape), dtypes.int32)
                perm = (r - 1) - math_ops.range(0, r, 1)
        perm_t = ops.convert_to_tensor(perm, dtype=dtypes.int32, name="perm")
        indices = array_ops.transpose(array_ops.gather(array_ops.transpose(sp.indices), perm_t))
        perm_ = tensor_util.constant_value(perm_t)
        old = sp.get_shape()
        if perm_ is not None and old.is_fully_defined():
            dims = old.as_list()
            dense_shape = ops.convert_to_tensor([dims[int(p)] for p in perm_], dtype=dtypes.int64)
        else:
            dense_shape = array_ops.gather(sp.dense_shape, perm_t)
        return sparse_reorder(SparseTensor(indices, sp.values, dense_shape))


def expand_dims(sp_input, axis=None, name=None):
    """``sp_input`` with a dimension of size 1 inserted at ``axis`` (default -1: last)."""
    sp = _sp(sp_input)
    axis = -1 if axis is None else axis
    with ops.name_scope(name, "expand_dims", [sp]):
        rank = _static_rank(sp)
        if isinstance(axis, (numbers.Integral, np.integer)) and rank is not None:
            a = int(axis)
            if not -rank - 1 <= a <= rank:
                raise ValueError(f"axis {a} out of range for a SparseTensor of rank {rank}")
            a = a if a >= 0 else a + rank + 1
            n = array_ops.shape(sp.indices, out_type=dtypes.int64)[0:1]
            zeros = array_ops.zeros(array_ops.concat([n, ops.convert_to_tensor([1], dtype=dtypes.int64)], 0),
                                    dtype=dtypes.int64)
            parts = [p for p in (sp.indices[:, :a] if a else None, zeros, sp.indices[:, a:] if a < rank else None)
                     if p is not None]
            indices = array_ops.concat(parts, 1)
            one = ops.convert_to_tensor([1], dtype=dtypes.int64)
            shape = array_ops.concat([sp.dense_shape[:a], one, sp.dense_shape[a:]], 0)
            return SparseTensor(indices, sp.values, shape)
        axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
        r = math_ops.cast(array_ops.size(sp.dense_shape), dtypes.int32)
        axis = array_ops.where(axis >= 0, axis, axis + r + 1)
        n = array_ops.shape(sp.indices)[0]
        new_col = array_ops.zeros(array_ops.stack([n, 1]), dtype=dtypes.int64)
        before = array_ops.slice(sp.indices, array_ops.stack([0, 0]), array_ops.stack([-1, axis]))
        after = array_ops.slice(sp.indices, array_ops.stack([0, axis]), [-1, -1])
        indices = array_ops.concat([before, new_col, after], 1)
        shape = array_ops.concat([array_ops.slice(sp.dense_shape, array_ops.reshape(0, [1]), array_ops.reshape(axis, [1])),
                                  ops.convert_to_tensor([1], dtype=dtypes.int64),
                                  array_ops.slice(sp.dense_shape, array_ops.reshape(axis, [1]), [-1])], 0)
        return SparseTensor(indices, sp.values, shape)


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """A sparse identity matrix of shape ``[num_rows, num_columns]`` (ones on the diagonal)."""
    with ops.name_scope(name, "eye", [num_rows, num_columns]):
        rows = _int64(num_rows, "num_rows")
        cols = rows if num_columns is None else _int64(num_columns, "num_columns")
        static_r, static_c = tensor_util.constant_value(rows), tensor_util.constant_value(cols)
        known = static_r is not None and static_c is not None
        # Known sizes give the entries' count as a constant, so indices and values have static shapes.
        diag = min(int(static_r), int(static_c)) if known else math_ops.minimum(rows, cols)
        r = math_ops.range(diag, dtype=dtypes.int64)
        n = [diag] if known else array_ops.reshape(diag, [1])
        out = SparseTensor(array_ops.stack([r, r], axis=1), array_ops.ones(n, dtype=dtype), array_ops.stack([rows, cols]))
        if known:
            out.set_shape(TensorShape([int(static_r), int(static_c)]))
        return out


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """``(filled, empty_row_indicator)``: ``sp_input`` with one ``default_value`` entry at column 0 of every row
    that had none (``SparseFillEmptyRows``), and which rows those were."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseFillEmptyRows", [sp]) as scope:
        default = ops.convert_to_tensor(default_value, dtype=sp.dtype, name="default_value")
        op = make_op("SparseFillEmptyRows", [sp.indices, sp.values, sp.dense_shape, default], {}, scope)
        out = _with_shape(SparseTensor(op._outputs[0], op._outputs[1], sp.dense_shape), sp.get_shape())
        return out, op._outputs[2]


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor whose last dimension(s) index by the ids: ``sp_ids`` (or a list of them) give the
    columns, ``sp_values`` the values, ``vocab_size`` the size of each new dimension."""
    if isinstance(sp_ids, (SparseTensor, SparseTensorValue)):
        sp_ids = [sp_ids]
        if not (isinstance(vocab_size, ops.Tensor) or isinstance(vocab_size, (numbers.Integral, np.integer))):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found {type(vocab_size)}")
        vocab_size = [vocab_size]
    else:
        if not isinstance(sp_ids, (list, tuple)):
            raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found {type(sp_ids)}")
        if not isinstance(vocab_size, (list, tuple)) or len(vocab_size) != len(sp_ids):
            raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    sp_ids = [_sp(s, "sp_ids") for s in sp_ids]
    sp_values = _sp(sp_values, "sp_values")
    with ops.name_scope(name, "SparseMerge", [sp_ids, sp_values]):
        keep = sp_ids[0].indices[:, :-1]
        cols = [array_ops.reshape(math_ops.cast(s.values, dtypes.int64), [-1, 1]) for s in sp_ids]
        new_indices = array_ops.concat([keep] + cols, 1)
        sizes = array_ops.stack([math_ops.cast(ops.convert_to_tensor(v), dtypes.int64) for v in vocab_size])
        new_shape = array_ops.concat([sp_ids[0].dense_shape[:-1], sizes], 0)
        result = SparseTensor(new_indices, sp_values.values, new_shape)
        if already_sorted:
            return result
        ordered = sparse_reorder(result)
        return SparseTensor(ordered.indices, ordered.values, new_shape)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor with one more dimension of size ``vocab_size``: True at ``[..., id]`` for each id
    in the last dimension's entries of the int ``sp_input``."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseToIndicator", [sp]) as scope:
        n = array_ops.shape(sp.indices)[0]
        trues = array_ops.fill(array_ops.expand_dims(n, 0), True)
        merged = sparse_merge(sp, SparseTensor(sp.indices, trues, sp.dense_shape), vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False, name=scope)


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices ``a`` without the slices whose index is in ``mask_indices``."""
    from ferroflow.framework.indexed_slices import IndexedSlices

    with ops.name_scope(name, "sparse_mask", [a, mask_indices]):
        op = make_op("ListDiff", [a.indices, ops.convert_to_tensor(mask_indices, dtype=a.indices.dtype)],
                     {"out_idx": ("type", dtypes.int32.as_datatype_enum)})
        values = array_ops.gather(a.values, op._outputs[1])
        return IndexedSlices(values, op._outputs[0], a.dense_shape)


# --- arithmetic ------------------------------------------------------------------------------------------------


def sparse_add(a, b, threshold=None, thresh=None):
    """``a + b``: a SparseTensor when both are sparse (sums whose magnitude is below ``threshold`` are
    dropped), a dense tensor when one is dense."""
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    elif thresh is not None and thresh != threshold:
        raise ValueError("Cannot specify both 'threshold' and 'thresh'")
    sparse_classes = (SparseTensor, SparseTensorValue)
    if not any(isinstance(x, sparse_classes) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if all(isinstance(x, sparse_classes) for x in (a, b)):
        a, b = _sp(a, "a"), _sp(b, "b")
        with ops.name_scope(None, "SparseAdd", [a, b]) as scope:
            real = a.dtype.real_dtype if hasattr(a.dtype, "real_dtype") else a.dtype
            t = ops.convert_to_tensor(threshold, dtype=real, name="threshold")
            op = make_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape, t],
                         {}, scope)
            out = SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])
            static = a.get_shape().merge_with(b.get_shape())
            return _with_shape(out, static)
    if isinstance(b, sparse_classes):
        a, b = b, a
    a = _sp(a, "a")
    with ops.name_scope(None, "SparseTensorDenseAdd", [a, b]) as scope:
        b = ops.convert_to_tensor(b, dtype=a.dtype, name="b")
        return make("SparseTensorDenseAdd", [a.indices, a.values, a.dense_shape, b], {}, scope)


def _sparse_dense_cwise(op_type, sp, dense, name):
    with ops.name_scope(None, name, [sp, dense]) as scope:
        dense = ops.convert_to_tensor(dense, dtype=sp.dtype, name="y")
        values = make(op_type, [sp.indices, sp.values, sp.dense_shape, dense], {}, scope)
        return _with_shape(SparseTensor(sp.indices, values, sp.dense_shape), sp.get_shape())


def sparse_softmax(sp_input, name=None):
    """Softmax over the entries of each innermost row of ``sp_input`` (implicit zeros take no part)."""
    sp = _sp(sp_input)
    with ops.name_scope(name, "SparseSoftmax", [sp]) as scope:
        values = make("SparseSoftmax", [sp.indices, sp.values, sp.dense_shape], {}, scope)
        return _with_shape(SparseTensor(sp.indices, values, sp.dense_shape), sp.get_shape())


def _sparse_sparse(op_type, sp_a, sp_b, name):
    a, b = _sp(sp_a, "sp_a"), _sp(sp_b, "sp_b")
    with ops.name_scope(name, op_type, [a, b]) as scope:
        op = make_op(op_type, [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape], {}, scope)
        return _with_shape(SparseTensor(op._outputs[0], op._outputs[1], a.dense_shape), a.get_shape())


def sparse_maximum(sp_a, sp_b, name=None):
    """Element-wise maximum of two SparseTensors of one shape (missing entries count as zero)."""
    return _sparse_sparse("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None):
    """Element-wise minimum of two SparseTensors of one shape (missing entries count as zero)."""
    return _sparse_sparse("SparseSparseMinimum", sp_a, sp_b, name)


def _reduction_axes(sp, axis):
    if axis is None:
        rank = _static_rank(sp)
        if rank is not None:
            return ops.convert_to_tensor(list(range(rank)), dtype=dtypes.int32)
        return math_ops.range(0, math_ops.cast(array_ops.size(sp.dense_shape), dtypes.int32))
    return math_ops.cast(ops.convert_to_tensor(axis), dtypes.int32)


def _resolve(new, new_name, old, old_name):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def _sparse_reduce(op_type, sp_input, axis, keepdims, reduction_axes, keep_dims, sparse_out):
    sp = _sp(sp_input)
    axis = _resolve(axis, "axis", reduction_axes, "reduction_axes")
    keepdims = bool(_resolve(keepdims, "keepdims", keep_dims, "keep_dims") or False)
    with ops.name_scope(None, op_type, [sp]) as scope:
        op = make_op(op_type, [sp.indices, sp.values, sp.dense_shape, _reduction_axes(sp, axis)],
                     {"keep_dims": keepdims}, scope)
    if sparse_out:
        return SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])
    out = op._outputs[0]
    static = sp.get_shape()
    axes = None if axis is None else tensor_util.constant_value(ops.convert_to_tensor(axis))
    if static.rank is not None and (axis is None or axes is not None):
        rank = static.rank
        red = set(range(rank)) if axis is None else {int(a) % rank for a in np.reshape(axes, [-1])}
        dims = static.as_list()
        shape = [1 if k in red else dims[k] for k in range(rank)] if keepdims else \
            [dims[k] for k in range(rank) if k not in red]
        out.set_shape(out.get_shape().merge_with(TensorShape(shape)))
    return out


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The dense sum of ``sp_input`` over ``axis`` (all axes by default)."""
    return _sparse_reduce("SparseReduceSum", sp_input, axis, keepdims, reduction_axes, keep_dims, False)


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum of ``sp_input`` over ``axis``, as a SparseTensor of the positions that had entries."""
    return _sparse_reduce("SparseReduceSumSparse", sp_input, axis, keepdims, reduction_axes, keep_dims, True)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The dense maximum of ``sp_input``'s entries over ``axis`` (implicit zeros take no part)."""
    return _sparse_reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes, keep_dims, False)


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The maximum of ``sp_input``'s entries over ``axis``, as a SparseTensor."""
    return _sparse_reduce("SparseReduceMaxSparse", sp_input, axis, keepdims, reduction_axes, keep_dims, True)


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """``op(sp_a) @ op(b)`` for a rank-2 SparseTensor and a dense matrix (either side may be the sparse one)."""
    if isinstance(b, (SparseTensor, SparseTensorValue)):
        if adjoint_a != adjoint_b:
            return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a, adjoint_b))
        return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, not adjoint_a, not adjoint_b))
    sp = _sp(sp_a, "sp_a")
    with ops.name_scope(name, "SparseTensorDenseMatMul", [sp, b]) as scope:
        b = ops.convert_to_tensor(b, name="b", dtype=sp.dtype)
        return make("SparseTensorDenseMatMul", [sp.indices, sp.values, sp.dense_shape, b],
                    {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)}, scope)


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """``tf.sparse_matmul``: a dense matrix product where ``a_is_sparse``/``b_is_sparse`` are only hints
    (TensorFlow's ``SparseMatMul``); computed as ``MatMul``."""
    return math_ops.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


def _segment(op_type, data, indices, segment_ids, name, num_segments, sparse_gradient):
    with ops.name_scope(name, op_type, [data, indices, segment_ids]) as scope:
        data = ops.convert_to_tensor(data, name="data")
        indices = ops.convert_to_tensor(indices, name="indices")
        segment_ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        inputs = [data, indices, segment_ids]
        if num_segments is not None:
            op_type += "WithNumSegments"
            inputs.append(ops.convert_to_tensor(num_segments, name="num_segments"))
        attrs = {"sparse_gradient": True} if sparse_gradient else {}
        return make(op_type, inputs, attrs, scope)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """``output[s] = sum of data[indices[i]] over i with segment_ids[i] == s`` (ids sorted)."""
    return _segment("SparseSegmentSum", data, indices, segment_ids, name, num_segments, sparse_gradient)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """Like ``sparse_segment_sum`` divided by each segment's size."""
    return _segment("SparseSegmentMean", data, indices, segment_ids, name, num_segments, sparse_gradient)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
    """Like ``sparse_segment_sum`` divided by the square root of each segment's size."""
    return _segment("SparseSegmentSqrtN", data, indices, segment_ids, name, num_segments, sparse_gradient)


# --- feature crosses -------------------------------------------------------------------------------------------


# TensorFlow's default key of hashed crosses.
_DEFAULT_HASH_KEY = 0xDECAFCAFFE


def _cross_parts(inputs):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    if not all(isinstance(i, (SparseTensor, SparseTensorValue, ops.Tensor)) for i in inputs):
        raise TypeError("All inputs must be Tensor or SparseTensor.")
    sparse = [_sp(i) for i in inputs if isinstance(i, (SparseTensor, SparseTensorValue))]
    dense = [i for i in inputs if isinstance(i, ops.Tensor)]

    def as_feature(t):
        return t if t.dtype == dtypes.string else math_ops.cast(t, dtypes.int64)

    values = [as_feature(s.values) for s in sparse]
    dense = [as_feature(d) for d in dense]
    attrs = {
        "N": len(sparse),
        "sparse_types": ("list_type", [v.dtype.as_datatype_enum for v in values]),
        "dense_types": ("list_type", [d.dtype.as_datatype_enum for d in dense]),
    }
    return [s.indices for s in sparse] + values + [s.dense_shape for s in sparse] + dense, attrs


def cross(inputs, name=None, separator=None):
    """The feature cross of ``inputs`` (SparseTensors and dense ``[batch, k]`` tensors of strings or ints):
    for each batch row, every combination of one feature per input, joined by ``separator`` ("_X_")."""
    parts, attrs = _cross_parts(inputs)
    with ops.name_scope(name, "SparseCrossV2", []) as scope:
        sep = ops.convert_to_tensor("_X_" if separator is None else separator, dtype=dtypes.string)
        op = make_op("SparseCrossV2", parts + [sep], attrs, scope)
        return SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The hashed feature cross of ``inputs`` (``SparseCross`` with ``hashed_output``): each combination's
    features (strings by their FarmHash fingerprint, integers as they are) folded with TensorFlow's
    ``FingerprintCat64`` from ``hash_key``, modulo ``num_buckets`` (when positive); int64 values."""
    parts, attrs = _cross_parts(inputs)
    types = attrs["sparse_types"][1] + attrs["dense_types"][1]
    internal = dtypes.int64 if any(t != dtypes.string.as_datatype_enum for t in types) else dtypes.string
    attrs.update({"hashed_output": True, "num_buckets": int(num_buckets),
                  "hash_key": int(_DEFAULT_HASH_KEY if hash_key is None else hash_key),
                  "out_type": ("type", dtypes.int64.as_datatype_enum),
                  "internal_type": ("type", internal.as_datatype_enum)})
    with ops.name_scope(name, "SparseCross", []) as scope:
        op = make_op("SparseCross", parts, attrs, scope)
        return SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])


# --- counting --------------------------------------------------------------------------------------------------


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False, name=None):
    """Counts (or sums ``weights``) of each non-negative int value of ``values`` (dense or sparse) as a
    SparseTensor: over all values (``axis=0``) or per row of a rank-2 input (``axis=-1``). ``minlength`` and
    ``maxlength`` bound the last dimension; ``binary_output`` records presence (1) instead of counts."""
    with ops.name_scope(name, "count", [values, weights]):
        if isinstance(values, SparseTensorValue):
            values = SparseTensor.from_value(values)
        if not isinstance(values, SparseTensor):
            values = ops.convert_to_tensor(values, name="values")
        if isinstance(weights, SparseTensorValue):
            weights = SparseTensor.from_value(weights)
        if weights is not None and not isinstance(weights, SparseTensor):
            weights = ops.convert_to_tensor(weights, name="weights")
        if weights is not None and binary_output:
            raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
        if axis is None:
            axis = 0
        if axis not in [0, -1]:
            raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
        attrs = {"minlength": -1 if minlength is None else int(minlength),
                 "maxlength": -1 if maxlength is None else int(maxlength),
                 "binary_output": bool(binary_output)}
        if isinstance(values, SparseTensor) and weights is not None and not isinstance(weights, SparseTensor):
            raise ValueError("Argument `weights` must be a SparseTensor if `values` is a SparseTensor. "
                             f"Received weights={weights} of type: {type(weights).__name__}")
        if isinstance(weights, SparseTensor):
            weights = weights.values
        if axis == 0:
            if isinstance(values, SparseTensor):
                values = values.values
            else:
                if weights is not None:
                    weights = array_ops.reshape(weights, [-1])
                values = array_ops.reshape(values, [-1])
        if weights is None:
            vdtype = values.dtype if not isinstance(values, SparseTensor) else values.values.dtype
            weights = ops.convert_to_tensor(np.zeros([0], vdtype.as_numpy_dtype))
        attrs["output_type"] = ("type", weights.dtype.as_datatype_enum)
        if isinstance(values, SparseTensor):
            op = make_op("SparseCountSparseOutput", [values.indices, values.values, values.dense_shape, weights], attrs)
        else:
            op = make_op("DenseCountSparseOutput", [values, weights], attrs)
        return SparseTensor(op._outputs[0], op._outputs[1], op._outputs[2])


# SparseTensor is a framework type; its arithmetic needs ops, so it is attached here, as math_ops attaches
# Tensor's: ``-sp``, ``sp * dense`` and ``sp / dense`` (the dense side broadcast, TF's SparseDenseCwise ops).
SparseTensor.__neg__ = lambda self: self.with_values(math_ops.negative(self._values))
SparseTensor.__mul__ = lambda self, other: _sparse_dense_cwise("SparseDenseCwiseMul", self, other, "mul")
SparseTensor.__truediv__ = lambda self, other: _sparse_dense_cwise("SparseDenseCwiseDiv", self, other, "truediv")
SparseTensor.__div__ = SparseTensor.__truediv__
