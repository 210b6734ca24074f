"""IMDB reviews as word ids: ``load_data()`` reads ``~/.keras/datasets/imdb.npz`` (and ``imdb_word_index.json``
for ``get_word_index``), with Keras's ``start_char``/``oov_char``/``index_from`` and ``num_words`` handling."""

import json

import numpy as np

from ferroflow.keras.datasets._cache import cached

__all__ = ["get_word_index", "load_data"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    """``(x_train, y_train), (x_test, y_test)``: lists of word ids (shuffled with ``seed``) and 0/1 labels."""
    with np.load(cached(path, _ORIGIN + "imdb.npz"), allow_pickle=True) as f:
        x_train, labels_train = f["x_train"], f["y_train"]
        x_test, labels_test = f["x_test"], f["y_test"]
    rng = np.random.RandomState(seed)
    idx = np.arange(len(x_train))
    rng.shuffle(idx)
    x_train, labels_train = x_train[idx], labels_train[idx]
    idx = np.arange(len(x_test))
    rng.shuffle(idx)
    x_test, labels_test = x_test[idx], labels_test[idx]
    xs = np.concatenate([x_train, x_test])
    labels = np.concatenate([labels_train, labels_test])
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    if maxlen:
        kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
        xs, labels = [k[0] for k in kept], np.asarray([k[1] for k in kept])
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    n = len(x_train)
    x_out = np.empty(len(xs), dtype=object)
    x_out[:] = xs
    return (x_out[:n], labels[:n]), (x_out[n:], labels[n:])


def get_word_index(path="imdb_word_index.json"):
    """The word-to-id dictionary."""
    with open(cached(path, _ORIGIN + "imdb_word_index.json")) as f:
        return json.load(f)
