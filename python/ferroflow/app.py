"""``tf.app``: ``tf.app.run()`` and ``tf.app.flags``."""

from ferroflow.platform import flags  # noqa: F401
from ferroflow.platform.app import *  # noqa: F401,F403
