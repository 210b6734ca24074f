"""Mel-scale filter banks (``tf.signal.linear_to_mel_weight_matrix``) and MFCCs
(``tf.signal.mfccs_from_log_mel_spectrograms``).

The mel scale here is HTK's natural-log form, ``mel(f) = 1127 ln(1 + f / 700)``.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops import array_ops, math_ops
from ferroflow.signal import dct_ops, shape_ops

_BREAK_HZ = 700.0
_HIGH_Q = 1127.0


def _hertz_to_mel(hz):
    return _HIGH_Q * math_ops.log(1.0 + hz / _BREAK_HZ)


def _check(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}")
    if not isinstance(sample_rate, ops.Tensor):
        if sample_rate <= 0.0:
            raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
        if upper_edge_hertz > sample_rate / 2:
            raise ValueError(
                "upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                f"Got {upper_edge_hertz} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=dtypes.float32, name=None):
    """A ``[num_spectrogram_bins, num_mel_bins]`` matrix of triangular filters, evenly spaced in mel between
    the two edges, that maps linear-frequency magnitudes (bins from 0 Hz to ``sample_rate / 2``) to mel bins.
    The DC bin gets no weight."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, ops.Tensor):
            known = tensor_util.constant_value(sample_rate)
            if known is not None:
                sample_rate = known
        _check(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype)
        sample_rate = math_ops.cast(sample_rate, dtype, name="sample_rate")
        lower = ops.convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper = ops.convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = ops.convert_to_tensor(0.0, dtype)
        # Bin frequencies without the DC bin, in mel, as a column.
        hz = array_ops.linspace(zero, sample_rate / 2.0, num_spectrogram_bins)[1:]
        bins_mel = array_ops.expand_dims(_hertz_to_mel(hz), 1)
        # Each filter's (lower, centre, upper) edges: consecutive triples of evenly spaced mel points.
        edges = shape_ops.frame(
            array_ops.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2), frame_length=3,
            frame_step=1)
        low, centre, high = (array_ops.reshape(t, [1, num_mel_bins]) for t in array_ops.split(edges, 3, axis=1))
        rising = (bins_mel - low) / (centre - low)
        falling = (high - bins_mel) / (high - centre)
        weights = math_ops.maximum(zero, math_ops.minimum(rising, falling))
        return array_ops.pad(weights, [[1, 0], [0, 0]], name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the orthonormal type II DCT of log-mel spectrograms over their
    innermost (mel) axis, scaled as HTK scales them (``1 / sqrt(2 * num_mel_bins)`` of the unnormalised DCT)."""
    with ops.name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = ops.convert_to_tensor(log_mel_spectrograms)
        if x.shape.ndims and x.shape.as_list()[-1] is not None:
            bins = x.shape.as_list()[-1]
            if bins == 0:
                raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        else:
            bins = array_ops.shape(x)[-1]
        y = dct_ops.dct(x, type=2)
        return y * math_ops.rsqrt(math_ops.cast(bins, y.dtype) * 2.0)


__all__ = ["linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms"]
