"""TensorFlow functions that take RaggedTensors, as TensorFlow's ragged dispatch has them: ``tf.concat``,
``tf.stack``, ``tf.gather``, ``tf.where``/``where_v2``, ``tf.cast``, ``zeros_like``/``ones_like``, ``add_n``,
``rank``, ``expand_dims``, ``squeeze``, ``reverse``, ``tile``, the reductions ``reduce_sum/mean/max/min/prod/
any/all``, ``unsorted_segment_sum/max/min/prod`` and ``tf.strings.reduce_join``. ``array_ops``, ``math_ops``,
``segment_ops`` and ``string_ops`` hand their arguments here when one of them is ragged; functions that act on
each value alone use ``_ragged_hook.on_flat_values`` instead. (``tf.compat.v1.boolean_mask`` does not dispatch
in TensorFlow either: ``tf.ragged.boolean_mask`` masks ragged tensors.)

Reductions follow TensorFlow's ragged semantics: over a ragged dimension the missing items of short rows are
left out (a row with none reduces to the reduction's identity: 0 for sums, the lowest value for ``max``, NaN
for the mean), over the rows (axis 0) the ``i``-th items of all rows reduce together. Reducing a ragged
dimension is a segment reduction of the values below it; when those values are themselves ragged their rows
are summed item by item (``_segment_rows``), so any axis of any ragged rank reduces.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops, segment_ops
from ferroflow.ops.ragged import (
    RaggedTensor,
    broadcast_dense_to_ragged,
    same_splits_checks,
)

__all__ = ["add_n", "cumsum", "concat", "stack", "gather", "where", "cast", "like", "rank", "expand_dims",
           "squeeze", "reverse", "tile", "reduce", "reduce_variance", "reduce_join", "string_join",
           "unsorted_segment"]


def _convert(value, name, dtype=None):
    from ferroflow.ops.ragged_ops import convert_to_tensor_or_ragged_tensor

    return convert_to_tensor_or_ragged_tensor(value, dtype=dtype, name=name)


# ----------------------------------------------------------------- concat / stack


def concat(values, axis, name=None):
    from ferroflow.ops import ragged_ops

    return ragged_ops.concat(values, axis, name=name)


def stack(values, axis=0, name=None):
    from ferroflow.ops import ragged_ops

    return ragged_ops.stack(values, axis=axis, name=name)


# ----------------------------------------------------------------- elementwise


def cast(x, dtype, name=None):
    with ops.name_scope(name, "RaggedCast", []):
        x = _convert(x, "x")
        return x.with_flat_values(array_ops.cast(x.flat_values, dtype))


def like(fn, tensor, dtype=None, name=None):
    """``zeros_like``/``ones_like`` of a ragged tensor: the same rows."""
    with ops.name_scope(name, "RaggedLike", []):
        rt = _convert(tensor, "tensor")
        return rt.with_flat_values(fn(rt.flat_values, dtype=dtype))


def add_n(inputs, name=None):
    """The sum of ragged tensors of one row partition (checked when the graph runs)."""
    with ops.name_scope(name, "RaggedAddN", []):
        rts = [_convert(v, f"inputs_{i}") for i, v in enumerate(inputs)]
        first = rts[0]
        if not all(isinstance(rt, RaggedTensor) and rt.ragged_rank == first.ragged_rank for rt in rts):
            raise ValueError("ferroflow's ragged add_n takes RaggedTensors of one ragged_rank")
        checks = [c for rt in rts[1:] for c in same_splits_checks(first, rt)]
        with ops.control_dependencies(checks):
            flat = [array_ops.identity(rt.flat_values) for rt in rts]
        return first.with_flat_values(math_ops.add_n(flat))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """``tf.math.cumsum`` of a RaggedTensor as TensorFlow computes it: along the innermost ragged dimension
    within each row (a running sum of the flat values less its value at the row's start), along uniform inner
    dimensions on the flat values, and along outer dimensions through the padded dense form."""
    with ops.name_scope(name, "RaggedCumSum", []):
        x = _convert(x, "x")
        rank = x.shape.ndims
        axis = _static_ints(axis, "cumsum")[0]
        if rank is None:
            raise ValueError("ferroflow's ragged cumsum needs a RaggedTensor of known rank")
        if not -rank <= axis < rank:
            raise ValueError(f"axis={axis} out of bounds: expected {-rank}<=axis<{rank}")
        axis %= rank
        if axis > x.ragged_rank:
            return x.with_flat_values(math_ops.cumsum(x.flat_values, axis - x.ragged_rank, exclusive, reverse))
        if axis < x.ragged_rank:
            dense = math_ops.cumsum(x.to_tensor(), axis, exclusive, reverse)
            return RaggedTensor.from_tensor(dense, lengths=x.nested_row_lengths(),
                                            row_splits_dtype=x.row_splits.dtype)
        last = x
        while isinstance(last.values, RaggedTensor):
            last = last.values
        return x.with_flat_values(_cumsum_in_rows(last, x.flat_values, exclusive, reverse))


def _cumsum_in_rows(level, flat, exclusive, reverse):
    if not exclusive:
        return _cumsum_in_rows(level, flat, True, reverse) + flat
    splits, rowids = level.row_splits, level.value_rowids()
    running = math_ops.cumsum(flat, exclusive=True, reverse=reverse)
    if reverse:
        start = array_ops.gather(splits, rowids + 1) - 1  # each row's last value
    else:
        start = array_ops.gather(splits, rowids)  # each row's first value
    return running - array_ops.gather(running, start)


# ----------------------------------------------------------------- shape


def rank(rt, name=None):
    """The rank: the ragged dimensions plus the flat values' rank."""
    with ops.name_scope(name, "RaggedRank", []):
        rt = _convert(rt, "input")
        return math_ops.add(array_ops.rank(rt.flat_values), rt.ragged_rank)


def expand_dims(rt, axis, name=None):
    """A new dimension of size 1 at ``axis`` (uniform rows: 0 makes one row of all rows, 1 a row for each)."""
    with ops.name_scope(name, "RaggedExpandDims", []):
        rt = _convert(rt, "input")
        ndims = rt.shape.ndims
        if isinstance(axis, ops.Tensor):
            from ferroflow.framework.tensor_util import constant_value

            axis = constant_value(axis)
            if axis is None:
                raise ValueError("ferroflow's ragged expand_dims needs a statically known axis")
        axis = int(axis)
        if ndims is None:
            raise ValueError("ferroflow's ragged expand_dims needs a RaggedTensor of known rank")
        if not -(ndims + 1) <= axis <= ndims:
            raise ValueError(f"axis={axis} out of bounds: expected {-(ndims + 1)}<=axis<{ndims + 1}")
        return _expand(rt, axis % (ndims + 1))


def _expand(rt, axis):
    if not isinstance(rt, RaggedTensor):
        return array_ops.expand_dims(rt, axis)
    dt = rt.row_splits.dtype
    nrows = rt.nrows()
    if axis == 0:
        return RaggedTensor.from_row_splits(rt, array_ops.stack([array_ops.zeros([], dt), nrows]), validate=False)
    if axis == 1:
        return RaggedTensor.from_row_splits(rt, math_ops.range(nrows + 1, dtype=dt), validate=False)
    return rt.with_values(_expand(rt.values, axis - 1))


def _static_ints(value, what):
    if isinstance(value, ops.Tensor):
        from ferroflow.framework.tensor_util import constant_value

        got = constant_value(value)
        if got is None:
            raise ValueError(f"ferroflow's ragged {what} needs statically known values")
        value = got.tolist()
    return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def squeeze(rt, axis=None, name=None):
    """Dimensions of size 1 removed: uniform inner ones from the flat values; a ragged one when every row
    at that level holds one item (checked when the graph runs)."""
    with ops.name_scope(name, "RaggedSqueeze", []):
        rt = _convert(rt, "input")
        if axis is None:
            raise ValueError("Ragged.squeeze must have an axis argument.")
        rank = rt.shape.ndims
        axes = sorted({a % rank if rank is not None else a for a in _static_ints(axis, "squeeze")}, reverse=True)
        if 0 in axes:
            raise ValueError("Ragged.squeeze cannot squeeze the rows (axis 0).")
        result = rt
        for a in axes:
            if a > result.ragged_rank:
                result = result.with_flat_values(array_ops.squeeze(result.flat_values, [a - result.ragged_rank]))
                continue
            level = result
            for _ in range(a - 1):
                level = level.values
            from ferroflow.ops.control_flow_ops import Assert

            lengths = level.row_lengths()
            check = Assert(math_ops.reduce_all(math_ops.equal(lengths, 1)),
                           [f"the given axis (axis = {a}) is not squeezable!", "row lengths = ", lengths])
            with ops.control_dependencies([check]):
                result = result.merge_dims(a - 1, a)
                result = result.with_flat_values(array_ops.identity(result.flat_values)) \
                    if isinstance(result, RaggedTensor) else array_ops.identity(result)
        return result


def reverse(rt, axis, name=None):
    """Reversed along each of ``axis``: the order of the rows (0), of each row's items (1), deeper."""
    with ops.name_scope(name, "RaggedReverse", []):
        rt = _convert(rt, "tensor")
        rank = rt.shape.ndims
        result = rt
        for a in _static_ints(axis, "reverse"):
            result = _reverse(result, a % rank if rank is not None else a)
        return result


def _reverse(rt, axis):
    from ferroflow.ops.ragged_ops import _gather_rows

    if not isinstance(rt, RaggedTensor):
        return array_ops.reverse(rt, [axis])
    if axis == 0:
        n = rt.nrows()
        return _gather_rows(rt, math_ops.range(n - 1, -1, -1, dtype=n.dtype))
    if axis == 1:
        splits = rt.row_splits
        rowids = rt.value_rowids()
        count = array_ops.shape(rowids, out_type=splits.dtype)[0]
        mirrored = array_ops.gather(splits[:-1] + splits[1:] - 1, rowids) - math_ops.range(count, dtype=splits.dtype)
        return rt.with_values(_gather_rows(rt.values, mirrored))
    return rt.with_values(_reverse(rt.values, axis - 1))


def tile(rt, multiples, name=None):
    """Each dimension repeated ``multiples[i]`` times: the rows as a whole (0), each row's items (1), deeper."""
    with ops.name_scope(name, "RaggedTile", []):
        rt = _convert(rt, "input")
        mults = _static_ints(multiples, "tile")
        if rt.shape.ndims is not None and len(mults) != rt.shape.ndims:
            raise ValueError(f"multiples must have {rt.shape.ndims} entries, got {len(mults)}")
        return _tile(rt, mults)


def _tile(rt, mults):
    from ferroflow.ops.array_ops_extra import repeat
    from ferroflow.ops.ragged_ops import _gather_rows, _ragged_range_op

    if not isinstance(rt, RaggedTensor):
        return array_ops.tile(rt, mults)
    values = _tile(rt.values, [1] + mults[2:])
    splits = rt.row_splits
    if mults[1] != 1:
        # Row r's items, mults[1] times over.
        starts = repeat(splits[:-1], mults[1], axis=0)
        limits = repeat(splits[1:], mults[1], axis=0)
        _, positions = _ragged_range_op(starts, limits, array_ops.ones_like(starts), splits.dtype)
        values = _gather_rows(values, positions)
        splits = splits * mults[1]
    result = RaggedTensor.from_row_splits(values, splits, validate=False)
    if mults[0] != 1:
        n = result.nrows()
        result = _gather_rows(result, array_ops.tile(math_ops.range(n, dtype=n.dtype), [mults[0]]))
    return result


# ----------------------------------------------------------------- gather


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """``tf.gather`` with ragged ``params`` (rows taken whole) or ragged ``indices`` (the result has their
    rows), along axis 0 without batch dimensions."""
    from ferroflow.ops.ragged_ops import ragged_gather

    with ops.name_scope(name, "RaggedGather", []):
        params = _convert(params, "params")
        indices = _convert(indices, "indices")
        if batch_dims != 0:
            raise NotImplementedError("ferroflow's ragged tf.gather takes batch_dims=0 only")
        if axis not in (None, 0):
            return _gather_items(params, indices, axis)
        return ragged_gather(params, indices)


def _gather_items(params, indices, axis):
    """``tf.gather(params, indices, axis=1)`` of a ``[B, None, ...]`` ragged tensor: the same positions of every
    row, a dense result. Each row must reach every position: TensorFlow only fails when a position falls past
    the last value (it reads into the next row otherwise); ferroflow fails for any row too short."""
    if isinstance(axis, ops.Tensor):
        axis = _static_ints(axis, "gather")[0]
    rank = params.shape.ndims
    if rank is not None:
        axis = axis % rank
    if not isinstance(params, RaggedTensor) or isinstance(indices, RaggedTensor) or axis != 1 or \
            params.ragged_rank != 1:
        raise NotImplementedError("ferroflow's ragged tf.gather along an axis other than 0 takes dense indices "
                                  "into the rows of a ragged_rank 1 RaggedTensor (axis=1)")
    from ferroflow.ops.control_flow_ops import Assert

    splits = params.row_splits
    idx = math_ops.cast(indices, splits.dtype)
    lengths = params.row_lengths()
    # Every row must hold every position (TensorFlow fails on a row that is too short too).
    ok = math_ops.logical_and(math_ops.reduce_all(math_ops.greater_equal(idx, 0)),
                              math_ops.reduce_all(math_ops.less(math_ops.reduce_max(array_ops.concat(
                                  [array_ops.reshape(idx, [-1]), array_ops.zeros([1], splits.dtype)], 0)),
                                  lengths)))
    check = Assert(ok, ["tf.gather(axis=1): an index is out of range of a row of params", "row lengths = ",
                        lengths])
    starts = array_ops.reshape(splits[:-1], array_ops.concat(
        [[-1], array_ops.ones([idx.shape.ndims], dtypes.int32)], 0))
    with ops.control_dependencies([check]):
        positions = starts + idx
    return array_ops.gather(params.values, positions)


# ----------------------------------------------------------------- where


def where(condition, x=None, y=None, name=None, v2=False):
    """``tf.where`` with a ragged ``condition``, ``x`` or ``y``: the coordinates of the true items, or an
    item-by-item choice (the three broadcast as in elementwise ops; for ``tf.compat.v1.where`` a vector
    condition picks whole rows)."""
    with ops.name_scope(name, "RaggedWhere", []):
        condition = _convert(condition, "condition", dtypes.bool)
        if x is None and y is None:
            if not isinstance(condition, RaggedTensor):
                return array_ops.where(condition)
            st = condition.to_sparse()
            return array_ops.boolean_mask(st.indices, array_ops.reshape(st.values, [-1]))
        if x is None or y is None:
            raise ValueError("x and y must both be non-None or both be None.")
        x = _convert(x, "x")
        y = _convert(y, "y", dtype=x.dtype if not isinstance(y, (ops.Tensor, RaggedTensor)) else None)
        if v2:
            return _select(condition, x, y, array_ops.where_v2)
        # tf.compat.v1.where: three ragged operands of one shape, or a condition vector choosing whole rows.
        ragged = [isinstance(v, RaggedTensor) for v in (condition, x, y)]
        if all(ragged):
            return _select(condition, x, y, array_ops.where)
        if not ragged[0] and all(ragged[1:]) and condition.shape.ndims == 1:
            return _where_rows(condition, x, y)
        raise ValueError("Input shapes do not match.")


def _where_rows(condition, x, y):
    """Row ``i`` is ``x[i]`` where ``condition[i]`` and ``y[i]`` elsewhere."""
    from ferroflow.ops.ragged_ops import _concat_axis0, _gather_rows, _match_row_splits_dtypes

    _match_row_splits_dtypes(x, y)
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype.name} and {y.dtype.name}")
    n = x.nrows(out_type=dtypes.int64)
    rows = math_ops.range(n, dtype=dtypes.int64)
    picks = array_ops.where(condition, rows, rows + n)
    return _gather_rows(_concat_axis0([x, y]), picks)


def _select(condition, x, y, fn):
    """``fn(condition, x, y)`` on the flat values of the ragged one(s), the others broadcast to them."""
    parts = [condition, x, y]
    template = next(p for p in parts if isinstance(p, RaggedTensor))
    ragged = [p for p in parts if isinstance(p, RaggedTensor)]
    checks = []
    for other in ragged[1:]:
        if other.ragged_rank != template.ragged_rank:
            raise ValueError("ferroflow's ragged tf.where takes ragged operands of one ragged_rank, got "
                             f"{template.ragged_rank} and {other.ragged_rank}")
        checks += same_splits_checks(template, other)
    # Dense operands of a higher rank add leading dimensions; use the widest ragged form for all.
    for p in parts:
        if not isinstance(p, RaggedTensor) and p.shape.ndims is not None and \
                p.shape.ndims > template.shape.ndims:
            if len(ragged) > 1:
                raise ValueError("ferroflow's ragged tf.where cannot broadcast two RaggedTensors under a Tensor of "
                                 "higher rank")
            template, _ = broadcast_dense_to_ragged(template, p)
    flat = []
    for p in parts:
        if isinstance(p, RaggedTensor):
            # The only ragged operand, repeated under new leading dimensions, is the template itself.
            flat.append(template.flat_values if p.ragged_rank != template.ragged_rank else p.flat_values)
        else:
            _, v = broadcast_dense_to_ragged(template, p)
            flat.append(v)
    with ops.control_dependencies(checks):
        flat[0] = array_ops.identity(flat[0])
    return template.with_flat_values(fn(*flat))


# ----------------------------------------------------------------- reductions


def _segment_rows(kind, data, ids, n):
    """Rows of ``data`` (a Tensor or RaggedTensor) combined by segment: output row ``s`` reduces, item by item,
    the rows whose id is ``s`` (``n`` rows). A ragged output row is as long as the longest of its rows."""
    if not isinstance(data, RaggedTensor):
        op = {"sum": segment_ops.unsorted_segment_sum, "max": segment_ops.unsorted_segment_max,
              "min": segment_ops.unsorted_segment_min, "prod": segment_ops.unsorted_segment_prod}[kind]
        return op(data, ids, n)
    dt = data.row_splits.dtype
    lengths = data.row_lengths()
    new_lengths = segment_ops.unsorted_segment_max(lengths, ids, n)
    new_lengths = math_ops.maximum(new_lengths, array_ops.zeros_like(new_lengths))  # empty segments: 0
    zero = array_ops.zeros([1], dtype=dt)
    new_splits = array_ops.concat([zero, math_ops.cumsum(new_lengths)], 0)
    rowids = data.value_rowids()
    position = math_ops.range(array_ops.shape(rowids, out_type=dt)[0], dtype=dt) - \
        array_ops.gather(data.row_splits, rowids)
    value_ids = array_ops.gather(new_splits, array_ops.gather(math_ops.cast(ids, dt), rowids)) + position
    inner = _segment_rows(kind, data.values, value_ids, new_splits[-1])
    return RaggedTensor.from_row_splits(inner, new_splits, validate=False)


def _reduce_axis(kind, rt, axis):
    """``rt`` reduced over one ``axis`` (non-negative); ``kind`` is sum, max, min or prod."""
    if not isinstance(rt, RaggedTensor):
        op = {"sum": math_ops.reduce_sum, "max": math_ops.reduce_max, "min": math_ops.reduce_min,
              "prod": math_ops.reduce_prod}[kind]
        return op(rt, axis=axis)
    if axis == 0:
        # The i-th items of every row reduce together.
        splits = rt.row_splits
        rowids = rt.value_rowids()
        position = math_ops.range(array_ops.shape(rowids, out_type=splits.dtype)[0], dtype=splits.dtype) - \
            array_ops.gather(splits, rowids)
        lengths = rt.row_lengths()
        longest = math_ops.reduce_max(array_ops.concat([array_ops.zeros([1], lengths.dtype), lengths], 0))
        return _segment_rows(kind, rt.values, position, longest)
    if axis == 1:
        out = _segment_rows(kind, rt.values, rt.value_rowids(), rt.nrows())
        if not isinstance(out, RaggedTensor):
            out.set_shape(rt.shape[:1].concatenate(rt.values.shape[1:]))  # one row each, as TensorFlow knows
        return out
    return rt.with_values(_reduce_axis(kind, rt.values, axis - 1))


def reduce(kind, input_tensor, axis=None, keepdims=False, name=None):
    """``reduce_<kind>`` (sum, mean, max, min, prod, any, all) of a ragged tensor over ``axis``; with
    ``keepdims`` each reduced dimension stays, of size 1."""
    with ops.name_scope(name, "RaggedReduce", []):
        rt = _convert(input_tensor, "input_tensor")
        if keepdims:
            result = reduce(kind, rt, axis)
            if axis is None:  # every dimension reduced and kept: a dense [1, 1, ...]
                if rt.shape.ndims is None:
                    raise ValueError("ferroflow's ragged reductions with keepdims=True need a known rank")
                return array_ops.reshape(result, [1] * rt.shape.ndims)
            for a in sorted(_axes(axis, rt.shape.ndims)):
                result = _expand(result, a)
            return result
        if kind in ("any", "all"):
            if rt.dtype != dtypes.bool:
                raise TypeError(f"reduce_{kind} expects a bool input, got {rt.dtype.name}")
            as_int = rt.with_flat_values(math_ops.cast(rt.flat_values if kind == "any" else
                                                       math_ops.logical_not(rt.flat_values), dtypes.int32))
            total = reduce("sum", as_int, axis)
            return _map(total, lambda v: math_ops.greater(v, 0) if kind == "any" else math_ops.equal(v, 0))
        if kind == "mean":
            total = reduce("sum", rt, axis)
            if axis is not None and _axes(axis, rt.shape.ndims) == [1] and not isinstance(rt.values, RaggedTensor) \
                    and rt.values.shape.ndims is not None:
                # Each row's mean: its sum over its length (no second segment sum for the counts).
                count = math_ops.cast(rt.row_lengths(), rt.dtype)
                count = array_ops.reshape(count, array_ops.concat(
                    [[-1], array_ops.ones([rt.values.shape.ndims - 1], dtypes.int32)], 0))
                return math_ops.truediv(total, count)
            count = reduce("sum", rt.with_flat_values(array_ops.ones_like(rt.flat_values)), axis)
            return _map2(total, count, math_ops.truediv)
        if axis is None:
            op = {"sum": math_ops.reduce_sum, "max": math_ops.reduce_max, "min": math_ops.reduce_min,
                  "prod": math_ops.reduce_prod}[kind]
            return op(rt.flat_values)
        result = rt
        for a in sorted(_axes(axis, rt.shape.ndims), reverse=True):
            result = _reduce_axis(kind, result, a)
        return result


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """TensorFlow's ragged variance: the mean of the squares less the square of the mean, at least 0."""
    with ops.name_scope(name, "RaggedReduceVariance", []):
        rt = _convert(input_tensor, "input_tensor")
        if rt.dtype.is_complex:
            raise ValueError("reduce_variance is not supported for RaggedTensors with complex dtypes.")
        mean_of_square = reduce("mean", math_ops.square(rt), axis, keepdims)
        square_of_mean = math_ops.square(reduce("mean", rt, axis, keepdims))
        return math_ops.maximum(mean_of_square - square_of_mean, 0)


def _axes(axis, rank):
    """``axis`` (an int, a list of them or a constant tensor) as distinct non-negative ints."""
    if isinstance(axis, ops.Tensor):
        from ferroflow.framework.tensor_util import constant_value

        value = constant_value(axis)
        if value is None:
            raise ValueError("ragged reductions need a statically known axis")
        axis = value.tolist()
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    norm = []
    for a in axes:
        a = int(a)
        if rank is not None:
            if not -rank <= a < rank:
                raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}")
            a = a % rank
        elif a < 0:
            raise ValueError("axis may only be negative if ndims is statically known.")
        norm.append(a)
    if len(set(norm)) != len(norm):
        raise ValueError("ragged reduction axes must be distinct")
    return norm


def _map(value, fn):
    return value.with_flat_values(fn(value.flat_values)) if isinstance(value, RaggedTensor) else fn(value)


def _map2(a, b, fn):
    if isinstance(a, RaggedTensor):
        return a.with_flat_values(fn(a.flat_values, b.flat_values))
    return fn(a, b)


def unsorted_segment(op_type, data, segment_ids, num_segments, name=None):
    """``tf.math.unsorted_segment_sum/max/min/prod`` of ragged ``data``: with one segment id per row, output row
    ``s`` reduces the rows of segment ``s`` item by item (as long as the longest of them); with ragged ids of
    ``data``'s row partition, every item goes to its own segment (a dense result)."""
    kind = {"UnsortedSegmentSum": "sum", "UnsortedSegmentMax": "max", "UnsortedSegmentMin": "min",
            "UnsortedSegmentProd": "prod"}[op_type]
    with ops.name_scope(name, "Ragged" + op_type, []):
        data = _convert(data, "data")
        ids = _convert(segment_ids, "segment_ids")
        if isinstance(ids, RaggedTensor):
            if ids.ragged_rank != data.ragged_rank:
                raise ValueError("segment_ids and data must have one ragged_rank")
            checks = same_splits_checks(data, ids)
            with ops.control_dependencies(checks):
                flat = array_ops.identity(data.flat_values)
            return _segment_rows(kind, flat, ids.flat_values, num_segments)
        if ids.shape.ndims not in (None, 1):
            raise ValueError("ferroflow's ragged unsorted segment ops take one segment id per row (a vector) or "
                             "ragged ids of the data's rows")
        return _segment_rows(kind, data, ids, num_segments)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """``tf.strings.reduce_join`` of a ``[B, None]`` ragged string tensor over its rows' items (axis 1 or -1)."""
    with ops.name_scope(name, "RaggedReduceJoin", []):
        rt = _convert(inputs, "inputs")
        if rt.shape.ndims != 2 or axis not in (1, -1):
            raise NotImplementedError("ferroflow's ragged reduce_join joins the items of [B, None] rows only "
                                      "(axis=1)")
        from ferroflow.ops.string_ops import unsorted_segment_join

        out = unsorted_segment_join(rt.flat_values, rt.value_rowids(), rt.nrows(), separator=separator)
        return array_ops.expand_dims(out, 1) if keepdims else out


def string_join(inputs, separator="", name=None):
    """``tf.strings.join`` with ragged inputs: item by item over ragged tensors of one row partition (checked
    when the graph runs), dense inputs broadcast to them."""
    from ferroflow.ops.string_ops import string_join as join

    with ops.name_scope(name, "RaggedStringJoin", []):
        parts = [_convert(x, f"inputs_{i}") for i, x in enumerate(inputs)]
        template = next(p for p in parts if isinstance(p, RaggedTensor))
        checks, flat = [], []
        for p in parts:
            if isinstance(p, RaggedTensor):
                if p.ragged_rank != template.ragged_rank:
                    raise ValueError("ferroflow's ragged tf.strings.join takes RaggedTensors of one ragged_rank")
                checks += same_splits_checks(template, p)
                flat.append(p.flat_values)
            else:
                flat.append(broadcast_dense_to_ragged(template, p)[1])
        with ops.control_dependencies(checks):
            flat[0] = array_ops.identity(flat[0])
        return template.with_flat_values(join(flat, separator=separator))
