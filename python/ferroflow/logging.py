"""``tf.logging`` (``tf.compat.v1.logging``): the public face of ``ferroflow.platform.tf_logging``."""

from ferroflow.platform.tf_logging import *  # noqa: F401,F403
from ferroflow.platform.tf_logging import __all__  # noqa: F401
