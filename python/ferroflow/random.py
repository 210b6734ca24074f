"""``tf.random``: seeded random tensors."""

from ferroflow.framework.random_seed import get_seed, set_random_seed  # noqa: F401
from ferroflow.ops.random_ops import (  # noqa: F401
    random_normal as normal,
    random_shuffle as shuffle,
    random_uniform as uniform,
    truncated_normal,
)
