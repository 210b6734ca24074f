"""Keras's pooling layers: the ``tf.layers`` poolings with Keras's defaults (``pool_size`` 2, ``strides``
``pool_size``), and the global poolings."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import InputSpec, Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import pooling as tf_pool
from ferroflow.ops import array_ops, math_ops

__all__ = ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalAvgPool1D",
           "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
           "GlobalMaxPooling3D", "MaxPool1D", "MaxPool2D", "MaxPool3D", "MaxPooling1D", "MaxPooling2D",
           "MaxPooling3D"]


def _pool(tf_cls, name, size):
    return keras_class(tf_cls, name, {"pool_size": size, "strides": None, "data_format": None},
                       f"{tf_cls.__doc__} (``pool_size`` defaults to {size!r}, ``strides`` to ``pool_size``)")


MaxPooling1D = MaxPool1D = _pool(tf_pool.MaxPooling1D, "MaxPooling1D", 2)
MaxPooling2D = MaxPool2D = _pool(tf_pool.MaxPooling2D, "MaxPooling2D", (2, 2))
MaxPooling3D = MaxPool3D = _pool(tf_pool.MaxPooling3D, "MaxPooling3D", (2, 2, 2))
AveragePooling1D = AvgPool1D = _pool(tf_pool.AveragePooling1D, "AveragePooling1D", 2)
AveragePooling2D = AvgPool2D = _pool(tf_pool.AveragePooling2D, "AveragePooling2D", (2, 2))
AveragePooling3D = AvgPool3D = _pool(tf_pool.AveragePooling3D, "AveragePooling3D", (2, 2, 2))


class _GlobalPooling(Layer):
    _rank = 1
    _reduce = staticmethod(math_ops.reduce_mean)

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or K.image_data_format()
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def call(self, inputs):
        if self.data_format == "channels_first":
            axes = list(range(2, 2 + self._rank))
        else:
            axes = list(range(1, 1 + self._rank))
        return self._reduce(inputs, axis=axes)


def _global(name, rank, reduce, what):
    cls = type(name, (_GlobalPooling,), {"_rank": rank, "_reduce": staticmethod(reduce),
                                         "__doc__": f"The {what} over the {rank} spatial axes of each channel."})
    return cls


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the time axis of each channel; with a mask (``Embedding(mask_zero=True)``, ``Masking``),
    the mean over the kept steps only."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        axis = 1 if self.data_format != "channels_first" else 2
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), 2 if axis == 1 else 1)
        return math_ops.reduce_sum(inputs * weights, axis=axis) / math_ops.reduce_sum(weights, axis=axis)

    def compute_mask(self, inputs, mask=None):
        return None


GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAveragePooling2D = GlobalAvgPool2D = _global("GlobalAveragePooling2D", 2, math_ops.reduce_mean, "mean")
GlobalAveragePooling3D = _global("GlobalAveragePooling3D", 3, math_ops.reduce_mean, "mean")
GlobalMaxPooling1D = GlobalMaxPool1D = _global("GlobalMaxPooling1D", 1, math_ops.reduce_max, "maximum")
GlobalMaxPooling2D = GlobalMaxPool2D = _global("GlobalMaxPooling2D", 2, math_ops.reduce_max, "maximum")
GlobalMaxPooling3D = _global("GlobalMaxPooling3D", 3, math_ops.reduce_max, "maximum")
