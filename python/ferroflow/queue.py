"""``tf.queue`` (being written)."""
