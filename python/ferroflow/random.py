"""``tf.random``: seeded random tensors and candidate samplers."""

from ferroflow.framework.random_seed import get_seed, set_random_seed
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler
from ferroflow.ops.random_ops import random_normal as normal
from ferroflow.ops.random_ops import random_shuffle as shuffle
from ferroflow.ops.random_ops import random_uniform as uniform
from ferroflow.ops.random_ops import truncated_normal

__all__ = [
    "get_seed",
    "log_uniform_candidate_sampler",
    "normal",
    "set_random_seed",
    "shuffle",
    "truncated_normal",
    "uniform",
    "uniform_candidate_sampler",
]
