"""Keras's ``BatchNormalization``: the ``tf.layers`` one, whose ``training`` defaults to the learning phase
(its moving-average updates are in ``layer.updates``, which ``Model.fit`` runs with each step)."""

from __future__ import annotations

from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import normalization as tf_norm

__all__ = ["BatchNormalization"]

BatchNormalization = keras_class(tf_norm.BatchNormalization, "BatchNormalization", None,
                                 "Batch normalization over ``axis`` (``gamma``, ``beta``, ``moving_mean``, "
                                 "``moving_variance``).")
