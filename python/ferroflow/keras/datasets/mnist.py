"""MNIST digits: ``load_data()`` reads ``~/.keras/datasets/mnist.npz``."""

import numpy as np

from ferroflow.keras.datasets._cache import cached

__all__ = ["load_data"]


def load_data(path="mnist.npz"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images 28x28 and their labels."""
    with np.load(cached(path, "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"),
                 allow_pickle=True) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
