"""Argument normalisation and the 1-D/3-D convolutions and pools the layers build from 2-D ops.

ferroflow's kernels are 2-D (``Conv2D``, ``MaxPool``, ``AvgPool`` and their
gradients). A 1-D op is the 2-D op on a height-1 image, as TensorFlow computes
it. A 3-D convolution is a sum over the kernel's depth taps of 2-D
convolutions of depth slices; a 3-D pool is a 2-D pool over (height, width)
followed by a 2-D pool over depth. Both give TensorFlow's values (max and
in-bounds averages factor over dimensions) and differentiate through the 2-D
ops' gradients. The 3-D forms need the input's depth known when building.
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


def _depth_taps(x, kd, sd, dd, padding):
    """Zero-pads ``x`` ``[N, D, ...]`` along depth as TF would; returns it and the output depth."""
    depth = dimension_value(x.shape[1])
    if depth is None:
        raise ValueError(f"3-D convolutions and pools need the input's depth known when building; got input shape "
                         f"{x.shape}")
    eff = (kd - 1) * dd + 1
    if padding == "same":
        out = -(-depth // sd)
        total = max((out - 1) * sd + eff - depth, 0)
        if total:
            pads = [[0, 0]] * x.shape.rank
            pads[1] = [total // 2, total - total // 2]
            x = array_ops.pad(x, pads)
    else:
        if depth < eff:
            raise ValueError(f"The input's depth {depth} is smaller than the kernel's effective depth {eff} with "
                             f"'valid' padding")
        out = (depth - eff) // sd + 1
    return x, out


def _merge_depth(x):
    """``[N, D, H, W, C]`` to ``[N * D, H, W, C]``."""
    return array_ops.reshape(x, array_ops.stack([-1, _dim(x, 2), _dim(x, 3), _dim(x, 4)]))


def _split_depth(y, batch, depth):
    """``[N * D, H, W, C]`` back to ``[N, D, H, W, C]``."""
    return array_ops.reshape(y, array_ops.stack([batch, depth, _dim(y, 1), _dim(y, 2), _dim(y, 3)]))


def conv3d(x, kernel, strides, padding, dilations, channels_first):
    """3-D convolution of ``x`` ``[N, D, H, W, C]`` with ``kernel`` ``[kd, kh, kw, C, F]``."""
    x = _to_last(x, channels_first)
    kd = dimension_value(kernel.shape[0])
    sd, sh, sw = strides
    dd, dh, dw = dilations
    batch = _dim(x, 0)
    xp, out_d = _depth_taps(x, kd, sd, dd, padding)
    taps = []
    for k in range(kd):
        start = k * dd
        xs = xp[:, start:start + (out_d - 1) * sd + 1:sd]
        taps.append(nn_conv.conv2d(_merge_depth(xs), kernel[k], strides=[1, sh, sw, 1], padding=padding.upper(),
                                   dilations=[1, dh, dw, 1]))
    y = taps[0] if len(taps) == 1 else math_ops.add_n(taps)
    y = _split_depth(y, batch, out_d)
    return _to_first(y, channels_first)


def pool1d(pool, x, size, stride, padding, channels_first):
    axis = 2 if channels_first else 1
    fmt = "NCHW" if channels_first else "NHWC"
    y = pool(array_ops.expand_dims(x, axis), [1, size], [1, stride], padding.upper(), data_format=fmt)
    return array_ops.squeeze(y, [axis])


def pool3d(pool, x, sizes, strides, padding, channels_first):
    x = _to_last(x, channels_first)
    batch = _dim(x, 0)
    depth = dimension_value(x.shape[1])
    if depth is None:
        raise ValueError(f"3-D pools need the input's depth known when building; got input shape {x.shape}")
    pad = padding.upper()
    y = pool(_merge_depth(x), [1, sizes[1], sizes[2], 1], [1, strides[1], strides[2], 1], pad)
    h, w, c = _dim(y, 1), _dim(y, 2), _dim(y, 3)
    hw = h * w if isinstance(h, int) and isinstance(w, int) else -1
    y = array_ops.reshape(y, array_ops.stack([batch, depth, hw, c]))
    y = pool(y, [1, sizes[0], 1, 1], [1, strides[0], 1, 1], pad)
    out_d = dimension_value(y.shape[1])
    y = array_ops.reshape(y, array_ops.stack([batch, out_d, h, w, c]))
    return _to_first(y, channels_first)


def depthwise_as_dense_kernel(depthwise):
    """A ``[kh, kw, C, m]`` depthwise kernel as the equivalent ``[kh, kw, C, C * m]`` block-diagonal kernel.

    Output channel ``c * m + j`` sees only input channel ``c``, as in TensorFlow's depthwise convolution.
    """
    kh, kw, c, m = [dimension_value(d) for d in depthwise.shape]
    eye = ops.convert_to_tensor(np.eye(c, dtype=depthwise.dtype.as_numpy_dtype).reshape(1, 1, c, c, 1))
    full = math_ops.multiply(array_ops.expand_dims(depthwise, 3), eye)
    return array_ops.reshape(full, [kh, kw, c, c * m])
