"""``tf.io.gfile``: snake_case file API."""

from ferroflow.platform.gfile import *  # noqa: F401,F403
