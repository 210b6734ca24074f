"""Argument normalisation and the 1-D and 3-D convolutions and pools of the layers.

A 1-D op is the 2-D op (``Conv2D``, ``MaxPool``, ``AvgPool``) on a height-1
image, as TensorFlow computes it; 3-D convolutions and pools are TensorFlow's
``Conv3D``, ``MaxPool3D`` and ``AvgPool3D``.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import ops
from ferroflow.framework.tensor_shape import dimension_value
from ferroflow.ops import array_ops, math_ops, nn_conv


def normalize_tuple(value, n, name):
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}") from None
    if len(values) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    for v in values:
        if not isinstance(v, (int, np.integer)):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value} including "
                             f"element {v} of type {type(v)}")
    return tuple(int(v) for v in values)


def normalize_padding(value, allow_causal=False):
    padding = str(value).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {', '.join(map(repr, allowed))}. "
                         f"Received: {value}")
    return padding


def normalize_data_format(value):
    data_format = "channels_last" if value is None else str(value).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                         f"Received: {value}")
    return data_format


def conv_output_length(length, k, padding, stride, dilation=1):
    if length is None:
        return None
    eff = (k - 1) * dilation + 1
    if padding in ("same", "causal"):
        out = length
    else:
        out = length - eff + 1
    return (out + stride - 1) // stride


def deconv_output_length(length, k, padding, stride):
    """The length a transposed convolution produces (Keras's rule; a tensor when ``length`` is)."""
    if padding == "valid":
        return length * stride + max(k - stride, 0)
    return length * stride


def _dim(x, i):
    d = dimension_value(x.shape[i]) if x.shape.rank is not None else None
    return d if d is not None else array_ops.shape(x)[i]


def _to_last(x, channels_first):
    if not channels_first:
        return x
    rank = x.shape.rank
    return array_ops.transpose(x, [0] + list(range(2, rank)) + [1])


def _to_first(x, channels_first):
    if not channels_first:
        return x
    rank = x.shape.rank
    return array_ops.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def conv1d(x, kernel, stride, padding, dilation, channels_first):
    """1-D convolution: ``x`` ``[N, W, C]`` (or ``[N, C, W]``), ``kernel`` ``[k, C, F]``."""
    if padding == "causal":
        left = dilation * (dimension_value(kernel.shape[0]) - 1)
        pads = [[0, 0], [0, 0], [left, 0]] if channels_first else [[0, 0], [left, 0], [0, 0]]
        x = array_ops.pad(x, pads)
        padding = "valid"
    axis = 2 if channels_first else 1
    x4 = array_ops.expand_dims(x, axis)
    w4 = array_ops.expand_dims(kernel, 0)
    fmt = "NCHW" if channels_first else "NHWC"
    y = nn_conv.conv2d(x4, w4, strides=[1, stride], padding=padding.upper(), dilations=[1, dilation],
                       data_format=fmt)
    return array_ops.squeeze(y, [axis])


def conv3d(x, kernel, strides, padding, dilations, channels_first):
    """3-D convolution of ``x`` ``[N, D, H, W, C]`` with ``kernel`` ``[kd, kh, kw, C, F]`` (op ``Conv3D``)."""
    from ferroflow.ops import nn_more

    if channels_first:
        return nn_more.conv3d(x, kernel, [1, 1, *strides], padding.upper(), data_format="NCDHW",
                              dilations=[1, 1, *dilations])
    return nn_more.conv3d(x, kernel, [1, *strides, 1], padding.upper(), dilations=[1, *dilations, 1])


def pool1d(pool, x, size, stride, padding, channels_first):
    axis = 2 if channels_first else 1
    fmt = "NCHW" if channels_first else "NHWC"
    y = pool(array_ops.expand_dims(x, axis), [1, size], [1, stride], padding.upper(), data_format=fmt)
    return array_ops.squeeze(y, [axis])


def pool3d(pool, x, sizes, strides, padding, channels_first):
    """``pool`` (``nn.max_pool`` or ``nn.avg_pool``) over ``x``'s three spatial dimensions (``MaxPool3D``/``AvgPool3D``)."""
    from ferroflow.ops import nn_more

    pool3 = nn_more.max_pool3d if pool is nn_conv.max_pool else nn_more.avg_pool3d
    if channels_first:
        return pool3(x, [1, 1, *sizes], [1, 1, *strides], padding.upper(), data_format="NCDHW")
    return pool3(x, [1, *sizes, 1], [1, *strides, 1], padding.upper())


def depthwise_as_dense_kernel(depthwise):
    """A ``[kh, kw, C, m]`` depthwise kernel as the equivalent ``[kh, kw, C, C * m]`` block-diagonal kernel.

    Output channel ``c * m + j`` sees only input channel ``c``, as in TensorFlow's depthwise convolution.
    """
    kh, kw, c, m = [dimension_value(d) for d in depthwise.shape]
    eye = ops.convert_to_tensor(np.eye(c, dtype=depthwise.dtype.as_numpy_dtype).reshape(1, 1, c, c, 1))
    full = math_ops.multiply(array_ops.expand_dims(depthwise, 3), eye)
    return array_ops.reshape(full, [kh, kw, c, c * m])
