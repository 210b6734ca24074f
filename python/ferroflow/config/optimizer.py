"""``tf.config.optimizer``."""

from ferroflow.framework.config import get_experimental_options, set_experimental_options  # noqa: F401
