"""2-D convolution and pooling (``tf.nn.conv2d``, ``max_pool``, ``avg_pool``, ...).

The ops are TensorFlow's (``Conv2D``, ``Conv2DBackpropInput``, ``Conv2DBackpropFilter``,
``MaxPool``, ``AvgPool``) and run NHWC kernels. ``data_format="NCHW"`` is accepted here and
handled by transposing to NHWC around the op (gradients flow through the transposes).
"""

from __future__ import annotations

import collections.abc

import numpy as np

from ferroflow.framework import ops
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make
from ferroflow.ops.math_ops import _lookup

__all__ = [
    "avg_pool",
    "avg_pool2d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "max_pool",
    "max_pool2d",
]

_TO_NHWC = [0, 2, 3, 1]
_TO_NCHW = [0, 3, 1, 2]


def _data_format(data_format):
    if data_format is None:
        return "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW' for 2-D ops. Received: data_format={data_format!r}")
    return data_format


def _get_sequence(value, n, channel_index, name):
    """TensorFlow's helper: an int or a list of length 1, n or n + 2, as n + 2 ints."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, (list, tuple)):
        value = list(value)
    elif isinstance(value, (int, np.integer)) or not isinstance(value, collections.abc.Sized):
        value = [value]
    else:
        value = list(value)
    if len(value) == n + 2:
        return [int(v) for v in value]
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} of length {len(value)}")
    value = [int(v) for v in value]
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def _convert_padding(padding, expected_length=4):
    """TensorFlow's ``convert_padding``: a padding string, or a list of (before, after) pairs."""
    explicit = []
    if padding == "EXPLICIT":
        raise ValueError("'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` must be a list.")
    if isinstance(padding, (list, tuple)):
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)):
                raise ValueError(
                    "When `padding` is a list, each element of `padding` must be a list/tuple of size 2. "
                    f"Received: padding={padding} with element at index {i} of type {type(pair)}")
            if len(pair) != 2:
                raise ValueError(
                    "When `padding` is a list, each element of `padding` must be a list/tuple of size 2. "
                    f"Received: padding={padding} with element at index {i} of size {len(pair)}")
            explicit.extend(int(p) for p in pair)
        if len(padding) != expected_length:
            raise ValueError(
                f"When padding is a list, it must be of size {expected_length}. "
                f"Received: padding={padding} of size {len(padding)}")
        padding = "EXPLICIT"
    elif padding is None or not isinstance(padding, (str, bytes)):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return padding, explicit


def _nhwc_list(values, data_format):
    """A per-dimension attribute given in ``data_format`` order, in NHWC order."""
    return [values[i] for i in _TO_NHWC] if data_format == "NCHW" else list(values)


def _nhwc_paddings(explicit, data_format):
    if data_format != "NCHW" or not explicit:
        return explicit
    pairs = [explicit[2 * i:2 * i + 2] for i in range(4)]
    return [p for i in _TO_NHWC for p in pairs[i]]


def _to_nhwc(x, data_format):
    return array_ops.transpose(x, _TO_NHWC) if data_format == "NCHW" else x


def _sizes_to_nhwc(sizes, data_format):
    """A 4-element NCHW size vector (list or tensor) in NHWC order."""
    if data_format != "NCHW":
        return sizes
    if isinstance(sizes, ops.Tensor):
        return array_ops.gather(sizes, _TO_NHWC)
    return [int(sizes[i]) for i in _TO_NHWC]


def _from_nhwc(y, data_format, name):
    if data_format == "NCHW":
        return array_ops.transpose(y, _TO_NCHW, name=name)
    return y


def _conv_attrs(strides, padding, explicit, dilations, data_format, use_cudnn_on_gpu):
    return {
        "strides": _nhwc_list(strides, data_format),
        "padding": padding,
        "explicit_paddings": _nhwc_paddings(explicit, data_format),
        "dilations": _nhwc_list(dilations, data_format),
        "data_format": "NHWC",
        "use_cudnn_on_gpu": bool(use_cudnn_on_gpu),
    }


def _tensor(value, name, like=None):
    if like is not None and not isinstance(value, ops.Tensor):
        return ops.convert_to_tensor(value, dtype=like.dtype, name=name)
    return ops.convert_to_tensor(value, name=name)


def _sizes_tensor(sizes, name):
    if isinstance(sizes, ops.Tensor):
        return sizes
    return ops.convert_to_tensor(np.asarray(sizes, dtype=np.int32), name=name)


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",  # noqa: A002
           dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """2-D convolution of a 4-D ``input`` with a ``[kh, kw, in, out]`` ``filter``."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    data_format = _data_format(data_format)
    ci = 1 if data_format == "NCHW" else 3
    padding, explicit = _convert_padding(padding)
    strides = _get_sequence(strides, 2, ci, "strides")
    dilations = _get_sequence(dilations, 2, ci, "dilations")
    with ops.name_scope(name, "Conv2D", [input, filter]) as scope:
        x = _tensor(input, "input")
        w = _tensor(filter, "filter", like=x)
        attrs = _conv_attrs(strides, padding, explicit, dilations, data_format, use_cudnn_on_gpu)
        if data_format == "NCHW":
            return _from_nhwc(make("Conv2D", [_to_nhwc(x, data_format), w], attrs), data_format, scope)
        return make("Conv2D", [x, w], attrs, scope)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                          name=None, filters=None):
    """The gradient of ``conv2d`` with respect to its input, for an input of shape ``input_sizes``."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    data_format = _data_format(data_format)
    ci = 1 if data_format == "NCHW" else 3
    padding, explicit = _convert_padding(padding)
    strides = _get_sequence(strides, 2, ci, "strides")
    dilations = _get_sequence(dilations, 2, ci, "dilations")
    with ops.name_scope(name, "Conv2DBackpropInput", [input_sizes, filter, out_backprop]) as scope:
        w = _tensor(filter, "filter")
        dy = _tensor(out_backprop, "out_backprop", like=w)
        sizes = _sizes_tensor(_sizes_to_nhwc(input_sizes, data_format), "input_sizes")
        attrs = _conv_attrs(strides, padding, explicit, dilations, data_format, use_cudnn_on_gpu)
        if data_format == "NCHW":
            y = make("Conv2DBackpropInput", [sizes, w, _to_nhwc(dy, data_format)], attrs)
            return _from_nhwc(y, data_format, scope)
        return make("Conv2DBackpropInput", [sizes, w, dy], attrs, scope)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of ``conv2d`` with respect to its filter, for a filter of shape ``filter_sizes``."""
    data_format = _data_format(data_format)
    ci = 1 if data_format == "NCHW" else 3
    padding, explicit = _convert_padding(padding)
    strides = _get_sequence(strides, 2, ci, "strides")
    dilations = _get_sequence(dilations, 2, ci, "dilations")
    with ops.name_scope(name, "Conv2DBackpropFilter", [input, filter_sizes, out_backprop]) as scope:
        x = _tensor(input, "input")
        dy = _tensor(out_backprop, "out_backprop", like=x)
        sizes = _sizes_tensor(filter_sizes, "filter_sizes")
        attrs = _conv_attrs(strides, padding, explicit, dilations, data_format, use_cudnn_on_gpu)
        inputs = [_to_nhwc(x, data_format), sizes, _to_nhwc(dy, data_format)]
        return make("Conv2DBackpropFilter", inputs, attrs, scope)


def _explicit_as_pairs(padding, explicit_paddings):
    """TF's raw-op padding (``"EXPLICIT"`` + a flat 8-list) as the pairs the wrappers take."""
    if padding != "EXPLICIT":
        return padding
    flat = list(explicit_paddings)
    if len(flat) != 8:
        raise ValueError(f"explicit_paddings must have 8 entries for padding='EXPLICIT', got {len(flat)}")
    return [flat[i:i + 2] for i in range(0, 8, 2)]


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                             explicit_paddings=[], data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                             name=None):
    """``conv2d_backprop_input`` with the input's shape taken from the tensor ``input`` itself."""
    with ops.name_scope(name, "Conv2DBackpropInputV2", [input, filter, out_backprop]) as scope:
        sizes = array_ops.shape(_tensor(input, "input"))
        return conv2d_backprop_input(sizes, filter, out_backprop, strides,
                                     _explicit_as_pairs(padding, explicit_paddings), use_cudnn_on_gpu,
                                     data_format, dilations, name=scope)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                              explicit_paddings=[], data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                              name=None):
    """``conv2d_backprop_filter`` with the filter's shape taken from the tensor ``filter`` itself."""
    with ops.name_scope(name, "Conv2DBackpropFilterV2", [input, filter, out_backprop]) as scope:
        sizes = array_ops.shape(_tensor(filter, "filter"))
        return conv2d_backprop_filter(input, sizes, out_backprop, strides,
                                      _explicit_as_pairs(padding, explicit_paddings), use_cudnn_on_gpu,
                                      data_format, dilations, name=scope)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose (gradient) of ``conv2d``: ``filter`` is ``[kh, kw, out, in]``."""
    value = _lookup("input", input, "value", value)
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    with ops.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        data_format = _data_format(data_format)
        ci = 1 if data_format == "NCHW" else 3
        strides = _get_sequence(strides, 2, ci, "strides")
        dilations = _get_sequence(dilations, 2, ci, "dilations")
        return conv2d_backprop_input(output_shape, filter, value, strides, padding, data_format=data_format,
                                     dilations=dilations, name=scope)


def _pool(op_type, value, ksize, strides, padding, data_format, name, explicit_ok):
    with ops.name_scope(name, op_type, [value]) as scope:
        data_format = _data_format(data_format)
        ci = 1 if data_format == "NCHW" else 3
        ksize = _get_sequence(ksize, 2, ci, "ksize")
        strides = _get_sequence(strides, 2, ci, "strides")
        if explicit_ok:
            padding, explicit = _convert_padding(padding)
        elif isinstance(padding, (list, tuple)):
            raise ValueError(f"{op_type} does not support explicit padding. Received: padding={padding}")
        else:
            explicit = []
        if any(v == 0 for v in ksize):
            raise ValueError(f"`ksize` cannot be zero. Received: ksize={ksize}")
        x = _tensor(value, "input")
        attrs = {
            "ksize": _nhwc_list(ksize, data_format),
            "strides": _nhwc_list(strides, data_format),
            "padding": padding,
            "data_format": "NHWC",
        }
        if explicit_ok:
            attrs["explicit_paddings"] = _nhwc_paddings(explicit, data_format)
        if data_format == "NCHW":
            return _from_nhwc(make(op_type, [_to_nhwc(x, data_format)], attrs), data_format, scope)
        return make(op_type, [x], attrs, scope)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """The maximum over each ``ksize`` window of a 4-D ``value``."""
    value = _lookup("input", input, "value", value)
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name, explicit_ok=True)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """The mean over each ``ksize`` window of a 4-D ``value`` (SAME: of its in-bounds elements)."""
    value = _lookup("input", input, "value", value)
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name, explicit_ok=False)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``max_pool`` (TensorFlow's 2-D alias)."""
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool2d(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """``avg_pool`` (TensorFlow's 2-D alias)."""
    return avg_pool(value, ksize, strides, padding, data_format=data_format, name=name, input=input)
