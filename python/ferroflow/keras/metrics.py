"""``tf.keras.metrics``: per-sample metric functions ``fn(y_true, y_pred)``; ``Model.compile(metrics=...)``
averages them over each epoch (over all samples seen, as Keras's stateful mean metrics do)."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras import losses as losses_mod
from ferroflow.keras.losses import (  # noqa: F401 - Keras exposes the losses as metrics too
    MAE,
    MAPE,
    MSE,
    MSLE,
    binary_crossentropy,
    categorical_crossentropy,
    cosine_proximity,
    hinge,
    kullback_leibler_divergence,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from ferroflow.ops import array_ops, math_ops, nn_ops

__all__ = ["binary_accuracy", "categorical_accuracy", "deserialize", "get", "serialize",
           "sparse_categorical_accuracy", "sparse_top_k_categorical_accuracy", "top_k_categorical_accuracy",
           "mae", "mse", "mape", "msle", "mean_absolute_error", "mean_squared_error", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy"]


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of ``(y_pred > threshold) == y_true``."""
    y_pred = ops.convert_to_tensor(y_pred)
    threshold = math_ops.cast(threshold, y_pred.dtype.base_dtype)
    pred = math_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype.base_dtype)
    y_true = math_ops.cast(y_true, y_pred.dtype.base_dtype)
    return math_ops.reduce_mean(math_ops.cast(math_ops.equal(y_true, pred), K.floatx()), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred) == argmax(y_true)``."""
    return math_ops.cast(math_ops.equal(math_ops.argmax(y_true, -1), math_ops.argmax(y_pred, -1)), K.floatx())


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred)`` equals the integer label ``y_true``."""
    y_pred = ops.convert_to_tensor(y_pred)
    y_true = ops.convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and \
            y_true.shape.rank == y_pred.shape.rank:
        y_true = array_ops.squeeze(y_true, [-1])
    pred = math_ops.argmax(y_pred, -1)
    if y_true.dtype.base_dtype != pred.dtype.base_dtype:
        pred = math_ops.cast(pred, y_true.dtype.base_dtype)
    return math_ops.cast(math_ops.equal(y_true, pred), K.floatx())


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return math_ops.cast(nn_ops.in_top_k(y_pred, math_ops.argmax(y_true, -1), k), K.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true = ops.convert_to_tensor(y_true)
    if y_true.shape.rank == 2:
        y_true = array_ops.squeeze(y_true, [-1])
    return math_ops.cast(nn_ops.in_top_k(y_pred, math_ops.cast(y_true, dtypes.int32), k), K.floatx())



_BY_NAME = {
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
}


def serialize(metric):
    return metric.__name__


def deserialize(name, custom_objects=None):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name in _BY_NAME:
        return _BY_NAME[name]
    return losses_mod.deserialize(name)


def get(identifier):
    """A metric function from a name or a callable."""
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")
