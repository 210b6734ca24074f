"""Keras's noise and spatial dropout layers, active in the training phase only: ``GaussianNoise`` (adds
``N(0, stddev)``), ``GaussianDropout`` (multiplies by ``N(1, rate / (1 - rate))``), ``SpatialDropout1D/2D`` (drops
whole channels: one draw per example and channel). All pass masks on."""

from __future__ import annotations

import math

from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import array_ops, nn_ops, random_ops

__all__ = ["GaussianDropout", "GaussianNoise", "SpatialDropout1D", "SpatialDropout2D"]


class _TrainingOnly(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, training=None):
        return K.in_train_phase(lambda: self._noisy(inputs), inputs, training=training)

    def compute_output_shape(self, input_shape):
        return input_shape


class GaussianNoise(_TrainingOnly):
    """Adds zero-mean Gaussian noise of standard deviation ``stddev`` while training."""

    def __init__(self, stddev, **kwargs):
        super().__init__(**kwargs)
        self.stddev = float(stddev)

    def _noisy(self, inputs):
        return inputs + random_ops.random_normal(array_ops.shape(inputs), mean=0.0, stddev=self.stddev,
                                                 dtype=inputs.dtype)


class GaussianDropout(_TrainingOnly):
    """Multiplies by Gaussian noise of mean 1 and standard deviation ``sqrt(rate / (1 - rate))`` while training."""

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(rate)

    def call(self, inputs, training=None):
        if not 0 < self.rate < 1:
            return inputs
        return super().call(inputs, training=training)

    def _noisy(self, inputs):
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * random_ops.random_normal(array_ops.shape(inputs), mean=1.0, stddev=stddev,
                                                 dtype=inputs.dtype)


class _SpatialDropout(_TrainingOnly):
    _rank = 1

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = min(1.0, max(0.0, float(rate)))
        self.data_format = data_format or K.image_data_format()

    def call(self, inputs, training=None):
        if self.rate <= 0:
            return inputs
        return super().call(inputs, training=training)

    def _noisy(self, inputs):
        shape = array_ops.shape(inputs)
        ones = [1] * self._rank
        if self.data_format == "channels_first" and self._rank > 1:
            noise = array_ops.stack([shape[0], shape[1]] + ones)
        else:
            noise = array_ops.stack([shape[0]] + ones + [shape[-1]])
        return nn_ops.dropout(inputs, rate=self.rate, noise_shape=noise)


class SpatialDropout1D(_SpatialDropout):
    """Drops whole feature channels of ``[batch, time, channels]`` inputs while training."""

    _rank = 1

    def __init__(self, rate, **kwargs):
        super().__init__(rate, data_format="channels_last", **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of images while training."""

    _rank = 2
