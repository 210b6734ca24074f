"""CIFAR-10: ``load_data()`` reads the extracted batches in ``~/.keras/datasets/cifar-10-batches-py/``."""

import os
import pickle

import numpy as np

from ferroflow.keras.datasets._cache import cached

__all__ = ["load_data"]


def _batch(path):
    with open(path, "rb") as f:
        d = pickle.load(f, encoding="bytes")
    return d[b"data"].reshape(-1, 3, 32, 32), np.asarray(d[b"labels"], np.uint8)


def load_data():
    """``(x_train, y_train), (x_test, y_test)``: uint8 images 32x32x3 (channels last) and labels ``[n, 1]``."""
    origin = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz (extracted)"
    parts = [_batch(cached(os.path.join("cifar-10-batches-py", f"data_batch_{i}"), origin)) for i in range(1, 6)]
    x_train = np.concatenate([p[0] for p in parts]).transpose(0, 2, 3, 1)
    y_train = np.concatenate([p[1] for p in parts]).reshape(-1, 1)
    x_test, y_test = _batch(cached(os.path.join("cifar-10-batches-py", "test_batch"), origin))
    return (x_train, y_train), (x_test.transpose(0, 2, 3, 1), y_test.reshape(-1, 1))
