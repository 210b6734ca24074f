"""Keras layer classes made from the ``tf.layers`` classes: Keras's names, defaults and string arguments."""

from __future__ import annotations

import inspect

from ferroflow.keras import activations, constraints, initializers, regularizers
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer

__all__ = ["convert_kwargs", "keras_class"]


def convert_kwargs(kwargs):
    """Turns Keras's string arguments (activations, initializers, regularizers, constraints) into objects."""
    for key, value in list(kwargs.items()):
        if key == "activation" and value is not None:
            kwargs[key] = activations.get(value)
        elif key.endswith("_initializer") and value is not None:
            kwargs[key] = initializers.get(value)
        elif key.endswith("_regularizer") and value is not None:
            kwargs[key] = regularizers.get(value)
        elif key.endswith("_constraint") and value is not None:
            kwargs[key] = constraints.get(value)
        elif key == "data_format" and value is None:
            kwargs[key] = K.image_data_format()
    return kwargs


def keras_class(tf_cls, name, defaults=None, doc=None, masking=False):
    """A Keras layer class computing what ``tf_cls`` (a ``tf.layers`` class) computes; with ``masking`` it
    passes its input's mask on (``supports_masking``)."""
    sig = inspect.signature(tf_cls.__init__)
    positional = [p.name for p in list(sig.parameters.values())[1:]
                  if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    defaults = dict(defaults or {})

    def __init__(self, *args, **kwargs):  # noqa: N807
        if len(args) > len(positional):
            raise TypeError(f"{name}() takes at most {len(positional)} positional arguments ({len(args)} given)")
        for key, value in zip(positional, args):
            if key in kwargs:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            kwargs[key] = value
        for key, value in defaults.items():
            kwargs.setdefault(key, value)
        layer_name = self._keras_setup(kwargs.pop("name", None), kwargs)
        self._config_args = dict(kwargs)
        tf_cls.__init__(self, name=layer_name, **convert_kwargs(kwargs))
        self._keras_finish()
        if masking:
            self.supports_masking = True

    cls = type(name, (Layer, tf_cls), {"__init__": __init__, "__doc__": doc or tf_cls.__doc__,
                                       "__module__": "ferroflow.keras.layers",
                                       "_config_params": tuple(sig.parameters)[1:]})
    return cls
