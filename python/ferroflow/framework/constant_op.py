"""``tf.constant``."""

from __future__ import annotations

import numpy as np

from ferroflow.framework import ops, tensor_util


def _contains_tensor(value):
    if isinstance(value, ops.Tensor) or hasattr(value, "_as_tensor"):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A tensor holding ``value`` (TF1 semantics: a short value is padded with its last element)."""
    if _contains_tensor(value):
        raise TypeError(f"Expected a constant value, got a Tensor inside {value!r}; use tf.stack instead.")
    arr, dtype = tensor_util.to_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
        size = int(np.prod(shape, dtype=np.int64))
        if verify_shape and tuple(arr.shape) != tuple(shape):
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {tuple(arr.shape)}.")
        if arr.size > size:
            raise ValueError(f"Too many elements provided. Takes at most {size}, got {arr.size}.")
        if arr.size == size:
            arr = arr.reshape(shape)
        elif arr.size == 0:
            raise ValueError(f"Cannot build a constant of shape {shape} from an empty value")
        else:
            flat = arr.reshape(-1)
            arr = np.concatenate([flat, np.repeat(flat[-1:], size - arr.size)]).reshape(shape)
    g = ops.get_default_graph()
    op = g._create_op(
        "Const",
        [],
        {"value": tensor_util.tensor_attr(arr, dtype), "dtype": ("type", dtype.as_datatype_enum)},
        name=name,
    )
    return op._outputs[0]


def _constant_tensor_conversion_function(value, dtype=None, name=None, as_ref=False):
    del as_ref  # constants are never references
    return constant(value, dtype=dtype, name=name or "Const")


# Everything ``convert_to_tensor`` has no more specific conversion for becomes a constant.
ops.register_tensor_conversion_function(object, _constant_tensor_conversion_function, 200)


def _tensor_shape_tensor_conversion_function(s, dtype=None, name=None, as_ref=False):
    """A fully known TensorShape as a shape vector (int32, or int64 when asked or needed), as TF converts it."""
    from ferroflow.framework import dtypes

    del as_ref
    if not s.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape {s} to a Tensor.")
    dims = s.as_list()
    int64_needed = any(d >= 2**31 for d in dims)
    if dtype is None:
        dtype = dtypes.int64 if int64_needed else dtypes.int32
    elif dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Cannot convert TensorShape {s} to dtype {dtype}. Allowed dtypes are tf.int32 and tf.int64.")
    if dtype == dtypes.int32 and int64_needed:
        raise ValueError(f"TensorShape {s} is too large to convert to dtype int32")
    return constant(dims, dtype=dtype, name=name or "shape_as_tensor")


def _dimension_tensor_conversion_function(d, dtype=None, name=None, as_ref=False):
    """A known Dimension as a scalar (int32 unless int64 is asked for), as TF converts it."""
    from ferroflow.framework import dtypes

    del as_ref
    if d.value is None:
        raise ValueError(f"Cannot convert unknown Dimension {d} to a Tensor.")
    if dtype is None:
        dtype = dtypes.int32
    elif dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Cannot convert Dimension {d} to dtype {dtype}. Allowed dtypes are tf.int32 and tf.int64.")
    return constant(d.value, dtype=dtype, name=name or "shape_as_tensor")


def _register_shape_conversions():
    from ferroflow.framework.tensor_shape import Dimension, TensorShape

    ops.register_tensor_conversion_function(TensorShape, _tensor_shape_tensor_conversion_function, 100)
    ops.register_tensor_conversion_function(Dimension, _dimension_tensor_conversion_function, 100)


_register_shape_conversions()
