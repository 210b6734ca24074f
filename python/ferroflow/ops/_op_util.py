"""Small helpers shared by the op modules."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops


def make_op(op_type, inputs, attrs=None, name=None):
    """Adds one op to the graph of its inputs (or the default graph); returns the Operation."""
    g = ops._get_graph_from_inputs(inputs)
    return g._create_op(op_type, list(inputs), attrs or {}, name=name)


def make(op_type, inputs, attrs=None, name=None):
    """Like ``make_op`` but returns the first output."""
    return make_op(op_type, inputs, attrs, name)._outputs[0]


def type_attr(dtype):
    """A ``type`` attr; a reference type (a variable's ``float32_ref``) names its element type."""
    return ("type", dtypes.as_dtype(dtype).base_dtype.as_datatype_enum)


def shape_attr(shape):
    from ferroflow.framework.tensor_shape import as_shape

    return ("shape", None if shape is None else as_shape(shape)._as_native())


def _beyond_int32(value):
    """Whether an integer value (nested lists, NumPy) holds a number outside int32's range."""
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        return arr.dtype.kind in "iu" and arr.size > 0 and (arr.min() < -(2**31) or arr.max() >= 2**31)
    if isinstance(value, (list, tuple)):
        return any(_beyond_int32(v) for v in value)
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and not -(2**31) <= value < 2**31


def to_int_tensor(value, name, dtype=None):
    """Converts an axis/shape argument to an int32 tensor, or int64 when a value needs it (as TF infers the
    index type). Integer conversions wrap out-of-range values, so int32 is never tried for those."""
    if isinstance(value, ops.Tensor):
        return value
    if dtype is None:
        if _beyond_int32(value):
            return ops.convert_to_tensor(value, dtype=dtypes.int64, name=name)
        try:
            return ops.convert_to_tensor(value, dtype=dtypes.int32, name=name)
        except (TypeError, ValueError):
            return ops.convert_to_tensor(value, dtype=dtypes.int64, name=name)
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


def as_list_or_tensor(shape):
    """A shape argument: list of ints, TensorShape, or tensor."""
    if hasattr(shape, "as_list") and not isinstance(shape, ops.Tensor):
        return shape.as_list()
    return shape
