"""Discrete cosine transforms of types I-IV along the innermost axis (``tf.signal.dct`` / ``idct``), computed
through real FFTs.

Unnormalised definitions (TensorFlow's and SciPy's), for ``x`` of length ``N``:

* I:   ``y[k] = x[0] + (-1)^k x[N-1] + 2 sum_{n=1}^{N-2} x[n] cos(pi k n / (N - 1))``
* II:  ``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / (2N))``
* III: ``y[k] = x[0] + 2 sum_{n>=1} x[n] cos(pi n (2k + 1) / (2N))``
* IV:  ``y[k] = 2 sum_n x[n] cos(pi (2k + 1)(2n + 1) / (4N))``

``norm="ortho"`` scales II, III and IV to orthonormal transforms. ``idct`` of type II is the type III
transform and vice versa (I and IV are their own inverses up to the factor ``2N``, or exactly with
``ortho``).
"""

from __future__ import annotations

import math

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, complex_ops, math_ops
from ferroflow.signal import fft_ops


def _last_dim(x):
    """The static size of ``x``'s last axis, or None."""
    return x.shape.as_list()[-1] if x.shape.ndims else None


def _check(x, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = _last_dim(x)
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _length(x):
    d = _last_dim(x)
    return d if d is not None else array_ops.shape(x)[-1]


def _resize(x, n):
    """``x`` cropped or zero-padded to ``n`` samples along its last axis."""
    d = _last_dim(x)
    if d is not None and n <= d:
        return x[..., :n]
    if d is not None:
        return array_ops.pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - d]])
    have = array_ops.shape(x)[-1]
    cropped = x[..., :n]
    rank = array_ops.rank(x)
    paddings = array_ops.concat(
        [array_ops.zeros(array_ops.stack([rank - 1, 2]), dtypes.int32),
         array_ops.reshape(array_ops.stack([0, math_ops.maximum(0, n - have)]), [1, 2])], 0)
    return array_ops.pad(cropped, paddings)


def _twiddles(count, dtype, sign, length=None):
    """``2 exp(sign * i pi k / (2 length))`` for ``k = 0 .. count - 1`` (complex of ``dtype``; ``length``
    defaults to ``count``)."""
    n = math_ops.cast(count if length is None else length, dtype)
    angle = math_ops.range(math_ops.cast(count, dtype)) * (sign * math.pi * 0.5) / n
    return 2.0 * math_ops.exp(complex_ops.complex(array_ops.zeros_like(angle), angle))


def _first_and_rest(length, first, rest, dtype):
    """``[first, rest, rest, ...]`` of ``length`` entries."""
    head = array_ops.reshape(math_ops.cast(first, dtype), [1])
    return array_ops.pad(head, [[0, length - 1]], constant_values=rest)


def _dct(x, dct_type, n, norm):
    x = ops.convert_to_tensor(x)
    if n is not None:
        x = _resize(x, n)
    length = _length(x)
    n_float = math_ops.cast(length, x.dtype)
    if dct_type == 1:
        # The real spectrum of the even extension [x0 .. x_{N-1} .. x1].
        extended = array_ops.concat([x, array_ops.reverse(x[..., 1:-1], [-1])], axis=-1)
        return complex_ops.real(fft_ops.rfft(extended))
    if dct_type == 2:
        # The real part is taken before cropping the n + 1 bins to n, so that the gradient never
        # slices a complex tensor.
        spectrum = fft_ops.rfft(x, fft_length=_vector(2 * length))
        y = complex_ops.real(spectrum * _twiddles(length + 1, x.dtype, -1.0, length))[..., :length]
        if norm == "ortho":
            first = 0.5 * math_ops.rsqrt(n_float)
            y *= _first_and_rest(length, first, first * math.sqrt(2.0), x.dtype)
        return y
    if dct_type == 3:
        if norm == "ortho":
            first = math_ops.sqrt(n_float)
            x *= _first_and_rest(length, first, first * math.sqrt(0.5), x.dtype)
        else:
            x *= n_float
        z = _twiddles(length, x.dtype, 1.0) * complex_ops.complex(x, array_ops.zeros_like(x))
        return fft_ops.irfft(z, fft_length=_vector(2 * length))[..., :length]
    # Type IV: the odd-indexed outputs of a type II transform of the signal zero-padded to twice its length.
    doubled = _resize(x, 2 * length) if isinstance(length, int) else _pad_to_double(x)
    y = _dct(doubled, 2, None, None)[..., 1::2]
    if norm == "ortho":
        y *= math.sqrt(0.5) * math_ops.rsqrt(n_float)
    return y


def _pad_to_double(x):
    """``x`` zero-padded to twice its (unknown) length along the last axis."""
    have = array_ops.shape(x)[-1]
    rank = array_ops.rank(x)
    paddings = array_ops.concat(
        [array_ops.zeros(array_ops.stack([rank - 1, 2]), dtypes.int32),
         array_ops.reshape(array_ops.stack([0, have]), [1, 2])], 0)
    return array_ops.pad(x, paddings)


def _vector(v):
    return [v] if isinstance(v, int) else array_ops.reshape(v, [1])


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TensorFlow's argument names
    """The type I, II (default), III or IV discrete cosine transform of the last axis, cropped or zero-padded
    to ``n`` first when given."""
    with ops.name_scope(name, "dct", [input]):
        x = ops.convert_to_tensor(input)
        _check(x, type, n, axis, norm)
        return _dct(x, type, n, norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse transform of :func:`dct` of the same type (type III for II, II for III; I and IV are their
    own inverses up to ``1 / (2 (N - 1))`` and ``1 / (2N)`` without ``ortho``)."""
    with ops.name_scope(name, "idct", [input]):
        x = ops.convert_to_tensor(input)
        _check(x, type, n, axis, norm)
        return _dct(x, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


__all__ = ["dct", "idct"]
