"""Short-time Fourier transforms (``tf.signal.stft`` / ``inverse_stft``) and modified discrete cosine transforms
(``mdct`` / ``inverse_mdct``), composed of framing, windows and the FFT ops."""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops import array_ops, math_ops
from ferroflow.signal import dct_ops, fft_ops, shape_ops, window_ops


def _enclosing_power_of_two(value):
    """The smallest power of two at least ``value`` (a constant when ``value`` is)."""
    static = tensor_util.constant_value(value)
    if static is not None:
        return ops.convert_to_tensor(int(2 ** np.ceil(np.log(static) / np.log(2.0))), value.dtype)
    exponent = math_ops.ceil(math_ops.log(math_ops.cast(value, dtypes.float32)) / np.log(2.0))
    return math_ops.cast(math_ops.pow(2.0, exponent), value.dtype)


def _as_length_vector(value):
    """A scalar length as the 1-element ``fft_length`` vector (a constant when the length is known)."""
    known = tensor_util.constant_value(value)
    if known is not None:
        return [int(known)]
    return array_ops.reshape(value, [1])


def _scalar(value, name):
    t = ops.convert_to_tensor(value, name=name)
    t.shape.assert_has_rank(0)
    return t


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=window_ops.hann_window, pad_end=False,
         name=None):
    """The short-time Fourier transform: windowed frames of the innermost axis, each real-FFT'd to
    ``fft_length // 2 + 1`` bins (``fft_length`` defaults to the power of two enclosing ``frame_length``)."""
    with ops.name_scope(name, "stft", [signals, frame_length, frame_step]):
        signals = ops.convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        fft_length = (_enclosing_power_of_two(frame_length) if fft_length is None
                      else ops.convert_to_tensor(fft_length, name="fft_length"))
        frames = shape_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames *= window_fn(frame_length, dtype=frames.dtype)
        return fft_ops.rfft(frames, _as_length_vector(fft_length))


def inverse_stft_window_fn(frame_step, forward_window_fn=window_ops.hann_window, name=None):
    """A window function for :func:`inverse_stft` that undoes ``forward_window_fn``'s windowing: the forward
    window divided by the sum of its squares over the frames that overlap each sample."""

    def window_fn(frame_length, dtype):
        with ops.name_scope(name, "inverse_stft_window_fn", [forward_window_fn]):
            step = _scalar(frame_step, "frame_step")
            length = _scalar(frame_length, "frame_length")
            forward = forward_window_fn(length, dtype=dtype)
            overlaps = -(-length // step)
            squares = array_ops.pad(math_ops.square(forward), [(0, overlaps * step - length)])
            # Sample j of a frame is overlapped by samples j mod step of the other frames.
            per_phase = math_ops.reduce_sum(array_ops.reshape(squares, [overlaps, step]), 0, keepdims=True)
            denom = array_ops.reshape(array_ops.tile(per_phase, [overlaps, 1]), [overlaps * step])[:length]
            return array_ops.where(math_ops.equal(denom, 0.0), array_ops.zeros_like(forward), forward / denom)

    return window_fn


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=window_ops.hann_window, name=None):
    """The signal whose :func:`stft` is ``stfts``: inverse real FFTs cropped or padded to ``frame_length``,
    windowed and overlap-added (use :func:`inverse_stft_window_fn` for perfect reconstruction)."""
    with ops.name_scope(name, "inverse_stft", [stfts]):
        stfts = ops.convert_to_tensor(stfts, name="stfts")
        stfts.shape.with_rank_at_least(2)
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = _scalar(fft_length, "fft_length")
        frames = fft_ops.irfft(stfts, _as_length_vector(fft_length))
        length = tensor_util.constant_value(frame_length)
        have = frames.shape.as_list()[-1] if frames.shape.ndims is not None else None
        if length is None or have is None:
            frames = frames[..., :frame_length]
            rank = array_ops.rank(frames)
            extra = math_ops.maximum(0, frame_length - array_ops.shape(frames, out_type=frame_length.dtype)[-1])
            paddings = array_ops.concat(
                [array_ops.zeros(array_ops.stack([rank - 1, 2]), frame_length.dtype),
                 array_ops.reshape(array_ops.stack([array_ops.zeros_like(extra), extra]), [1, 2])], 0)
            frames = array_ops.pad(frames, paddings)
        elif have > int(length):
            frames = frames[..., : int(length)]
        elif have < int(length):
            frames = array_ops.pad(frames, [[0, 0]] * (frames.shape.ndims - 1) + [[0, int(length) - have]])
        if length is not None and frames.shape.ndims is not None:
            frames.set_shape([None] * (frames.shape.ndims - 1) + [int(length)])
        if window_fn is not None:
            frames *= window_fn(frame_length, dtype=stfts.dtype.real_dtype)
        return shape_ops.overlap_and_add(frames, frame_step)


def mdct(signals, frame_length, window_fn=window_ops.vorbis_window, pad_end=False, norm=None, name=None):
    """The modified DCT of frames of ``frame_length`` samples (a multiple of 4) every half frame: each frame
    of ``2N`` windowed samples gives ``N`` coefficients (a type IV DCT of its folded halves)."""
    with ops.name_scope(name, "mdct", [signals, frame_length]):
        signals = ops.convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = _scalar(frame_length, "frame_length")
        static = tensor_util.constant_value(frame_length)
        if static is not None:
            if static % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = ops.convert_to_tensor(int(static) // 2, dtype=frame_length.dtype)
        else:
            frame_step = frame_length // 2
        frames = shape_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames *= window_fn(frame_length, dtype=frames.dtype)
        else:
            frames *= 1.0 / np.sqrt(2)
        a, b, c, d = array_ops.split(frames, 4, axis=-1)
        folded = array_ops.concat([-array_ops.reverse(c, [-1]) - d, a - array_ops.reverse(b, [-1])], axis=-1)
        return dct_ops.dct(folded, type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=window_ops.vorbis_window, norm=None, name=None):
    """The signal whose :func:`mdct` is ``mdcts`` (exactly, with a power-complementary window such as the
    Vorbis or Kaiser-Bessel-derived window): unfolded type IV DCTs, windowed and overlap-added."""
    with ops.name_scope(name, "inverse_mdct", [mdcts]):
        mdcts = ops.convert_to_tensor(mdcts, name="mdcts")
        mdcts.shape.with_rank_at_least(2)
        half = mdcts.shape.as_list()[-1] if mdcts.shape.ndims is not None else None
        if half is None:
            half = array_ops.shape(mdcts)[-1]
        if norm is None:
            coeffs = 0.5 / math_ops.cast(half, mdcts.dtype) * dct_ops.dct(mdcts, type=4)
        elif norm == "ortho":
            coeffs = dct_ops.dct(mdcts, type=4, norm="ortho")
        else:
            raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
        first, second = array_ops.split(coeffs, 2, axis=-1)
        frames = array_ops.concat(
            [second, -array_ops.reverse(second, [-1]), -array_ops.reverse(first, [-1]), -first], axis=-1)
        if window_fn is not None:
            frames *= window_fn(2 * half, dtype=mdcts.dtype)
        else:
            frames *= 1.0 / np.sqrt(2)
        return shape_ops.overlap_and_add(frames, half)


__all__ = ["inverse_mdct", "inverse_stft", "inverse_stft_window_fn", "mdct", "stft"]
