"""``tf.io.RaggedFeature``: its configuration and how a parsed feature becomes a ``RaggedTensor``.

``ParseExampleV2`` parses the value key and every partition key of a ``RaggedFeature`` (in Rust, as ragged
outputs: values concatenated over the batch, plus row splits per example). This module builds the result
from those outputs as TensorFlow's ``parsing_config`` does: partitions applied innermost first; for a batch,
each example's partition values are shifted by where that example's rows start. ``ParseSequenceExampleV2``
gives a ragged feature list's values with two sets of row splits, steps per example (outer) and values per
step (inner): its partitions are applied with each step in the place of an example, and the outer splits
added last, as TensorFlow folds the two batch dimensions into one and restores them. Every partition ends up as
row splits over its values; with ``validate=True`` the splits are checked at run time (first 0,
non-decreasing, last equal to the number of values) and a bad partition fails with InvalidArgumentError
naming the feature.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, check_ops, math_ops
from ferroflow.ops.array_ops_extra import repeat
from ferroflow.ops.ragged import RaggedTensor
from ferroflow.ops.segment_ops import unsorted_segment_max

__all__ = ["RaggedFeature"]


class RaggedFeature(
    collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])
):
    """A variable-length feature parsed into a ``RaggedTensor``.

    ``value_key`` (default: the feature's own key) names the values; ``partitions`` (outermost first) name
    the features that cut them into further ragged dimensions: ``RowSplits``, ``RowLengths``, ``RowStarts``,
    ``RowLimits``, ``ValueRowIds`` (each with a feature ``key``) or ``UniformRowLength`` (a ``length``; as
    the innermost partitions they reshape the values instead). One example gives a tensor of rank
    ``len(partitions) + 1``; a batch adds the batch dimension in front.
    """

    __slots__ = ()

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    _PARTITION_TYPES = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32, validate=False):
        if value_key is not None:
            if not isinstance(value_key, str):
                raise ValueError(f"Argument `value_key` must be a string; got {value_key}")
            if not value_key:
                raise ValueError("Argument `value_key` must not be empty")
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int64, dtypes.float32, dtypes.string):
            raise ValueError(f"Argument `dtype` must be int64, float32, or bytes; got {dtype!r}")
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"Argument `row_splits_dtype` must be int32 or int64; got {row_splits_dtype!r}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"Argument `partitions` must be a list or tuple. Received partitions={partitions} of "
                            f"type {type(partitions).__name__}.")
        for p in partitions:
            if not isinstance(p, cls._PARTITION_TYPES):
                raise TypeError(f"Argument `partitions` must be a list of partition objects "
                                f"{cls._PARTITION_TYPES}; got: {p!r}")
        if not isinstance(validate, bool):
            raise TypeError(f"Argument `validate` must be a bool; got {validate!r}")
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)


def ragged_keys(key, feature):
    """The (key, value dtype) pairs ``ParseExampleV2`` parses for ``feature``: its values, then each
    keyed partition (int64)."""
    out = [(key if feature.value_key is None else feature.value_key, feature.dtype)]
    for p in feature.partitions:
        if not isinstance(p, RaggedFeature.UniformRowLength):
            out.append((p.key, dtypes.int64))
    return out


# ----------------------------------------------------------------------------- validation
def _checked(splits, nvals, key, validate):
    """``splits`` itself, or with run-time checks that it partitions ``nvals`` values."""
    if not validate:
        return splits
    nvals = math_ops.cast(nvals, splits.dtype)
    msg = f"Feature {key}: the partition is not valid for the values"
    checks = [
        check_ops.assert_equal(splits[:1], array_ops.zeros([1], splits.dtype),
                               message=msg + " (the first row split must be 0)"),
        check_ops.assert_greater_equal(splits[1:], splits[:-1],
                                       message=msg + " (row splits must not decrease)"),
        check_ops.assert_equal(splits[-1:], array_ops.reshape(nvals, [1]),
                               message=msg + " (the last row split must be the number of values)"),
    ]
    with ops.control_dependencies(checks):
        return array_ops.identity(splits)


def _nvals(values, dtype):
    """The number of rows of ``values`` (a tensor or a RaggedTensor)."""
    if isinstance(values, RaggedTensor):
        return math_ops.cast(values.nrows(), dtype)
    return array_ops.shape(values, out_type=dtype)[0]


def _zero(dtype):
    return array_ops.zeros([1], dtype=dtype)


def _splits_from(kind, part, values, dtype, nrows=None):
    """Row splits over ``values`` from a partition tensor ``part`` of kind ``kind``."""
    if kind is RaggedFeature.RowSplits:
        return part
    if kind is RaggedFeature.RowLengths:
        return array_ops.concat([_zero(dtype), math_ops.cumsum(part)], 0)
    if kind is RaggedFeature.RowLimits:
        return array_ops.concat([_zero(dtype), part], 0)
    if kind is RaggedFeature.RowStarts:
        return array_ops.concat([part, array_ops.reshape(_nvals(values, dtype), [1])], 0)
    if kind is RaggedFeature.ValueRowIds:
        if nrows is None:
            minus_one = ops.convert_to_tensor([-1], dtype=dtype)
            nrows = math_ops.reduce_max(array_ops.concat([minus_one, part], 0)) + 1
        counts = math_ops.unsorted_segment_sum(array_ops.ones_like(part), part, nrows)
        return array_ops.concat([_zero(dtype), math_ops.cumsum(counts)], 0)
    raise ValueError(f"Unhandled partition type {kind!r}")


def _check_rowids(part, key, validate):
    if not validate:
        return part
    msg = f"Feature {key}: the partition is not valid for the values"
    checks = [check_ops.assert_non_negative(part, message=msg + " (value_rowids must be non-negative)"),
              check_ops.assert_greater_equal(part[1:], part[:-1],
                                             message=msg + " (value_rowids must be sorted)")]
    with ops.control_dependencies(checks):
        return array_ops.identity(part)


def _uniform(values, length, dtype, key, validate):
    """Rows of ``length`` over ``values``: a reshape for a tensor, row splits for a RaggedTensor."""
    if not isinstance(values, RaggedTensor):
        shape = array_ops.shape(values, out_type=dtypes.int64)
        return array_ops.reshape(values, array_ops.concat(
            [ops.convert_to_tensor([-1, length], dtype=dtypes.int64), shape[1:]], 0))
    n = _nvals(values, dtype)
    length_t = ops.convert_to_tensor(length, dtype=dtype)
    splits = array_ops.range(0, n + 1, length_t, dtype=dtype)
    return RaggedTensor.from_row_splits(values, _checked(splits, n, key, validate), validate=False)


# ----------------------------------------------------------------------------- one example
def _single(values, feature, parsed, key):
    dtype = feature.row_splits_dtype
    rt = values
    for p in reversed(feature.partitions):
        if isinstance(p, RaggedFeature.UniformRowLength):
            rt = _uniform(rt, p.length, dtype, key, feature.validate)
            continue
        part = math_ops.cast(parsed[p.key][0], dtype)
        kind = type(p)
        if kind is RaggedFeature.ValueRowIds:
            part = _check_rowids(part, key, feature.validate)
        splits = _splits_from(kind, part, rt, dtype)
        rt = RaggedTensor.from_row_splits(rt, _checked(splits, _nvals(rt, dtype), key, feature.validate),
                                          validate=False)
    return rt


# ----------------------------------------------------------------------------- a batch
def _drop_first(values, splits):
    """Each row of (values, splits) without its first value (empty rows stay empty)."""
    lengths = splits[1:] - splits[:-1]
    starts = splits[:-1]
    n = array_ops.shape(values, out_type=splits.dtype)[0]
    positions = array_ops.range(0, n, dtype=splits.dtype)
    is_first = math_ops.equal(positions, repeat(starts, lengths))
    new_lengths = math_ops.maximum(lengths - 1, 0)
    return (array_ops.boolean_mask(values, math_ops.logical_not(is_first)),
            array_ops.concat([_zero(splits.dtype), math_ops.cumsum(new_lengths)], 0))


def _batched(rt, feature, parsed, key):
    """``rt``: the batch's values as a RaggedTensor ``[batch, (values)]``; partitions applied per example."""
    for p in reversed(feature.partitions):
        dtype = rt.row_splits.dtype
        if isinstance(p, RaggedFeature.UniformRowLength):
            # A reshape of the values, or uniform rows over ragged ones; example i's rows shrink by length.
            inner = _uniform(rt.values, p.length, dtype, key, feature.validate)
            rt = RaggedTensor.from_row_splits(inner, math_ops.floordiv(rt.row_splits, p.length), validate=False)
            continue
        part_values, part_splits = parsed[p.key]
        part_values = math_ops.cast(part_values, dtype)
        part_splits = math_ops.cast(part_splits, dtype)
        kind = type(p)
        if kind is RaggedFeature.RowSplits:
            part_values, part_splits = _drop_first(part_values, part_splits)
            kind = RaggedFeature.RowLimits
        part_lengths = part_splits[1:] - part_splits[:-1]
        # Where each example's rows (the values' first dimension) start.
        offsets = repeat(rt.row_splits[:-1], part_lengths)
        if kind is RaggedFeature.ValueRowIds:
            part_values = _check_rowids_per_example(part_values, part_splits, key, feature.validate)
            # Rows per example: one past its largest row id (0 for none).
            seg = _segment_ids(part_splits, part_values)
            nrows = math_ops.maximum(unsorted_segment_max(part_values + 1, seg, _nrows(part_splits)), 0)
            row_offsets = math_ops.cumsum(nrows, exclusive=True)
            ids = part_values + repeat(row_offsets, part_lengths)
            total = math_ops.reduce_sum(nrows)
            inner_splits = _splits_from(RaggedFeature.ValueRowIds, _check_rowids(ids, key, feature.validate),
                                        rt.values, dtype, nrows=total)
            inner = RaggedTensor.from_row_splits(
                rt.values, _checked(inner_splits, _nvals(rt.values, dtype), key, feature.validate), validate=False)
            outer = array_ops.concat([_zero(dtype), math_ops.cumsum(nrows)], 0)
            rt = RaggedTensor.from_row_splits(inner, outer, validate=False)
            continue
        if kind in (RaggedFeature.RowLimits, RaggedFeature.RowStarts):
            part_values = part_values + offsets
        inner_splits = _splits_from(kind, part_values, rt.values, dtype)
        inner = RaggedTensor.from_row_splits(
            rt.values, _checked(inner_splits, _nvals(rt.values, dtype), key, feature.validate), validate=False)
        rt = RaggedTensor.from_row_splits(inner, part_splits, validate=False)
    return rt


def _nrows(splits):
    return array_ops.shape(splits, out_type=splits.dtype)[0] - 1


def _segment_ids(splits, values):
    """The example (row of ``splits``) of each of ``values``."""
    lengths = splits[1:] - splits[:-1]
    return repeat(array_ops.range(0, _nrows(splits), dtype=splits.dtype), lengths)


def _check_rowids_per_example(ids, splits, key, validate):
    if not validate:
        return ids
    # Sorted within each example: a decrease may only happen where an example starts.
    seg = _segment_ids(splits, ids)
    msg = f"Feature {key}: the partition is not valid for the values"
    same = math_ops.equal(seg[1:], seg[:-1])
    ok = math_ops.logical_or(math_ops.logical_not(same), math_ops.greater_equal(ids[1:], ids[:-1]))
    checks = [check_ops.assert_non_negative(ids, message=msg + " (value_rowids must be non-negative)"),
              check_ops.assert_equal(ok, array_ops.ones_like(ok), message=msg + " (value_rowids must be sorted)")]
    with ops.control_dependencies(checks):
        return array_ops.identity(ids)


def build(features, parsed, scalar):
    """The RaggedTensors (or, for one example without partitions, tensors) of the RaggedFeatures in
    ``features``; ``parsed`` maps each parsed ragged key to its op outputs (values, row splits)."""
    out = {}
    for key in sorted(features):
        f = features[key]
        if not isinstance(f, RaggedFeature):
            continue
        value_key = key if f.value_key is None else f.value_key
        values, splits = parsed[value_key]
        with ops.name_scope(None, "RaggedFeature"):
            if scalar:
                out[key] = _single(values, f, parsed, key)
            else:
                out[key] = _batched(RaggedTensor.from_row_splits(values, splits, validate=False), f, parsed, key)
    return out



def build_sequence(features, parsed, scalar):
    """The RaggedTensors of the RaggedFeatures among a ``parse_sequence_example``'s sequence ``features``:
    ``[batch, (steps), (values), ...]`` (without the batch dimension for one ``SequenceExample``).
    ``parsed`` maps each parsed ragged feature-list key to its op outputs (values, outer row splits, inner
    row splits)."""
    steps = {k: (values, inner) for k, (values, _, inner) in parsed.items()}
    out = {}
    for key in sorted(features):
        f = features[key]
        if not isinstance(f, RaggedFeature):
            continue
        value_key = key if f.value_key is None else f.value_key
        values, outer, inner = parsed[value_key]
        with ops.name_scope(None, "RaggedFeature"):
            rt = _batched(RaggedTensor.from_row_splits(values, inner, validate=False), f, steps, key)
            if not scalar:
                rt = RaggedTensor.from_row_splits(rt, _aligned(outer, f, parsed, key), validate=False)
        out[key] = rt
    return out


def _aligned(outer, feature, parsed, key):
    """``outer`` (the values' steps per example); with ``validate``, checked at run time to equal every
    keyed partition's."""
    if not feature.validate:
        return outer
    checks = [check_ops.assert_equal(outer, math_ops.cast(parsed[p.key][1], outer.dtype),
                                     message=f"Feature {key}: values and partitions are not aligned")
              for p in feature.partitions if not isinstance(p, RaggedFeature.UniformRowLength)]
    with ops.control_dependencies(checks):
        return array_ops.identity(outer)
