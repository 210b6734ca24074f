"""``tf.keras.datasets``: each ``load_data()`` reads the file Keras caches in ``~/.keras/datasets/`` (the same
file name Keras downloads); ferroflow never downloads, so a missing file is a FileNotFoundError naming it."""

from ferroflow.keras.datasets import boston_housing, cifar10, fashion_mnist, imdb, mnist

__all__ = ["boston_housing", "cifar10", "fashion_mnist", "imdb", "mnist"]
