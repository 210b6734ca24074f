"""``tf.keras.utils``: ``to_categorical``, ``normalize``, ``get_file`` (cache only), ``Sequence``, and the custom
objects that loading models looks names up in (``get_custom_objects``, ``custom_object_scope``)."""

from __future__ import annotations

import os

import numpy as np

__all__ = ["CustomObjectScope", "Sequence", "custom_object_scope", "get_custom_objects", "get_file", "normalize",
           "to_categorical"]

_GLOBAL_CUSTOM_OBJECTS = {}


def get_custom_objects():
    """The process-wide ``{name: class or function}`` that ``load_model``/``model_from_json`` consult (mutable)."""
    return _GLOBAL_CUSTOM_OBJECTS


class CustomObjectScope:
    """``with CustomObjectScope({"MyLayer": MyLayer}):`` makes those names known to loading inside the block."""

    def __init__(self, *args):
        self.custom_objects = args
        self.backup = None

    def __enter__(self):
        self.backup = dict(_GLOBAL_CUSTOM_OBJECTS)
        for objects in self.custom_objects:
            _GLOBAL_CUSTOM_OBJECTS.update(objects)
        return self

    def __exit__(self, *exc):
        _GLOBAL_CUSTOM_OBJECTS.clear()
        _GLOBAL_CUSTOM_OBJECTS.update(self.backup)


def custom_object_scope(*args):
    """``CustomObjectScope(*args)``."""
    return CustomObjectScope(*args)


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for the integer class vector ``y`` (``num_classes`` defaults to ``max(y) + 1``)."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1
    n = y.shape[0]
    categorical = np.zeros((n, num_classes), dtype=dtype)
    categorical[np.arange(n), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as they are)."""
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def get_file(fname, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None):
    """The path of ``fname`` in the Keras cache (``~/.keras/<cache_subdir>/``); ferroflow never downloads."""
    cache_dir = cache_dir or os.path.join(os.path.expanduser("~"), ".keras")
    path = os.path.join(cache_dir, cache_subdir, fname)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} does not exist and ferroflow does not download files: fetch {origin or fname}"
                                f" yourself and put it there")
    return path


class Sequence:
    """Base class for batch generators: ``__getitem__(index)`` returns a batch, ``__len__`` the number of batches."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]
