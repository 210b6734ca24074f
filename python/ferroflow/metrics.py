"""``tf.metrics`` (``tf.compat.v1.metrics``): streaming evaluation metrics over local variables."""

from ferroflow.ops.metrics_impl import *  # noqa: F401,F403
