"""Partitioned variables: one logical variable stored as several part Variables.

A partitioner is a callable ``partitioner(shape, dtype) -> [parts per axis]``
(at most one entry above 1). ``get_variable(..., partitioner=p)`` then
creates ``<name>/part_0``, ``<name>/part_1``, ... each holding a contiguous
slice along that axis (the first ``size % n`` parts one row larger), each
with a ``SaveSliceInfo`` telling savers where the part sits in the full
tensor, and returns a ``PartitionedVariable`` grouping them.
"""

from __future__ import annotations

import math

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops

__all__ = [
    "PartitionedVariable",
    "create_partitioned_variables",
    "fixed_size_partitioner",
    "min_max_variable_partitioner",
    "variable_axis_size_partitioner",
]


class _PartitionInfo:
    """Where a part sits in its full variable; passed to initializers as ``partition_info``."""

    def __init__(self, full_shape, var_offset):
        full_shape = list(full_shape)
        var_offset = list(var_offset)
        if len(full_shape) != len(var_offset):
            raise ValueError(
                f"Expected equal length, but `var_offset` is of length {len(var_offset)} while full_shape is "
                f"of length {len(full_shape)}."
            )
        for i, (off, dim) in enumerate(zip(var_offset, full_shape)):
            if off < 0 or off >= max(dim, 1):
                raise ValueError(f"Expected 0 <= offset < dimension at index {i}, got offset {off} for dim {dim}")
        self._full_shape = full_shape
        self._var_offset = var_offset

    @property
    def full_shape(self):
        """Shape of the whole (unpartitioned) variable."""
        return self._full_shape

    @property
    def var_offset(self):
        """Offset of this part in the whole variable."""
        return self._var_offset

    def single_offset(self, shape):
        """The offset along the one partitioned axis (0 if unpartitioned)."""
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self._var_offset[axis]

    def single_slice_dim(self, shape):
        """The axis along which ``shape`` (a part's shape) differs from the full shape, or None."""
        shape = list(shape)
        if len(shape) != len(self._full_shape):
            raise ValueError(f"Expected equal length, but received shape {shape} of length {len(shape)} "
                             f"while self.full_shape {self._full_shape} is of length {len(self._full_shape)}.")
        axes = [i for i, (s, f) in enumerate(zip(shape, self._full_shape)) if s != f]
        if len(axes) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape {shape}: it is partitioned along {axes}")
        return axes[0] if axes else None


def _slices(full_shape, partitions):
    """``[(offset, shape), ...]`` of the parts for ``partitions`` (one entry per axis)."""
    axes = [i for i, p in enumerate(partitions) if p > 1]
    if len(axes) > 1:
        raise ValueError(
            f"Can only slice a variable along one dimension: shape: {list(full_shape)}, partitioning: {partitions}"
        )
    if not axes:
        return [([0] * len(full_shape), list(full_shape))]
    axis = axes[0]
    n = partitions[axis]
    base, extra = divmod(full_shape[axis], n)
    out = []
    offset = 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        off = [0] * len(full_shape)
        off[axis] = offset
        shape = list(full_shape)
        shape[axis] = size
        out.append((off, shape))
        offset += size
    return out


def _check_partitions(name, shape, partitions):
    if not isinstance(partitions, (list, tuple)) or not all(isinstance(p, int) for p in partitions):
        raise ValueError(f"Partitioner for variable {name} returned {partitions!r}; expected a list of ints")
    partitions = [int(p) for p in partitions]
    if len(partitions) != shape.ndims:
        raise ValueError(
            "Partitioner returned a partition list that does not match the Variable's rank: "
            f"{partitions} vs. {shape}"
        )
    if any(p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {partitions}")
    for p, dim in zip(partitions, shape.as_list()):
        if p > 1 and p > dim:
            raise ValueError(
                f"Partitioner for variable {name} asked for {p} parts along a dimension of size {dim} (shape {shape})"
            )
    return partitions


class PartitionedVariable:
    """A variable split into parts along one axis.

    Iterating gives the part Variables; used as a tensor it is the parts
    concatenated (``<name>/ConcatPartitions/concat``); ``embedding_lookup``
    and savers use the parts directly.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)) or not variable_list:
            raise ValueError(f"variable_list for {name} is not a non-empty list: {variable_list!r}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions!r}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        n = 1
        for p in partitions:
            n *= p
        if n != len(variable_list):
            raise ValueError(
                f"Partition count {n} (partitions {list(partitions)}) does not match the number of "
                f"variables {len(variable_list)} for {name}"
            )
        for v in variable_list:
            if v._get_save_slice_info() is None:
                raise ValueError(f"All variables must have a save_slice_info available: {v.name}")
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._partitions = list(partitions)
        self._as_tensor_cache = None

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        n = 1
        for p in self._partitions:
            n *= p
        return n

    def __getitem__(self, i):
        return self._variable_list[i]

    @property
    def name(self):
        """The full variable's name (the parts are ``<name>/part_<i>``)."""
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    @property
    def op(self):
        """The first part's op (TensorFlow users sometimes ask a partitioned variable for it)."""
        return self._variable_list[0].op

    def _get_variable_list(self):
        """The part Variables, in offset order."""
        return list(self._variable_list)

    def _get_partitions(self):
        """Parts per axis."""
        return list(self._partitions)

    def _partition_axes(self):
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    def _concat(self):
        """The full value: the parts concatenated along the partition axis."""
        if len(self._variable_list) == 1:
            with ops.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: {axes}.")
        with ops.name_scope(self._name + "/ConcatPartitions/"):
            value = array_ops.concat(list(self._variable_list), axes[0])
        with ops.name_scope(None):
            return array_ops.identity(value, name=self._name)

    def as_tensor(self):
        """The parts concatenated into one tensor."""
        with ops.control_dependencies(None):
            return self._concat()

    def _as_tensor(self, dtype=None, name=None):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(self._dtype):
            raise ValueError(
                f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                f"variable of type '{self._dtype.name}'"
            )
        return self.as_tensor()

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns the matching slice of ``value`` to every part; returns the list of assign results."""
        value = ops.convert_to_tensor(value, dtype=self._dtype)
        axis = self._partition_axes()[0]
        sizes = [v.shape.as_list()[axis] for v in self._variable_list]
        pieces = array_ops.split(value, sizes, axis=axis) if len(sizes) > 1 else [value]
        outs = [v.assign(p, use_locking=use_locking, read_value=read_value) for v, p in zip(self._variable_list, pieces)]
        return outs

    def __repr__(self):
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} "
                f"parts={len(self._variable_list)}>")


def _element_size(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    if dtype.base_dtype == dtypes.string:
        return bytes_per_string_element
    return dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner giving ``num_shards`` parts along ``axis`` (fewer if the axis is shorter)."""

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if axis >= shape.ndims:
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only {shape}")
        partitions = [1] * shape.ndims
        partitions[axis] = min(num_shards, shape.as_list()[axis])
        return partitions

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """A partitioner keeping every part under ``max_shard_bytes`` (at least one slice per part).

    Splits along ``axis`` only, into at most ``max_shards`` parts when given.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. Currently, max_shard_bytes "
            f"is {max_shard_bytes} and bytes_per_string_element is {bytes_per_string_element}"
        )
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dims = shape.as_list()
        if axis >= len(dims):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only {shape}")
        partitions = [1] * len(dims)
        if dims[axis] == 0:
            return partitions
        bytes_per_slice = (shape.num_elements() / dims[axis]) * _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice)) if bytes_per_slice else dims[axis]
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions[axis] = shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """A partitioner giving parts of at least ``min_slice_size`` bytes, at most ``max_partitions`` of them."""

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dims = shape.as_list()
        if axis >= len(dims):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only {shape}")
        total = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        wanted = int(math.ceil(total / min_slice_size))
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(dims[axis], max_partitions, wanted))
        return partitions

    return _partitioner


def _create_partitioned(name, shape, dtype, partitions, make_part):
    """Builds the parts with ``make_part(part_name, part_shape, partition_info)`` and groups them."""
    from ferroflow.ops import variables

    full = shape.as_list()
    parts = []
    for i, (offset, part_shape) in enumerate(_slices(full, partitions)):
        part_name = f"{name}/part_{i}"
        info = _PartitionInfo(full_shape=full, var_offset=offset)
        with ops.name_scope(None):
            v = make_part(part_name, part_shape, info)
        v._set_save_slice_info(
            variables.Variable.SaveSliceInfo(full_name=name, full_shape=full, var_offset=offset, var_shape=part_shape)
        )
        parts.append(v)
    return PartitionedVariable(name=name, shape=shape, dtype=dtype, variable_list=parts, partitions=partitions)


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32, trainable=True,
                                 collections=None, name=None, reuse=None):
    """Creates ``<name>/part_<i>`` variables sliced as ``slicing`` says; returns the list of parts.

    Deprecated in TensorFlow in favour of ``get_variable(..., partitioner=...)``.
    """
    from ferroflow.ops import variable_scope

    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the length: "
                         f"shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope.variable_scope(name, "PartitionedVariable", reuse=reuse):
        pv = variable_scope._get_default_variable_store().get_variable(
            variable_scope.get_variable_scope().name, shape=shape, dtype=dtype, initializer=initializer,
            trainable=trainable, collections=collections, partitioner=lambda **_: list(slicing), reuse=reuse,
        )
    return list(pv)
