"""``tf.initializers``: variable initializers."""

from ferroflow.ops.init_ops import (  # noqa: F401
    Constant as constant,
)
from ferroflow.ops.init_ops import (
    GlorotNormal as glorot_normal,
)
from ferroflow.ops.init_ops import (
    GlorotUniform as glorot_uniform,
)
from ferroflow.ops.init_ops import (
    Identity as identity,
)
from ferroflow.ops.init_ops import (
    Ones as ones,
)
from ferroflow.ops.init_ops import (
    Orthogonal as orthogonal,
)
from ferroflow.ops.init_ops import (
    RandomNormal as random_normal,
)
from ferroflow.ops.init_ops import (
    RandomUniform as random_uniform,
)
from ferroflow.ops.init_ops import (
    TruncatedNormal as truncated_normal,
)
from ferroflow.ops.init_ops import (
    UniformUnitScaling as uniform_unit_scaling,
)
from ferroflow.ops.init_ops import (
    VarianceScaling as variance_scaling,
)
from ferroflow.ops.init_ops import (
    Zeros as zeros,
)
from ferroflow.ops.init_ops import (
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)
from ferroflow.ops.lookup_ops import tables_initializer  # noqa: F401
from ferroflow.ops.variables import (  # noqa: F401
    global_variables_initializer as global_variables,
)
from ferroflow.ops.variables import (
    local_variables_initializer as local_variables,
)
from ferroflow.ops.variables import (
    variables_initializer as variables,
)

__all__ = [
    "constant",
    "global_variables",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "local_variables",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "tables_initializer",
    "truncated_normal",
    "uniform_unit_scaling",
    "variables",
    "variance_scaling",
    "zeros",
]
