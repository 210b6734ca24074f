"""``tf.check_pinned`` (TensorFlow's ``CheckPinned`` op, from its experimental dataset ops).

The op passes its input through when the tensor lives in host memory pinned for a GPU, and fails otherwise.
ferroflow runs on the CPU and pins no memory, so running it always raises ``InvalidArgumentError`` ("not
pinned"), as TensorFlow's CPU build does. Building it is fine: its output has the input's dtype and shape.
"""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.ops._op_util import make

__all__ = ["check_pinned"]


def check_pinned(tensor, name=None):
    """``tensor`` unchanged if it is in GPU-pinned host memory; running it raises ``InvalidArgumentError``
    otherwise, which on ferroflow (CPU only) is always."""
    with ops.name_scope(name, "CheckPinned", [tensor]) as scope:
        t = ops.convert_to_tensor(tensor, name="tensor")
        return make("CheckPinned", [t], {}, scope)
