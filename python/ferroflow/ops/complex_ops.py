"""Complex numbers: ``tf.complex``, ``tf.math.real/imag/conj/angle``, ``tf.to_complex64/128``.

Each builds TensorFlow's op type (``Complex``, ``Real``, ``Imag``, ``Conj``, ``Angle``,
``ComplexAbs``) with its ``Tout`` attr, and treats real inputs as TensorFlow's Python wrappers do
(``real`` of a real tensor is the tensor, ``imag`` its zeros, ``conj`` the tensor itself).
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make, type_attr


def complex(real, imag, name=None):  # noqa: A001 - TensorFlow's name
    """``real + 1j * imag`` (float32 parts give complex64, float64 parts complex128)."""
    real = ops.convert_to_tensor(real, name="real")
    imag = ops.convert_to_tensor(imag, name="imag")
    with ops.name_scope(name, "Complex", [real, imag]) as scope:
        types = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if types == (dtypes.float64, dtypes.float64):
            tout = dtypes.complex128
        elif types == (dtypes.float32, dtypes.float32):
            tout = dtypes.complex64
        else:
            raise TypeError(
                f"The `real` and `imag` components have incorrect types: {real.dtype.name} {imag.dtype.name}. "
                "They should both be either `tf.float32` or `tf.float64`."
            )
        return make("Complex", [real, imag], {"T": type_attr(types[0]), "Tout": type_attr(tout)}, scope)


def real(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """The real parts of a complex tensor; a real tensor is returned as is."""
    with ops.name_scope(name, "Real", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        if x.dtype.is_complex:
            return make("Real", [x], {"T": type_attr(x.dtype), "Tout": type_attr(x.dtype.real_dtype)}, scope)
        if x.dtype.is_numeric:
            return x
        raise TypeError(f"input must be a numeric tensor, but got tensor with dtype {x.dtype}")


def imag(input, name=None):  # noqa: A002
    """The imaginary parts of a complex tensor; zeros for a real tensor."""
    with ops.name_scope(name, "Imag", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        if x.dtype.is_complex:
            return make("Imag", [x], {"T": type_attr(x.dtype), "Tout": type_attr(x.dtype.real_dtype)}, scope)
        return array_ops.zeros_like(x)


def angle(input, name=None):  # noqa: A002
    """The argument ``atan2(imag, real)``; for a real tensor, pi where negative and 0 elsewhere."""
    with ops.name_scope(name, "Angle", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        if x.dtype.is_complex:
            return make("Angle", [x], {"T": type_attr(x.dtype), "Tout": type_attr(x.dtype.real_dtype)}, scope)
        return array_ops.where(x < 0, np.pi * array_ops.ones_like(x), array_ops.zeros_like(x))


def conj(x, name=None):
    """The complex conjugate; real tensors are returned as they are."""
    if isinstance(x, ops.Tensor):
        dt = x.dtype
        if dt.is_floating or dt.is_integer:
            return x
    with ops.name_scope(name, "Conj", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        if x.dtype.is_complex or x.dtype == dtypes.variant:
            return make("Conj", [x], {"T": type_attr(x.dtype)}, scope)
        if x.dtype.is_floating or x.dtype.is_integer:
            return x
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}.")


def complex_abs(x, name=None):
    """``|x|`` of a complex tensor (``ComplexAbs``, what ``tf.abs`` builds for complex input)."""
    with ops.name_scope(name, "ComplexAbs", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return make("ComplexAbs", [x], {"T": type_attr(x.dtype), "Tout": type_attr(x.dtype.real_dtype)}, scope)


def to_complex64(x, name="ToComplex64"):
    """``cast(x, complex64)``."""
    return array_ops.cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    """``cast(x, complex128)``."""
    return array_ops.cast(x, dtypes.complex128, name=name)


__all__ = ["angle", "complex", "conj", "imag", "real", "to_complex64", "to_complex128"]
