"""Framing a signal into overlapping windows (``tf.signal.frame``) and adding frames back together
(``tf.signal.overlap_and_add``)."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops import array_ops, math_ops


def _static_frame_shape(signal, frame_length, frame_step, pad_end, axis):
    """TensorFlow's static shape of ``frame``'s result: the axis becomes ``[frames, frame_length]``."""
    if signal.shape.ndims is None:
        return None
    length, step, axis = (tensor_util.constant_value(t) for t in (frame_length, frame_step, axis))
    if axis is None:
        return [None] * (signal.shape.ndims + 1)
    dims = signal.shape.as_list()
    axis = int(axis)
    samples = dims[axis]
    frames = None
    if samples is not None and step is not None:
        step = int(step)
        if pad_end:
            frames = max(0, -(-samples // step))
        elif length is not None:
            frames = max(0, (samples - int(length) + step) // step)
    inner = dims[axis:][1:]
    return dims[:axis] + [frames, None if length is None else int(length)] + inner


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of ``frame_length`` samples every ``frame_step`` samples along ``axis``.

    That axis becomes two, ``[frames, frame_length]``. Without ``pad_end`` only whole frames are
    kept; with it the end is padded with ``pad_value`` to make ``ceil(samples / frame_step)`` frames.
    """
    with ops.name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        signal = ops.convert_to_tensor(signal, name="signal")
        frame_length = ops.convert_to_tensor(frame_length, name="frame_length")
        frame_step = ops.convert_to_tensor(frame_step, name="frame_step")
        axis = ops.convert_to_tensor(axis, name="axis")
        signal.shape.with_rank_at_least(1)
        frame_length.shape.assert_has_rank(0)
        frame_step.shape.assert_has_rank(0)
        axis.shape.assert_has_rank(0)
        result_shape = _static_frame_shape(signal, frame_length, frame_step, pad_end, axis)

        axis_value = tensor_util.constant_value(axis)
        if axis_value is not None and signal.shape.ndims is not None:
            axis = int(axis_value) % signal.shape.ndims
        else:
            axis = math_ops.range(array_ops.rank(signal))[axis]
        samples = array_ops.shape(signal, out_type=frame_length.dtype)[axis]
        if pad_end:
            pad_value = ops.convert_to_tensor(pad_value, signal.dtype)
            pad_value.shape.assert_has_rank(0)
            frames = -(-samples // frame_step)
            extra = math_ops.maximum(0, frame_length + frame_step * (frames - 1) - samples)
            rank = array_ops.rank(signal)
            paddings = array_ops.concat([
                array_ops.zeros(array_ops.stack([axis, 2]), extra.dtype),
                array_ops.reshape(array_ops.stack([array_ops.zeros_like(extra), extra]), [1, 2]),
                array_ops.zeros(array_ops.stack([rank - axis - 1, 2]), extra.dtype),
            ], 0)
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
        else:
            frames = math_ops.maximum(0, 1 + (samples - frame_length) // frame_step)
        # Sample j of frame i is sample i * frame_step + j of the signal.
        starts = array_ops.expand_dims(math_ops.range(frames, dtype=frame_length.dtype) * frame_step, 1)
        offsets = array_ops.expand_dims(math_ops.range(frame_length, dtype=frame_length.dtype), 0)
        frames_out = array_ops.gather(signal, starts + offsets, axis=axis)
        if result_shape is not None:
            frames_out.set_shape(result_shape)
        return frames_out


def overlap_and_add(signal, frame_step, name=None):
    """The sum of frames ``[..., frames, frame_length]`` placed ``frame_step`` samples apart:
    ``[..., frame_length + frame_step * (frames - 1)]``."""
    with ops.name_scope(name, "overlap_and_add", [signal, frame_step]):
        signal = ops.convert_to_tensor(signal, name="signal")
        signal.shape.with_rank_at_least(2)
        frame_step = ops.convert_to_tensor(frame_step, name="frame_step")
        frame_step.shape.assert_has_rank(0)
        if not frame_step.dtype.is_integer:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype}")
        step = tensor_util.constant_value(frame_step)
        dims = signal.shape.as_list() if signal.shape.ndims is not None else None
        if step is not None and dims is not None and dims[-1] == int(step):
            # Frames that touch without overlapping: a reshape.
            shape = array_ops.concat([array_ops.shape(signal)[:-2], [-1]], 0)
            out = array_ops.reshape(signal, shape, name="fast_path")
            if dims[-2] is not None:
                out.set_shape(dims[:-2] + [dims[-2] * dims[-1]])
            return out
        frame_step = math_ops.cast(frame_step, dtypes.int32)
        shape = array_ops.shape(signal)
        frames, length = shape[-2], shape[-1]
        out_length = length + frame_step * (frames - 1)
        # Sum every sample into its place of the output: frames and samples first, then one
        # segment sum over their flattened positions.
        rank = array_ops.rank(signal)
        outer = math_ops.range(rank - 2)
        to_front = array_ops.concat([[rank - 2, rank - 1], outer], 0)
        data = array_ops.transpose(signal, to_front)
        data = array_ops.reshape(data, array_ops.concat([[-1], shape[:-2]], 0))
        positions = array_ops.expand_dims(math_ops.range(frames) * frame_step, 1) + array_ops.expand_dims(
            math_ops.range(length), 0
        )
        summed = math_ops.unsorted_segment_sum(data, array_ops.reshape(positions, [-1]), out_length)
        out = array_ops.transpose(summed, array_ops.concat([outer + 1, [0]], 0))
        if dims is not None:
            static = None
            if step is not None and dims[-2] is not None and dims[-1] is not None:
                static = dims[-1] + int(step) * (dims[-2] - 1)
            out.set_shape(dims[:-2] + [static])
        return out


__all__ = ["frame", "overlap_and_add"]
