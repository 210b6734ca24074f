"""Window functions of ``tf.signal``: Hann, Hamming, Kaiser, Kaiser-Bessel-derived and Vorbis windows.

Each returns a 1-D tensor of ``window_length`` samples of a floating ``dtype``. The raised-cosine
windows are ``a - b * cos(2 pi k / N)`` (Hann: 0.5/0.5, Hamming: 0.54/0.46) with ``N`` the length
for a periodic window (the first ``window_length`` samples of a window one longer, as spectral
analysis wants) and the length minus one for a symmetric one; a window of length 1 is ``[1]``.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops import array_ops, math_ops, special_math_ops


def _length(window_length, dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    n = ops.convert_to_tensor(window_length, dtype=dtypes.int32, name="window_length")
    n.shape.assert_has_rank(0)
    return n, dtype


def _raised_cosine(name, default_name, window_length, periodic, dtype, a, b):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    with ops.name_scope(name, default_name, [window_length, periodic]):
        n, dtype = _length(window_length, dtype)
        if tensor_util.constant_value(n) == 1:
            return array_ops.ones([1], dtype=dtype)
        periodic = math_ops.cast(ops.convert_to_tensor(periodic, dtype=dtypes.bool, name="periodic"), dtypes.int32)
        periodic.shape.assert_has_rank(0)
        # A periodic window of even length divides by N, every other by N - 1.
        even = 1 - math_ops.mod(n, 2)
        denom = math_ops.cast(n + periodic * even - 1, dtype)
        k = math_ops.cast(math_ops.range(n), dtype)
        window = a - b * math_ops.cos(ops.convert_to_tensor(2 * np.pi, dtype=dtype) * k / denom)
        if tensor_util.constant_value(n) is not None:
            return window
        # A fed length of 1 gives [1] (the cosine term would divide by zero).
        return array_ops.where(math_ops.equal(n, 1) & math_ops.equal(k, 0.0), array_ops.ones_like(window), window)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)``."""
    return _raised_cosine(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hamming window ``0.54 - 0.46 cos(2 pi k / N)``."""
    return _raised_cosine(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """The Kaiser window ``I0(beta sqrt(1 - (2k / (L - 1) - 1)^2)) / I0(beta)``, computed with the scaled
    Bessel function ``i0e`` so that large ``beta`` does not overflow."""
    with ops.name_scope(name, "kaiser_window"):
        n, dtype = _length(window_length, dtype)
        if tensor_util.constant_value(n) == 1:
            return array_ops.ones([1], dtype=dtype)
        half = (math_ops.cast(n, dtypes.float32) - 1.0) / 2.0
        # The sample positions -half .. half, made in float32 as TensorFlow makes them.
        arg = math_ops.cast(math_ops.range(-half, half + 0.1, dtype=dtypes.float32), dtype)
        beta = math_ops.cast(beta, dtype)
        half = math_ops.cast(half, dtype)
        one = ops.convert_to_tensor(1.0, dtype=dtype)
        inside = math_ops.maximum(one - math_ops.square(arg / half), ops.convert_to_tensor(0.0, dtype=dtype))
        num = beta * math_ops.sqrt(inside)
        window = math_ops.exp(num - beta) * (special_math_ops.bessel_i0e(num) / special_math_ops.bessel_i0e(beta))
        known = tensor_util.constant_value(n)
        if known is not None:
            window.set_shape([int(known)])
        return window


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """The Kaiser-Bessel-derived window (for MDCTs): square roots of the normalised running sums of a
    Kaiser window of half the length plus one, mirrored."""
    with ops.name_scope(name, "kaiser_bessel_derived_window"):
        n, dtype = _length(window_length, dtype)
        known = tensor_util.constant_value(n)
        kaiser = kaiser_window(int(known) // 2 + 1 if known is not None else n // 2 + 1, beta, dtype=dtype)
        running = math_ops.cumsum(kaiser)
        half = math_ops.sqrt(running[:-1] / running[-1])
        window = array_ops.concat([half, array_ops.reverse(half, [0])], axis=0)
        if known is not None:
            window.set_shape([2 * (int(known) // 2)])
        return window


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """The Vorbis power-complementary window ``sin(pi / 2 * sin(pi (k + 0.5) / L)^2)``."""
    with ops.name_scope(name, "vorbis_window"):
        n, dtype = _length(window_length, dtype)
        k = math_ops.cast(math_ops.range(n), dtype)
        inner = math_ops.sin(ops.convert_to_tensor(np.pi, dtype=dtype) / math_ops.cast(n, dtype) * (k + 0.5))
        return math_ops.sin(np.pi / 2.0 * math_ops.pow(inner, 2.0))


__all__ = ["hamming_window", "hann_window", "kaiser_bessel_derived_window", "kaiser_window", "vorbis_window"]
