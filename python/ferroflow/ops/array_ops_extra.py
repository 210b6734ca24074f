"""The remaining array ops of ``tf.*``: ``unique_with_counts``, ``setdiff1d``, ``searchsorted``, ``sort``,
``argsort``, ``roll``, ``repeat``, ``reverse_sequence``, ``meshgrid``, ``histogram_fixed_width(_bins)``,
``unravel_index``, the space/batch ops and ``required_space_to_batch_paddings``, ``extract_volume_patches``,
``edit_distance``, ``identity_n``, ``ensure_shape`` and ``broadcast_dynamic_shape``/``broadcast_static_shape``.

Each is TensorFlow's op (``UniqueWithCounts``, ``ListDiff``, ``LowerBound``/``UpperBound``, ``Roll``,
``ReverseSequence``, ``HistogramFixedWidth``, ``UnravelIndex``, ``SpaceToBatchND``/``BatchToSpaceND``,
``ExtractVolumePatches``, ``EditDistance``, ``IdentityN``, ``EnsureShape``, ``BroadcastArgs``) with a Rust
kernel, or composed from ops as TensorFlow composes it: ``sort``/``argsort`` from ``TopKV2`` (stable: ties
keep their order), ``repeat`` from ``Tile`` and a boolean mask, ``meshgrid`` from reshapes and a product,
``histogram_fixed_width_bins`` from arithmetic, ``space_to_batch``/``batch_to_space`` from the ``ND`` ops.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np

from ferroflow.framework import dtypes, ops, sparse_tensor, tensor_shape, tensor_util
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, make_op, shape_attr, type_attr

__all__ = [
    "argsort",
    "batch_to_space",
    "batch_to_space_nd",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "edit_distance",
    "ensure_shape",
    "extract_volume_patches",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
    "identity_n",
    "meshgrid",
    "repeat",
    "required_space_to_batch_paddings",
    "reverse_sequence",
    "roll",
    "searchsorted",
    "setdiff1d",
    "sort",
    "space_to_batch",
    "space_to_batch_nd",
    "unique_with_counts",
    "unravel_index",
]

# TensorFlow's result types: namedtuples, so ``sess.run`` returns them too.
_UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
_ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def _lookup(new_name, new_value, old_name, old_value):
    """TensorFlow's deprecated_argument_lookup: one of two spellings of an argument."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
        return old_value
    return new_value


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """The distinct elements of the vector ``x`` (``y``), each element's position in ``y`` (``idx``) and how
    often each distinct element occurs (``count``); op ``UniqueWithCounts``."""
    xt = ops.convert_to_tensor(x, name="x")
    op = make_op("UniqueWithCounts", [xt], {"out_idx": type_attr(out_idx)}, name or "UniqueWithCounts")
    return _UniqueWithCounts(*op.outputs)


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The elements of the vector ``x`` not in ``y``, in order (``out``), and their positions in ``x``
    (``idx``); op ``ListDiff``."""
    xt = ops.convert_to_tensor(x, name="x")
    yt = ops.convert_to_tensor(y, dtype=xt.dtype, name="y")
    op = make_op("ListDiff", [xt, yt], {"out_idx": type_attr(index_dtype)}, name or "ListDiff")
    return _ListDiff(*op.outputs)


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each of ``values``, where it would be inserted in the innermost dimension of
    ``sorted_sequence`` to keep it sorted (``side="left"``: before equal entries, op ``LowerBound``;
    ``"right"``: after them, op ``UpperBound``)."""
    if side not in ("left", "right"):
        raise ValueError("Argument `side` must be either 'right' or 'left'. "
                         f"Received: `side` = '{side}'.")
    seq = ops.convert_to_tensor(sorted_sequence, name="sorted_sequence")
    vals = ops.convert_to_tensor(values, name="values")
    seq_size = array_ops.shape(seq)[-1]
    vals_size = array_ops.shape(vals)[-1]
    seq_2d = array_ops.reshape(seq, array_ops.stack([-1, seq_size]))
    vals_2d = array_ops.reshape(vals, array_ops.stack([-1, vals_size]))
    op_type = "UpperBound" if side == "right" else "LowerBound"
    out = make(op_type, [seq_2d, vals_2d], {"out_type": type_attr(out_type)}, name or op_type)
    result = array_ops.reshape(out, array_ops.shape(vals))
    result.set_shape(vals.shape)
    return result


_SORT_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _descending_sort(values, axis, return_argsort):
    """Sorts descending along ``axis`` with ``TopKV2`` (ties keep their order), transposing ``axis`` last."""
    k = array_ops.shape(values)[axis]
    static_rank = values.shape.ndims
    if axis == -1 or (static_rank is not None and axis + 1 == static_rank):
        top_k_input, transposition = values, None
    else:
        if static_rank is not None:
            if axis < 0:
                axis += static_rank
            perm = np.r_[np.arange(axis), [static_rank - 1], np.arange(axis + 1, static_rank - 1), [axis]]
            transposition = ops.convert_to_tensor(perm.astype(np.int32), name="transposition")
        else:
            rank = array_ops.rank(values)
            if axis < 0:
                axis = rank + axis
            r = array_ops.range(rank)
            last = rank - 1
            transposition = array_ops.where_v2(math_ops.equal(r, axis), last,
                                               array_ops.where_v2(math_ops.equal(r, last), axis, r))
        top_k_input = array_ops.transpose(values, transposition)
    from ferroflow.ops import nn_ops

    sorted_values, indices = nn_ops.top_k(top_k_input, k)
    result = indices if return_argsort else sorted_values
    if transposition is not None:
        result = array_ops.transpose(result, transposition)
    return result


def _ascending_sort(values, axis, return_argsort):
    dtype = values.dtype
    if dtype.is_unsigned:
        offset = dtype.max
        out = _descending_sort(offset - values, axis, return_argsort)
        return out if return_argsort else offset - out
    if dtype.is_integer:
        out = _descending_sort(-values - 1, axis, return_argsort)
        return out if return_argsort else -out - 1
    out = _descending_sort(-values, axis, return_argsort)
    return out if return_argsort else -out


def _sort_or_argsort(values, axis, direction, return_argsort):
    if direction not in _SORT_DIRECTIONS:
        raise ValueError(f"Argument `direction` should be one of {', '.join(sorted(_SORT_DIRECTIONS))}. "
                         f"Received: direction={direction}")
    axis_t = ops.convert_to_tensor(axis, name="axis")
    axis_static = tensor_util.constant_value(axis_t)
    if axis_t.shape.ndims not in (None, 0) or axis_static is None:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    values = ops.convert_to_tensor(values, name="values")
    impl = _ascending_sort if direction == "ASCENDING" else _descending_sort
    result = impl(values, int(axis_static), return_argsort)
    # TensorFlow knows k (the sorted dimension) by constant folding; the result has values' shape.
    result.set_shape(values.shape)
    return result


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (composed from ``TopKV2``, as TensorFlow does)."""
    with ops.name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort ``values`` along ``axis``; equal values keep their order (the sort is
    always stable, as TensorFlow's)."""
    del stable  # TensorFlow's sort is always stable.
    with ops.name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted by ``shift`` along ``axis``, wrapping around (op ``Roll``)."""
    with ops.name_scope(name, "Roll", [input, shift, axis]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        s = _int_tensor(shift, "shift")
        a = _int_tensor(axis, "axis")
        return make("Roll", [x, s, a], {}, scope)


def _int_tensor(value, name, dtype=None):
    if isinstance(value, ops.Tensor):
        return value
    return ops.convert_to_tensor(value, dtype=dtype or dtypes.int32, name=name)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """Reverses the first ``seq_lengths[i]`` elements along ``seq_axis`` of each slice ``i`` along
    ``batch_axis`` (op ``ReverseSequence``)."""
    seq_axis = _lookup("seq_axis", seq_axis, "seq_dim", seq_dim)
    batch_axis = _lookup("batch_axis", batch_axis, "batch_dim", batch_dim)
    with ops.name_scope(name, "ReverseSequence", [input, seq_lengths]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        lengths = ops.convert_to_tensor(seq_lengths, name="seq_lengths")
        if seq_axis is None:
            raise TypeError("reverse_sequence() missing required argument: 'seq_axis'")
        attrs = {"seq_dim": int(seq_axis), "batch_dim": 0 if batch_axis is None else int(batch_axis)}
        return make("ReverseSequence", [x, lengths], attrs, scope)


def _tile_one_dimension(data, axis, multiple):
    if data.shape.ndims is not None:
        multiples = [1] * data.shape.ndims
        multiples[axis] = multiple
    else:
        ones_value = array_ops.ones(array_ops.rank(data), dtypes.int32)
        multiples = array_ops.concat([ones_value[:axis], [multiple], ones_value[axis + 1:]], axis=0)
    if isinstance(multiples, list) and any(isinstance(m, ops.Tensor) for m in multiples):
        multiples = array_ops.stack(multiples)
    return array_ops.tile(data, multiples)


def _repeat_with_axis(data, repeats, axis, name=None):
    if not isinstance(axis, int):
        raise TypeError("Argument `axis` must be an int. "
                        f"Received `axis` = {axis} of type {type(axis).__name__}")
    with ops.name_scope(name, "Repeat", [data, repeats]):
        data = ops.convert_to_tensor(data, name="data")
        repeats = ops.convert_to_tensor(repeats, name="repeats")
        if not repeats.dtype.is_integer:
            raise TypeError(f"Argument `repeats` must be an integer tensor. Received: {repeats.dtype}.")
        repeats = array_ops.cast(repeats, dtypes.int32)
        if repeats.shape.ndims is not None and repeats.shape.ndims > 1:
            raise ValueError(f"Shape {repeats.shape} must have rank at most 1")
        if data.shape.ndims == 0:
            data = array_ops.reshape(data, [1])
        elif data.shape.ndims is None:
            raise ValueError("repeat: `input` must have a known rank")
        data_shape = array_ops.shape(data)
        ndims = data.shape.ndims
        if not -ndims <= axis < ndims:
            raise ValueError(f"axis={axis} out of bounds: expected {-ndims}<=axis<{ndims}")
        if axis < 0:
            axis += ndims
        static_repeats = tensor_util.constant_value(repeats)
        axis_dim = tensor_shape.dimension_value(data.shape[axis])
        if repeats.shape.num_elements() == 1:
            repeats = array_ops.reshape(repeats, [])
            expanded = array_ops.expand_dims(data, axis + 1)
            tiled = _tile_one_dimension(expanded, axis + 1, repeats)
            result_shape = array_ops.concat(
                [data_shape[:axis], array_ops.expand_dims(repeats * data_shape[axis], 0), data_shape[axis + 1:]],
                axis=0)
            result = array_ops.reshape(tiled, result_shape)
            new_dim = None
            if static_repeats is not None and axis_dim is not None:
                new_dim = int(np.reshape(static_repeats, [])) * axis_dim
            result.set_shape(data.shape[:axis].concatenate([new_dim]).concatenate(data.shape[axis + 1:]))
            return result
        count = tensor_shape.dimension_value(repeats.shape[0]) if repeats.shape.ndims == 1 else None
        if count is not None and axis_dim is not None and count != axis_dim:
            raise ValueError(f"Dimensions {axis_dim} and {count} are not compatible")
        repeats = array_ops.broadcast_to(repeats, array_ops.expand_dims(data_shape[axis], 0))
        max_repeat = math_ops.maximum(ops.convert_to_tensor(0, dtype=repeats.dtype, name="zero"),
                                      math_ops.reduce_max(repeats))
        mask = array_ops.sequence_mask(repeats, max_repeat)
        expanded = array_ops.expand_dims(data, axis + 1)
        tiled = _tile_one_dimension(expanded, axis + 1, max_repeat)
        masked = array_ops.boolean_mask(tiled, mask, axis=axis)
        if axis == 0:
            result = masked
        else:
            repeated = math_ops.reduce_sum(repeats)
            result_shape = array_ops.concat(
                [data_shape[:axis], array_ops.expand_dims(repeated, 0), data_shape[axis + 1:]], axis=0)
            result = array_ops.reshape(masked, result_shape)
        # As TensorFlow: the repeated axis' length is known when it is empty, or (past axis 0, where the
        # result is reshaped to a constant-folded shape) when the counts are constants.
        new_dim = 0 if count == 0 else None
        if axis != 0 and static_repeats is not None and axis_dim is not None:
            new_dim = int(np.sum(np.broadcast_to(static_repeats, [axis_dim])))
        result.set_shape(data.shape[:axis].concatenate([new_dim]).concatenate(data.shape[axis + 1:]))
        return result


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeats each element of ``input`` along ``axis`` (flattened first when ``axis`` is None)
    ``repeats`` times (a scalar, or one count per element along the axis)."""
    if axis is None:
        input = array_ops.reshape(input, [-1])  # noqa: A001
        axis = 0
    return _repeat_with_axis(input, repeats, axis, name)


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from 1-D coordinate vectors (``indexing="xy"``: Cartesian, the first two
    outputs' dims swapped; ``"ij"``: matrix indexing)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = list(kwargs.keys())[0]
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    with ops.name_scope(name, "meshgrid", args):
        ndim = len(args)
        s0 = (1,) * ndim
        if not ndim:
            return []
        output = []
        for i, x in enumerate(args):
            xt = array_ops.stack(x) if isinstance(x, (list, tuple)) else ops.convert_to_tensor(x)
            output.append(array_ops.reshape(xt, s0[:i] + (-1,) + s0[i + 1:]))
        shapes = [array_ops.size(x) for x in args]
        output_dtype = ops.convert_to_tensor(args[0]).dtype.base_dtype
        if indexing == "xy" and ndim > 1:
            output[0] = array_ops.reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = array_ops.reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult_fact = array_ops.ones(array_ops.stack(shapes), output_dtype)
        static = [x.shape.num_elements() if isinstance(x, ops.Tensor) else np.size(x) for x in args]
        if indexing == "xy" and ndim > 1:
            static[0], static[1] = static[1], static[0]
        mult_fact.set_shape(static)
        return [math_ops.multiply(x, mult_fact) for x in output]


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal-width bins over ``value_range = [lo, hi]``; values outside
    count in the first or last bin (op ``HistogramFixedWidth``)."""
    with ops.name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        v = ops.convert_to_tensor(values, name="values")
        r = ops.convert_to_tensor(value_range, dtype=v.dtype, name="value_range")
        n = ops.convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        return make("HistogramFixedWidth", [v, r, n], {"dtype": type_attr(dtype)}, scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin index of each of ``values`` for ``histogram_fixed_width`` (int32, ``values``' shape)."""
    from ferroflow.ops import clip_ops, control_flow_ops

    with ops.name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = ops.convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        static_shape = values.shape
        values = array_ops.reshape(values, [-1])
        value_range = ops.convert_to_tensor(value_range, name="value_range")
        nbins_t = ops.convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        check = control_flow_ops.Assert(math_ops.greater(nbins_t, 0), [f"nbins {nbins_t} must > 0"])
        nbins_t = control_flow_ops.with_dependencies([check], nbins_t)
        nbins_float = math_ops.cast(nbins_t, values.dtype)
        scaled_values = math_ops.truediv(values - value_range[0], value_range[1] - value_range[0],
                                         name="scaled_values")
        indices = math_ops.floor(nbins_float * scaled_values, name="indices")
        indices = math_ops.cast(clip_ops.clip_by_value(indices, 0, nbins_float - 1), dtypes.int32)
        out = array_ops.reshape(indices, shape)
        out.set_shape(static_shape)
        return out


def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims`` (op ``UnravelIndex``)."""
    with ops.name_scope(name, "UnravelIndex", [indices, dims]) as scope:
        i = ops.convert_to_tensor(indices, name="indices")
        d = ops.convert_to_tensor(dims, dtype=i.dtype, name="dims")
        return make("UnravelIndex", [i, d], {}, scope)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the spatial dims after the batch by ``paddings`` and moves each ``block_shape`` block of
    positions into the batch (op ``SpaceToBatchND``)."""
    with ops.name_scope(name, "SpaceToBatchND", [input, block_shape, paddings]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        b = _int_tensor(block_shape, "block_shape")
        p = _int_tensor(paddings, "paddings")
        return make("SpaceToBatchND", [x, b, p], {}, scope)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """Moves batch blocks back into the spatial dims and crops them by ``crops`` (op ``BatchToSpaceND``),
    the inverse of ``space_to_batch_nd``."""
    with ops.name_scope(name, "BatchToSpaceND", [input, block_shape, crops]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        b = _int_tensor(block_shape, "block_shape")
        c = _int_tensor(crops, "crops")
        return make("BatchToSpaceND", [x, b, c], {}, scope)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """``space_to_batch_nd`` of a 4-D ``input`` with a square ``block_size`` block."""
    block_size = _lookup("block_shape", block_shape, "block_size", block_size)
    result = space_to_batch_nd(input, paddings=paddings,
                               block_shape=np.array([block_size, block_size], dtype=np.int64), name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """``batch_to_space_nd`` of a 4-D ``input`` with a square ``block_size`` block."""
    block_size = _lookup("block_shape", block_shape, "block_size", block_size)
    result = batch_to_space_nd(input, crops=crops,
                               block_shape=np.array([block_size, block_size], dtype=np.int64), name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """The paddings (and crops) that make each spatial dim of ``input_shape`` plus ``base_paddings`` a
    multiple of ``block_shape``: returns ``(paddings, crops)``, both int32 ``[M, 2]``."""
    with ops.name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = ops.convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = ops.convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if not block_shape.shape.is_fully_defined():
            raise ValueError(f"Shape {block_shape.shape} is not fully defined")
        if block_shape.shape.ndims != 1:
            raise ValueError(f"Shape {block_shape.shape} must have rank 1")
        num_block_dims = block_shape.shape.as_list()[0]
        if num_block_dims == 0:
            return (array_ops.zeros([0, 2], dtypes.int32), array_ops.zeros([0, 2], dtypes.int32))
        if not input_shape.shape.is_compatible_with([num_block_dims]):
            raise ValueError(f"Shapes {input_shape.shape} and {[num_block_dims]} are incompatible")
        if base_paddings is not None:
            base_paddings = ops.convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
            if not base_paddings.shape.is_compatible_with([num_block_dims, 2]):
                raise ValueError(f"Shapes {base_paddings.shape} and {[num_block_dims, 2]} are incompatible")
        else:
            base_paddings = array_ops.zeros([num_block_dims, 2], dtypes.int32)
        const_block = tensor_util.constant_value(block_shape)
        const_input = tensor_util.constant_value(input_shape)
        const_base = tensor_util.constant_value(base_paddings)
        if const_block is not None and const_input is not None and const_base is not None:
            block_shape, input_shape, base_paddings = const_block, const_input, const_base
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        result_paddings = array_ops.stack([[pad_start[i], pad_end[i]] for i in range(num_block_dims)],
                                          name="paddings")
        result_crops = array_ops.stack([[0, pad_end_extra[i]] for i in range(num_block_dims)], name="crops")
        return result_paddings, result_crops


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """Every ``ksizes`` window of a ``[batch, planes, rows, cols, depth]`` volume, stepped by ``strides``,
    flattened into the depth (op ``ExtractVolumePatches``; ``SAME`` windows over the border read zeros)."""
    ksizes, strides = list(ksizes), list(strides)
    for what, v in (("ksizes", ksizes), ("strides", strides)):
        if len(v) < 5:
            raise ValueError(f"Attr '{what}' of 'ExtractVolumePatches' Op passed list of length {len(v)} less "
                             "than minimum 5.")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed values: "
                         "\"SAME\", \"VALID\"")
    with ops.name_scope(name, "ExtractVolumePatches", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {"ksizes": [int(k) for k in ksizes], "strides": [int(s) for s in strides], "padding": padding}
        return make("ExtractVolumePatches", [x], attrs, scope)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences of two SparseTensors (grouped by all but their last
    index), divided by the truth's length when ``normalize`` (op ``EditDistance``)."""
    sparse_types = (sparse_tensor.SparseTensor, sparse_tensor.SparseTensorValue)
    if not isinstance(hypothesis, sparse_types):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, sparse_types):
        raise TypeError("Truth must be a SparseTensor.")
    h = sparse_tensor.convert_to_tensor_or_sparse_tensor(hypothesis) \
        if isinstance(hypothesis, sparse_tensor.SparseTensorValue) else hypothesis
    t = sparse_tensor.convert_to_tensor_or_sparse_tensor(truth) \
        if isinstance(truth, sparse_tensor.SparseTensorValue) else truth
    inputs = [h.indices, h.values, h.dense_shape, t.indices, t.values, t.dense_shape]
    return make("EditDistance", inputs, {"normalize": bool(normalize)}, name)


def identity_n(input, name=None):  # noqa: A002
    """The tensors of the list ``input``, each unchanged (op ``IdentityN``; gradients pass through)."""
    tensors = [ops.convert_to_tensor(x) for x in input]
    op = make_op("IdentityN", tensors, {"T": ("list_type", [x.dtype.as_datatype_enum for x in tensors])},
                 name or "IdentityN")
    return list(op.outputs)


def ensure_shape(x, shape, name=None):
    """``x``, with its static shape merged with ``shape``; at run time fails with InvalidArgumentError when
    ``x``'s shape is not compatible with ``shape`` (op ``EnsureShape``)."""
    if not isinstance(shape, tensor_shape.TensorShape):
        shape = tensor_shape.TensorShape(shape)
    with ops.name_scope(name, "EnsureShape", [x]) as scope:
        xt = ops.convert_to_tensor(x, name="x")
        return make("EnsureShape", [xt], {"shape": shape_attr(shape)}, scope)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast shape of two shape vectors, as a tensor (op ``BroadcastArgs``)."""
    sx = ops.convert_to_tensor(shape_x, name="shape_x")
    sy = ops.convert_to_tensor(shape_y, dtype=sx.dtype, name="shape_y")
    return make("BroadcastArgs", [sx, sy], {}, None)


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast shape of two ``TensorShape``s (unknown dims stay unknown unless the other is > 1)."""
    shape_x = tensor_shape.as_shape(shape_x)
    shape_y = tensor_shape.as_shape(shape_y)
    if shape_x.ndims is None or shape_y.ndims is None:
        return tensor_shape.unknown_shape()
    one = tensor_shape.Dimension(1)
    pairs = reversed(list(itertools.zip_longest(reversed(shape_x.dims), reversed(shape_y.dims), fillvalue=one)))
    dims = []
    for dx, dy in pairs:
        vx, vy = tensor_shape.dimension_value(dx), tensor_shape.dimension_value(dy)
        if vx is None or vy is None:
            if vx is not None and vx > 1:
                dims.append(vx)
            elif vy is not None and vy > 1:
                dims.append(vy)
            else:
                dims.append(None)
        elif vx == 1:
            dims.append(vy)
        elif vy == 1 or vx == vy:
            dims.append(vx)
        else:
            raise ValueError("Incompatible shapes for broadcasting. Two shapes are compatible if for each "
                             "dimension pair they are either equal or one of them is 1. "
                             f"Received: {shape_x} and {shape_y}.")
    return tensor_shape.TensorShape(dims)
