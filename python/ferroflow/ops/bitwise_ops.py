"""``tf.bitwise``: elementwise bit operations on integer tensors (int8, int16, int32, int64, uint8,
uint16, uint32, uint64).

Shift amounts are clamped to ``[0, bits - 1]`` as TensorFlow's kernels clamp them, left shifts wrap,
right shifts of signed values keep the sign. None of these ops has a gradient.
"""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.ops._op_util import make

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _pair(op_type, x, y):
    """Both operands as tensors of one dtype: a plain value takes the other operand's dtype."""
    if not isinstance(x, ops.Tensor) and isinstance(y, ops.Tensor):
        x = ops.convert_to_tensor(x, dtype=y.dtype, name="x")
    x = ops.convert_to_tensor(x, name="x")
    if isinstance(y, ops.Tensor) and y.dtype.base_dtype != x.dtype.base_dtype:
        raise TypeError(f"Input 'y' of '{op_type}' Op has type {y.dtype.name} that does not match type "
                        f"{x.dtype.name} of argument 'x'.")
    return x, ops.convert_to_tensor(y, dtype=x.dtype, name="y")


def _binary(op_type):
    def op(x, y, name=None):
        with ops.name_scope(name, op_type, [x, y]) as scope:
            x, y = _pair(op_type, x, y)
            return make(op_type, [x, y], {}, scope)

    return op


bitwise_and = _binary("BitwiseAnd")
bitwise_and.__name__ = "bitwise_and"
bitwise_and.__doc__ = "``x & y`` elementwise, with broadcasting."
bitwise_or = _binary("BitwiseOr")
bitwise_or.__name__ = "bitwise_or"
bitwise_or.__doc__ = "``x | y`` elementwise, with broadcasting."
bitwise_xor = _binary("BitwiseXor")
bitwise_xor.__name__ = "bitwise_xor"
bitwise_xor.__doc__ = "``x ^ y`` elementwise, with broadcasting."
left_shift = _binary("LeftShift")
left_shift.__name__ = "left_shift"
left_shift.__doc__ = "``x << y`` elementwise (``y`` clamped to ``[0, bits - 1]``; wraps), with broadcasting."
right_shift = _binary("RightShift")
right_shift.__name__ = "right_shift"
right_shift.__doc__ = ("``x >> y`` elementwise (``y`` clamped to ``[0, bits - 1]``; arithmetic for signed "
                       "types), with broadcasting.")


def invert(x, name=None):
    """``~x`` elementwise: every bit flipped."""
    with ops.name_scope(name, "Invert", [x]) as scope:
        return make("Invert", [ops.convert_to_tensor(x, name="x")], {}, scope)


def population_count(x, name=None):
    """The number of set bits of each element of ``x``, as uint8 (``tf.raw_ops.PopulationCount``)."""
    with ops.name_scope(name, "PopulationCount", [x]) as scope:
        return make("PopulationCount", [ops.convert_to_tensor(x, name="x")], {}, scope)


# tf.raw_ops forms: every argument by keyword, the op type's own names.


def BitwiseAnd(*, x, y, name=None):  # noqa: N802 - TensorFlow's op name
    return bitwise_and(x, y, name=name)


def BitwiseOr(*, x, y, name=None):  # noqa: N802
    return bitwise_or(x, y, name=name)


def BitwiseXor(*, x, y, name=None):  # noqa: N802
    return bitwise_xor(x, y, name=name)


def LeftShift(*, x, y, name=None):  # noqa: N802
    return left_shift(x, y, name=name)


def RightShift(*, x, y, name=None):  # noqa: N802
    return right_shift(x, y, name=name)


def Invert(*, x, name=None):  # noqa: N802
    return invert(x, name=name)


def PopulationCount(*, x, name=None):  # noqa: N802
    return population_count(x, name=name)
