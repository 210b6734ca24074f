"""``tf.keras.preprocessing``: ``sequence.pad_sequences``."""

from ferroflow.keras.preprocessing import sequence

__all__ = ["sequence"]
