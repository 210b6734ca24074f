"""Boston housing prices: ``load_data()`` reads ``~/.keras/datasets/boston_housing.npz``."""

import numpy as np

from ferroflow.keras.datasets._cache import cached

__all__ = ["load_data"]


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)``: 13 features per house and its price, shuffled with ``seed``."""
    with np.load(cached(path, "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"),
                 allow_pickle=True) as f:
        x, y = f["x"], f["y"]
    rng = np.random.RandomState(seed)
    idx = np.arange(len(x))
    rng.shuffle(idx)
    x, y = x[idx], y[idx]
    split = int(len(x) * (1 - test_split))
    return (x[:split], y[:split]), (x[split:], y[split:])
