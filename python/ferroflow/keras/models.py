"""``tf.keras.models``: ``Model``, ``Sequential``, ``load_model``/``save_model`` (HDF5: needs h5py),
``model_from_json``/``model_from_config``."""

from __future__ import annotations

from ferroflow.keras import saving
from ferroflow.keras.engine.sequential import Sequential
from ferroflow.keras.engine.training import Model

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_config", "model_from_json", "save_model"]


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """``model.save(filepath)``."""
    model.save(filepath, overwrite=overwrite, include_optimizer=include_optimizer, save_format=save_format)


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's argument name
    """The model ``model.save('m.h5')`` wrote (ferroflow's or TensorFlow's), compiled as saved unless ``compile``
    is False."""
    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile)


def model_from_json(json_string, custom_objects=None):
    """A model (with new weights) from ``model.to_json()``."""
    return saving.model_from_json(json_string, custom_objects)


def model_from_config(config, custom_objects=None):
    """A model (with new weights) from ``{"class_name": ..., "config": model.get_config()}``."""
    return saving.model_from_config(config, custom_objects)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model of the same architecture (new layers and weights, initialized afresh) from ``model``'s config."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("clone_model(input_tensors=..., clone_function=...) is not supported by ferroflow")
    return saving.model_from_config(saving.model_config(model))
