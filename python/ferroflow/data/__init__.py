"""``tf.data`` (being written)."""
