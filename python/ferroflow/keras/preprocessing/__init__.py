"""``tf.keras.preprocessing``: ``image`` (ImageDataGenerator and image utilities), ``sequence``
(``pad_sequences``, ``TimeseriesGenerator``, ``skipgrams``), ``text`` (``Tokenizer``)."""

from ferroflow.keras.preprocessing import image, sequence, text

__all__ = ["image", "sequence", "text"]
