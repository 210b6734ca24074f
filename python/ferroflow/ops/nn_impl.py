"""The ``tf.nn`` layers of TF1 convnets: depthwise and separable convolutions, fused and composed batch
normalization, the moments helpers, ``conv1d``, ``crelu``, ``lrn``, ``space_to_depth``/``depth_to_space`` and
``max_pool_with_argmax``.

``depthwise_conv2d_native`` and its backprops are TensorFlow's ``DepthwiseConv2dNative`` ops, and
``fused_batch_norm`` is ``FusedBatchNormV3`` (outputs ``y, batch_mean, batch_variance`` and three reserve
spaces), each with a Rust kernel and TensorFlow's gradient, so GraphDefs read and written by TensorFlow
carry the same nodes. ``batch_normalization``, ``batch_norm_with_global_normalization`` and the moments
helpers are composed from math ops, as in TensorFlow. Depthwise kernels are NHWC; ``data_format="NCHW"``
is transposed around the op, as for ``conv2d``. ``depthwise_conv2d``'s ``rate`` becomes the native op's
``dilations`` (TensorFlow reaches the same values through ``SpaceToBatchND``).
"""

from __future__ import annotations

import collections

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.ops import array_ops, math_ops, nn_conv, nn_ops
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops.math_ops import _lookup

__all__ = [
    "batch_norm_with_global_normalization",
    "batch_normalization",
    "conv1d",
    "crelu",
    "depthwise_conv2d",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_native",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "depth_to_space",
    "fused_batch_norm",
    "local_response_normalization",
    "lrn",
    "max_pool_with_argmax",
    "normalize_moments",
    "separable_conv2d",
    "space_to_depth",
    "sufficient_statistics",
    "weighted_moments",
]


def _dw_attrs(strides, padding, dilations, data_format):
    """The native depthwise ops' attrs (NHWC order) from ``tf.nn``-style arguments."""
    data_format = nn_conv._data_format(data_format)
    ci = 1 if data_format == "NCHW" else 3
    padding, explicit = nn_conv._convert_padding(padding)
    strides = nn_conv._get_sequence(strides, 2, ci, "strides")
    dilations = nn_conv._get_sequence(dilations, 2, ci, "dilations")
    attrs = {
        "strides": nn_conv._nhwc_list(strides, data_format),
        "padding": padding,
        "explicit_paddings": nn_conv._nhwc_paddings(explicit, data_format),
        "dilations": nn_conv._nhwc_list(dilations, data_format),
        "data_format": "NHWC",
    }
    return data_format, attrs


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """Convolves each of ``input``'s ``C`` channels with its own ``M`` filters of ``filter`` ``[kh, kw, C, M]``.

    The result has ``C * M`` channels; channel ``c * M + m`` is input channel ``c`` under filter ``[:, :, c, m]``.
    """
    with ops.name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        data_format, attrs = _dw_attrs(strides, padding, dilations, data_format)
        x = nn_conv._tensor(input, "input")
        w = nn_conv._tensor(filter, "filter", like=x)
        if data_format == "NCHW":
            y = make("DepthwiseConv2dNative", [nn_conv._to_nhwc(x, data_format), w], attrs)
            return nn_conv._from_nhwc(y, data_format, scope)
        return make("DepthwiseConv2dNative", [x, w], attrs, scope)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of ``depthwise_conv2d_native`` with respect to an input of shape ``input_sizes``."""
    with ops.name_scope(name, "DepthwiseConv2dNativeBackpropInput", [input_sizes, filter, out_backprop]) as scope:
        data_format, attrs = _dw_attrs(strides, padding, dilations, data_format)
        w = nn_conv._tensor(filter, "filter")
        dy = nn_conv._tensor(out_backprop, "out_backprop", like=w)
        sizes = nn_conv._sizes_tensor(nn_conv._sizes_to_nhwc(input_sizes, data_format), "input_sizes")
        if data_format == "NCHW":
            y = make("DepthwiseConv2dNativeBackpropInput", [sizes, w, nn_conv._to_nhwc(dy, data_format)], attrs)
            return nn_conv._from_nhwc(y, data_format, scope)
        return make("DepthwiseConv2dNativeBackpropInput", [sizes, w, dy], attrs, scope)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                            data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of ``depthwise_conv2d_native`` with respect to a filter of shape ``filter_sizes``."""
    with ops.name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, filter_sizes, out_backprop]) as scope:
        data_format, attrs = _dw_attrs(strides, padding, dilations, data_format)
        x = nn_conv._tensor(input, "input")
        dy = nn_conv._tensor(out_backprop, "out_backprop", like=x)
        sizes = nn_conv._sizes_tensor(filter_sizes, "filter_sizes")
        inputs = [nn_conv._to_nhwc(x, data_format), sizes, nn_conv._to_nhwc(dy, data_format)]
        return make("DepthwiseConv2dNativeBackpropFilter", inputs, attrs, scope)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def _rate(rate, dilations):
    rate = _lookup("dilations", dilations, "rate", rate)
    if rate is None:
        return [1, 1]
    rate = list(rate) if isinstance(rate, (list, tuple)) else [rate, rate]
    if len(rate) != 2:
        raise ValueError(f"rate must be two-dimensional. Received: rate={rate}")
    if any(int(r) < 1 for r in rate):
        raise ValueError(f"rate must be positive. Received: rate={rate}")
    return [int(r) for r in rate]


def _check_rate_strides(rate, strides):
    if rate != [1, 1] and strides is not None and any(int(s) != 1 for s in list(strides)):
        raise ValueError(f"strides > 1 not supported in conjunction with dilation_rate > 1. Received: "
                         f"dilation_rate={rate} and strides={list(strides)}")


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """Depthwise 2-D convolution (``DepthwiseConv2dNative``), optionally atrous with ``rate``."""
    rate = _rate(rate, dilations)
    _check_rate_strides(rate, strides)
    data_format = nn_conv._data_format(data_format)
    with ops.name_scope(name, "depthwise", [input, filter]) as scope:
        x = ops.convert_to_tensor(input, name="tensor_in")
        w = ops.convert_to_tensor(filter, name="filter_in")
        return depthwise_conv2d_native(x, w, strides, padding, data_format=data_format,
                                       dilations=_spatial_dilations(rate, data_format), name=scope)


def _spatial_dilations(rate, data_format):
    return [1, 1] + rate if data_format == "NCHW" else [1] + rate + [1]


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """A depthwise convolution followed by a 1x1 ``conv2d`` with ``pointwise_filter`` ``[1, 1, C * M, out]``."""
    rate = _rate(rate, dilations)
    _check_rate_strides(rate, strides)
    data_format = nn_conv._data_format(data_format)
    with ops.name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        x = ops.convert_to_tensor(input, name="tensor_in")
        dw = ops.convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pw = ops.convert_to_tensor(pointwise_filter, name="pointwise_filter")
        shape = pw.shape.with_rank(4)
        shape.dims[0].assert_is_compatible_with(1)
        shape.dims[1].assert_is_compatible_with(1)
        depthwise = depthwise_conv2d_native(x, dw, strides, padding, data_format=data_format,
                                            dilations=_spatial_dilations(rate, data_format), name="depthwise")
        return nn_conv.conv2d(depthwise, pw, [1, 1, 1, 1], padding="VALID", data_format=data_format, name=scope)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """Batch normalization of a 4-D ``x`` over its channel axis as one op (``FusedBatchNormV3``).

    Returns ``(y, mean, variance)``. Training normalizes with the batch's mean and biased variance and returns
    the batch mean and Bessel-corrected variance, blended into ``mean``/``variance`` as
    ``(1 - exponential_avg_factor) * old + exponential_avg_factor * new`` when the factor is not 1; inference
    normalizes with (and returns) ``mean`` and ``variance``.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
                         f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` {variance!r}")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    x = ops.convert_to_tensor(x, name="input")
    scale = ops.convert_to_tensor(scale, name="scale")
    offset = ops.convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant_op.constant([])
    if variance is None:
        variance = constant_op.constant([])
    mean = ops.convert_to_tensor(mean, dtype=dtypes.float32)
    variance = ops.convert_to_tensor(variance, dtype=dtypes.float32)
    op = make_op("FusedBatchNormV3", [x, scale, offset, mean, variance], {
        "epsilon": float(epsilon),
        "exponential_avg_factor": float(exponential_avg_factor),
        "data_format": data_format,
        "is_training": bool(is_training),
    }, name=name or "FusedBatchNormV3")
    y, running_mean, running_var = op.outputs[:3]
    return y, running_mean, running_var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`` (``offset``/``scale`` may be None)."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = ops.convert_to_tensor(x)
        inv = math_ops.rsqrt(math_ops.add(variance, variance_epsilon))
        if scale is not None:
            inv = math_ops.multiply(inv, scale)
        shift = math_ops.negative(math_ops.multiply(mean, inv)) if offset is None else \
            math_ops.subtract(offset, math_ops.multiply(mean, inv))
        return math_ops.add(math_ops.multiply(x, array_ops.cast(inv, x.dtype)), array_ops.cast(shift, x.dtype))


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None,  # noqa: A002
                                         mean=None, variance=None):
    """``batch_normalization`` with ``gamma`` applied only when ``scale_after_normalization``."""
    t = _lookup("input", input, "t", t)
    m = _lookup("mean", mean, "m", m)
    v = _lookup("variance", variance, "v", v)
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon,
                               name)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over ``axes``."""
    axes = sorted(set(int(a) for a in axes))
    keep = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keep = bool(keep) if keep is not None else False
    with ops.name_scope(name, "sufficient_statistics", [x, shift]):
        x = ops.convert_to_tensor(x, name="x")
        dims = x.shape.dims
        if dims is not None and all(dims[d].value is not None for d in axes):
            counts = 1
            for d in axes:
                counts *= dims[d].value
            counts = constant_op.constant(counts, dtype=x.dtype)
        else:
            x_dims = array_ops.gather(array_ops.cast(array_ops.shape(x), x.dtype), axes)
            counts = math_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = ops.convert_to_tensor(shift, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss = x
            v_ss = math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from ``sufficient_statistics``' sums."""
    with ops.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean),
                                     name="variance")
    return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """Mean and variance over ``axes`` with each element counted ``frequency_weights`` times."""
    keep = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keep = bool(keep) if keep is not None else False
    with ops.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = ops.convert_to_tensor(x, name="x")
        w = ops.convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype == dtypes.float16
        if needs_cast:
            x = array_ops.cast(x, dtypes.float32)
        if w.dtype != x.dtype:
            w = array_ops.cast(w, x.dtype)
        weighted_sum = math_ops.reduce_sum(math_ops.multiply(w, x), axes, name="weighted_input_sum",
                                           keepdims=True)
        broadcast_w = math_ops.add(w, array_ops.zeros_like(x))
        sum_w = math_ops.reduce_sum(broadcast_w, axes, name="sum_of_weights", keepdims=True)
        mean = math_ops.div_no_nan(weighted_sum, sum_w)
        distsq = math_ops.reduce_sum(math_ops.multiply(w, math_ops.squared_difference(x, mean)), axes,
                                     name="weighted_distsq", keepdims=True)
        variance = math_ops.div_no_nan(distsq, sum_w)
        if not keep:
            mean = array_ops.squeeze(mean, axis=axes)
            variance = array_ops.squeeze(variance, axis=axes)
        if needs_cast:
            mean = array_ops.cast(mean, dtypes.float16)
            variance = array_ops.cast(variance, dtypes.float16)
        return mean, variance


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None,
           name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of ``[batch, width, in]`` with ``filters`` ``[k, in, out]``, run as ``Conv2D``."""
    value = _lookup("input", input, "value", value)
    with ops.name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format is None or data_format in ("NHWC", "NWC"):
            data_format, start, ci = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, start, ci = "NCHW", -2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        strides = [1] + nn_conv._get_sequence(stride, 1, ci, "stride")
        dilations = [1] + nn_conv._get_sequence(dilations, 1, ci, "dilations")
        value = array_ops.expand_dims(value, start)
        filters = array_ops.expand_dims(filters, 0)
        result = nn_conv.conv2d(value, filters, strides, padding,
                                use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
                                data_format=data_format, dilations=dilations, name=scope)
        return array_ops.squeeze(result, [start])


def crelu(features, name=None, axis=-1):
    """``relu`` of ``features`` and of ``-features``, concatenated along ``axis``."""
    with ops.name_scope(name, "CRelu", [features]) as scope:
        x = ops.convert_to_tensor(features, name="features")
        c = array_ops.concat([x, math_ops.negative(x)], axis, name=scope)
        return nn_ops.relu(c)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """``input / (bias + alpha * sum(input[..., d - r:d + r + 1] ** 2)) ** beta`` per channel ``d`` (op ``LRN``)."""
    with ops.name_scope(name, "LRN", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha),
                 "beta": float(beta)}
        return make("LRN", [x], attrs, scope)


lrn = local_response_normalization


def _space_depth(op_type, input, block_size, name, data_format):  # noqa: A002
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{op_type}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    with ops.name_scope(name, op_type, [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {"block_size": int(block_size), "data_format": "NHWC"}
        if data_format == "NCHW":
            y = make(op_type, [nn_conv._to_nhwc(x, data_format)], attrs)
            return nn_conv._from_nhwc(y, data_format, scope)
        return make(op_type, [x], attrs, scope)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves each ``block_size x block_size`` patch of pixels into the channels (op ``SpaceToDepth``)."""
    return _space_depth("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of ``space_to_depth`` (op ``DepthToSpace``)."""
    return _space_depth("DepthToSpace", input, block_size, name, data_format)


MaxPoolWithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None, name=None,  # noqa: A002, N803
                         output_dtype=None, include_batch_in_index=False):
    """Max pooling that also returns each maximum's flat index ``(y * width + x) * channels + c``
    (plus ``batch * height * width * channels`` with ``include_batch_in_index``); op ``MaxPoolWithArgmax``."""
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. Received: "
                         f"data_format={data_format}")
    Targmax = _lookup("output_dtype", output_dtype, "Targmax", Targmax)  # noqa: N806
    index_dtype = dtypes.int64 if Targmax is None else dtypes.as_dtype(Targmax)
    if isinstance(padding, (list, tuple)) or padding not in ("SAME", "VALID"):
        raise ValueError(f"max_pool_with_argmax: padding must be 'SAME' or 'VALID', got {padding!r}")
    with ops.name_scope(name, "MaxPoolWithArgmax", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {
            "ksize": nn_conv._get_sequence(ksize, 2, 3, "ksize"),
            "strides": nn_conv._get_sequence(strides, 2, 3, "strides"),
            "padding": padding,
            "Targmax": ("type", index_dtype.as_datatype_enum),
            "include_batch_in_index": bool(include_batch_in_index),
        }
        op = make_op("MaxPoolWithArgmax", [x], attrs, scope)
        return MaxPoolWithArgmax(op.outputs[0], op.outputs[1])
