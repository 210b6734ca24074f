"""The functions of ``tf.ragged`` (TensorFlow 1.x's ``tf.compat.v1.ragged``): building ragged tensors from
nested lists, ragged placeholders, ``range``, feature crosses, segment ids and row splits, masking,
stacking and partitioning, and ``map_flat_values``.

The native ops are TensorFlow's ``RaggedRange`` and ``RaggedCross``; the rest is built from ordinary ops.
Row gathers (``_gather_rows``) take the value ranges of the chosen rows with ``RaggedRange``, the way
TensorFlow's own ragged gather does, so they work at any ragged rank.
"""

from __future__ import annotations

import builtins

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import array_ops, check_ops, math_ops
from ferroflow.ops._op_util import make_op, type_attr
from ferroflow.ops.array_ops_extra import argsort
from ferroflow.ops.ragged import RaggedTensor, RaggedTensorValue, is_ragged, rowids_from_splits
from ferroflow.ops.segment_ops import unsorted_segment_sum

__all__ = [
    "boolean_mask", "constant", "constant_value", "convert_to_tensor_or_ragged_tensor", "cross", "cross_hashed",
    "map_flat_values", "placeholder", "range", "row_splits_to_segment_ids", "segment_ids_to_row_splits",
    "stack", "stack_dynamic_partitions",
]

_DEFAULT_CROSS_HASH_KEY = 0xDECAFCAFFE
_INDEX = (dtypes.int32, dtypes.int64)


# ----------------------------------------------------------------- conversion


def convert_to_tensor_or_ragged_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """A RaggedTensor stays one, a fetched RaggedTensorValue becomes constants, anything else a Tensor."""
    if isinstance(value, RaggedTensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                             f"RaggedTensor with dtype {value.dtype.name}: {value}")
        return value
    if isinstance(value, RaggedTensorValue):
        with ops.name_scope(name, "ConvertToTensorOrRaggedTensor", []):
            flat = ops.convert_to_tensor(value.flat_values, dtype=dtype, name="flat_values",
                                         preferred_dtype=preferred_dtype)
            splits = [constant_op.constant(s, name="row_splits") for s in value.nested_row_splits]
            return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)
    return ops.convert_to_tensor(value, dtype=dtype, name=name, preferred_dtype=preferred_dtype)


def _match_row_splits_dtypes(*values):
    """The inputs with one row-splits dtype: int64 when they differ (TensorFlow refuses the mix unless told
    to cast; ferroflow raises its ValueError)."""
    kinds = {v.row_splits.dtype for v in values if isinstance(v, RaggedTensor)}
    if len(kinds) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes.")
    return (kinds.pop() if kinds else dtypes.int64), list(values)


def _splits_from_lengths(lengths):
    zero = array_ops.zeros([1], dtype=lengths.dtype)
    return array_ops.concat([zero, math_ops.cumsum(lengths)], 0)


# ----------------------------------------------------------------- constant / constant_value


def _is_nested(x):
    return isinstance(x, (list, tuple)) or np.ndim(x) != 0


def _depths(pylist):
    """(depth of the scalars or None when there are none, depth of the deepest list, empty lists included)."""
    if not _is_nested(pylist):
        return 0, 0
    scalar, deepest = None, 1
    for child in pylist:
        s, d = _depths(child)
        if s is not None:
            if scalar is not None and scalar != s + 1:
                raise ValueError("all scalar values must have the same nesting depth")
            scalar = s + 1
        deepest = max(deepest, d + 1)
    return scalar, deepest


def _inferred_inner_shape(pylist, ragged_rank):
    """The uniform shape of the items left after peeling ``ragged_rank`` list levels off ``pylist``."""
    items = pylist
    for level in builtins.range(ragged_rank):
        if not all(_is_nested(v) for v in items):
            raise ValueError(f"pylist has scalar values depth {level + 1}, but ragged_rank={ragged_rank} "
                             f"requires scalar value depth greater than {ragged_rank}")
        items = [x for v in items for x in v]

    def shape_of(item):
        if not _is_nested(item):
            return ()
        return (len(item),) + shape_of(item[0]) if len(item) else (0,)

    def check(item, shape):
        if _is_nested(item) != bool(shape):
            raise ValueError("inner values have inconsistent shape")
        if shape:
            if len(item) != shape[0]:
                raise ValueError("inner values have inconsistent shape")
            for child in item:
                check(child, shape[1:])

    shape = shape_of(items)
    check(items, shape)
    return shape[1:]


def _build_constant(make_ragged, make_inner, pylist, dtype, ragged_rank, inner_shape):
    """The shared logic of ``constant`` and ``constant_value`` (TensorFlow's rules for the ragged rank and
    inner shape of a nested list)."""
    if is_ragged(pylist):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
        if ragged_rank is not None and ragged_rank != 0:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
        if inner_shape:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with dim(inner_shape)={len(inner_shape)}")
        return make_inner(pylist, dtype, ())
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
    scalar_depth, max_depth = _depths(pylist)
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise ValueError(f"Invalid pylist={pylist!r}: empty list nesting is greater than scalar value nesting")
        if ragged_rank is not None and max_depth < ragged_rank:
            raise ValueError(f"Invalid pylist={pylist}, max depth smaller than ragged_rank={ragged_rank}")
    if inner_shape is not None and ragged_rank is not None:
        want = ragged_rank + len(inner_shape) + 1
        if (scalar_depth is not None and want != scalar_depth) or (scalar_depth is None and want < max_depth):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank} and "
                             f"dim(inner_shape)={len(inner_shape)}")
    dense = ragged_rank == 0 or (ragged_rank is None and (
        max_depth < 2 or (inner_shape is not None and max_depth - len(inner_shape) < 2)))
    if dense:
        return make_inner(pylist, dtype, inner_shape)
    if inner_shape is None:
        inner_shape = () if ragged_rank is None else _inferred_inner_shape(pylist, ragged_rank)
    inner_shape = tuple(inner_shape)
    if ragged_rank is None:
        depth = max_depth if scalar_depth is None else scalar_depth - len(inner_shape)
        ragged_rank = max(1, depth - 1)
    levels = []
    items = list(pylist)
    for _ in builtins.range(ragged_rank):
        splits = [0]
        flat = []
        for row in items:
            flat.extend(row)
            splits.append(splits[-1] + len(row))
        levels.append(splits)
        items = flat
    result = make_inner(items, dtype, (len(items),) + inner_shape, name="values")
    for splits in reversed(levels):
        result = make_ragged(result, splits)
    return result


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):
    """A constant RaggedTensor (or a Tensor, for ragged rank 0) holding the nested list ``pylist``.

    The scalars must all sit at one depth K (the rank); ``ragged_rank`` defaults to K - 1 less the
    ``inner_shape`` dimensions, and the values to ``dtype`` (inferred when None; float32 for no scalars).
    """
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if splits_dtype not in _INDEX:
        raise ValueError(f"row_splits_dtype must be int32 or int64, got {splits_dtype.name}")

    def make_ragged(values, splits):
        return RaggedTensor.from_row_splits(values, constant_op.constant(splits, dtype=splits_dtype),
                                            validate=False)

    def make_inner(values, dtype, shape, name=None):
        if dtype is None and shape and 0 in tuple(shape) and not np.size(np.asarray(values, dtype=object)):
            dtype = dtypes.float32
        return constant_op.constant(values, dtype=dtype, shape=shape, name=name or "Const")

    with ops.name_scope(name, "RaggedConstant"):
        return _build_constant(make_ragged, make_inner, pylist, dtype, ragged_rank, inner_shape)


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None, row_splits_dtype="int64"):
    """Like ``constant`` but in NumPy: a ``RaggedTensorValue`` (or an ndarray for ragged rank 0)."""
    if isinstance(dtype, dtypes.DType):
        dtype = dtype.as_numpy_dtype
    splits_np = dtypes.as_dtype(row_splits_dtype).as_numpy_dtype

    def make_ragged(values, splits):
        return RaggedTensorValue(values, np.array(splits, dtype=splits_np))

    def make_inner(values, dtype, shape, name=None):
        if dtype is None or dtype is object:
            arr = np.array(values, dtype=dtype)
        else:
            arr = np.array(values).astype(dtype)
        return arr if shape is None else arr.reshape(shape)

    return _build_constant(make_ragged, make_inner, pylist, dtype, ragged_rank, inner_shape)


# ----------------------------------------------------------------- placeholder


def placeholder(dtype, ragged_rank, value_shape=None, name=None):
    """A RaggedTensor of placeholders (``flat_values`` and int64 ``row_splits_<i>``), fed with a
    ``RaggedTensorValue``; ``ragged_rank=0`` gives a plain placeholder of shape ``value_shape``."""
    if ragged_rank == 0:
        return array_ops.placeholder(dtype, value_shape, name)
    with ops.name_scope(name, "RaggedPlaceholder", []):
        flat_shape = TensorShape([None]).concatenate(value_shape)
        result = array_ops.placeholder(dtype, flat_shape, "flat_values")
        for i in reversed(builtins.range(ragged_rank)):
            splits = array_ops.placeholder(dtypes.int64, [None], f"row_splits_{i}")
            result = RaggedTensor.from_row_splits(result, splits, validate=False)
        return result


# ----------------------------------------------------------------- range


def _ragged_range_op(starts, limits, deltas, splits_dtype, name=None):
    op = make_op("RaggedRange", [starts, limits, deltas],
                 {"T": type_attr(starts.dtype), "Tsplits": type_attr(splits_dtype)}, name=name or "RaggedRange")
    return op.outputs[0], op.outputs[1]


def range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=dtypes.int64):  # noqa: A001
    """Row ``i`` is ``range(starts[i], limits[i], deltas[i])`` (scalars repeat for every row; with one
    argument it is the limit and the start is 0). The dtype is inferred as the widest of int32 < int64 <
    float32 < float64 among the three when ``dtype`` is None."""
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if limits is None:
        starts, limits = 0, starts
    with ops.name_scope(name, "RaggedRange", [starts, limits, deltas]) as scope:
        parts = [ops.convert_to_tensor(v, dtype=dtype, name=n)
                 for v, n in zip((starts, limits, deltas), ("starts", "limits", "deltas"))]
        if dtype is None:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            for t in parts:
                if t.dtype.base_dtype not in order:
                    raise TypeError(f"tf.ragged.range: {t.name} has dtype {t.dtype.name}; expected int32, int64, "
                                    "float32 or float64")
            widest = max((t.dtype.base_dtype for t in parts), key=order.index)
            parts = [math_ops.cast(t, widest) for t in parts]
        splits, values = _ragged_range_op(*parts, splits_dtype, name=scope)
        return RaggedTensor.from_row_splits(values, splits, validate=False)


# ----------------------------------------------------------------- segment ids and row splits


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of every value of a ragged tensor with these ``row_splits`` (``[0, 2, 3]`` -> ``[0, 0, 1]``)."""
    with ops.name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = ops.convert_to_tensor(splits, name="splits", preferred_dtype=dtypes.int64)
        if splits.dtype.base_dtype not in _INDEX:
            raise ValueError("splits must have dtype int32 or int64")
        splits.shape.assert_has_rank(1)
        if splits.shape[0].value == 0:
            raise ValueError("Invalid row_splits: []")
        out_type = splits.dtype.base_dtype if out_type is None else dtypes.as_dtype(out_type)
        return rowids_from_splits(splits, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """The ``row_splits`` of rows holding each segment id's values: ``[0, 0, 1, 3]`` -> ``[0, 2, 3, 3, 4]``
    (``num_segments`` rows when given, else one more than the largest id)."""
    if out_type is None:
        if isinstance(segment_ids, ops.Tensor):
            out_type = segment_ids.dtype.base_dtype
        elif isinstance(num_segments, ops.Tensor):
            out_type = num_segments.dtype.base_dtype
        else:
            out_type = dtypes.int64
    else:
        out_type = dtypes.as_dtype(out_type)
    from ferroflow.ops.special_math_ops import bincount

    with ops.name_scope(name, "SegmentIdsToRaggedSplits", [segment_ids]):
        ids = _int_tensor(segment_ids, "segment_ids")
        ids.shape.assert_has_rank(1)
        if num_segments is not None:
            num_segments = _int_tensor(num_segments, "num_segments")
            num_segments.shape.assert_has_rank(0)
        lengths = bincount(ids, minlength=num_segments, maxlength=num_segments, dtype=out_type)
        splits = array_ops.concat([constant_op.constant([0], dtype=out_type), math_ops.cumsum(lengths)], 0)
        if num_segments is not None:
            from ferroflow.framework.tensor_util import constant_value as static_value

            n = static_value(num_segments)
            if n is not None:
                splits.set_shape([int(n) + 1])
        return splits


def _int_tensor(value, name, dtype=dtypes.int32):
    t = ops.convert_to_tensor(value, name=name, preferred_dtype=dtype)
    if t.dtype.base_dtype not in _INDEX:
        raise TypeError(f"{name} must be an int32 or int64 tensor, got {t.dtype.name}")
    return t


# ----------------------------------------------------------------- map_flat_values


def _swap_ragged(value, partitions, nrows):
    if is_ragged(value):
        value = convert_to_tensor_or_ragged_tensor(value)
        partitions.append(value.nested_row_splits)
        n = value.flat_values.shape[0].value if value.flat_values.shape.ndims else None
        if n is not None:
            nrows.append(n)
        return value.flat_values
    if isinstance(value, list):
        return [_swap_ragged(v, partitions, nrows) for v in value]
    if isinstance(value, tuple):
        return tuple(_swap_ragged(v, partitions, nrows) for v in value)
    if isinstance(value, dict):
        return {k: _swap_ragged(v, partitions, nrows) for k, v in value.items()}
    return value


def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the ``flat_values`` of the ragged arguments (in lists, tuples and dicts too), its
    result given their row partition; without ragged arguments, ``op(*args, **kwargs)``."""
    partitions, nrows = [], []
    inner_args = _swap_ragged(args, partitions, nrows)
    inner_kwargs = _swap_ragged(kwargs, partitions, nrows)
    if not partitions:
        return op(*args, **kwargs)
    sizes = set(nrows)
    if len(sizes) > 1:
        raise ValueError("Input RaggedTensors' flat_values must all have the same outer-dimension size.  "
                         f"Got sizes: {sizes}")
    if len({p[0].dtype for p in partitions}) > 1:
        raise ValueError("Input RaggedTensors have mismatched row partition dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes.")
    if any(len(p) != len(partitions[0]) for p in partitions):
        raise ValueError("All ragged inputs must have the same ragged_rank.")
    out = op(*inner_args, **inner_kwargs)
    if sizes:
        want = sizes.pop()
        if not out.shape[:1].is_compatible_with([want]):
            raise ValueError("tf.ragged.map_flat_values requires that the output of `op` have the same "
                             "outer-dimension size as flat_values of any ragged inputs. "
                             f"(output shape: {out.shape}; expected outer dimension size: {want})")
    return RaggedTensor.from_nested_row_splits(out, partitions[0], validate=False)


# ----------------------------------------------------------------- cross


def _cross(inputs, hashed, num_buckets, hash_key, name):
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    if hash_key is None:
        hash_key = _DEFAULT_CROSS_HASH_KEY
    ragged, sparse, dense, order = [], [], [], []
    with ops.name_scope(name, "RaggedCross", []) as scope:
        for i, t in enumerate(inputs):
            if isinstance(t, SparseTensorValue):
                t = SparseTensor.from_value(t)
            elif not isinstance(t, SparseTensor):
                t = convert_to_tensor_or_ragged_tensor(t)
            if t.dtype.is_integer:
                t = _cast_any(t, dtypes.int64)
            elif t.dtype != dtypes.string:
                raise ValueError(f"Unexpected dtype for inputs[{i}]: {t.dtype}")
            if isinstance(t, RaggedTensor):
                if t.ragged_rank != 1:
                    raise ValueError("tf.ragged.cross only supports inputs with rank=2")
                ragged.append(t)
                order.append("R")
            elif isinstance(t, SparseTensor):
                sparse.append(t)
                order.append("S")
            else:
                dense.append(t)
                order.append("D")
        out_values = dtypes.int64 if hashed else dtypes.string
        out_splits = dtypes.int32 if ragged and all(r.row_splits.dtype == dtypes.int32 for r in ragged) \
            else dtypes.int64
        if hash_key > 2**63:
            hash_key -= 2**64

        def types(ts):
            return ("list_type", [t.dtype.as_datatype_enum for t in ts])

        r_values = [r.values for r in ragged]
        inputs_flat = (r_values + [r.row_splits for r in ragged] + [s.indices for s in sparse]
                       + [s.values for s in sparse] + [s.dense_shape for s in sparse] + dense)
        attrs = {
            "Nsparse": len(sparse),
            "input_order": "".join(order),
            "hashed_output": bool(hashed),
            "num_buckets": int(num_buckets),
            "hash_key": int(hash_key),
            "ragged_values_types": types(r_values),
            "ragged_splits_types": types([r.row_splits for r in ragged]),
            "sparse_values_types": types([s.values for s in sparse]),
            "dense_types": types(dense),
            "out_values_type": type_attr(out_values),
            "out_row_splits_type": type_attr(out_splits),
        }
        op = make_op("RaggedCross", inputs_flat, attrs, name=scope)
        return RaggedTensor.from_row_splits(op.outputs[0], op.outputs[1], validate=False)


def _cast_any(t, dtype):
    if t.dtype == dtype:
        return t
    if isinstance(t, RaggedTensor):
        return t.with_flat_values(math_ops.cast(t.flat_values, dtype))
    if isinstance(t, SparseTensor):
        return SparseTensor(t.indices, math_ops.cast(t.values, dtype), t.dense_shape)
    return math_ops.cast(t, dtype)


def cross(inputs, name=None):
    """The feature cross of rank-2 ragged, sparse or dense ``inputs`` (strings or ints): for each row,
    every combination of one value per input, joined with ``"_X_"``, the last input varying fastest."""
    return _cross(inputs, False, 0, None, name)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Like ``cross`` but each combination is fingerprinted (TensorFlow's ``FingerprintCat64`` chain from
    ``hash_key``; strings by their FarmHash ``Fingerprint64``, ints as they are) and taken modulo
    ``num_buckets`` when it is positive: int64 values."""
    return _cross(inputs, True, num_buckets, hash_key, name)


# ----------------------------------------------------------------- row gathers


def _gather_rows(value, indices):
    """Rows ``indices`` of a Tensor or RaggedTensor (a ragged result keeps the row-splits dtype)."""
    if not isinstance(value, RaggedTensor):
        return array_ops.gather(value, indices)
    splits = value.row_splits
    indices = math_ops.cast(indices, splits.dtype)
    starts = array_ops.gather(splits[:-1], indices)
    limits = array_ops.gather(splits[1:], indices)
    new_splits, positions = _ragged_range_op(starts, limits, array_ops.ones_like(starts), splits.dtype)
    return RaggedTensor.from_row_splits(_gather_rows(value.values, positions), new_splits, validate=False)


def ragged_gather(params, indices):
    """``tf.gather(params, indices)`` along axis 0 where either is ragged: rows of ``params`` (whole, at any
    ragged rank; TensorFlow's ``RaggedGather`` op), nested as ``indices`` are (its dimensions become the result's
    outer ones)."""
    _match_row_splits_dtypes(params, indices)
    if isinstance(indices, RaggedTensor):
        return indices.with_values(ragged_gather(params, indices.values))
    if indices.dtype.base_dtype not in _INDEX:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if not isinstance(params, RaggedTensor):
        return array_ops.gather(params, indices)
    rank = indices.shape.ndims
    if rank is None:
        raise ValueError("rank(indices) must be known statically")
    splits = list(params.nested_row_splits)
    out_rank = rank + len(splits) - 1
    op = make_op("RaggedGather", splits + [params.flat_values, indices], {
        "Tvalues": type_attr(params.dtype),
        "Tindices": type_attr(indices.dtype),
        "Tsplits": type_attr(splits[0].dtype),
        "PARAMS_RAGGED_RANK": len(splits),
        "OUTPUT_RAGGED_RANK": out_rank,
    }, name="RaggedGather")
    return RaggedTensor.from_nested_row_splits(op.outputs[-1], op.outputs[:-1], validate=False)


# ----------------------------------------------------------------- boolean_mask


def boolean_mask(data, mask, name=None):
    """The entries of ``data`` where ``mask`` (a prefix of its shape, dense or ragged) is True, keeping the
    mask's dimensions: masking a ``[B, T]`` tensor with a ``[B, T]`` mask gives ``B`` ragged rows."""
    with ops.name_scope(name, "RaggedMask", [data, mask]):
        data = convert_to_tensor_or_ragged_tensor(data, name="data")
        mask = convert_to_tensor_or_ragged_tensor(mask, dtypes.bool, name="mask")
        splits_dtype, _ = _match_row_splits_dtypes(data, mask)
        ndims = mask.shape.ndims
        if ndims is None:
            raise ValueError("mask.shape.ndims must be known statically.")
        if ndims == 0:
            raise ValueError("mask cannot be scalar.")
        if isinstance(mask, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                data = RaggedTensor.from_tensor(data, ragged_rank=mask.ragged_rank, row_splits_dtype=splits_dtype)
            checks = [check_ops.assert_equal(m, d, message="Inputs must have identical ragged splits")
                      for m, d in zip(mask.nested_row_splits, data.nested_row_splits)]
            with ops.control_dependencies(checks):
                levels = []
                while isinstance(mask, RaggedTensor):
                    if isinstance(mask.values, RaggedTensor):
                        levels.append(mask.row_splits)
                    else:
                        kept = math_ops.cast(mask.values, splits_dtype)
                        lengths = unsorted_segment_sum(kept, mask.value_rowids(), mask.nrows())
                        levels.append(_splits_from_lengths(lengths))
                    mask, data = mask.values, data.values
                return RaggedTensor.from_nested_row_splits(boolean_mask(data, mask), levels, validate=False)
        if isinstance(data, RaggedTensor):
            if ndims == 1:
                lengths = array_ops.boolean_mask(data.row_lengths(), mask)
                keep = array_ops.gather(mask, data.value_rowids())
                return RaggedTensor.from_row_splits(boolean_mask(data.values, keep), _splits_from_lengths(lengths),
                                                    validate=False)
            mask = RaggedTensor.from_tensor(mask, ragged_rank=min(data.ragged_rank, ndims - 1),
                                            row_splits_dtype=splits_dtype)
            return boolean_mask(data, mask)
        kept = array_ops.boolean_mask(data, mask)
        if ndims == 1:
            return kept
        counts = math_ops.count_nonzero(mask, axis=-1, dtype=splits_dtype)
        result = RaggedTensor.from_row_lengths(kept, array_ops.reshape(counts, [-1]), validate=False)
        # The leading mask dimensions stay uniform: rows of rows of fixed length.
        shape = array_ops.shape(mask, out_type=splits_dtype)
        for axis in builtins.range(ndims - 2, 0, -1):
            nouter = math_ops.reduce_prod(shape[:axis])
            width = shape[axis]
            result = RaggedTensor.from_row_splits(result, array_ops.range(nouter + 1) * width, validate=False)
        return result


# ----------------------------------------------------------------- stack / concat


def _to_ragged_rank(rt, ragged_rank, splits_dtype):
    """``rt`` with its dense inner dimensions turned ragged down to ``ragged_rank``."""
    if rt.ragged_rank >= ragged_rank:
        return rt
    if rt.ragged_rank == ragged_rank - 1 and not isinstance(rt.values, RaggedTensor):
        return rt.with_values(RaggedTensor.from_tensor(rt.values, ragged_rank=1, row_splits_dtype=splits_dtype))
    return rt.with_values(_to_ragged_rank(rt.values, ragged_rank - 1, splits_dtype))


def _concat_axis0(rts):
    """The rows of every ragged input, in order (same ragged rank)."""
    if not isinstance(rts[0], RaggedTensor):
        return array_ops.concat(rts, 0)
    pieces = []
    offset = None
    for rt in rts:
        s = rt.row_splits
        if offset is None:
            pieces.append(s)
        else:
            pieces.append(s[1:] + offset)
        offset = (s[-1] if offset is None else offset + s[-1])
    splits = array_ops.concat(pieces, 0)
    return RaggedTensor.from_row_splits(_concat_axis0([rt.values for rt in rts]), splits, validate=False)


def _stack_or_concat(rts, axis, stack_values):
    n = len(rts)
    if axis == 0:
        joined = _concat_axis0(rts)
        if not stack_values:
            return joined
        counts = array_ops.stack([rt.nrows() for rt in rts])
        return RaggedTensor.from_row_splits(joined, _splits_from_lengths(counts), validate=False)
    if axis == 1:
        # Row r of the result is made of row r of every input: gather the rows of the inputs' concatenation
        # in (row, input) order, then group them n at a time.
        joined = _concat_axis0(rts)
        nrows = rts[0].nrows()
        dt = nrows.dtype
        order = array_ops.reshape(array_ops.transpose(array_ops.reshape(
            math_ops.range(nrows * n, dtype=dt), array_ops.stack([constant_op.constant(n, dt), nrows]))), [-1])
        rows = _gather_rows(joined, order)
        grouped = math_ops.range(nrows + 1, dtype=dt) * n
        if stack_values:
            return RaggedTensor.from_row_splits(rows, grouped, validate=False)
        return RaggedTensor.from_row_splits(rows.values, array_ops.gather(rows.row_splits, grouped), validate=False)
    checks = [check_ops.assert_equal(rts[0].row_splits, rt.row_splits,
                                     message="Input tensors at index 0 (=x) and ... have incompatible shapes.")
              for rt in rts[1:]]
    with ops.control_dependencies(checks):
        inner = _stack_or_concat([rt.values for rt in rts], axis - 1, stack_values)
        return RaggedTensor.from_row_splits(inner, rts[0].row_splits, validate=False)


def _stack_or_concat_values(values, axis, stack_values, name, scope_name):
    if not isinstance(values, (list, tuple)):
        values = [values]
    with ops.name_scope(name, scope_name, values):
        if not values:
            raise ValueError("rt_inputs may not be empty.")
        rts = [convert_to_tensor_or_ragged_tensor(v, name=f"rt_input_{i}") for i, v in enumerate(values)]
        splits_dtype, rts = _match_row_splits_dtypes(*rts)
        if len(rts) == 1 and not stack_values:
            return rts[0]
        ndims = rts[0].shape.ndims
        for rt in rts[1:]:
            if ndims is not None and rt.shape.ndims is not None and rt.shape.ndims != ndims:
                raise ValueError(f"Shape {rt.shape} must have rank {ndims}")
        out_ndims = ndims if (ndims is None or not stack_values) else ndims + 1
        if out_ndims is not None:
            if not -out_ndims <= axis < out_ndims:
                raise ValueError(f"axis={axis} out of bounds: expected {-out_ndims}<=axis<{out_ndims}")
            if axis < 0:
                axis += out_ndims
        elif axis < 0:
            raise ValueError("axis may only be negative if ndims is statically known.")
        if stack_values and ndims == 1 and axis == 0:
            lengths = array_ops.concat([array_ops.shape(r) for r in rts], 0)  # int32 splits, as TensorFlow's
            return RaggedTensor.from_row_lengths(array_ops.concat(rts, 0), lengths, validate=False)
        if all(not isinstance(rt, RaggedTensor) for rt in rts):
            if ndims is not None and axis in (out_ndims - 1, ndims - 1):
                return array_ops.stack(rts, axis) if stack_values else array_ops.concat(rts, axis)
        rts = [rt if isinstance(rt, RaggedTensor) else
               RaggedTensor.from_tensor(rt, ragged_rank=1, row_splits_dtype=splits_dtype) for rt in rts]
        ragged_rank = max(max(rt.ragged_rank for rt in rts), 1)
        rts = [_to_ragged_rank(rt, ragged_rank, splits_dtype) for rt in rts]
        return _stack_or_concat(rts, axis, stack_values)


def stack(values, axis=0, name=None):
    """Stacks ragged or dense tensors of one rank along a new ``axis`` (a RaggedTensor unless all inputs are
    dense and ``axis`` is one of the last two)."""
    return _stack_or_concat_values(values, axis, True, name, "RaggedConcat")


def concat(values, axis, name=None):
    """Concatenates ragged or dense tensors of one rank along ``axis``."""
    return _stack_or_concat_values(values, axis, False, name, "RaggedConcat")


# ----------------------------------------------------------------- stack_dynamic_partitions


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row ``p`` of the result holds the items of ``data`` whose partition (``partitions``, a prefix of
    ``data``'s shape, dense or ragged) is ``p``, in their order; ``num_partitions`` rows."""
    with ops.name_scope(name, "SegmentStack", [data, partitions, num_partitions]):
        data = convert_to_tensor_or_ragged_tensor(data, name="data")
        splits_dtype = data.row_splits.dtype if isinstance(data, RaggedTensor) else None
        partitions = convert_to_tensor_or_ragged_tensor(partitions, name="partitions", preferred_dtype=splits_dtype)
        num_partitions = ops.convert_to_tensor(num_partitions, name="num_partitions",
                                               preferred_dtype=partitions.dtype)
        if splits_dtype is not None:
            partitions = _cast_any(partitions, splits_dtype)
        num_partitions = math_ops.cast(num_partitions, partitions.dtype)
        rank = partitions.shape.ndims
        if rank is None:
            raise ValueError("partitions must have known rank.")
        num_partitions.shape.assert_has_rank(0)
        partitions.shape.assert_is_compatible_with(data.shape[:rank])
        if rank == 0:
            return RaggedTensor.from_value_rowids(
                array_ops.stack([data]) if not isinstance(data, RaggedTensor) else stack([data]),
                array_ops.stack([partitions]), nrows=num_partitions, validate=False)
        if rank == 1:
            order = argsort(partitions, stable=True)
            rowids = array_ops.gather(partitions, order)
            values = _gather_rows(data, order)
            checks = [
                check_ops.assert_less(rowids[-1:], num_partitions,
                                      message="partitions must be less than num_partitions"),
                check_ops.assert_non_negative(partitions, message="partitions must be non-negative."),
            ]
            with ops.control_dependencies(checks):
                return RaggedTensor.from_value_rowids(values, array_ops.identity(rowids), nrows=num_partitions,
                                                      validate=False)
        if not isinstance(data, RaggedTensor):
            data = RaggedTensor.from_tensor(data, row_splits_dtype=partitions.dtype, ragged_rank=1)
        if not isinstance(partitions, RaggedTensor):
            partitions = RaggedTensor.from_tensor(partitions, row_splits_dtype=partitions.dtype,
                                                  ragged_rank=max(data.ragged_rank, rank - 1))
        check = check_ops.assert_equal(data.row_splits, partitions.row_splits,
                                       message="data and partitions have incompatible ragged shapes")
        with ops.control_dependencies([check]):
            return stack_dynamic_partitions(data.values, partitions.values, num_partitions)

