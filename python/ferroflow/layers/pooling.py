"""``tf.layers`` pooling: Max/AveragePooling1D/2D/3D and their functional forms (no variables)."""

from __future__ import annotations

from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.layers import _conv_util as cu
from ferroflow.layers.base import InputSpec, Layer
from ferroflow.ops import nn_conv

__all__ = [
    "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
    "average_pooling1d", "average_pooling2d", "average_pooling3d", "max_pooling1d", "max_pooling2d",
    "max_pooling3d",
]


class _Pooling(Layer):
    _rank = 2
    _pool = staticmethod(nn_conv.max_pool)
    _op_name = "MaxPool"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        n = self._rank
        if strides is None:
            strides = pool_size
        self.pool_size = cu.normalize_tuple(pool_size, n, "pool_size")
        self.strides = cu.normalize_tuple(strides, n, "strides")
        self.padding = cu.normalize_padding(padding)
        self.data_format = cu.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=n + 2)

    def call(self, inputs):
        cf = self.data_format == "channels_first"
        if self._rank == 1:
            return cu.pool1d(self._pool, inputs, self.pool_size[0], self.strides[0], self.padding, cf)
        if self._rank == 2:
            return self._pool(inputs, [1, *self.pool_size, 1] if not cf else [1, 1, *self.pool_size],
                              [1, *self.strides, 1] if not cf else [1, 1, *self.strides], self.padding.upper(),
                              data_format="NCHW" if cf else "NHWC", name=self._op_name)
        return cu.pool3d(self._pool, inputs, self.pool_size, self.strides, self.padding, cf)

    def compute_output_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        cf = self.data_format == "channels_first"
        space = dims[2:] if cf else dims[1:-1]
        out = [cu.conv_output_length(d, k, self.padding, s) for d, k, s in zip(space, self.pool_size, self.strides)]
        return TensorShape([dims[0], dims[1]] + out if cf else [dims[0]] + out + [dims[-1]])


def _pool_class(name, rank, pool, op_name):
    class Pool(_Pooling):
        _rank = rank
        _pool = staticmethod(pool)
        _op_name = op_name

        def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None,
                     **kwargs):
            super().__init__(pool_size, strides, padding=padding, data_format=data_format, name=name, **kwargs)

    kind = "maximum" if pool is nn_conv.max_pool else "average"
    Pool.__name__ = Pool.__qualname__ = name
    Pool.__doc__ = f"{rank}-D {kind} pooling layer."
    return Pool


MaxPooling1D = _pool_class("MaxPooling1D", 1, nn_conv.max_pool, "MaxPool")
MaxPooling2D = _pool_class("MaxPooling2D", 2, nn_conv.max_pool, "MaxPool")
MaxPooling3D = _pool_class("MaxPooling3D", 3, nn_conv.max_pool, "MaxPool3D")
AveragePooling1D = _pool_class("AveragePooling1D", 1, nn_conv.avg_pool, "AvgPool")
AveragePooling2D = _pool_class("AveragePooling2D", 2, nn_conv.avg_pool, "AvgPool")
AveragePooling3D = _pool_class("AveragePooling3D", 3, nn_conv.avg_pool, "AvgPool3D")


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """1-D max pooling of ``[batch, width, channels]`` inputs."""
    return MaxPooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """2-D max pooling of ``[batch, height, width, channels]`` inputs."""
    return MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """3-D max pooling of ``[batch, depth, height, width, channels]`` inputs (depth known when building)."""
    return MaxPooling3D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """1-D average pooling of ``[batch, width, channels]`` inputs."""
    return AveragePooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """2-D average pooling of ``[batch, height, width, channels]`` inputs."""
    return AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """3-D average pooling of ``[batch, depth, height, width, channels]`` inputs (depth known when building)."""
    return AveragePooling3D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)
