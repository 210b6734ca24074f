"""``tf.losses``: loss functions that add themselves to the LOSSES collection."""

from ferroflow.ops.losses_impl import *  # noqa: F401,F403
