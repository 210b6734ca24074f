"""``tf.conv``: TensorFlow's generic N-D convolution op (``Conv``), for N = 2 or 3.

ferroflow builds it from the 2-D and 3-D kernels (``Conv2D``/``Conv3D``) rather than registering a
``Conv`` op: extra batch dimensions (``batch_dims > 1``) are folded into one and unfolded after,
``"EXPLICIT"`` padding becomes a ``Pad`` followed by a ``"VALID"`` convolution, ``CHANNELS_FIRST``
transposes around a channels-last convolution, and ``groups > 1`` convolves each channel group and
concatenates the results. The values are TensorFlow's; TensorFlow's CPU kernel itself refuses
``CHANNELS_FIRST`` and ``groups > 1`` (``UnimplementedError``), which ferroflow computes. Gradients flow
through the composed ops.
"""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.ops import array_ops
from ferroflow.ops.nn_conv import conv2d
from ferroflow.ops.nn_more import conv3d

__all__ = ["conv"]


def _int_list(value, what):
    try:
        return [int(v) for v in value]
    except TypeError:
        raise TypeError(f"Conv: {what} must be a list of ints, got {value!r}") from None


def conv(input, filter, strides, padding, explicit_paddings=[], data_format="CHANNELS_LAST",  # noqa: A002,B006
         dilations=[], batch_dims=1, groups=1, name=None):  # noqa: B006
    """N-D convolution of a ``batch_shape + spatial_shape + [in_channels]`` ``input`` (``batch_shape +
    [in_channels] + spatial_shape`` for ``CHANNELS_FIRST``) with a ``spatial_shape + [in_channels / groups,
    out_channels]`` ``filter``. ``strides`` and ``dilations`` (empty: all ones) have N + 2 entries in the
    input's layout, their batch and channel entries 1; ``explicit_paddings`` (with ``padding="EXPLICIT"``)
    has a (before, after) pair for each of those N + 2 dimensions."""
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        raise ValueError(f"Conv: padding must be one of 'SAME', 'VALID', 'EXPLICIT', got {padding!r}")
    if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise ValueError(f"Conv: data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST', got {data_format!r}")
    batch_dims, groups = int(batch_dims), int(groups)
    if batch_dims < 1:
        raise ValueError(f"Conv: batch_dims must be at least 1, got {batch_dims}")
    if groups < 1:
        raise ValueError(f"Conv: groups must be at least 1, got {groups}")
    strides = _int_list(strides, "strides")
    dilations = _int_list(dilations, "dilations")
    explicit_paddings = _int_list(explicit_paddings, "explicit_paddings")
    with ops.name_scope(name, "Conv", [input, filter]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        input_shape = x.shape
        w = ops.convert_to_tensor(filter, dtype=x.dtype, name="filter")
        if w.shape.rank is None:
            raise ValueError("Conv: the rank of filter must be known")
        n = w.shape.rank - 2
        if n not in (2, 3):
            raise ValueError(f"Conv: filter must be rank 4 or 5 (2 or 3 spatial dimensions), got rank {n + 2}")
        rank = x.shape.rank
        if rank is not None and rank - batch_dims + 1 != n + 2:
            raise ValueError(
                f"Conv: input of rank {rank} with batch_dims={batch_dims} has {rank - batch_dims - 1} spatial "
                f"dimensions, but filter has {n}")
        if len(strides) != n + 2:
            raise ValueError(f"Conv: strides should contain {n + 2} values, got {len(strides)}: {strides}")
        if not dilations:
            dilations = [1] * (n + 2)
        if len(dilations) != n + 2:
            raise ValueError(f"Conv: dilations should contain {n + 2} values, got {len(dilations)}: {dilations}")
        c = 1 if data_format == "CHANNELS_FIRST" else n + 1
        for what, v in (("strides", strides), ("dilations", dilations)):
            if v[0] != 1 or v[c] != 1:
                raise ValueError(f"Conv: {what} of the batch and channel dimensions must be 1, got {v}")
            if any(s < 1 for s in v):
                raise ValueError(f"Conv: {what} must be positive, got {v}")
        if padding == "EXPLICIT":
            if len(explicit_paddings) != 2 * (n + 2):
                raise ValueError(f"Conv: explicit_paddings should contain {2 * (n + 2)} values, got "
                                 f"{len(explicit_paddings)}: {explicit_paddings}")
            if any(p < 0 for p in explicit_paddings):
                raise ValueError(f"Conv: explicit_paddings must be non-negative, got {explicit_paddings}")
            pairs = [explicit_paddings[2 * i:2 * i + 2] for i in range(n + 2)]
            if pairs[0] != [0, 0] or pairs[c] != [0, 0]:
                raise ValueError(f"Conv: explicit_paddings of the batch and channel dimensions must be 0, got "
                                 f"{explicit_paddings}")
        elif explicit_paddings:
            raise ValueError(f"Conv: explicit_paddings must be empty unless padding is 'EXPLICIT', got "
                             f"{explicit_paddings}")

        # Fold the batch dimensions into one.
        batch_shape = None
        if batch_dims > 1:
            dyn = array_ops.shape(x)
            batch_shape = array_ops.strided_slice(dyn, [0], [batch_dims])
            inner = array_ops.strided_slice(dyn, [batch_dims], [batch_dims + n + 1])
            x = array_ops.reshape(x, array_ops.concat([[-1], inner], 0))
        # Channels last.
        if data_format == "CHANNELS_FIRST":
            x = array_ops.transpose(x, [0] + list(range(2, n + 2)) + [1])
            strides = [strides[0]] + strides[2:] + [1]
            dilations = [dilations[0]] + dilations[2:] + [1]
            if padding == "EXPLICIT":
                pairs = [pairs[0]] + pairs[2:] + [pairs[1]]
        if padding == "EXPLICIT":
            x = array_ops.pad(x, pairs)
            padding = "VALID"

        op = conv2d if n == 2 else conv3d

        def one(xs, ws):
            return op(xs, ws, strides=strides, padding=padding, dilations=dilations)

        if groups == 1:
            y = one(x, w)
        else:
            in_ch, out_ch = x.shape[-1], w.shape[-1]
            if in_ch is not None and in_ch % groups:
                raise ValueError(f"Conv: {in_ch} input channels are not divisible by groups={groups}")
            if out_ch is not None and out_ch % groups:
                raise ValueError(f"Conv: {out_ch} filters are not divisible by groups={groups}")
            if in_ch is not None and w.shape[-2] is not None and in_ch != w.shape[-2] * groups:
                raise ValueError(f"Conv: input has {in_ch} channels, but filter takes {w.shape[-2]} per group "
                                 f"with groups={groups}")
            xs = array_ops.split(x, groups, axis=-1)
            ws = array_ops.split(w, groups, axis=-1)
            y = array_ops.concat([one(a, b) for a, b in zip(xs, ws)], -1)

        if data_format == "CHANNELS_FIRST":
            y = array_ops.transpose(y, [0, n + 1] + list(range(1, n + 1)))
        if batch_shape is not None:
            static = y.shape
            y = array_ops.reshape(y, array_ops.concat([batch_shape, array_ops.shape(y)[1:]], 0))
            if static.rank is not None and input_shape.rank is not None:
                y.set_shape(input_shape[:batch_dims].concatenate(static[1:]))
        return array_ops.identity(y, name=scope)
