"""Keras's convolution layers (the ``tf.layers`` ones, Keras-named and with Keras's defaults)."""

from __future__ import annotations

from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import convolutional as tf_conv

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "SeparableConv1D", "SeparableConv2D",
           "Convolution1D", "Convolution2D", "Convolution3D"]

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
