"""Keras's ``BatchNormalization``: the ``tf.layers`` one, whose ``training`` defaults to the learning phase
(its moving-average updates are in ``layer.updates``, which ``Model.fit`` runs with each step); and
``LayerNormalization``: each example normalized over ``axis`` (mean and variance of its own features), then
``gamma * x + beta``."""

from __future__ import annotations

from ferroflow.keras import constraints, initializers, regularizers
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import normalization as tf_norm
from ferroflow.ops import nn_impl, nn_ops

__all__ = ["BatchNormalization", "LayerNormalization"]

BatchNormalization = keras_class(tf_norm.BatchNormalization, "BatchNormalization", None,
                                 "Batch normalization over ``axis`` (``gamma``, ``beta``, ``moving_mean``, "
                                 "``moving_variance``).")


class LayerNormalization(Layer):
    """Normalizes each example over ``axis`` (default the last): ``(x - mean) / sqrt(variance + epsilon)``, then
    scaled by ``gamma`` and shifted by ``beta`` (weights of the normalized axes' shape)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        dims = [getattr(d, "value", d) for d in list(input_shape)]
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        self._axes = sorted(a % len(dims) for a in axes)
        shape = [dims[a] for a in self._axes]
        self.gamma = self.add_weight("gamma", shape=shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint) \
            if self.scale else None
        self.beta = self.add_weight("beta", shape=shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint) \
            if self.center else None
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.rank
        mean, variance = nn_ops.moments(inputs, self._axes, keepdims=True)
        broadcast = [inputs.shape.as_list()[a] if a in self._axes else 1 for a in range(rank)]

        def shaped(weight):
            if weight is None:
                return None
            from ferroflow.ops import array_ops

            return array_ops.reshape(weight, broadcast) if self._axes != [rank - 1] else weight

        return nn_impl.batch_normalization(inputs, mean, variance, offset=shaped(self.beta), scale=shaped(self.gamma),
                                          variance_epsilon=self.epsilon)
