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
