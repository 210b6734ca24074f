"""``tf.nn.quantized_conv2d``, ``quantized_avg_pool``, ``quantized_max_pool`` and ``quantized_relu_x``.

Each takes a quantized tensor with the float range its integers stand for
(``min``/``max`` float32 scalars) and returns a namedtuple of the result and
the result's range, as TensorFlow's generated wrappers do. The convolution
takes ``quint8`` input and filter and gives ``qint32`` sums of
``(x - x_zero) * (w - w_zero)``; the pools (``qint8``/``quint8``) and the
clipped ReLU (``quint8``/``qint32``) keep the input's range. The arithmetic
and the types each op computes are described in
``crates/tensor/src/kernels/quantized_nn.rs``.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make_op, type_attr

__all__ = ["quantized_avg_pool", "quantized_conv2d", "quantized_max_pool", "quantized_relu_x"]

QuantizedConv2D = collections.namedtuple("QuantizedConv2D", ["output", "min_output", "max_output"])
QuantizedAvgPool = collections.namedtuple("QuantizedAvgPool", ["output", "min_output", "max_output"])
QuantizedMaxPool = collections.namedtuple("QuantizedMaxPool", ["output", "min_output", "max_output"])
QuantizedReluX = collections.namedtuple("QuantizedReluX", ["activations", "min_activations", "max_activations"])

_QUANTIZED = (dtypes.qint8, dtypes.quint8, dtypes.qint32, dtypes.qint16, dtypes.quint16)


def _quantized(value, param, name):
    t = ops.convert_to_tensor(value, name=name)
    if t.dtype not in _QUANTIZED:
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {t.dtype.name} not in list of allowed values: "
            + ", ".join(d.name for d in _QUANTIZED)
        )
    return t


def _quantized_type(value, param):
    t = dtypes.as_dtype(value)
    if t not in _QUANTIZED:
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {t.name} not in list of allowed values: "
            + ", ".join(d.name for d in _QUANTIZED)
        )
    return t


def _range(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.float32, name=name)


def _ints(value, arg, op_type):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{arg}' argument to '{op_type}' Op, not {value!r}.")
    return [int(v) for v in value]


def _padding(value, op_type):
    if value not in ("SAME", "VALID"):
        raise ValueError(f"Attr 'padding' of '{op_type}' Op passed string '{value}' not in: \"SAME\", \"VALID\".")
    return value


def quantized_conv2d(input, filter, min_input, max_input, min_filter, max_filter, strides, padding,  # noqa: A002
                     out_type=dtypes.qint32, dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """``QuantizedConv2D``: NHWC ``input`` convolved with HWIO ``filter``, both quantized over their ranges.

    Returns ``(output, min_output, max_output)``: the int32 sums and the float
    range one level of input times one level of filter spans over int32.
    """
    strides = _ints(strides, "strides", "QuantizedConv2D")
    dilations = _ints(dilations, "dilations", "QuantizedConv2D")
    _padding(padding, "QuantizedConv2D")
    out = _quantized_type(out_type, "out_type")
    with ops.name_scope(name, "QuantizedConv2D",
                        [input, filter, min_input, max_input, min_filter, max_filter]) as scope:
        x = _quantized(input, "input", "input")
        f = _quantized(filter, "filter", "filter")
        inputs = [x, f, _range(min_input, "min_input"), _range(max_input, "max_input"),
                  _range(min_filter, "min_filter"), _range(max_filter, "max_filter")]
        attrs = {
            "Tinput": type_attr(x.dtype),
            "Tfilter": type_attr(f.dtype),
            "out_type": type_attr(out),
            "strides": strides,
            "padding": padding,
            "dilations": dilations,
        }
        return QuantizedConv2D(*make_op("QuantizedConv2D", inputs, attrs, scope).outputs)


def _pool(op_type, result, input, min_input, max_input, ksize, strides, padding, name):  # noqa: A002
    ksize = _ints(ksize, "ksize", op_type)
    strides = _ints(strides, "strides", op_type)
    _padding(padding, op_type)
    with ops.name_scope(name, op_type, [input, min_input, max_input]) as scope:
        x = _quantized(input, "input", "input")
        attrs = {"T": type_attr(x.dtype), "ksize": ksize, "strides": strides, "padding": padding}
        inputs = [x, _range(min_input, "min_input"), _range(max_input, "max_input")]
        return result(*make_op(op_type, inputs, attrs, scope).outputs)


def quantized_avg_pool(input, min_input, max_input, ksize, strides, padding, name=None):  # noqa: A002
    """``QuantizedAvgPool``: the average of each window of a quantized NHWC ``input`` (rounded toward zero,
    padding not counted); returns ``(output, min_output, max_output)`` with the input's range."""
    return _pool("QuantizedAvgPool", QuantizedAvgPool, input, min_input, max_input, ksize, strides, padding,
                 name)


def quantized_max_pool(input, min_input, max_input, ksize, strides, padding, name=None):  # noqa: A002
    """``QuantizedMaxPool``: the maximum of each window of a quantized NHWC ``input`` (over rows and columns,
    or over depth windows); returns ``(output, min_output, max_output)`` with the input's range."""
    return _pool("QuantizedMaxPool", QuantizedMaxPool, input, min_input, max_input, ksize, strides, padding,
                 name)


def quantized_relu_x(features, max_value, min_features, max_features, out_type=dtypes.quint8, name=None):
    """``QuantizedReluX``: ``features`` clamped between the levels of 0.0 and ``max_value`` in
    ``[min_features, max_features]``; returns ``(activations, min_activations, max_activations)``."""
    out = _quantized_type(out_type, "out_type")
    with ops.name_scope(name, "QuantizedReluX", [features, max_value, min_features, max_features]) as scope:
        x = _quantized(features, "features", "features")
        inputs = [x, _range(max_value, "max_value"), _range(min_features, "min_features"),
                  _range(max_features, "max_features")]
        attrs = {"Tinput": type_attr(x.dtype), "out_type": type_attr(out)}
        return QuantizedReluX(*make_op("QuantizedReluX", inputs, attrs, scope).outputs)
