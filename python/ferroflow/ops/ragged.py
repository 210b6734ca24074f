"""A minimal ``tf.RaggedTensor``: rows of different lengths, as TensorFlow represents them.

A ragged tensor is ``values`` (a tensor, or another ragged tensor for a ragged rank above 1) cut into rows by
``row_splits`` (int64 or int32, ``[nrows + 1]``, starting at 0, non-decreasing): row ``i`` is
``values[row_splits[i]:row_splits[i + 1]]``. This is what ``tf.strings.split``, the ``unicode_*`` ops,
``bytes_split`` and ``ngrams`` return. It converts to a padded (or truncated) dense tensor (``to_tensor``,
TensorFlow's ``RaggedTensorToTensor`` op) or a SparseTensor (``to_sparse``, ``RaggedTensorToSparse``), both
differentiable in the values; ``Session.run`` fetches it as a
``RaggedTensorValue`` (``to_list()``, ``values``, ``row_splits``), and ``to_list()``/``numpy()`` on the graph
object evaluate it in the default session; a ragged placeholder is fed with one. Indexing takes ints and
slices in every dimension (step 1 in ragged ones). The operators and tf.math's elementwise functions (which
dispatch here) work on the flat values of two ragged tensors with one row partition (checked at run time), or of
a ragged tensor and a scalar or dense tensor broadcast to it as TensorFlow does (``broadcast_dense_to_ragged``:
a ``[B, 1]`` column against ``[B, None]`` rows, vectors against uniform inner dimensions, a dense tensor of a
higher rank adding leading dimensions). ``tf.ragged``'s functions are in ``ragged_ops``; TensorFlow functions
that take ragged arguments (``tf.where``, ``tf.gather``, reductions, ...) hand them to ``ragged_dispatch``.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops, type_spec
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make_op, type_attr

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
        self._uniform_row_length = None  # set by from_uniform_row_length (every row that long)

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
        """The rows of the dense ``tensor``, cut to ``lengths`` (one length per row, or a tuple of nested
        row lengths) or with trailing ``padding`` items dropped (an item is padding when all of it equals
        ``padding``); at most one of the two. ``ragged_rank`` leading dimensions after the first turn ragged.
        """
        dt = dtypes.as_dtype(row_splits_dtype)
        if lengths is not None and padding is not None:
            raise ValueError("Specify argument `lengths` or `padding`, but not both.")
        if not isinstance(ragged_rank, int) or isinstance(ragged_rank, bool):
            raise TypeError(f"Argument `ragged_rank` must be an int. Received {ragged_rank}.")
        if ragged_rank <= 0:
            raise ValueError(f"Argument `ragged_rank` must be greater than 0. Received {ragged_rank}.")
        with ops.name_scope(name, "RaggedFromTensor", [tensor]):
            t = ops.convert_to_tensor(tensor, name="tensor")
            rank = t.shape.ndims
            if rank is not None and rank < 2:
                raise ValueError("The rank of a RaggedTensor must be greater than 1, i.e., a list of scalars won't "
                                 f"have ragged dimensions. Received argument `tensor` with rank {rank}.")
            if rank is None:
                raise ValueError("RaggedTensor.from_tensor: the rank of tensor must be statically known")
            if rank < ragged_rank + 1:
                raise ValueError(f"Shape {t.shape} must have rank at least {ragged_rank + 1}")
            shape = array_ops.shape(t, out_type=dt)
            if isinstance(lengths, (list, tuple)) and lengths and not isinstance(lengths[0], (int, float)):
                # Nested row lengths: keep the items under a mask of those lengths.
                if ragged_rank not in (1, len(lengths)):
                    raise ValueError("If Argument `lengths` is a tuple of row_lengths, argument `ragged_rank` must "
                                     f"be len(lengths): {len(lengths)}. Received ragged_rank: {ragged_rank}.")
                if rank < len(lengths) + 1:
                    raise ValueError(f"Shape {t.shape} must have rank at least {len(lengths) + 1}")
                lengths = [ops.convert_to_tensor(x, dtype=dt, name="lengths") for x in lengths]
                ones = array_ops.ones(array_ops.reshape(math_ops.reduce_sum(lengths[-1]), [1]), dtype=dtypes.bool)
                mask = cls.from_nested_row_lengths(ones, lengths).to_tensor(default_value=False)
                return cls.from_nested_row_lengths(array_ops.boolean_mask(t, mask), lengths)
            if ragged_rank > 1:
                # Merge the leading ragged_rank dimensions, cut the rows, then regroup them uniformly.
                flat_shape = array_ops.concat(
                    [array_ops.reshape(math_ops.reduce_prod(shape[:ragged_rank]), [1]), shape[ragged_rank:]], 0)
                result = cls.from_tensor(array_ops.reshape(t, flat_shape), lengths, padding,
                                         row_splits_dtype=dt)
                for axis in range(ragged_rank - 1, 0, -1):
                    nouter = math_ops.reduce_prod(shape[:axis])
                    width = shape[axis]
                    result = cls._from_parts(result, math_ops.range(0, nouter * width + 1, width, dtype=dt))
                return result
            ncols = shape[1]
            if padding is not None:
                padding = ops.convert_to_tensor(padding, dtype=t.dtype, name="padding")
                if not padding.shape.is_compatible_with(t.shape[2:]):
                    raise ValueError(f"Shapes {padding.shape} and {t.shape[2:]} are incompatible")
                is_pad = math_ops.equal(t, padding)
                if rank > 2:
                    is_pad = math_ops.reduce_all(is_pad, axis=list(range(2, rank)))
                # A row's length: one past its last item that is not padding.
                keep = math_ops.cast(math_ops.logical_not(is_pad), dt)
                positions = array_ops.expand_dims(math_ops.range(1, ncols + 1, dtype=dt), 0)
                lengths = math_ops.reduce_max(keep * positions, axis=1)
            if lengths is not None:
                lengths = ops.convert_to_tensor(lengths, dtype=dt, name="lengths") \
                    if not isinstance(lengths, ops.Tensor) else math_ops.cast(lengths, dt)
                lengths.shape.assert_has_rank(1)
                lengths = math_ops.maximum(math_ops.minimum(lengths, ncols), 0)
                mask = array_ops.sequence_mask(lengths, maxlen=ncols)
                zero = array_ops.zeros([1], dtype=dt)
                return cls._from_parts(array_ops.boolean_mask(t, mask),
                                       array_ops.concat([zero, math_ops.cumsum(lengths)], 0))
            values = array_ops.reshape(t, array_ops.concat(
                [array_ops.reshape(shape[0] * shape[1], [1]), shape[2:]], 0))
            return cls._from_parts(values, math_ops.range(0, shape[0] * ncols + 1, ncols, dtype=dt))

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        """Rows of ``uniform_row_length`` items each (``nrows`` rows; inferred when the length is nonzero)."""
        with ops.name_scope(name, "RaggedFromUniformRowLength", [values, uniform_row_length, nrows]):
            if not isinstance(values, RaggedTensor):
                values = ops.convert_to_tensor(values, name="values")
            length = ops.convert_to_tensor(uniform_row_length, name="uniform_row_length",
                                           preferred_dtype=dtypes.int64)
            if length.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
                length = math_ops.cast(length, dtypes.int64)
            dt = length.dtype.base_dtype
            if nrows is None:
                total = _nrows_of(values, dt)
                nrows = math_ops.floordiv(total, math_ops.maximum(length, 1))
            else:
                nrows = math_ops.cast(ops.convert_to_tensor(nrows, name="nrows"), dt)
            result = cls._from_parts(values, math_ops.range(nrows + 1, dtype=dt) * length)
            result._uniform_row_length = length
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
                                 validate=True):
        """Nested rows from the row ids of each level, outermost first (``nested_nrows``: each level's row
        count, by default one more than its largest id)."""
        if isinstance(nested_value_rowids, ops.Tensor):
            raise TypeError("Argument `nested_value_rowids` must be a list of Tensors.")
        if nested_nrows is None:
            nested_nrows = [None] * len(nested_value_rowids)
        elif isinstance(nested_nrows, ops.Tensor) or len(nested_nrows) != len(nested_value_rowids):
            raise ValueError("Argument `nested_nrows` must have the same length as argument "
                             "`nested_value_rowids`.")
        with ops.name_scope(name, "RaggedFromNestedValueRowIds", [flat_values]):
            result = flat_values
            for rowids, nrows in reversed(list(zip(nested_value_rowids, nested_nrows))):
                result = cls.from_value_rowids(result, rowids, nrows)
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
        """The length of each row along ``axis``: for ``axis=1`` a vector (one length per row); for a deeper
        axis the lengths of the items one level up, nested as they are; ``axis=0`` the number of rows."""
        rank = self.shape.ndims
        if rank is not None:
            axis = _positive_axis(axis, rank, "axis")
        with ops.name_scope(name, "RaggedRowLengths", [self._row_splits]):
            if axis == 0:
                return self.nrows()
            if axis == 1:
                return math_ops.subtract(self._row_splits[1:], self._row_splits[:-1])
            if isinstance(self._values, RaggedTensor):
                return self.with_values(self._values.row_lengths(axis - 1))
            shape = array_ops.shape(self._values, out_type=self._row_splits.dtype)
            return self.with_values(array_ops.fill(shape[:axis - 1], shape[axis - 1]))

    def value_rowids(self, name=None):
        """The row of each value."""
        with ops.name_scope(name, "RaggedValueRowIds", [self._row_splits]):
            return rowids_from_splits(self._row_splits)

    @property
    def uniform_row_length(self):
        """The length of every row when the rows were built uniform (``from_uniform_row_length``), else None."""
        return self._uniform_row_length

    def nested_value_rowids(self, name=None):
        """The row ids of every ragged level, outermost first."""
        with ops.name_scope(name, "RaggedNestedValueRowIds", [self]):
            return tuple(level.value_rowids() for level in _levels(self))

    def merge_dims(self, outer_axis, inner_axis):
        """Dimensions ``outer_axis`` through ``inner_axis`` merged into one (a Tensor once no ragged dimension
        is left): ``merge_dims(0, 1)`` concatenates the rows, ``merge_dims(1, 2)`` each row's sub-rows."""
        rank = self.shape.ndims
        if rank is None:
            raise ValueError("merge_dims needs a RaggedTensor of known rank")
        outer = _positive_axis(outer_axis, rank, "outer_axis")
        inner = _positive_axis(inner_axis, rank, "inner_axis")
        if outer > inner:
            raise ValueError(f"Expected outer_axis ({outer_axis}) to be less than or equal to inner_axis "
                             f"({inner_axis})")
        with ops.name_scope(None, "RaggedMergeDims", [self]):
            return _merge_dims(self, outer, inner)

    def nested_row_lengths(self, name=None):
        return tuple(RaggedTensor._from_parts(array_ops.zeros([0]), s).row_lengths() for s in self.nested_row_splits)

    def _row_splits_int64(self):
        s = self._row_splits
        return s if s.dtype.base_dtype == dtypes.int64 else math_ops.cast(s, dtypes.int64)

    def with_values(self, new_values):
        """The same row partition over other values."""
        result = RaggedTensor._from_parts(new_values, self._row_splits)
        result._uniform_row_length = self._uniform_row_length
        return result

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
        """The rows padded with ``default_value`` (zero, "" or False by dtype; a scalar or one of the items'
        shape) to the longest row, or padded or cut to ``shape`` (a dimension of None or -1 keeps the bounding
        size). One ``RaggedTensorToTensor`` op, as TensorFlow builds it."""
        with ops.name_scope(name, "RaggedToTensor", [self]):
            if default_value is not None:
                default = ops.convert_to_tensor(default_value, dtype=self.dtype, name="default_value")
            else:
                default = array_ops.zeros((), self.dtype)
            if isinstance(shape, (list, tuple)) and any(isinstance(d, ops.Tensor) for d in shape) and \
                    all(isinstance(d, (int, ops.Tensor)) for d in shape):
                shape = array_ops.stack(shape)
            splits = list(self.nested_row_splits)
            shape_t = _shape_tensor(shape, splits[0].dtype)
            out = make_op("RaggedTensorToTensor", [shape_t, self.flat_values, default] + splits, {
                "T": type_attr(self.dtype),
                "Tindex": type_attr(splits[0].dtype),
                "Tshape": type_attr(shape_t.dtype),
                "num_row_partition_tensors": len(splits),
                "row_partition_types": ["ROW_SPLITS"] * len(splits),
            }, name="RaggedTensorToTensor").outputs[0]
            static = self.shape
            if static.ndims is not None and not isinstance(shape, ops.Tensor):
                given = as_shape(shape)
                if given.ndims is not None:
                    static = TensorShape([a if a is not None else b
                                          for a, b in zip(given.as_list(), static.as_list())])
                out.set_shape(static)
            return out

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape holding every row: ``[nrows, longest row per ragged level, inner...]``
        (``axis`` picks entries)."""
        with ops.name_scope(name, "RaggedBoundingBox", [self, axis]):
            out_type = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
            dims = [self.nrows(out_type=out_type)]
            level = self
            while isinstance(level, RaggedTensor):
                lengths = level.row_lengths()
                longest = math_ops.reduce_max(array_ops.concat([array_ops.zeros([1], lengths.dtype), lengths], 0))
                dims.append(math_ops.cast(longest, out_type))
                level = level._values
            inner = array_ops.shape(level, out_type=out_type)[1:]
            box = array_ops.concat([array_ops.stack(dims), inner], 0)
            return box if axis is None else array_ops.gather(box, axis)

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
        """Indexing and slicing: an int or a slice per dimension (ragged ones included; slices of ragged
        dimensions take step 1 only). ``rt[i]`` is row ``i``; ``rt[:, j]`` the ``j``-th item of every row (every
        row must have one)."""
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if not isinstance(k, (int, np.integer, slice, ops.Tensor)) or isinstance(k, bool):
                raise TypeError(f"Ragged __getitem__ expects an int, a slice or a scalar int tensor; got {k!r}")
        if len(keys) > (self.shape.ndims or len(keys)):
            raise ValueError(f"Too many indices for RaggedTensor of rank {self.shape.ndims}")
        with ops.name_scope(None, "RaggedGetItem", [self]):
            return _getitem_outer(self, keys)

    # ----------------------------------------------------------------- arithmetic

    def _binary(self, other, fn, reverse=False):
        return ragged_elementwise(fn, other, self) if reverse else ragged_elementwise(fn, self, other)

    def __add__(self, other):
        return self._binary(other, math_ops.add)

    def __radd__(self, other):
        return self._binary(other, math_ops.add, reverse=True)

    def __sub__(self, other):
        return self._binary(other, math_ops.subtract)

    def __rsub__(self, other):
        return self._binary(other, math_ops.subtract, reverse=True)

    def __mul__(self, other):
        return self._binary(other, math_ops.multiply)

    def __rmul__(self, other):
        return self._binary(other, math_ops.multiply, reverse=True)

    def __truediv__(self, other):
        return self._binary(other, math_ops.truediv)

    def __rtruediv__(self, other):
        return self._binary(other, math_ops.truediv, reverse=True)

    def __floordiv__(self, other):
        return self._binary(other, math_ops.floordiv)

    def __rfloordiv__(self, other):
        return self._binary(other, math_ops.floordiv, reverse=True)

    def __mod__(self, other):
        return self._binary(other, math_ops.floormod)

    def __rmod__(self, other):
        return self._binary(other, math_ops.floormod, reverse=True)

    def __pow__(self, other):
        return self._binary(other, math_ops.pow)

    def __rpow__(self, other):
        return self._binary(other, math_ops.pow, reverse=True)

    def __lt__(self, other):
        return self._binary(other, math_ops.less)

    def __le__(self, other):
        return self._binary(other, math_ops.less_equal)

    def __gt__(self, other):
        return self._binary(other, math_ops.greater)

    def __ge__(self, other):
        return self._binary(other, math_ops.greater_equal)

    def __and__(self, other):
        return self._binary(other, math_ops.logical_and)

    def __rand__(self, other):
        return self._binary(other, math_ops.logical_and, reverse=True)

    def __or__(self, other):
        return self._binary(other, math_ops.logical_or)

    def __ror__(self, other):
        return self._binary(other, math_ops.logical_or, reverse=True)

    def __xor__(self, other):
        return self._binary(other, math_ops.logical_xor)

    def __rxor__(self, other):
        return self._binary(other, math_ops.logical_xor, reverse=True)

    def __neg__(self):
        return self.with_flat_values(math_ops.negative(self.flat_values))

    def __abs__(self):
        return self.with_flat_values(math_ops.abs(self.flat_values))

    def __invert__(self):
        return self.with_flat_values(math_ops.logical_not(self.flat_values))

    __hash__ = object.__hash__

    # tf.math's elementwise functions (math_ops._unary/_binary, truediv) dispatch on this flag.
    _ragged_elementwise = True

    # The Session feeds a RaggedTensor key (a tf.ragged.placeholder) part by part from a RaggedTensorValue.
    def _session_feed_pairs(self, value):
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(f"The value fed for a RaggedTensor must be a RaggedTensorValue, got "
                            f"{type(value).__name__}")
        if value.ragged_rank != self.ragged_rank:
            raise ValueError(f"The value fed for a RaggedTensor of ragged_rank {self.ragged_rank} has ragged_rank "
                             f"{value.ragged_rank}")
        return tuple(zip(self._session_fetch_components(),
                         list(value.nested_row_splits) + [value.flat_values]))


def ragged_elementwise(fn, x, y, name=None):
    """``fn(x, y)`` (a binary elementwise op) where ``x`` or ``y`` is ragged: on the flat values of two ragged
    tensors with one row partition (checked when the graph runs), or of one ragged tensor and a scalar."""
    if isinstance(x, RaggedTensorValue) or isinstance(y, RaggedTensorValue):
        from ferroflow.ops.ragged_ops import convert_to_tensor_or_ragged_tensor

        x, y = convert_to_tensor_or_ragged_tensor(x), convert_to_tensor_or_ragged_tensor(y)
    rt = x if isinstance(x, RaggedTensor) else y
    with ops.name_scope(name, "RaggedElementwise", []):
        if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
            from ferroflow.ops.ragged_ops import _match_row_splits_dtypes, _to_ragged_rank

            _match_row_splits_dtypes(x, y)
            if x.ragged_rank != y.ragged_rank:
                # Of one rank, the operand with fewer ragged dimensions turns its uniform ones ragged.
                if x.shape.ndims is None or x.shape.ndims != y.shape.ndims:
                    raise ValueError("ferroflow's ragged elementwise ops take two RaggedTensors of one rank, got "
                                     f"shapes {x.shape} and {y.shape}")
                rank = max(x.ragged_rank, y.ragged_rank)
                x = _to_ragged_rank(x, rank, x.row_splits.dtype)
                y = _to_ragged_rank(y, rank, y.row_splits.dtype)
                rt = x
            checks = same_splits_checks(x, y)
            with ops.control_dependencies(checks):
                xv = array_ops.identity(x.flat_values)
            yv = y.flat_values
            if not xv.shape[:1].is_compatible_with(yv.shape[:1]):
                # Different partitions for sure: leave the number of values open so that the splits check fails
                # when the graph runs, as in TensorFlow, rather than the op's shape check now.
                yv = array_ops.placeholder_with_default(yv, TensorShape([None]).concatenate(yv.shape[1:]))
            return rt.with_flat_values(fn(xv, yv))
        other = y if rt is x else x
        other = ops.convert_to_tensor(other, dtype=None if isinstance(other, ops.Tensor) else rt.dtype, name="y")
        first = rt is x
        rt, other = broadcast_dense_to_ragged(rt, other)
        out = fn(rt.flat_values, other) if first else fn(other, rt.flat_values)
        return rt.with_flat_values(out)


def rowids_from_splits(splits, dtype=None):
    """The row of every value, from row splits: a running count of the row boundaries at or before each value
    (one scatter of the boundaries and a cumulative sum, linear in the values)."""
    dtype = splits.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
    from ferroflow.ops.segment_ops import unsorted_segment_sum

    inner = splits[1:-1]
    marks = unsorted_segment_sum(array_ops.ones_like(inner, dtype=dtype), inner, splits[-1] + 1)[:-1]
    return math_ops.cumsum(marks)


def same_splits_checks(x, y):
    """The run-time checks that ragged ``x`` and ``y`` share their row splits, level by level (none for a level
    where both hold the very same tensor, as operands derived from one ragged tensor do)."""
    return [assert_same_splits(a, b) for a, b in zip(x.nested_row_splits, y.nested_row_splits) if a is not b]


def assert_same_splits(a, b):
    """An op failing when the graph runs unless the row splits ``a`` and ``b`` are equal (never at build time,
    as TensorFlow's check of ragged operands)."""
    from ferroflow.ops.control_flow_ops import Assert

    na, nb = array_ops.size(a, out_type=dtypes.int64), array_ops.size(b, out_type=dtypes.int64)
    n = math_ops.minimum(na, nb)
    same = math_ops.logical_and(math_ops.equal(na, nb), math_ops.reduce_all(math_ops.equal(
        math_ops.cast(a[:n], dtypes.int64), math_ops.cast(b[:n], dtypes.int64))))
    return Assert(same, ["Inputs must have identical ragged splits.", "Condition x == y did not hold element-wise:",
                         "x = ", a, "y = ", b])


def _uniform_rows(values, nouter, width):
    """``values`` (``nouter * width`` rows) grouped into ``nouter`` rows of ``width`` each."""
    return RaggedTensor._from_parts(values, math_ops.range(nouter + 1, dtype=width.dtype) * width)


def _positions(rt):
    """For every flat value of ``rt``: its index in each of the dimensions ``0..ragged_rank`` (the row, then
    the position within the row at each ragged level), outermost first, as int64 vectors."""
    from ferroflow.ops.ragged_ops import row_splits_to_segment_ids

    splits = [math_ops.cast(s, dtypes.int64) for s in rt.nested_row_splits]
    nvals = array_ops.shape(rt.flat_values, out_type=dtypes.int64)[0]
    current = math_ops.range(nvals, dtype=dtypes.int64)
    out = []
    for s in reversed(splits):
        rowid = array_ops.gather(row_splits_to_segment_ids(s), current)
        out.append(current - array_ops.gather(s, rowid))
        current = rowid
    out.append(current)
    return out[::-1]


def broadcast_dense_to_ragged(rt, y):
    """TensorFlow's broadcasting of a dense ``y`` against ``rt``, for an elementwise op on flat values.

    Returns ``(rt2, y2)``: ``rt2`` is ``rt``, or ``rt`` repeated under new leading uniform dimensions when
    ``y`` has a higher rank; ``y2`` broadcasts against ``rt2.flat_values`` as ``y`` does against ``rt2``.
    Dimensions line up from the right: ``y``'s dimensions against ``rt``'s uniform inner ones broadcast as
    for dense tensors; against the rows (dimension 0) a size of 1 or ``nrows``; against a ragged dimension a
    size of 1, or the length of every row (checked when the graph runs).
    """
    flat_rank = rt.flat_values.shape.ndims
    y_rank = y.shape.ndims
    if flat_rank is None or y_rank is None:
        raise ValueError("Ragged elementwise ops need operands of known rank; got a RaggedTensor with flat values "
                         f"of shape {rt.flat_values.shape} and a Tensor of shape {y.shape}")
    inner = flat_rank - 1
    if y_rank <= inner:
        return rt, y
    k = rt.ragged_rank
    rank = k + 1 + inner
    y_shape = array_ops.shape(y, out_type=dtypes.int64)
    if y_rank > rank:
        # y has more dimensions: rt repeats under them, each new dimension taking y's size.
        extra = y_rank - rank
        count = math_ops.reduce_prod(y_shape[:extra])
        nrows = rt.nrows(out_type=dtypes.int64)
        from ferroflow.ops.ragged_ops import _gather_rows

        tiled = _gather_rows(rt, array_ops.tile(math_ops.range(nrows, dtype=dtypes.int64),
                                                array_ops.reshape(count, [1])))
        tiled = tiled.with_row_splits_dtype(rt.row_splits_dtype)
        width = math_ops.cast(nrows, rt.row_splits_dtype)
        result = _uniform_rows(tiled, math_ops.cast(count, rt.row_splits_dtype), width)
        for axis in range(extra - 1, 0, -1):
            width = math_ops.cast(y_shape[axis], rt.row_splits_dtype)
            nouter = math_ops.cast(math_ops.reduce_prod(y_shape[:axis]), rt.row_splits_dtype)
            result = _uniform_rows(result, nouter, width)
        rt, k, rank = result, result.ragged_rank, y_rank
    outer = k + 1 - (rank - y_rank)  # how many of y's dimensions line up with rt's rows and ragged dimensions
    dims = y.shape.as_list()
    if all(d == 1 for d in dims[:outer]):
        return rt, array_ops.reshape(y, y_shape[outer:]) if outer else y
    full = array_ops.reshape(y, array_ops.concat([array_ops.ones([rank - y_rank], dtypes.int64), y_shape], 0))
    full_shape = array_ops.shape(full, out_type=dtypes.int64)
    static = [1] * (rank - y_rank) + dims  # y's sizes against rt's dimensions, None where unknown
    if all(d == 1 for d in static[1:k + 1]):
        # The usual case ([B, 1] against [B, None]): y varies with the rows only; every value takes its row's.
        rows = array_ops.reshape(full, array_ops.concat([full_shape[:1], full_shape[k + 1:]], 0))
        ids = _outer_rowids(rt)
        checks = []
        if static[0] != 1:
            nrows = rt.nrows(out_type=dtypes.int64)
            if static[0] is None:
                ids = ids * math_ops.cast(math_ops.not_equal(full_shape[0], 1), dtypes.int64)
            checks.append(_assert_true(math_ops.logical_or(math_ops.equal(full_shape[0], 1),
                                                           math_ops.equal(full_shape[0], nrows))))
        with ops.control_dependencies(checks):
            return rt, array_ops.gather(rows, ids)
    positions = _positions(rt)
    picks, checks = [], []
    lengths = [None] + [math_ops.cast(r.row_lengths(), dtypes.int64) for r in _levels(rt)]
    for axis in range(k + 1):
        size = full_shape[axis]
        is_one = math_ops.equal(size, 1)
        picks.append(positions[axis] * math_ops.cast(math_ops.logical_not(is_one), dtypes.int64))
        if axis == 0:
            ok = math_ops.logical_or(is_one, math_ops.equal(size, rt.nrows(out_type=dtypes.int64)))
        else:
            ok = math_ops.reduce_all(math_ops.logical_or(is_one, math_ops.equal(lengths[axis], size)))
        checks.append(_assert_true(ok))
    with ops.control_dependencies(checks):
        index = array_ops.stack(picks, axis=1)
    return rt, array_ops.gather_nd(full, index)


def _assert_true(ok):
    """A run-time check of a broadcast (TensorFlow's message for it)."""
    from ferroflow.ops.control_flow_ops import Assert

    return Assert(ok, ["Input tensors have incompatible shapes.", "Condition x == y did not hold element-wise:"])


def _outer_rowids(rt):
    """The row (dimension 0) of every flat value of ``rt``, int64."""
    levels = _levels(rt)
    ids = math_ops.cast(rowids_from_splits(levels[-1].row_splits), dtypes.int64)
    for level in reversed(levels[:-1]):
        ids = array_ops.gather(math_ops.cast(rowids_from_splits(level.row_splits), dtypes.int64), ids)
    return ids


def _positive_axis(axis, rank, what):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{what} must be an int, got {axis!r}")
    if not -rank <= axis < rank:
        raise ValueError(f"{what}={axis} out of bounds: expected {-rank}<={what}<{rank}")
    return int(axis) % rank


def _merge_dense(t, outer, inner):
    """Dimensions ``outer..inner`` of a dense tensor merged."""
    if outer == inner:
        return t
    shape = array_ops.shape(t, out_type=dtypes.int64)
    merged = array_ops.concat([shape[:outer], constant_op.constant([-1], dtypes.int64), shape[inner + 1:]], 0)
    return array_ops.reshape(t, merged)


def _rebase(splits, values, depth):
    """``splits`` (over ``values``' rows) as splits over what merging ``values``' dimensions ``0..depth`` makes."""
    for level in range(depth):
        if isinstance(values, RaggedTensor):
            splits = array_ops.gather(values.row_splits, splits)
            values = values.values
        else:
            shape = array_ops.shape(values, out_type=splits.dtype)
            return splits * math_ops.reduce_prod(shape[1:depth - level + 1])
    return splits


def _merge_dims(rt, outer, inner):
    if not isinstance(rt, RaggedTensor):
        return _merge_dense(rt, outer, inner)
    if outer == inner:
        return rt
    if outer == 0:
        # The rows concatenated are the values; merge further down the values.
        return rt.values if inner == 1 else _merge_dims(rt.values, 0, inner - 1)
    if outer == 1:
        merged = _merge_dims(rt.values, 0, inner - 1)
        return RaggedTensor._from_parts(merged, _rebase(rt.row_splits, rt.values, inner - 1))
    return rt.with_values(_merge_dims(rt.values, outer - 1, inner - 1))


def _levels(rt):
    """``rt`` and its ragged values, outermost first."""
    out = []
    while isinstance(rt, RaggedTensor):
        out.append(rt)
        rt = rt._values
    return out


def _shape_tensor(shape, dtype):
    """``to_tensor``'s shape as TensorFlow's op takes it: a vector with -1 for each size left to the bounding
    box, or a scalar -1 when even the rank is left open."""
    if isinstance(shape, ops.Tensor):
        return shape if shape.dtype.base_dtype in (dtypes.int32, dtypes.int64) else math_ops.cast(shape, dtype)
    shape = as_shape(shape)
    if shape.ndims is None:
        return constant_op.constant(-1, dtype=dtype)
    return constant_op.constant([-1 if d is None else d for d in shape.as_list()], dtype=dtype)


def _index_tensor(k, dtype):
    return math_ops.cast(k, dtype) if isinstance(k, ops.Tensor) else constant_op.constant(int(k), dtype=dtype)


def _getitem_outer(rt, keys):
    """``keys`` applied to ``rt`` from its first (row) dimension."""
    if not keys:
        return rt
    first, rest = keys[0], keys[1:]
    if isinstance(first, slice):
        if first.step not in (None, 1):
            from ferroflow.ops.ragged_ops import _gather_rows

            n = rt.nrows()
            rows = math_ops.range(n, dtype=n.dtype)[first]
            rows_rt = _gather_rows(rt, rows)
        elif first.start is None and first.stop is None:
            rows_rt = rt
        else:
            rows_rt = _slice_rows(rt, first)
        return _getitem_inner(rows_rt, rest) if rest else rows_rt
    # One row: its values (an out-of-range index fails in the strided slice, as in TensorFlow).
    splits = rt._row_splits
    lo, hi = splits[:-1][first], splits[1:][first]
    row = _slice_rows(rt._values, slice(lo, hi)) if isinstance(rt._values, RaggedTensor) else rt._values[lo:hi]
    if not rest:
        return row
    if isinstance(row, RaggedTensor):
        return _getitem_outer(row, rest)
    return row[rest]


def _slice_rows(rt, key):
    """Rows ``key`` (a slice of step 1) of ``rt``, re-based at 0."""
    sub_splits = _slice_splits(rt._row_splits, key)
    lo, hi = sub_splits[0], sub_splits[-1]
    if isinstance(rt._values, RaggedTensor):
        values = _slice_rows(rt._values, slice(lo, hi))
    else:
        values = rt._values[lo:hi]
    return RaggedTensor._from_parts(values, sub_splits - lo)


def _slice_splits(splits, key):
    """The splits of rows ``key.start:key.stop`` (Python's clipping rules, negative ends from the end)."""
    nrows = array_ops.size(splits, out_type=splits.dtype) - 1

    def bound(v, default):
        if v is None:
            return default
        v = _index_tensor(v, splits.dtype)
        v = v + nrows * math_ops.cast(math_ops.less(v, 0), splits.dtype)  # negative: from the end
        return math_ops.minimum(math_ops.maximum(v, 0), nrows)

    start = bound(key.start, array_ops.zeros([], splits.dtype))
    stop = math_ops.maximum(bound(key.stop, nrows), start)
    return splits[start:stop + 1]


def _getitem_inner(rt, keys):
    """``keys`` applied to ``rt``'s dimensions after the first (rows stay)."""
    if not keys:
        return rt
    first, rest = keys[0], keys[1:]
    if isinstance(first, slice) and first.start is None and first.stop is None and first.step in (None, 1):
        if isinstance(rt._values, RaggedTensor):
            return rt.with_values(_getitem_inner(rt._values, rest)) if rest else rt
        return rt.with_values(rt._values[(slice(None),) + tuple(rest)]) if rest else rt
    from ferroflow.ops.ragged_ops import _gather_rows, _ragged_range_op

    splits = rt._row_splits
    starts, limits = splits[:-1], splits[1:]
    lengths = limits - starts
    if isinstance(first, slice):
        if first.step not in (None, 1):
            raise ValueError("ferroflow slices ragged dimensions with step 1 only")

        def bound(v, default):
            if v is None:
                return default
            v = _index_tensor(v, splits.dtype)
            v = v + lengths * math_ops.cast(math_ops.less(v, 0), splits.dtype)  # negative: from the row's end
            return math_ops.minimum(math_ops.maximum(v, 0), lengths)

        lo = bound(first.start, array_ops.zeros_like(lengths))
        hi = math_ops.maximum(bound(first.stop, lengths), lo)
        new_splits, positions = _ragged_range_op(starts + lo, starts + hi, array_ops.ones_like(starts), splits.dtype)
        taken = _gather_rows(rt._values, positions)
        if rest:
            taken = _getitem_inner(taken, rest) if isinstance(taken, RaggedTensor) else \
                taken[(slice(None),) + tuple(rest)]
        return RaggedTensor._from_parts(taken, new_splits)
    raise ValueError("Cannot index into an inner ragged dimension.")


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
