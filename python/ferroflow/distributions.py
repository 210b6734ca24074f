"""``tf.distributions``: TF1's probability distributions (``ferroflow.ops.distributions`` has the details)."""

from ferroflow.ops.distributions import (  # noqa: F401
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Bernoulli,
    Beta,
    Categorical,
    Dirichlet,
    Distribution,
    Exponential,
    Gamma,
    Laplace,
    Multinomial,
    Normal,
    RegisterKL,
    ReparameterizationType,
    StudentT,
    Uniform,
    kl_divergence,
)
