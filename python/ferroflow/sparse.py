"""``tf.sparse`` (being written)."""
