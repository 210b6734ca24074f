"""``tf.random``: seeded random tensors, the stateless ops, ``Generator`` and candidate samplers."""

from ferroflow.framework.random_seed import get_seed, set_random_seed
from ferroflow.ops.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
)
from ferroflow.ops.nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler
from ferroflow.ops.random_ops import random_normal as normal
from ferroflow.ops.random_ops import random_shuffle as shuffle
from ferroflow.ops.random_ops import random_uniform as uniform
from ferroflow.ops.random_ops import truncated_normal
from ferroflow.ops.stateful_random_ops import (
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from ferroflow.ops.stateless_random_ops import (
    Algorithm,
    categorical,
    fold_in,
    multinomial,
    split,
    stateless_categorical,
    stateless_multinomial,
    stateless_parameterized_truncated_normal,
    stateless_truncated_normal,
)
from ferroflow.ops.stateless_random_ops import random_gamma as gamma
from ferroflow.ops.stateless_random_ops import random_poisson as poisson
from ferroflow.ops.stateless_random_ops import stateless_random_binomial as stateless_binomial
from ferroflow.ops.stateless_random_ops import stateless_random_gamma as stateless_gamma
from ferroflow.ops.stateless_random_ops import stateless_random_normal as stateless_normal
from ferroflow.ops.stateless_random_ops import stateless_random_poisson as stateless_poisson
from ferroflow.ops.stateless_random_ops import stateless_random_uniform as stateless_uniform

__all__ = [
    "Algorithm",
    "Generator",
    "all_candidate_sampler",
    "categorical",
    "create_rng_state",
    "fixed_unigram_candidate_sampler",
    "fold_in",
    "gamma",
    "get_global_generator",
    "get_seed",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "multinomial",
    "normal",
    "poisson",
    "set_global_generator",
    "set_random_seed",
    "shuffle",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_multinomial",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
    "stateless_uniform",
    "truncated_normal",
    "uniform",
    "uniform_candidate_sampler",
]
