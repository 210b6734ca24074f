"""``tf.keras.models``: ``Model``, ``Sequential``, and ``load_model``/``save_model`` (HDF5: needs h5py)."""

from __future__ import annotations

from ferroflow.keras.engine.sequential import Sequential
from ferroflow.keras.engine.training import Model, _h5_error

__all__ = ["Model", "Sequential", "load_model", "save_model"]


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """``model.save(filepath)``."""
    model.save(filepath, overwrite=overwrite, include_optimizer=include_optimizer, save_format=save_format)


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's argument name
    """Loading whole models needs the HDF5 format (h5py), which ferroflow does not read yet."""
    raise _h5_error("load_model")
