"""``tf.IndexedSlices``: a sparse gradient (rows of a tensor)."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops


class IndexedSlices:
    """Rows ``values[i]`` of a tensor of shape ``dense_shape`` at ``indices[i]`` (repeats add up)."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def name(self):
        return self._values.name

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self):
        return self._values.device

    @property
    def shape(self):
        from ferroflow.framework import tensor_util
        from ferroflow.framework.tensor_shape import TensorShape, unknown_shape

        if self._dense_shape is None:
            return unknown_shape()
        v = tensor_util.constant_value(self._dense_shape)
        return tensor_util.constant_value_as_shape(self._dense_shape) if v is None else TensorShape([int(d) for d in v])

    def get_shape(self):
        return self.shape

    def __repr__(self):
        shape = f", dense_shape={self._dense_shape}" if self._dense_shape is not None else ""
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"


class IndexedSlicesValue:
    """A fetched IndexedSlices: NumPy ``values``, ``indices`` and ``dense_shape``."""

    def __init__(self, values, indices, dense_shape):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __iter__(self):
        return iter((self.values, self.indices, self.dense_shape))

    def __repr__(self):
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """``value`` itself when it is IndexedSlices (of a compatible dtype), else ``tf.convert_to_tensor(value)``."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor "
                             f"with dtype {value.dtype.name}: {value!r}")
        return value
    return ops.convert_to_tensor(value, dtype=dtype, name=name)
