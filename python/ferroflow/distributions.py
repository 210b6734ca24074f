"""``tf.distributions``: TF1's probability distributions (``ferroflow.ops.distributions`` has the details)."""

from ferroflow.ops.distributions import (  # noqa: F401
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Bernoulli,
    Beta,
    Categorical,
    Distribution,
    Exponential,
    Gamma,
    Laplace,
    Normal,
    RegisterKL,
    ReparameterizationType,
    Uniform,
    kl_divergence,
)
