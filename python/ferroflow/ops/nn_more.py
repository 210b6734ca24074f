"""More of ``tf.nn``: 3-D convolution and pooling, the N-d ``convolution``/``pool`` dispatchers, transposed
and atrous convolutions, 1-D pools, ``dilation2d``/``erosion2d``, CTC loss and decoders, and the
distribution-aware loss helpers.

The ops are TensorFlow's (``Conv3D``, ``Conv3DBackpropInputV2``, ``Conv3DBackpropFilterV2``, ``MaxPool3D``,
``AvgPool3D``, ``Dilation2D``, ``CTCLoss``, ``CTCGreedyDecoder``, ...) with NDHWC kernels; NCDHW is handled by
transposing around the op. Dilated convolutions run the convolution op with its ``dilations`` attribute
(TensorFlow's ``convolution`` builds a SpaceToBatchND/BatchToSpaceND sandwich instead; the values agree).
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops, sparse_tensor
from ferroflow.ops import array_ops, math_ops, nn_conv
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops.math_ops import _lookup
from ferroflow.ops.nn_conv import _get_sequence, _sizes_tensor, _tensor

__all__ = [
    "atrous_conv2d",
    "atrous_conv2d_transpose",
    "avg_pool1d",
    "avg_pool3d",
    "avg_pool_v2",
    "collapse_repeated",
    "compute_average_loss",
    "conv1d_transpose",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "ctc_beam_search_decoder",
    "ctc_beam_search_decoder_v2",
    "ctc_greedy_decoder",
    "ctc_loss",
    "ctc_loss_v2",
    "ctc_unique_labels",
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "max_pool1d",
    "max_pool3d",
    "max_pool_v2",
    "pool",
    "scale_regularization_loss",
    "with_space_to_batch",
]

_TO_NDHWC = [0, 2, 3, 4, 1]
_TO_NCDHW = [0, 4, 1, 2, 3]


def _data_format3(data_format):
    if data_format is None:
        return "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"`data_format` must be 'NDHWC' or 'NCDHW'. Received: data_format={data_format!r}")
    return data_format


def _ndhwc_list(values, data_format):
    return [values[i] for i in _TO_NDHWC] if data_format == "NCDHW" else list(values)


def _to_ndhwc(x, data_format):
    return array_ops.transpose(x, _TO_NDHWC) if data_format == "NCDHW" else x


def _from_ndhwc(y, data_format, name):
    if data_format == "NCDHW":
        return array_ops.transpose(y, _TO_NCDHW, name=name)
    return y


def _sizes5_to_ndhwc(sizes, data_format):
    if data_format != "NCDHW":
        return sizes
    if isinstance(sizes, ops.Tensor):
        return array_ops.gather(sizes, _TO_NDHWC)
    return [int(sizes[i]) for i in _TO_NDHWC]


def _padding3(padding):
    if isinstance(padding, bytes):
        padding = padding.decode()
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return padding


def _conv3d_attrs(strides, padding, dilations, data_format):
    return {
        "strides": _ndhwc_list(strides, data_format),
        "padding": _padding3(padding),
        "dilations": _ndhwc_list(dilations, data_format),
        "data_format": "NDHWC",
    }


# ------------------------------------------------------------------ 3-D convolution


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=[1, 1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """3-D convolution of a 5-D ``input`` with a ``[kd, kh, kw, in, out]`` ``filter`` (op ``Conv3D``)."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    data_format = _data_format3(data_format)
    ci = 1 if data_format == "NCDHW" else 4
    strides = _get_sequence(strides, 3, ci, "strides")
    dilations = _get_sequence(dilations, 3, ci, "dilations")
    with ops.name_scope(name, "Conv3D", [input, filter]) as scope:
        x = _tensor(input, "input")
        w = _tensor(filter, "filter", like=x)
        attrs = _conv3d_attrs(strides, padding, dilations, data_format)
        if data_format == "NCDHW":
            return _from_ndhwc(make("Conv3D", [_to_ndhwc(x, data_format), w], attrs), data_format, scope)
        return make("Conv3D", [x, w], attrs, scope)


def _conv3d_backprop_input(input_sizes, filter, out_backprop, strides, padding, data_format, dilations,  # noqa: A002
                           name):
    data_format = _data_format3(data_format)
    ci = 1 if data_format == "NCDHW" else 4
    strides = _get_sequence(strides, 3, ci, "strides")
    dilations = _get_sequence(dilations, 3, ci, "dilations")
    with ops.name_scope(name, "Conv3DBackpropInputV2", [input_sizes, filter, out_backprop]) as scope:
        w = _tensor(filter, "filter")
        dy = _tensor(out_backprop, "out_backprop", like=w)
        sizes = _sizes_tensor(_sizes5_to_ndhwc(input_sizes, data_format), "input_sizes")
        attrs = _conv3d_attrs(strides, padding, dilations, data_format)
        if data_format == "NCDHW":
            y = make("Conv3DBackpropInputV2", [sizes, w, _to_ndhwc(dy, data_format)], attrs)
            return _from_ndhwc(y, data_format, scope)
        return make("Conv3DBackpropInputV2", [sizes, w, dy], attrs, scope)


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding, data_format="NDHWC",  # noqa: A002
                              dilations=[1, 1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of ``conv3d`` with respect to its filter, of shape ``filter_sizes`` (``Conv3DBackpropFilterV2``)."""
    data_format = _data_format3(data_format)
    ci = 1 if data_format == "NCDHW" else 4
    strides = _get_sequence(strides, 3, ci, "strides")
    dilations = _get_sequence(dilations, 3, ci, "dilations")
    with ops.name_scope(name, "Conv3DBackpropFilterV2", [input, filter_sizes, out_backprop]) as scope:
        x = _tensor(input, "input")
        dy = _tensor(out_backprop, "out_backprop", like=x)
        sizes = _sizes_tensor(filter_sizes, "filter_sizes")
        attrs = _conv3d_attrs(strides, padding, dilations, data_format)
        inputs = [_to_ndhwc(x, data_format), sizes, _to_ndhwc(dy, data_format)]
        return make("Conv3DBackpropFilterV2", inputs, attrs, scope)


def conv3d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, data_format="NDHWC",  # noqa: A002
                           dilations=[1, 1, 1, 1, 1], name=None):  # noqa: B006
    """``conv3d_backprop_filter_v2`` (TensorFlow's v1 name for the same op)."""
    return conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding, data_format=data_format,
                                     dilations=dilations, name=name)


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose (gradient) of ``conv3d``: ``filter`` is ``[kd, kh, kw, out, in]``."""
    value = _lookup("input", input, "value", value)
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    with ops.name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        return _conv3d_backprop_input(output_shape, filter, value, strides, padding, data_format, dilations, scope)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """The transpose of ``conv1d``, run as ``Conv2DBackpropInput`` over a height of 1."""
    with ops.name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format is None or data_format in ("NWC", "NHWC"):
            fmt, start, ci = "NHWC", 1, 2
        elif data_format in ("NCW", "NCHW"):
            fmt, start, ci = "NCHW", 2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        strides = [1] + _get_sequence(strides, 1, ci, "strides")
        dilations = [1] + _get_sequence(dilations, 1, ci, "dilations")
        x = array_ops.expand_dims(_tensor(input, "input"), start)
        w = array_ops.expand_dims(_tensor(filters, "filters"), 0)
        if isinstance(output_shape, ops.Tensor):
            shape = array_ops.concat([output_shape[:start], [1], output_shape[start:]], 0)
        else:
            shape = list(output_shape)
            shape = shape[:start] + [1] + shape[start:]
        y = nn_conv.conv2d_backprop_input(shape, w, x, strides, padding, data_format=fmt, dilations=dilations)
        return array_ops.squeeze(y, [start], name=scope)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """``conv1d_transpose``, ``conv2d_transpose`` or ``conv3d_transpose`` by the length of ``output_shape``."""
    with ops.name_scope(name, "conv_transpose", [input, filters, output_shape]) as scope:
        if isinstance(output_shape, ops.Tensor):
            n = output_shape.shape[0]
            n = None if n is None else int(n) - 2
        else:
            n = len(output_shape) - 2
        if n not in (1, 2, 3):
            raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: output_shape={output_shape} "
                             f"of length {None if n is None else n + 2}.")
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides, padding=padding,
                                    data_format=data_format or "NWC", dilations=dilations, name=scope)
        if n == 2:
            return nn_conv.conv2d_transpose(input, filters, output_shape, strides, padding=padding,
                                            data_format=data_format or "NHWC", dilations=dilations, name=scope)
        return conv3d_transpose(input, filters, output_shape, strides, padding=padding,
                                data_format=data_format or "NDHWC", dilations=dilations, name=scope)


def _spatial_rank(x, name, hint=None):
    rank = x.shape.ndims
    if rank is None:
        if hint is None:
            raise ValueError(f"The rank of `{name}` must be known. Received: {name}={x}")
        return hint
    return rank - 2


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """N-d convolution (N = 1, 2, 3) with strides and dilations: ``conv1d``, ``Conv2D`` or ``Conv3D``."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    dilation_rate = _lookup("dilations", dilations, "dilation_rate", dilation_rate)
    with ops.name_scope(name, "convolution", [input, filter]) as scope:
        x = _tensor(input, "input")
        w = _tensor(filter, "filter", like=x)
        n = _spatial_rank(x, "input", None if w.shape.ndims is None else w.shape.ndims - 2)
        if n not in (1, 2, 3):
            raise ValueError(f"`input` must have rank 3, 4 or 5. Received: input.shape={x.shape}")
        channels_first = data_format is not None and data_format.startswith("NC")
        ci = 1 if channels_first else n + 1
        strides = _get_sequence(strides, n, ci, "strides")
        dil = _get_sequence(dilation_rate, n, ci, "dilations")
        if any(s > 1 for s in strides) and any(d > 1 for d in dil):
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                             f"Received: strides={strides[1:-1] if not channels_first else strides[2:]} and "
                             f"dilation_rate={dil[1:-1] if not channels_first else dil[2:]}")
        if n == 1:
            from ferroflow.ops.nn_impl import conv1d

            sp = slice(2, 3) if channels_first else slice(1, 2)
            return conv1d(x, w, strides[sp], padding, data_format="NCW" if channels_first else "NWC",
                          dilations=dil[sp], name=scope)
        if n == 2:
            return nn_conv.conv2d(x, w, strides, padding, data_format="NCHW" if channels_first else "NHWC",
                                  dilations=dil, name=scope)
        return conv3d(x, w, strides, padding, data_format="NCDHW" if channels_first else "NDHWC", dilations=dil,
                      name=scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """2-D convolution of ``value`` with ``filters`` dilated by ``rate`` (``Conv2D`` with ``dilations``)."""
    if int(rate) < 1:
        raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
    return convolution(value, filters, padding=padding, dilation_rate=[int(rate)] * 2, name=name)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of ``atrous_conv2d``: ``filters`` ``[kh, kw, out, in]`` (``Conv2DBackpropInput`` dilated)."""
    with ops.name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        value = _tensor(value, "value")
        filters = _tensor(filters, "filters", like=value)
        if value.shape.ndims == 4 and filters.shape.ndims == 4:
            vc, fc = value.shape.as_list()[3], filters.shape.as_list()[3]
            if vc is not None and fc is not None and vc != fc:
                raise ValueError(f"`value` channel count must be compatible with `filters` input channel count. "
                                 f"Received: value.shape={value.shape} with channel count {vc} and "
                                 f"filters.shape={filters.shape} with input channel count {fc}.")
        if int(rate) < 1:
            raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"`padding` must be either 'VALID' or 'SAME'. Received: padding={padding}")
        return nn_conv.conv2d_backprop_input(output_shape, filters, value, [1, 1, 1, 1], padding,
                                             dilations=[1, int(rate), int(rate), 1], name=scope)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """``op(input, num_spatial_dims, padding)`` computed at ``dilation_rate``: TensorFlow's SpaceToBatchND,
    ``op`` with VALID padding, BatchToSpaceND sandwich (the input's spatial shape must be known)."""
    x = ops.convert_to_tensor(input, name="input")
    rate = np.asarray(dilation_rate, dtype=np.int64).reshape(-1)
    n = rate.shape[0]
    if n == 0:
        raise ValueError(f"`dilation_rate` must have at least one element. Received: dilation_rate={dilation_rate}")
    if np.any(rate < 1):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={dilation_rate}")
    if np.all(rate == 1):
        return op(x, n, padding)
    start = 2 if data_format is not None and data_format.startswith("NC") else 1
    spatial_dims = list(range(start, start + n)) if spatial_dims is None else [int(d) for d in spatial_dims]
    if len(spatial_dims) != n or sorted(set(spatial_dims)) != spatial_dims or spatial_dims[0] < 1:
        raise ValueError(f"`spatial_dims` must be {n} distinct ascending dimensions >= 1. "
                         f"Received: spatial_dims={spatial_dims}")
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("`filter_shape` must be specified for `padding='SAME'`")
        dilated = (np.asarray(filter_shape, np.int64).reshape(-1) - 1) * rate + 1
        extra = dilated - 1
        base = np.stack([extra // 2, extra - extra // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros([n, 2], np.int64)
    else:
        raise ValueError(f"`padding` must be either 'VALID' or 'SAME'. Received: padding={padding}")
    shape = x.shape.as_list() if x.shape.ndims is not None else None
    if shape is None or any(shape[d] is None for d in spatial_dims):
        raise ValueError(f"with_space_to_batch needs the input's spatial shape known; got {x.shape}")
    full = np.array([shape[d] for d in spatial_dims], np.int64) + base[:, 0] + base[:, 1]
    extra_end = (rate - full % rate) % rate
    paddings = np.stack([base[:, 0], base[:, 1] + extra_end], axis=1)
    crops = np.stack([np.zeros(n, np.int64), extra_end], axis=1)
    # Dimensions between the spatial ones take block 1 (TensorFlow's _with_space_to_batch_adjust).
    first = spatial_dims[0]
    block = np.ones(spatial_dims[-1] - first + 1, np.int64)
    pads = np.zeros([len(block), 2], np.int64)
    crop = np.zeros([len(block), 2], np.int64)
    for i, d in enumerate(spatial_dims):
        block[d - first], pads[d - first], crop[d - first] = rate[i], paddings[i], crops[i]
    prefix = first - 1
    block = np.concatenate([np.ones(prefix, np.int64), block]).astype(np.int32)
    pads = np.concatenate([np.zeros([prefix, 2], np.int64), pads]).astype(np.int32)
    crop = np.concatenate([np.zeros([prefix, 2], np.int64), crop]).astype(np.int32)
    y = make("SpaceToBatchND", [x, ops.convert_to_tensor(block), ops.convert_to_tensor(pads)])
    y = op(y, n, "VALID")
    return make("BatchToSpaceND", [y, ops.convert_to_tensor(block), ops.convert_to_tensor(crop)])


# ------------------------------------------------------------------ pooling


def _pool3d(op_type, value, ksize, strides, padding, data_format, name):
    with ops.name_scope(name, op_type, [value]) as scope:
        data_format = _data_format3(data_format)
        ci = 1 if data_format == "NCDHW" else 4
        ksize = _get_sequence(ksize, 3, ci, "ksize")
        strides = _get_sequence(strides, 3, ci, "strides")
        x = _tensor(value, "input")
        attrs = {
            "ksize": _ndhwc_list(ksize, data_format),
            "strides": _ndhwc_list(strides, data_format),
            "padding": _padding3(padding),
            "data_format": "NDHWC",
        }
        if data_format == "NCDHW":
            return _from_ndhwc(make(op_type, [_to_ndhwc(x, data_format)], attrs), data_format, scope)
        return make(op_type, [x], attrs, scope)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` window of a 5-D ``input`` (op ``MaxPool3D``)."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window of a 5-D ``input`` (op ``AvgPool3D``; SAME: of in-bounds elements)."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _pool1d(pool2d, default_name, input, ksize, strides, padding, data_format, name):  # noqa: A002
    with ops.name_scope(name, default_name, [input]) as scope:
        if data_format is None or data_format == "NWC":
            fmt, start, ci = "NHWC", 1, 2
        elif data_format == "NCW":
            fmt, start, ci = "NCHW", 2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        ksize = [1] + _get_sequence(ksize, 1, ci, "ksize")
        strides = [1] + _get_sequence(strides, 1, ci, "strides")
        x = array_ops.expand_dims(_tensor(input, "input"), start)
        y = pool2d(x, ksize, strides, padding, data_format=fmt)
        return array_ops.squeeze(y, [start], name=scope)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The maximum over each window of a 3-D ``input`` (``MaxPool`` over a height of 1)."""
    return _pool1d(nn_conv.max_pool, "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean over each window of a 3-D ``input`` (``AvgPool`` over a height of 1)."""
    return _pool1d(nn_conv.avg_pool, "AvgPool1D", input, ksize, strides, padding, data_format, name)


def _pool_rank(input, data_format):  # noqa: A002
    x = _tensor(input, "input")
    if x.shape.ndims is not None:
        n = x.shape.ndims - 2
    elif data_format is not None:
        n = len(data_format) - 2
    else:
        raise ValueError(f"`input` must have a static shape or a data format. Received: input.shape={x.shape} "
                         f"and data_format={data_format}")
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={x.shape} of rank {n + 2}.")
    return x, n


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``max_pool1d``, ``max_pool`` or ``max_pool3d`` by the rank of ``input``."""
    x, n = _pool_rank(input, data_format)
    if n == 1:
        return max_pool1d(x, ksize, strides, padding, data_format=data_format or "NWC", name=name)
    if n == 2:
        return nn_conv.max_pool(x, ksize, strides, padding, data_format=data_format or "NHWC", name=name)
    return max_pool3d(x, ksize, strides, padding, data_format=data_format or "NDHWC", name=name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``avg_pool1d``, ``avg_pool`` or ``avg_pool3d`` by the rank of ``input``."""
    x, n = _pool_rank(input, data_format)
    if n == 1:
        return avg_pool1d(x, ksize, strides, padding, data_format=data_format or "NWC", name=name)
    if n == 2:
        return nn_conv.avg_pool(x, ksize, strides, padding, data_format=data_format or "NHWC", name=name)
    return avg_pool3d(x, ksize, strides, padding, data_format=data_format or "NDHWC", name=name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None, name=None,  # noqa: A002
         data_format=None, dilations=None):
    """N-d (N = 1, 2, 3) max or average pooling over ``window_shape`` windows (strides; dilation 1 only)."""
    dilation_rate = _lookup("dilations", dilations, "dilation_rate", dilation_rate)
    with ops.name_scope(name, f"{pooling_type}_pool", [input]) as scope:
        x = _tensor(input, "input")
        window_shape = [int(w) for w in window_shape]
        n = len(window_shape)
        if n not in (1, 2, 3):
            raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: window_shape={window_shape} "
                             f"of length {n}")
        if x.shape.ndims is not None and x.shape.ndims != n + 2:
            raise ValueError(f"`input.shape.rank` must be {n + 2}. Received: input.shape={x.shape} "
                             f"of rank {x.shape.ndims}")
        dilation_rate = [1] * n if dilation_rate is None else [int(v) for v in np.broadcast_to(dilation_rate, (n,))]
        strides = [1] * n if strides is None else [int(v) for v in np.broadcast_to(strides, (n,))]
        if any(s < 1 for s in strides):
            raise ValueError(f"all values of `strides` must be positive. Received: strides={strides}")
        if any(d < 1 for d in dilation_rate):
            raise ValueError(f"all values of `dilation_rate` must be positive. Received: dilation_rate={dilation_rate}")
        if any(d > 1 for d in dilation_rate) and any(s > 1 for s in strides):
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                             f"Received: strides={strides} and dilation_rate={dilation_rate}")
        if pooling_type not in ("MAX", "AVG"):
            raise ValueError(f"`pooling_type` must be 'MAX' or 'AVG'. Received: pooling_type={pooling_type}")
        if padding == "SAME" and any(s > w for s, w in zip(strides, window_shape)):
            raise ValueError(f"`strides > window_shape` not supported due to inconsistency between CPU and GPU "
                             f"implementations. Received: strides={strides} and window_shape={window_shape}")
        if padding == "SAME" and any(d > 1 for d in dilation_rate):
            raise ValueError(f"pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. "
                             f"Received: padding={padding} and dilation_rate={dilation_rate}")
        if any(d > 1 for d in dilation_rate):
            raise NotImplementedError("pool: dilation_rate > 1 is not supported by ferroflow yet")
        fn = max_pool_v2 if pooling_type == "MAX" else avg_pool_v2
        channels_first = data_format is not None and data_format.startswith("NC")
        ci = 1 if channels_first else n + 1
        ksize = _get_sequence(window_shape, n, ci, "ksize")
        full_strides = _get_sequence(strides, n, ci, "strides")
        if n == 1:
            fmt = "NCW" if channels_first else "NWC"
            sp = slice(2, 3) if channels_first else slice(1, 2)
            return fn(x, ksize[sp], full_strides[sp], padding, data_format=fmt, name=scope)
        fmt = {2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[n][0 if channels_first else 1]
        return fn(x, ksize, full_strides, padding, data_format=fmt, name=scope)


def _fractional(op_type, value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name):
    ratio = [float(r) for r in pooling_ratio]
    if len(ratio) != 4:
        raise ValueError(f"`pooling_ratio` must have 4 elements. Received: pooling_ratio={pooling_ratio}")
    x = _tensor(value, "value")
    op = make_op(op_type, [x], {"pooling_ratio": ratio, "pseudo_random": bool(pseudo_random),
                                "overlapping": bool(overlapping), "deterministic": bool(deterministic),
                                "seed": int(seed), "seed2": int(seed2)}, name)
    return tuple(op._outputs)


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, deterministic=False, seed=0,
                        seed2=0, name=None):
    """Fractional max pooling of NHWC ``value``: ``(output, row_pooling_sequence, col_pooling_sequence)``.

    The regions are drawn at random (from ferroflow's generator, not TensorFlow's bit stream); with
    ``deterministic`` (and ``seed``/``seed2``) a node keeps the regions of its first run.
    """
    return _fractional("FractionalMaxPool", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed,
                       seed2, name)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, deterministic=False, seed=0,
                        seed2=0, name=None):
    """Fractional average pooling of NHWC ``value``: ``(output, row_pooling_sequence, col_pooling_sequence)``."""
    return _fractional("FractionalAvgPool", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed,
                       seed2, name)


# ------------------------------------------------------------------ morphology


def dilation2d(input, filter=None, strides=None, rates=None, padding=None, name=None, filters=None,  # noqa: A002
               dilations=None):
    """Grayscale dilation of a 4-D ``input`` by a ``[fh, fw, depth]`` ``filter`` (op ``Dilation2D``)."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    rates = _lookup("dilations", dilations, "rates", rates)
    with ops.name_scope(name, "Dilation2D", [input, filter]) as scope:
        x = _tensor(input, "input")
        w = _tensor(filter, "filter", like=x)
        attrs = {"strides": [int(s) for s in strides], "rates": [int(r) for r in rates],
                 "padding": _padding3(padding)}
        return make("Dilation2D", [x, w], attrs, scope)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion: ``-dilation2d(-value, reverse(kernel, [0, 1]))``, as TensorFlow computes it."""
    with ops.name_scope(name, "erosion2d", [value, kernel]) as scope:
        x = _tensor(value, "value")
        k = _tensor(kernel, "kernel", like=x)
        attrs = {"strides": [int(s) for s in strides], "rates": [int(r) for r in rates],
                 "padding": _padding3(padding)}
        d = make("Dilation2D", [math_ops.negative(x), array_ops.reverse(k, [0, 1])], attrs)
        return math_ops.negative(d, name=scope)


# ------------------------------------------------------------------ CTC


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False, time_major=True, logits=None):
    """The CTC loss (negative log probability) of sparse ``labels`` given ``inputs`` logits (op ``CTCLoss``)."""
    if not isinstance(labels, sparse_tensor.SparseTensor):
        raise TypeError(f"Expected argument `labels` to be a SparseTensor. Received labels={labels} of type: "
                        f"{type(labels).__name__}")
    inputs = _lookup("logits", logits, "inputs", inputs)
    inputs = ops.convert_to_tensor(inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    seq = ops.convert_to_tensor(sequence_length, name="sequence_length")
    op = make_op("CTCLoss", [inputs, labels.indices, labels.values, seq], {
        "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
        "ctc_merge_repeated": bool(ctc_merge_repeated),
        "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
    })
    return op._outputs[0]


def _num_classes(logits):
    c = logits.shape.as_list()[2] if logits.shape.ndims is not None else None
    if c is None:
        return array_ops.shape(logits)[2]
    return int(c)


def _blank_last(logits, blank_index):
    """``logits`` with class ``blank_index`` moved to the end (TensorFlow's rotation)."""
    c = _num_classes(logits)
    if isinstance(c, int) and blank_index == c - 1:
        return logits
    return array_ops.concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                             logits[:, :, blank_index:blank_index + 1]], axis=2)


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True, unique=None,
                blank_index=None, name=None):
    """CTC loss with dense (``[batch, max_label_length]`` plus ``label_length``) or sparse labels and any blank."""
    del unique  # only an optimization hint in TensorFlow
    if isinstance(labels, sparse_tensor.SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when `labels` is a `SparseTensor`.")
    with ops.name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = ops.convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_ops.transpose(logits, [1, 0, 2])
        c = _num_classes(logits)
        if blank_index is None:
            blank_index = 0
        if blank_index < 0:
            blank_index += c
        if isinstance(labels, sparse_tensor.SparseTensor):
            indices, values = labels.indices, labels.values
        else:
            labels = ops.convert_to_tensor(labels, name="labels")
            label_length = ops.convert_to_tensor(label_length, name="label_length")
            mask = array_ops.sequence_mask(label_length, maxlen=array_ops.shape(labels)[1])
            indices = array_ops.where(mask)
            values = array_ops.gather_nd(labels, indices)
        values = math_ops.cast(values, dtypes.int32)
        if not (isinstance(c, int) and blank_index == c - 1):
            logits = _blank_last(logits, blank_index)
            values = array_ops.where_v2(values < blank_index, values, values - 1)
        seq = math_ops.cast(ops.convert_to_tensor(logit_length, name="logit_length"), dtypes.int32)
        return make_op("CTCLoss", [logits, indices, values, seq], {
            "preprocess_collapse_repeated": False,
            "ctc_merge_repeated": True,
            "ignore_longer_outputs_than_inputs": False,
        })._outputs[0]


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Greedy CTC decoding: ``([SparseTensor of labels], log_probabilities [batch, 1])`` (``CTCGreedyDecoder``)."""
    inputs = ops.convert_to_tensor(inputs, name="inputs")
    seq = ops.convert_to_tensor(sequence_length, name="sequence_length")
    blank = -1 if blank_index is None else int(blank_index)
    op = make_op("CTCGreedyDecoder", [inputs, seq], {"merge_repeated": bool(merge_repeated), "blank_index": blank})
    ix, val, shape, log_prob = op._outputs
    return [sparse_tensor.SparseTensor(ix, val, shape)], log_prob


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1, merge_repeated=True):
    """CTC beam search: ``([SparseTensor per path], log_probabilities [batch, top_paths])`` (op
    ``CTCBeamSearchDecoder``; the blank is the last class)."""
    inputs = ops.convert_to_tensor(inputs, name="inputs")
    seq = ops.convert_to_tensor(sequence_length, name="sequence_length")
    top_paths = int(top_paths)
    op = make_op("CTCBeamSearchDecoder", [inputs, seq], {"beam_width": int(beam_width), "top_paths": top_paths,
                                                          "merge_repeated": bool(merge_repeated)})
    outs = op._outputs
    ix, val, shape = outs[:top_paths], outs[top_paths:2 * top_paths], outs[2 * top_paths:3 * top_paths]
    return [sparse_tensor.SparseTensor(*t) for t in zip(ix, val, shape)], outs[-1]


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """``ctc_beam_search_decoder`` with ``merge_repeated=False`` (TensorFlow 2's default)."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width=beam_width, top_paths=top_paths,
                                   merge_repeated=False)


def collapse_repeated(labels, seq_length, name=None):
    """Merges repeated labels of each ``[batch, max_len]`` row: ``(collapsed labels, new lengths)``."""
    with ops.name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = ops.convert_to_tensor(labels, name="labels")
        seq_length = ops.convert_to_tensor(seq_length, name="seq_length")
        ones = array_ops.ones_like(labels[:, :1], dtype=dtypes.bool)
        label_mask = array_ops.concat([ones, math_ops.not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
        dims = labels.shape.as_list() if labels.shape.ndims is not None else [None, None]
        maxlen = dims[1] if dims[1] is not None else array_ops.shape(labels)[1]
        seq_mask = array_ops.sequence_mask(seq_length, maxlen=maxlen)
        label_mask = math_ops.logical_and(label_mask, seq_mask)
        new_seq_len = math_ops.reduce_sum(math_ops.cast(label_mask, dtypes.int32), axis=1)
        new_maxlen = math_ops.reduce_max(new_seq_len)
        idx_mask = array_ops.sequence_mask(new_seq_len, maxlen=new_maxlen)
        flat_labels = array_ops.reshape(labels, [-1])
        flat_label_mask = array_ops.reshape(label_mask, [-1])
        flat_idx_mask = array_ops.reshape(idx_mask, [-1])
        idx = math_ops.range(array_ops.shape(flat_idx_mask)[0])
        flat = make("ScatterNd", [array_ops.expand_dims(array_ops.boolean_mask(idx, flat_idx_mask), axis=1),
                                  array_ops.boolean_mask(flat_labels, flat_label_mask),
                                  array_ops.shape(flat_idx_mask)])
        batch = dims[0] if dims[0] is not None else array_ops.shape(labels)[0]
        new_shape = array_ops.stack([batch, new_maxlen])
        return array_ops.reshape(flat, new_shape), math_ops.cast(new_seq_len, seq_length.dtype)


def ctc_unique_labels(labels, name=None):
    """Per row of ``labels``: its unique labels (zero-padded, int64) and each label's index among them."""
    from ferroflow.ops.functional_ops import map_fn

    with ops.name_scope(name, "ctc_unique_labels", [labels]):
        labels = ops.convert_to_tensor(labels, name="labels")

        def _unique(x):
            y, idx = array_ops.unique(x)
            y = array_ops.pad(y, [[0, array_ops.shape(idx)[0] - array_ops.shape(y)[0]]])
            return [math_ops.cast(y, dtypes.int64), idx]

        return map_fn(_unique, labels, dtype=[dtypes.int64, dtypes.int32])


# ------------------------------------------------------------------ losses


def scale_regularization_loss(regularization_loss):
    """The sum of ``regularization_loss`` divided by the number of replicas (one: ferroflow has no strategies)."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = math_ops.add_n(list(regularization_loss))
    return math_ops.reduce_sum(regularization_loss) / 1


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """``sum(per_example_loss * sample_weight) / global_batch_size`` (default: the batch size, one replica)."""
    per_example_loss = ops.convert_to_tensor(per_example_loss)
    dtype = per_example_loss.dtype
    if per_example_loss.shape.ndims == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={per_example_loss} with rank 0")
    if sample_weight is not None:
        w = math_ops.cast(ops.convert_to_tensor(sample_weight), dtype)
        per_example_loss = math_ops.multiply(per_example_loss, w)
    per_example_loss = math_ops.cast(per_example_loss, dtype)
    if global_batch_size is None:
        global_batch_size = array_ops.shape(per_example_loss)[0]
    elif not isinstance(global_batch_size, ops.Tensor):
        if isinstance(global_batch_size, (float, np.floating)) or not np.issubdtype(
                np.asarray(global_batch_size).dtype, np.integer):
            raise TypeError(f"global_batch_size must be an integer. Received global_batch_size={global_batch_size}")
        if np.ndim(global_batch_size) != 0:
            raise ValueError(f"global_batch_size must be scalar. Received global_batch_size={global_batch_size}")
        if int(global_batch_size) <= 0:
            raise ValueError(f"global_batch_size must be positive. Received global_batch_size={global_batch_size}")
    global_batch_size = math_ops.cast(global_batch_size, dtype)
    return math_ops.reduce_sum(per_example_loss) / global_batch_size
