"""``tf.random``: seeded random tensors."""

from ferroflow.framework.random_seed import get_seed, set_random_seed  # noqa: F401
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler  # noqa: F401
from ferroflow.ops.random_ops import (  # noqa: F401
    random_normal as normal,
)
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler  # noqa: F401
from ferroflow.ops.random_ops import (
    random_shuffle as shuffle,
)
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler  # noqa: F401
from ferroflow.ops.random_ops import (
    random_uniform as uniform,
)
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler  # noqa: F401
from ferroflow.ops.random_ops import (
    truncated_normal,
)

__all__ = [
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
    "get_seed",
    "set_random_seed",
    "normal",
    "shuffle",
    "truncated_normal",
    "uniform",
]
