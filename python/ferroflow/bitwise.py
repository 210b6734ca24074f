"""``tf.bitwise``: elementwise bit operations on integer tensors."""

from ferroflow.ops.bitwise_ops import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift  # noqa: F401
