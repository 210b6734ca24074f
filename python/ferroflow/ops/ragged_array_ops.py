"""``tf.ragged_fill_empty_rows`` and ``tf.ragged_fill_empty_rows_grad`` (TensorFlow's raw ops
``RaggedFillEmptyRows`` and ``RaggedFillEmptyRowsGrad``), composed from existing ops.

A ragged tensor's values are given by row: ``value_rowids[i]`` is the row of ``values[i]``, of ``nrows`` rows.
Filling its empty rows puts one ``default_value`` in each row that has none. The outputs:

- ``output_values``: the values by row (a row's values keep their input order), each empty row holding the
  default; ``output_value_rowids`` their rows (sorted);
- ``empty_row_indicator[r]``: whether row ``r`` was empty;
- ``reverse_index_map[i]``: where ``values[i]`` went in ``output_values``.

The rows need not be sorted (as in TensorFlow). The gradient op takes ``reverse_index_map`` and the gradient
of ``output_values``: ``d_values[i]`` is the gradient at ``reverse_index_map[i]``, ``d_default_value`` the
sum of the gradient at every other position. The composition differentiates to the same.

One edge TensorFlow's kernel has and ferroflow does not copy: with ``nrows = 0`` TensorFlow returns
``output_value_rowids`` of shape ``[0, 1]``, against its own static shape ``[None]``; ferroflow returns ``[0]``.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops.array_ops_extra import argsort, repeat
from ferroflow.ops.control_flow_ops import Assert
from ferroflow.ops.segment_ops import tensor_scatter_nd_update, unsorted_segment_sum

__all__ = ["ragged_fill_empty_rows", "ragged_fill_empty_rows_grad"]

RaggedFillEmptyRows = collections.namedtuple(
    "RaggedFillEmptyRows", ["output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map"])
RaggedFillEmptyRowsGrad = collections.namedtuple("RaggedFillEmptyRowsGrad", ["d_values", "d_default_value"])


def _check_rank(t, rank, what, op):
    if t.shape.rank is not None and t.shape.rank != rank:
        raise ValueError(f"{op}: {what} must be rank {rank}, got shape {t.shape}")


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """Fills the empty rows of the ragged tensor (``value_rowids``, ``values``, ``nrows``) with
    ``default_value``. Returns a ``RaggedFillEmptyRows`` namedtuple (see the module's docs)."""
    op = "RaggedFillEmptyRows"
    with ops.name_scope(name, op, [value_rowids, values, nrows, default_value]):
        rowids = ops.convert_to_tensor(value_rowids, dtype=dtypes.int64, name="value_rowids")
        values = ops.convert_to_tensor(values, name="values")
        nrows = ops.convert_to_tensor(nrows, dtype=dtypes.int64, name="nrows")
        default_value = ops.convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
        _check_rank(rowids, 1, "value_rowids", op)
        _check_rank(values, 1, "values", op)
        _check_rank(nrows, 0, "nrows", op)
        _check_rank(default_value, 0, "default_value", op)
        if not rowids.shape.is_compatible_with(values.shape):
            raise ValueError(f"{op}: value_rowids and values must have the same length, got shapes "
                             f"{rowids.shape} and {values.shape}")
        in_range = math_ops.reduce_all(math_ops.logical_and(rowids >= 0, rowids < nrows))
        check = Assert(in_range, [f"{op}: every value_rowids must be in [0, nrows); nrows =", nrows,
                                  "value_rowids =", rowids], summarize=10)
        with ops.control_dependencies([check]):
            rowids = array_ops.identity(rowids)
        n = array_ops.size(rowids, out_type=dtypes.int64)
        counts = unsorted_segment_sum(array_ops.ones_like(rowids), rowids, nrows)
        empty = math_ops.equal(counts, 0)
        filled = counts + math_ops.cast(empty, dtypes.int64)
        out_starts = math_ops.cumsum(filled, exclusive=True)
        in_starts = math_ops.cumsum(counts, exclusive=True)
        # A value's place in its row is its rank among that row's values in input order: the stable sort
        # by row lists each row's values in input order, starting at in_starts[row].
        order = math_ops.cast(argsort(rowids), dtypes.int64)
        sorted_rows = array_ops.gather(rowids, order)
        place = (array_ops.gather(out_starts, sorted_rows)
                 + array_ops.range(n, dtype=dtypes.int64) - array_ops.gather(in_starts, sorted_rows))
        reverse_index_map = tensor_scatter_nd_update(
            array_ops.zeros_like(rowids), array_ops.expand_dims(order, 1), place)
        total = math_ops.reduce_sum(filled)
        out_rowids = repeat(array_ops.range(nrows, dtype=dtypes.int64), filled)
        out_values = tensor_scatter_nd_update(
            array_ops.fill(array_ops.reshape(total, [1]), default_value),
            array_ops.expand_dims(reverse_index_map, 1), values)
        return RaggedFillEmptyRows(
            array_ops.identity(out_rowids, name="output_value_rowids"),
            array_ops.identity(out_values, name="output_values"),
            array_ops.identity(empty, name="empty_row_indicator"),
            array_ops.identity(reverse_index_map, name="reverse_index_map"),
        )


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """The gradient of ``ragged_fill_empty_rows``: ``d_values`` (the gradient at each value's place) and
    ``d_default_value`` (the sum over the filled places). Returns a ``RaggedFillEmptyRowsGrad`` namedtuple."""
    op = "RaggedFillEmptyRowsGrad"
    with ops.name_scope(name, op, [reverse_index_map, grad_values]):
        index = ops.convert_to_tensor(reverse_index_map, dtype=dtypes.int64, name="reverse_index_map")
        grad = ops.convert_to_tensor(grad_values, name="grad_values")
        _check_rank(index, 1, "reverse_index_map", op)
        _check_rank(grad, 1, "grad_values", op)
        d_values = array_ops.gather(grad, index)
        taken = tensor_scatter_nd_update(
            array_ops.zeros_like(grad, dtype=dtypes.bool), array_ops.expand_dims(index, 1),
            array_ops.ones_like(index, dtype=dtypes.bool))
        rest = array_ops.where_v2(taken, array_ops.zeros_like(grad), grad)
        return RaggedFillEmptyRowsGrad(array_ops.identity(d_values, name="d_values"),
                                       math_ops.reduce_sum(rest, name="d_default_value"))
