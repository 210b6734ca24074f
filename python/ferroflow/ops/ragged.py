"""A minimal ``tf.RaggedTensor``: rows of different lengths, as TensorFlow represents them.

A ragged tensor is ``values`` (a tensor, or another ragged tensor for a ragged rank above 1) cut into rows by
``row_splits`` (int64 or int32, ``[nrows + 1]``, starting at 0, non-decreasing): row ``i`` is
``values[row_splits[i]:row_splits[i + 1]]``. This is what ``tf.strings.split``, the ``unicode_*`` ops,
``bytes_split`` and ``ngrams`` return. It converts to a padded dense tensor (``to_tensor``) or a SparseTensor
(``to_sparse``, TensorFlow's ``RaggedTensorToSparse`` op); ``Session.run`` fetches it as a
``RaggedTensorValue`` (``to_list()``, ``values``, ``row_splits``), and ``to_list()``/``numpy()`` on the graph
object evaluate it in the default session. Ragged arithmetic and ragged dispatch of other ops are not here.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops, type_spec
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make_op

__all__ = ["RaggedTensor", "RaggedTensorValue", "is_ragged"]


def is_ragged(value):
    """True for a ``RaggedTensor`` or a fetched ``RaggedTensorValue``."""
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def _splits(row_splits, dtype=None):
    if isinstance(row_splits, ops.Tensor):
        if row_splits.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"row_splits must be int32 or int64, got {row_splits.dtype.name}")
        return row_splits
    return ops.convert_to_tensor(row_splits, dtype=dtype or dtypes.int64, name="row_splits")


class RaggedTensor:
    """Rows of different lengths: ``values`` cut by ``row_splits`` (see the module docstring)."""

    def __init__(self, values, row_partition=None, internal=False):
        if not internal:
            raise ValueError(
                "RaggedTensor constructor is private; please use one of the factory methods instead "
                "(e.g., RaggedTensor.from_row_lengths())"
            )
        self._values = values
        self._row_splits = row_partition

    # ----------------------------------------------------------------- factories

    @classmethod
    def _from_parts(cls, values, row_splits):
        if not isinstance(values, RaggedTensor):
            values = ops.convert_to_tensor(values, name="values")
        return cls(values, row_splits, internal=True)

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``."""
        with ops.name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
            return cls._from_parts(values, _splits(row_splits))

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Rows of the given lengths, in order."""
        with ops.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
            lengths = _splits(row_lengths)
            zero = array_ops.zeros([1], dtype=lengths.dtype)
            return cls._from_parts(values, array_ops.concat([zero, math_ops.cumsum(lengths)], 0))

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        """Rows starting at ``row_starts`` (the last one runs to the end of ``values``)."""
        with ops.name_scope(name, "RaggedFromRowStarts", [values, row_starts]):
            starts = _splits(row_starts)
            values = values if isinstance(values, RaggedTensor) else ops.convert_to_tensor(values, name="values")
            n = _nrows_of(values, starts.dtype)
            return cls._from_parts(values, array_ops.concat([starts, array_ops.reshape(n, [1])], 0))

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        """Rows ending at ``row_limits`` (the first one starts at 0)."""
        with ops.name_scope(name, "RaggedFromRowLimits", [values, row_limits]):
            limits = _splits(row_limits)
            zero = array_ops.zeros([1], dtype=limits.dtype)
            return cls._from_parts(values, array_ops.concat([zero, limits], 0))

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Row ``i`` holds the values whose (sorted) ``value_rowids`` entry is ``i``; ``nrows`` rows."""
        with ops.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
            rowids = _splits(value_rowids)
            if nrows is None:
                nrows = math_ops.add(
                    math_ops.reduce_max(array_ops.concat([constant_op.constant([-1], dtype=rowids.dtype),
                                                          rowids], 0)), 1)
            nrows = ops.convert_to_tensor(nrows, dtype=rowids.dtype, name="nrows")
            counts = math_ops.unsorted_segment_sum(array_ops.ones_like(rowids), rowids, nrows)
            zero = array_ops.zeros([1], dtype=rowids.dtype)
            return cls._from_parts(values, array_ops.concat([zero, math_ops.cumsum(counts)], 0))

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """Nested rows: ``nested_row_splits[0]`` cuts the outermost dimension."""
        with ops.name_scope(name, "RaggedFromNestedRowSplits", [flat_values] + list(nested_row_splits)):
            result = flat_values
            for splits in reversed(list(nested_row_splits)):
                result = cls._from_parts(result, _splits(splits))
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        """Nested rows of the given lengths, outermost first."""
        with ops.name_scope(name, "RaggedFromNestedRowlengths", [flat_values] + list(nested_row_lengths)):
            result = flat_values
            for lengths in reversed(list(nested_row_lengths)):
                result = cls.from_row_lengths(result, lengths)
            return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None, row_splits_dtype=dtypes.int64):
        """A ragged tensor with the rows of the dense ``tensor`` (all of its rows' full length).

        ``lengths`` and ``padding`` (trimming rows) are not supported here.
        """
        if lengths is not None or padding is not None:
            raise NotImplementedError("RaggedTensor.from_tensor: lengths and padding are not supported in ferroflow")
        with ops.name_scope(name, "RaggedFromTensor", [tensor]):
            t = ops.convert_to_tensor(tensor, name="tensor")
            rank = t.shape.ndims
            if rank is None:
                raise ValueError("RaggedTensor.from_tensor: the rank of tensor must be statically known")
            if not 0 < ragged_rank < rank:
                raise ValueError(f"ragged_rank must be in [1, {rank}), got {ragged_rank}")
            dt = dtypes.as_dtype(row_splits_dtype)
            shape = array_ops.shape(t, out_type=dt)
            flat = array_ops.reshape(t, array_ops.concat([constant_op.constant([-1], dt), shape[ragged_rank + 1:]], 0))
            result = flat
            for axis in range(ragged_rank, 0, -1):
                outer = math_ops.reduce_prod(shape[:axis])
                width = shape[axis]
                result = cls._from_parts(result, math_ops.range(0, outer * width + 1, width, dtype=dt))
            return result

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        """The rows of a 2-D SparseTensor in row-major order (ragged: each row's entries, in order)."""
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"Expected SparseTensor, got {type(st_input).__name__}")
        with ops.name_scope(name, "RaggedFromSparse", [st_input]):
            rowids = st_input.indices[:, 0]
            nrows = st_input.dense_shape[0]
            rt = cls.from_value_rowids(st_input.values, rowids, nrows)
            if dtypes.as_dtype(row_splits_dtype) == dtypes.int32:
                rt = rt.with_row_splits_dtype(dtypes.int32)
            return rt

    # ----------------------------------------------------------------- structure

    @property
    def values(self):
        """The concatenated rows (a tensor, or a RaggedTensor when the ragged rank is above 1)."""
        return self._values

    @property
    def row_splits(self):
        """``[nrows + 1]``: where each row starts in ``values`` (and the end of the last)."""
        return self._row_splits

    @property
    def flat_values(self):
        """The innermost values, a tensor."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        """The row_splits of every ragged level, outermost first."""
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self):
        """How many ragged dimensions (the number of nested row_splits)."""
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def _type_spec(self):
        return RaggedTensorSpec.from_value(self)

    @property
    def graph(self):
        return self._row_splits.graph

    @property
    def shape(self):
        """Static shape: ``[nrows, None, ...]`` (ragged dimensions are None)."""
        n = self._row_splits.shape.as_list()[0] if self._row_splits.shape.ndims else None
        nrows = None if n is None else n - 1
        inner = self._values.shape
        if inner.ndims is None:
            return TensorShape(None)
        inner_dims = inner.as_list()[1:]
        return TensorShape([nrows, None] + inner_dims)

    def get_shape(self):
        return self.shape

    def nrows(self, out_type=None, name=None):
        """The number of rows, a scalar tensor."""
        with ops.name_scope(name, "RaggedNRows", [self._row_splits]):
            n = math_ops.subtract(array_ops.size(self._row_splits, out_type=self._row_splits.dtype), 1)
            return n if out_type is None else math_ops.cast(n, out_type)

    def row_starts(self, name=None):
        with ops.name_scope(name, "RaggedRowStarts", [self._row_splits]):
            return self._row_splits[:-1]

    def row_limits(self, name=None):
        with ops.name_scope(name, "RaggedRowLimits", [self._row_splits]):
            return self._row_splits[1:]

    def row_lengths(self, axis=1, name=None):
        """The length of each row (``axis=1`` only)."""
        if axis != 1:
            raise NotImplementedError("RaggedTensor.row_lengths: only axis=1 is supported in ferroflow")
        with ops.name_scope(name, "RaggedRowLengths", [self._row_splits]):
            return math_ops.subtract(self._row_splits[1:], self._row_splits[:-1])

    def value_rowids(self, name=None):
        """The row of each value."""
        with ops.name_scope(name, "RaggedValueRowIds", [self._row_splits]):
            rows = array_ops.shape(self._values if not isinstance(self._values, RaggedTensor)
                                   else self._values._row_splits, out_type=dtypes.int64)[0]
            if isinstance(self._values, RaggedTensor):
                rows = rows - 1
            flat = array_ops.zeros(array_ops.reshape(rows, [1]), dtype=dtypes.bool)
            indices = _to_sparse_op(self._row_splits_int64(), [flat])[0]
            return math_ops.cast(indices[:, 0], self._row_splits.dtype)

    def nested_row_lengths(self, name=None):
        return tuple(RaggedTensor._from_parts(array_ops.zeros([0]), s).row_lengths() for s in self.nested_row_splits)

    def _row_splits_int64(self):
        s = self._row_splits
        return s if s.dtype.base_dtype == dtypes.int64 else math_ops.cast(s, dtypes.int64)

    def with_values(self, new_values):
        """The same row partition over other values."""
        return RaggedTensor._from_parts(new_values, self._row_splits)

    def with_flat_values(self, new_values):
        """The same nested row partition over other flat values."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        """The same ragged tensor with int32 or int64 row_splits."""
        dtype = dtypes.as_dtype(dtype)
        values = self._values.with_row_splits_dtype(dtype) if isinstance(self._values, RaggedTensor) else self._values
        splits = self._row_splits if self._row_splits.dtype == dtype else math_ops.cast(self._row_splits, dtype)
        return RaggedTensor._from_parts(values, splits)

    # ----------------------------------------------------------------- conversions

    def to_sparse(self, name=None):
        """A SparseTensor with the same entries (TensorFlow's ``RaggedTensorToSparse``)."""
        with ops.name_scope(name, "RaggedToSparse", [self]):
            splits = [s if s.dtype.base_dtype == dtypes.int64 else math_ops.cast(s, dtypes.int64)
                      for s in self.nested_row_splits]
            indices, values, shape = _to_sparse_op(splits, [self.flat_values])
            return SparseTensor(indices, values, shape)

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The rows padded with ``default_value`` (zero, "" or False by dtype) to the longest row."""
        if shape is not None:
            raise NotImplementedError("RaggedTensor.to_tensor: shape is not supported in ferroflow")
        from ferroflow.ops import sparse_ops

        with ops.name_scope(name, "RaggedToTensor", [self]):
            st = self.to_sparse()
            if default_value is None:
                default_value = "" if self.dtype == dtypes.string else (
                    False if self.dtype == dtypes.bool else 0)
            default = ops.convert_to_tensor(default_value, dtype=self.dtype, name="default_value")
            return sparse_ops.sparse_to_dense(st.indices, st.dense_shape, st.values, default,
                                              validate_indices=False)

    def to_list(self, session=None):
        """The rows as nested Python lists, evaluated in ``session`` (default: the default session)."""
        return self._eval(session).to_list()

    def numpy(self, session=None):
        """The rows as a NumPy array (of arrays where lengths differ)."""
        return self._eval(session).numpy()

    def _eval(self, session=None):
        session = session or ops.get_default_session()
        if session is None:
            raise ValueError("RaggedTensor.to_list() in a graph needs a default session (with tf.Session(): ...)")
        return session.run(self)

    def eval(self, feed_dict=None, session=None):
        """The value in ``session`` (default: the default session), as a ``RaggedTensorValue``."""
        session = session or ops.get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered.")
        return session.run(self, feed_dict)

    # The Session fetches a RaggedTensor as its parts and rebuilds a RaggedTensorValue.
    def _session_fetch_components(self):
        return list(self.nested_row_splits) + [self.flat_values]

    @staticmethod
    def _session_fetch_rebuild(parts):
        value = parts[-1]
        for splits in reversed(parts[:-1]):
            value = RaggedTensorValue(value, splits)
        return value

    def __str__(self):
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"

    __repr__ = __str__

    def __getitem__(self, key):
        """Row ``key`` (an int): a tensor, or a RaggedTensor when the ragged rank is above 1."""
        if not isinstance(key, int):
            raise NotImplementedError("RaggedTensor indexing supports a single integer row in ferroflow")
        sub = _ragged_slice(self, key, None if key == -1 else key + 1)
        return sub.values


def _ragged_slice(rt, start, limit):
    """Rows ``start:limit`` of ``rt`` (a RaggedTensor), re-based at 0."""
    splits = rt._row_splits[start:] if limit is None else rt._row_splits[start:limit + 1]
    lo, hi = splits[0], splits[-1]
    if isinstance(rt._values, RaggedTensor):
        values = _ragged_slice(rt._values, lo, hi)
    else:
        values = rt._values[lo:hi]
    return RaggedTensor._from_parts(values, splits - lo)


def _nrows_of(values, dtype):
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    return array_ops.shape(values, out_type=dtype)[0]


def _to_sparse_op(nested_splits, flat):
    splits = list(nested_splits) if isinstance(nested_splits, (list, tuple)) else [nested_splits]
    op = make_op("RaggedTensorToSparse", splits + list(flat),
                 {"RAGGED_RANK": len(splits)}, name="RaggedTensorToSparse")
    return op.outputs[0], op.outputs[1], op.outputs[2]


class RaggedTensorValue:
    """A fetched ragged tensor: NumPy ``values`` (or a nested RaggedTensorValue) and ``row_splits``."""

    def __init__(self, values, row_splits):
        self._values = values
        self._row_splits = np.asarray(row_splits)

    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensorValue):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensorValue):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        inner = self._values.shape[1:] if not isinstance(self._values, RaggedTensorValue) else \
            self._values.shape[1:]
        return (len(self._row_splits) - 1, None) + tuple(inner)

    def row_lengths(self):
        return self._row_splits[1:] - self._row_splits[:-1]

    def to_list(self):
        """The rows as nested Python lists (bytes for strings, as TensorFlow's ``to_list``)."""
        if isinstance(self._values, RaggedTensorValue):
            inner = self._values.to_list()
        else:
            inner = self._values.tolist()
        s = self._row_splits
        return [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def numpy(self):
        rows = [np.asarray(r) for r in self.to_list()]
        out = np.empty(len(rows), dtype=object)
        out[:] = rows
        return out

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"

    def __str__(self):
        return f"<tf.RaggedTensorValue {self.to_list()}>"


class RaggedTensorSpec(type_spec.TypeSpec):
    """A RaggedTensor's shape (ragged dimensions unknown), dtype, ragged rank and row-splits dtype."""

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype", "_flat_values_spec")

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None, row_splits_dtype=dtypes.int64,
                 flat_values_spec=None):
        self._shape = as_shape(shape)
        self._dtype = type_spec.base_dtype(dtype)
        if flat_values_spec is not None and flat_values_spec.dtype != self._dtype:
            raise ValueError("dtype must be the same as flat_values_spec.dtype")
        rank = self._shape.ndims
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int):
            raise TypeError(f"ragged_rank must be an int, got {ragged_rank!r}")
        # Below 0 (as TensorFlow allows): the rows of a dense tensor, which tf.data's unbatch makes of a ragged
        # rank 0 leaf; its values are Tensors.
        if rank is not None and ragged_rank >= max(rank, 1):
            raise ValueError(f"ragged_rank must be less than the rank ({rank}), got {ragged_rank}")
        self._ragged_rank = ragged_rank
        self._row_splits_dtype = type_spec.base_dtype(row_splits_dtype)
        self._flat_values_spec = flat_values_spec

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)
    flat_values_spec = property(lambda self: self._flat_values_spec)

    @property
    def value_type(self):
        return RaggedTensor if self._ragged_rank > 0 else ops.Tensor

    def _serialize(self):
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype, self._flat_values_spec)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits_dtype)
