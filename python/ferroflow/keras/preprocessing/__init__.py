"""``tf.keras.preprocessing``: ``sequence.pad_sequences``, ``text.Tokenizer``."""

from ferroflow.keras.preprocessing import sequence, text

__all__ = ["sequence", "text"]
