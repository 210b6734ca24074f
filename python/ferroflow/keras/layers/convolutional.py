"""Keras's convolution layers (the ``tf.layers`` ones, Keras-named and with Keras's defaults), and the
layers that resize feature maps without weights: ``UpSampling1D/2D`` (nearest: each row and column repeated),
``ZeroPadding1D/2D`` and ``Cropping1D/2D``."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import convolutional as tf_conv
from ferroflow.ops import array_ops

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Cropping1D", "Cropping2D", "SeparableConv1D",
           "SeparableConv2D", "Convolution1D", "Convolution2D", "Convolution3D", "UpSampling1D", "UpSampling2D",
           "ZeroPadding1D", "ZeroPadding2D"]

_DEFAULTS = {"kernel_initializer": "glorot_uniform", "bias_initializer": "zeros", "data_format": None}

Conv1D = keras_class(tf_conv.Conv1D, "Conv1D", _DEFAULTS, "1-D convolution (``<name>/kernel``, ``<name>/bias``).")
Conv2D = keras_class(tf_conv.Conv2D, "Conv2D", _DEFAULTS, "2-D convolution (``<name>/kernel``, ``<name>/bias``).")
Conv3D = keras_class(tf_conv.Conv3D, "Conv3D", _DEFAULTS, "3-D convolution (``<name>/kernel``, ``<name>/bias``).")
Conv2DTranspose = keras_class(tf_conv.Conv2DTranspose, "Conv2DTranspose", _DEFAULTS,
                              "Transposed 2-D convolution.")
SeparableConv1D = keras_class(tf_conv.SeparableConv1D, "SeparableConv1D",
                              {"data_format": None, "bias_initializer": "zeros"}, "Separable 1-D convolution.")
SeparableConv2D = keras_class(tf_conv.SeparableConv2D, "SeparableConv2D",
                              {"data_format": None, "bias_initializer": "zeros"}, "Separable 2-D convolution.")
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution3D = Conv3D


def _pairs(value, n, what):
    """``value`` as ``n`` (before, after) pairs: an int, ``n`` ints, or ``n`` pairs."""
    if isinstance(value, int):
        return [(value, value)] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"`{what}` should have {n} elements. Received: {value}")
    out = []
    for v in value:
        if isinstance(v, int):
            out.append((v, v))
        else:
            v = tuple(v)
            if len(v) != 2:
                raise ValueError(f"`{what}` entries should be ints or pairs of ints. Received: {value}")
            out.append((int(v[0]), int(v[1])))
    return out


def _spatial_axes(data_format, rank):
    return list(range(2, 2 + rank)) if data_format == "channels_first" else list(range(1, 1 + rank))


class UpSampling1D(Layer):
    """Repeats each step ``size`` times along the time axis."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs):
        return K.repeat_elements(inputs, self.size, axis=1)


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times (``interpolation='nearest'``)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = (int(size), int(size)) if isinstance(size, int) else tuple(int(s) for s in size)
        self.data_format = data_format or K.image_data_format()
        if interpolation != "nearest":
            raise NotImplementedError(f"UpSampling2D(interpolation={interpolation!r}) is not supported by "
                                      "ferroflow's Keras (only 'nearest')")
        self.interpolation = interpolation

    def call(self, inputs):
        rows, cols = _spatial_axes(self.data_format, 2)
        return K.repeat_elements(K.repeat_elements(inputs, self.size[0], axis=rows), self.size[1], axis=cols)


class ZeroPadding1D(Layer):
    """Zeros before and after the time axis (``padding``: an int or a pair)."""

    def __init__(self, padding=1, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, 1, "padding")[0] if isinstance(padding, int) else tuple(padding)

    def call(self, inputs):
        return array_ops.pad(inputs, [[0, 0], list(self.padding), [0, 0]])


class ZeroPadding2D(Layer):
    """Zero rows above and below, zero columns left and right (an int, two ints, or two pairs)."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = tuple(_pairs(padding, 2, "padding"))
        self.data_format = data_format or K.image_data_format()

    def call(self, inputs):
        pads = [[0, 0]] * 4
        for axis, pair in zip(_spatial_axes(self.data_format, 2), self.padding):
            pads[axis] = list(pair)
        return array_ops.pad(inputs, pads)


class Cropping1D(Layer):
    """Drops steps from the start and the end of the time axis."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, 1, "cropping")[0] if isinstance(cropping, int) else tuple(cropping)

    def call(self, inputs):
        start, end = self.cropping
        return inputs[:, start:(-end if end else None), :]


class Cropping2D(Layer):
    """Drops rows from the top and bottom and columns from the left and right."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = tuple(_pairs(cropping, 2, "cropping"))
        self.data_format = data_format or K.image_data_format()

    def call(self, inputs):
        (top, bottom), (left, right) = self.cropping
        rows = slice(top, -bottom if bottom else None)
        cols = slice(left, -right if right else None)
        if self.data_format == "channels_first":
            return inputs[:, :, rows, cols]
        return inputs[:, rows, cols, :]
