"""``tf.SparseTensor`` and ``tf.SparseTensorValue``.

A SparseTensor is three dense tensors in one graph: ``indices`` (int64,
``[N, rank]``), ``values`` (``[N]``) and ``dense_shape`` (int64, ``[rank]``).
It is a Python composite, not a graph value: ops on sparse tensors take and
return the three parts. ``Session.run`` fetches it as a
``SparseTensorValue`` and feeds it from one.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.framework.tensor_shape import TensorShape

__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor", "is_sparse"]


class SparseTensorValue(collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])):
    """A fetched (or to-be-fed) sparse tensor: NumPy ``indices``, ``values`` and ``dense_shape``."""

    __slots__ = ()


class SparseTensor:
    """A sparse tensor: the non-default ``values`` at ``indices`` of a tensor of shape ``dense_shape``."""

    @classmethod
    def from_value(cls, sparse_tensor_value):
        """A SparseTensor of constants from a ``SparseTensorValue`` (a SparseTensor passes through)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        if not is_sparse(sparse_tensor_value):
            raise TypeError(f"Neither a SparseTensor nor SparseTensorValue: {sparse_tensor_value}.")
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)

    def __init__(self, indices, values, dense_shape):
        with ops.name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = ops.convert_to_tensor(indices, name="indices", dtype=dtypes.int64)
            self._values = ops.convert_to_tensor(values, name="values")
            self._dense_shape = ops.convert_to_tensor(dense_shape, name="dense_shape", dtype=dtypes.int64)
        self._indices.get_shape().with_rank(2)
        self._values.get_shape().with_rank(1)
        self._dense_shape.get_shape().with_rank(1)
        self._indices.get_shape()[1].merge_with(self._dense_shape.get_shape()[0])
        self._indices.get_shape()[0].merge_with(self._values.get_shape()[0])
        # The static dense shape where ``dense_shape`` is not a constant (set by ``set_shape`` and the ops
        # that know their output's shape, as TensorFlow's ``_dense_shape_default``).
        self._dense_shape_default = None

    @property
    def indices(self):
        """int64 ``[N, rank]``: the coordinates of the stored values."""
        return self._indices

    @property
    def values(self):
        """``[N]``: the stored values."""
        return self._values

    @property
    def dense_shape(self):
        """int64 ``[rank]``: the shape of the dense tensor this one stands for."""
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        """The op producing ``values``."""
        return self._values.op

    @property
    def graph(self):
        return self._indices.graph

    @property
    def shape(self):
        """The static dense shape: known where ``dense_shape`` is a constant, else its rank at most."""
        value = tensor_util.constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in value])
        if self._dense_shape_default is not None:
            return self._dense_shape_default
        return tensor_util.constant_value_as_shape(self._dense_shape)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Narrows the static dense shape to ``shape`` (ValueError if they are incompatible)."""
        if not isinstance(shape, TensorShape):
            shape = TensorShape(shape)
        self._dense_shape_default = self.shape.merge_with(shape)

    def consumers(self):
        return sorted({op for t in (self._indices, self._values, self._dense_shape) for op in t.consumers()},
                      key=lambda op: op.name)

    def eval(self, feed_dict=None, session=None):
        """The value in ``session`` (default: the default session), as a ``SparseTensorValue``."""
        session = session or ops.get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered.")
        return session.run(self, feed_dict)

    def with_values(self, new_values):
        """The same indices and dense shape with other values."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __str__(self):
        return f"SparseTensor(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"

    __repr__ = __str__

    def _as_parts(self):
        return self._indices, self._values, self._dense_shape


def is_sparse(x):
    """Whether ``x`` is a SparseTensor or a SparseTensorValue."""
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """``value`` as a SparseTensor (from a SparseTensorValue) or a Tensor."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError(f"Sparse dtype: requested = {dtype}, actual = {value.dtype}")
        return value
    return ops.convert_to_tensor(value, dtype=dtype, name=name)
