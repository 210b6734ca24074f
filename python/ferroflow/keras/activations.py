"""``tf.keras.activations``: the activation functions, by name or as callables (``get``)."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.ops import math_ops, nn_ops

__all__ = ["deserialize", "elu", "exponential", "get", "hard_sigmoid", "linear", "relu", "selu", "serialize",
           "sigmoid", "softmax", "softplus", "softsign", "swish", "tanh"]


def softmax(x, axis=-1):
    """Softmax along ``axis`` (the logits are remembered for the cross-entropy losses)."""
    return K.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    return K.elu(x, alpha)


def selu(x):
    return nn_ops.selu(x)


def softplus(x):
    return nn_ops.softplus(x)


def softsign(x):
    return nn_ops.softsign(x)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    return K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def tanh(x):
    return math_ops.tanh(x)


def sigmoid(x):
    """Sigmoid (the logits are remembered for ``binary_crossentropy``)."""
    return K.sigmoid(x)


def hard_sigmoid(x):
    return K.hard_sigmoid(x)


def exponential(x):
    return math_ops.exp(x)


def swish(x):
    return nn_ops.swish(x)


def linear(x):
    return x


_BY_NAME = {f.__name__: f for f in (softmax, elu, selu, softplus, softsign, relu, tanh, sigmoid, hard_sigmoid,
                                    exponential, swish, linear)}


def serialize(activation):
    name = getattr(activation, "__name__", None)
    if name in _BY_NAME:
        return name
    raise ValueError(f"Cannot serialize activation {activation!r}")


def deserialize(name, custom_objects=None):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name not in _BY_NAME:
        raise ValueError(f"Unknown activation function: {name}")
    return _BY_NAME[name]


def get(identifier):
    """An activation function from a name, a callable or None (``linear``)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")
