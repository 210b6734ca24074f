"""``tf.keras.losses``: per-sample loss functions ``fn(y_true, y_pred)`` (a mean over the last axis where
Keras takes one), by name or as callables (``get``)."""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.keras import backend as K
from ferroflow.ops import clip_ops, math_ops

__all__ = ["binary_crossentropy", "categorical_crossentropy", "categorical_hinge", "cosine_proximity",
           "deserialize", "get", "hinge", "kld", "kullback_leibler_divergence", "logcosh", "mae", "mape",
           "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
           "mean_squared_logarithmic_error", "mse", "msle", "poisson", "serialize", "sparse_categorical_crossentropy",
           "squared_hinge"]


def _pair(y_true, y_pred):
    y_pred = ops.convert_to_tensor(y_pred)
    y_true = math_ops.cast(ops.convert_to_tensor(y_true), y_pred.dtype.base_dtype)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), K.epsilon()))
    return 100.0 * math_ops.reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, K.epsilon()) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, K.epsilon()) + 1.0)
    return math_ops.reduce_mean(math_ops.squared_difference(first, second), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = math_ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = math_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(0.0, neg - pos + 1.0)


def logcosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return math_ops.reduce_mean(x + math_ops.softplus(-2.0 * x) - math_ops.log(2.0), axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = math_ops.cast(array_shape_last(y_true), y_pred.dtype.base_dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return K.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def array_shape_last(x):
    from ferroflow.ops import array_ops

    return array_ops.shape(x)[-1]


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return K.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return math_ops.reduce_mean(K.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = clip_ops.clip_by_value(y_true, K.epsilon(), 1.0)
    y_pred = clip_ops.clip_by_value(y_pred, K.epsilon(), 1.0)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(y_pred - y_true * math_ops.log(y_pred + K.epsilon()), axis=-1)


def cosine_proximity(y_true, y_pred, axis=-1):
    from ferroflow.ops import nn_ops

    y_true, y_pred = _pair(y_true, y_pred)
    y_true = nn_ops.l2_normalize(y_true, axis=axis)
    y_pred = nn_ops.l2_normalize(y_pred, axis=axis)
    return -math_ops.reduce_sum(y_true * y_pred, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence
cosine = cosine_proximity

_BY_NAME = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
    "squared_hinge": squared_hinge, "hinge": hinge, "categorical_hinge": categorical_hinge, "logcosh": logcosh,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_crossentropy": binary_crossentropy, "kullback_leibler_divergence": kullback_leibler_divergence,
    "kld": kullback_leibler_divergence, "poisson": poisson, "cosine_proximity": cosine_proximity,
    "cosine": cosine_proximity,
}


def serialize(loss):
    return loss.__name__


def deserialize(name, custom_objects=None):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name not in _BY_NAME:
        raise ValueError(f"Unknown loss function: {name}")
    return _BY_NAME[name]


def get(identifier):
    """A loss function from a name (``'mse'``, ``'categorical_crossentropy'``, ...) or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")
