"""Keras's activation layers: ``LeakyReLU``, ``PReLU`` (a learned slope per unit), ``ELU``, ``ThresholdedReLU``,
``ReLU`` (``max_value``, ``negative_slope``, ``threshold``) and ``Softmax`` (over ``axis``). All pass masks on."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.keras import constraints, initializers, regularizers
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import math_ops, nn_ops

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax", "ThresholdedReLU"]


class _Activation(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class LeakyReLU(_Activation):
    """``x`` where ``x >= 0``, else ``alpha * x`` (Keras's default ``alpha`` is 0.3)."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return nn_ops.leaky_relu(inputs, alpha=self.alpha)


class PReLU(_Activation):
    """``x`` where ``x >= 0``, else ``alpha * x`` with ``alpha`` a weight (one per unit; ``shared_axes`` share it)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, (list, tuple)):
            self.shared_axes = list(shared_axes)
        else:
            self.shared_axes = [shared_axes]

    def build(self, input_shape):
        dims = [getattr(d, "value", d) for d in list(input_shape)[1:]]
        if self.shared_axes is not None:
            for axis in self.shared_axes:
                dims[axis - 1] = 1
        self.alpha = self.add_weight("alpha", shape=dims, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs):
        positive = nn_ops.relu(inputs)
        negative = -self.alpha * nn_ops.relu(-inputs)
        return positive + negative


class ELU(_Activation):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return K.elu(inputs, self.alpha)


class ThresholdedReLU(_Activation):
    """``x`` where ``x > theta``, else 0."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.theta = float(theta)

    def call(self, inputs):
        return inputs * math_ops.cast(math_ops.greater(inputs, self.theta), inputs.dtype)


class ReLU(_Activation):
    """``min(max_value, x)`` above ``threshold``, ``negative_slope * (x - threshold)`` below it."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: {max_value}")
        if negative_slope < 0.0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. Received: {negative_slope}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs):
        return K.relu(inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold)


class Softmax(_Activation):
    """The softmax over ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return K.softmax(inputs, axis=self.axis)
