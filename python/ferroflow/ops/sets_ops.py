"""The ops of ``tf.sets``: sets along the last dimension of a dense tensor or ``SparseTensor``, one set per index of the
other dimensions; results are ``SparseTensor``s holding each set's members in ascending order (TensorFlow's
``SetSize`` and ``*SetOperation`` ops; kernels in ``crates/runtime/src/kernels/sets.rs``)."""

from ferroflow.framework import dtypes, ops
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.ops._op_util import make, make_op, type_attr

__all__ = [
    "difference", "intersection", "set_difference", "set_intersection", "set_size", "set_union", "size", "union",
]

_VALID_DTYPES = frozenset([
    dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.string,
])


def _operand(x, name):
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    if isinstance(x, SparseTensor):
        return x
    return ops.convert_to_tensor(x, name=name)


def size(a, validate_indices=True):
    """The number of distinct values of each set of the SparseTensor ``a`` (int32, ``a``'s shape without its last
    dimension)."""
    a = _operand(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"Invalid dtype `{a.values.dtype}` not in supported dtypes: `{_VALID_DTYPES}`.")
    with ops.name_scope(None, "SetSize"):
        return make("SetSize", [a.indices, a.values, a.dense_shape],
                    {"validate_indices": bool(validate_indices), "T": type_attr(a.values.dtype)})


def _operands(a, b):
    """(a, b, swapped): both converted, a SparseTensor ``a`` with a dense ``b`` swapped (the ops take dense first)."""
    a = _operand(a, "a")
    if a.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"'a' has invalid dtype `{a.dtype}` not in supported dtypes: `{_VALID_DTYPES}`.")
    b = _operand(b, "b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _apply(a, b, operation, validate_indices):
    attrs = {"set_operation": operation, "validate_indices": bool(validate_indices), "T": type_attr(a.dtype.base_dtype)}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please flip the order of your "
                             "inputs.")
        op_type = "SparseToSparseSetOperation"
        inputs = [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
    elif isinstance(b, SparseTensor):
        op_type = "DenseToSparseSetOperation"
        inputs = [a, b.indices, b.values, b.dense_shape]
    else:
        op_type = "DenseToDenseSetOperation"
        inputs = [a, b]
    with ops.name_scope(None, op_type):
        out = make_op(op_type, inputs, attrs)._outputs
    return SparseTensor(out[0], out[1], out[2])


def intersection(a, b, validate_indices=True):
    """The values in both ``a``'s and ``b``'s set, for each set (dense or sparse operands of one dtype)."""
    a, b, _ = _operands(a, b)
    return _apply(a, b, "intersection", validate_indices)


def union(a, b, validate_indices=True):
    """The values in ``a``'s or ``b``'s set, for each set."""
    a, b, _ = _operands(a, b)
    return _apply(a, b, "union", validate_indices)


def difference(a, b, aminusb=True, validate_indices=True):
    """The values of ``a``'s set not in ``b``'s (``aminusb=False``: of ``b``'s not in ``a``'s), for each set."""
    a, b, swapped = _operands(a, b)
    if swapped:
        aminusb = not aminusb
    return _apply(a, b, "a-b" if aminusb else "b-a", validate_indices)


set_size = size
set_intersection = intersection
set_union = union
set_difference = difference
