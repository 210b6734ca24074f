"""``tf.train``: optimizers, learning-rate schedules, moving averages, the global step."""

from ferroflow.ops.gradients_impl import AggregationMethod  # noqa: F401
from ferroflow.training.learning_rate_decay import *  # noqa: F401,F403
from ferroflow.training.moving_averages import *  # noqa: F401,F403
from ferroflow.training.optimizers import *  # noqa: F401,F403
from ferroflow.training.protos import *  # noqa: F401,F403
from ferroflow.training.training_util import *  # noqa: F401,F403
