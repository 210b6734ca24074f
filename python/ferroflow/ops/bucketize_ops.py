"""TensorFlow's ``Bucketize`` op (``math_ops._bucketize``, ``tf.raw_ops.Bucketize``): the bucket index of
each value among sorted float ``boundaries``."""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.ops._op_util import make

__all__ = ["bucketize"]


def bucketize(input, boundaries, name=None):  # noqa: A002 - TensorFlow's argument name
    """An int32 tensor of ``input``'s shape (int32, int64, float32 or float64 values): the number of
    ``boundaries`` at or below each value, i.e. ``i`` with ``boundaries[i-1] <= x < boundaries[i]``. The
    boundaries are kept as float32, as TensorFlow's attr; unsorted ones fail when the op runs."""
    with ops.name_scope(name, "Bucketize", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        return make("Bucketize", [x], {"boundaries": [float(b) for b in boundaries]}, scope)
