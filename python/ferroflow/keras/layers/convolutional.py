"""Keras's convolution layers (the ``tf.layers`` ones, Keras-named and with Keras's defaults), and the
layers that resize feature maps without weights: ``UpSampling1D/2D`` (nearest: each row and column repeated;
or bilinear),
``ZeroPadding1D/2D`` and ``Cropping1D/2D``."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import convolutional as tf_conv
from ferroflow.ops import array_ops

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Cropping1D", "Cropping2D", "DepthwiseConv2D",
           "SeparableConv1D",
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


def _int_pair(value):
    return (int(value), int(value)) if isinstance(value, int) else tuple(int(v) for v in value)


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
    """Scales rows and columns up ``size`` times: ``interpolation='nearest'`` repeats them, ``'bilinear'``
    interpolates between pixel centres (TF 2's ``tf.image.resize``: half-pixel centres, edges clamped)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = _int_pair(size)
        self.data_format = data_format or K.image_data_format()
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"`interpolation` argument should be one of `\"nearest\"` or `\"bilinear\"`. "
                             f"Received: \"{interpolation}\".")
        self.interpolation = interpolation

    def call(self, inputs):
        rows, cols = _spatial_axes(self.data_format, 2)
        if self.interpolation == "nearest":
            return K.repeat_elements(K.repeat_elements(inputs, self.size[0], axis=rows), self.size[1], axis=cols)
        from ferroflow.ops import image_ops

        x = inputs if self.data_format == "channels_last" else array_ops.transpose(inputs, [0, 2, 3, 1])
        shape = array_ops.shape(x)[1:3] * ops.convert_to_tensor(list(self.size), dtype=dtypes.int32)
        y = image_ops.resize_bilinear(x, shape, half_pixel_centers=True)
        static = x.shape.as_list()
        y.set_shape([static[0]] + [None if d is None else d * s for d, s in zip(static[1:3], self.size)]
                    + [static[3]])
        return y if self.data_format == "channels_last" else array_ops.transpose(y, [0, 3, 1, 2])


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


class DepthwiseConv2D(Layer):
    """Each input channel convolved with its own ``depth_multiplier`` filters (``depthwise_kernel``
    ``[kh, kw, channels, depth_multiplier]``), plus ``bias`` and ``activation``."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        from ferroflow.keras import activations, constraints, initializers, regularizers

        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        self.kernel_size = _int_pair(kernel_size)
        self.strides = _int_pair(strides)
        self.dilation_rate = _int_pair(dilation_rate)
        self.padding = padding.lower()
        self.depth_multiplier = int(depth_multiplier)
        self.data_format = data_format or K.image_data_format()
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape):
        dims = [getattr(d, "value", d) for d in list(input_shape)]
        channels = dims[1] if self.data_format == "channels_first" else dims[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs to `DepthwiseConv2D` should be defined. Found "
                             "`None`.")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.bias = self.add_weight("bias", shape=(channels * self.depth_multiplier,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        self.built = True

    def call(self, inputs):
        from ferroflow.ops import nn_impl, nn_ops

        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        strides = (1, 1) + self.strides if fmt == "NCHW" else (1,) + self.strides + (1,)
        out = nn_impl.depthwise_conv2d(inputs, self.depthwise_kernel, strides=strides, padding=self.padding.upper(),
                                       rate=self.dilation_rate, data_format=fmt)
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias, data_format=fmt)
        return self.activation(out)
