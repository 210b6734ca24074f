"""``tf.layers``: TensorFlow 1.x's layer functions and classes (``tf.compat.v1.layers``).

Variable and op names follow TensorFlow's (``dense/kernel``, ``dense_1/bias``, ``conv2d/kernel``,
``batch_normalization/moving_mean``), so TF1 checkpoints of ``tf.layers`` models restore into the same
model built with ferroflow and back. See ``base.py`` for scoping and reuse, ``normalization.py`` for
batch normalization's UPDATE_OPS, ``_conv_util.py`` for how 1-D and 3-D layers are built from 2-D ops.
"""

from ferroflow.layers.base import InputSpec, Layer
from ferroflow.layers.convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    SeparableConv1D,
    SeparableConv2D,
    conv1d,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    separable_conv1d,
    separable_conv2d,
)
from ferroflow.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from ferroflow.layers.normalization import BatchNormalization, batch_normalization
from ferroflow.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    average_pooling1d,
    average_pooling2d,
    average_pooling3d,
    max_pooling1d,
    max_pooling2d,
    max_pooling3d,
)

__all__ = [
    "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization", "Conv1D", "Conv2D",
    "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense", "Dropout", "Flatten", "InputSpec", "Layer",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "SeparableConv1D", "SeparableConv2D", "average_pooling1d",
    "average_pooling2d", "average_pooling3d", "batch_normalization", "conv1d", "conv2d", "conv2d_transpose",
    "conv3d", "conv3d_transpose", "dense", "dropout", "flatten", "max_pooling1d", "max_pooling2d", "max_pooling3d",
    "separable_conv1d", "separable_conv2d",
]
