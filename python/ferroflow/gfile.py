"""``tf.gfile``: TF1's file API (``tf.gfile.Exists``, ``tf.gfile.GFile``, ...)."""

from ferroflow.platform.gfile import *  # noqa: F401,F403
