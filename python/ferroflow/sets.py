"""``tf.sets``: set sizes and set operations along the last dimension (see ``ops/sets_ops.py``)."""

from ferroflow.ops.sets_ops import (  # noqa: F401
    difference,
    intersection,
    set_difference,
    set_intersection,
    set_size,
    set_union,
    size,
    union,
)

__all__ = [
    "difference", "intersection", "set_difference", "set_intersection", "set_size", "set_union", "size", "union",
]
