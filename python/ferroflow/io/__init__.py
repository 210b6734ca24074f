"""``tf.io``: file access (records come with the TFRecord work)."""

from ferroflow.io import gfile  # noqa: F401
