"""``tf.flags`` (same as ``tf.app.flags``)."""

from ferroflow.platform.flags import *  # noqa: F401,F403
