"""Implementation of ``tf.train``: optimizers, schedules, moving averages, global step."""
