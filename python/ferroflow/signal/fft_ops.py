"""Fast Fourier transforms: ``tf.signal.fft`` and its family, and the top-level ``tf.fft`` names.

The complex transforms (``fft``, ``ifft``, ``fft2d``, ...) build TensorFlow's ``FFT``, ``IFFT``,
``FFT2D``, ... ops on the innermost one, two or three dimensions. The real ones (``rfft``, ``irfft``,
``rfft2d``, ...) take an optional ``fft_length``: when it is missing it comes from the input's shape
(for the inverse, ``2 * (n - 1)`` along the innermost dimension), and an input shorter than
``fft_length`` is zero-padded here, since the ``RFFT``/``IRFFT`` ops themselves only crop.
``fftnd``/``ifftnd``/``rfftnd``/``irfftnd`` are the N-D wrappers with NumPy's ``norm`` argument;
``raw_fftnd`` and its kin are the bare ops, which ``tf.compat.v1`` exports at the top level.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops import array_ops, array_ops_extra, math_ops
from ferroflow.ops._op_util import make, type_attr

_REALS = (dtypes.float32, dtypes.float64)
_COMPLEXES = (dtypes.complex64, dtypes.complex128)


def _complex_of(real_dtype):
    return dtypes.complex128 if real_dtype == dtypes.float64 else dtypes.complex64


def _complex_input(value):
    """The input of a bare complex op as a tensor: Python and NumPy values become complex64, except NumPy
    complex128 values, which keep their width (as TensorFlow's generated op functions convert them)."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.complex128:
        return ops.convert_to_tensor(value, name="input")
    return ops.convert_to_tensor(value, name="input", preferred_dtype=dtypes.complex64)


def _wrapper_complex_input(value):
    """The input of a ``tf.signal`` wrapper: non-tensors are converted preferring complex64 (TensorFlow's
    wrappers do so, which narrows NumPy complex128 values too)."""
    return ops.convert_to_tensor(value, name="input", preferred_dtype=dtypes.complex64)


def _complex_op(op_type, input, name):  # noqa: A002 - TensorFlow's argument name
    with ops.name_scope(name, op_type, [input]) as scope:
        x = _complex_input(input)
        return make(op_type, [x], {"Tcomplex": type_attr(x.dtype)}, scope)


def fft(input, name=None):  # noqa: A002
    """The 1-D discrete Fourier transform over the innermost dimension of a complex tensor."""
    return _complex_op("FFT", input, name)


def ifft(input, name=None):  # noqa: A002
    """The inverse 1-D discrete Fourier transform over the innermost dimension (divided by its length)."""
    return _complex_op("IFFT", input, name)


def fft2d(input, name=None):  # noqa: A002
    """The 2-D discrete Fourier transform over the two innermost dimensions."""
    return _complex_op("FFT2D", input, name)


def ifft2d(input, name=None):  # noqa: A002
    """The inverse 2-D discrete Fourier transform over the two innermost dimensions."""
    return _complex_op("IFFT2D", input, name)


def fft3d(input, name=None):  # noqa: A002
    """The 3-D discrete Fourier transform over the three innermost dimensions."""
    return _complex_op("FFT3D", input, name)


def ifft3d(input, name=None):  # noqa: A002
    """The inverse 3-D discrete Fourier transform over the three innermost dimensions."""
    return _complex_op("IFFT3D", input, name)


def _length_tensor(fft_length):
    return ops.convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")


def _rfft_length(x, rank):
    """The innermost ``rank`` dimensions of ``x``: a constant when known, else from its shape."""
    inner = x.shape[-rank:]
    if inner.is_fully_defined():
        return _length_tensor(inner.as_list())
    return array_ops.shape(x)[-rank:]


def _irfft_length(x, rank):
    """As :func:`_rfft_length`, with the innermost length ``2 * (n - 1)`` (at least 0)."""
    inner = x.shape[-rank:]
    if inner.is_fully_defined():
        lengths = inner.as_list()
        if lengths:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        return _length_tensor(lengths)
    dims = array_ops.unstack(array_ops.shape(x)[-rank:])
    dims[-1] = math_ops.maximum(0, 2 * (dims[-1] - 1))
    return array_ops.stack(dims)


def _pad_to_length(x, rank, fft_length, half_last=False):
    """``x`` zero-padded at the end of its innermost ``rank`` dimensions up to ``fft_length``.

    With ``half_last`` the innermost target is ``fft_length[-1] // 2 + 1`` (an inverse real
    transform's half spectrum). Tensors with a zero dimension are left alone.
    """
    if x.shape.ndims is not None and 0 in x.shape.as_list():
        return x
    lengths = tensor_util.constant_value(fft_length)
    if lengths is not None and x.shape.ndims is not None:
        lengths = [int(v) for v in np.reshape(lengths, [-1])]
        inner = x.shape[-len(lengths):]
        if inner.is_fully_defined():
            if half_last:
                lengths[-1] = lengths[-1] // 2 + 1
            pads = [max(n - d, 0) for n, d in zip(lengths, inner.as_list())]
            if not any(pads):
                return x
            outer = [[0, 0]] * max(x.shape.ndims - len(lengths), 0)
            return array_ops.pad(x, outer + [[0, p] for p in pads])
    # Unknown shapes: the paddings are computed in the graph (a zero padding copies nothing).
    inner = array_ops.shape(x)[-rank:]
    outer = array_ops.zeros(array_ops.reshape(math_ops.maximum(0, array_ops.rank(x) - rank), [1]), fft_length.dtype)
    if half_last:
        fft_length = array_ops.concat([fft_length[:-1], fft_length[-1:] // 2 + 1], 0)
    after = array_ops.concat([outer, math_ops.maximum(0, fft_length - inner)], 0)
    return array_ops.pad(x, array_ops.stack([array_ops.zeros_like(after), after], axis=1))


def _real_input(value, what):
    x = ops.convert_to_tensor(value, preferred_dtype=dtypes.float32)
    if x.dtype.base_dtype not in _REALS:
        raise ValueError(f"{what} requires tf.float32 or tf.float64 inputs, got: {x}")
    return x


def _half_spectrum_input(value, what):
    x = ops.convert_to_tensor(value, preferred_dtype=dtypes.complex64)
    if x.dtype.base_dtype not in _COMPLEXES:
        raise ValueError(f"{what} requires tf.complex64 or tf.complex128 inputs, got: {x}")
    return x


def _rfft_op(op_type, x, fft_length, name):
    real = x.dtype.base_dtype
    attrs = {"Treal": type_attr(real), "Tcomplex": type_attr(_complex_of(real))}
    return make(op_type, [x, fft_length], attrs, name)


def _irfft_op(op_type, x, fft_length, name):
    cplx = x.dtype.base_dtype
    attrs = {"Treal": type_attr(cplx.real_dtype), "Tcomplex": type_attr(cplx)}
    return make(op_type, [x, fft_length], attrs, name)


def _make_rfft(op_type, rank, default_name):
    def rfft(input_tensor, fft_length=None, name=None):
        with ops.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            x = _real_input(input_tensor, "RFFT")
            x.shape.with_rank_at_least(rank)
            fft_length = _rfft_length(x, rank) if fft_length is None else _length_tensor(fft_length)
            x = _pad_to_length(x, rank, fft_length)
            return _rfft_op(op_type, x, fft_length, scope)

    rfft.__name__ = default_name
    rfft.__doc__ = (
        f"The {rank}-D discrete Fourier transform of a real tensor over its {rank} innermost dimension(s), "
        "keeping the ``fft_length[-1] // 2 + 1`` non-negative frequencies of the innermost one. The input is "
        "cropped or zero-padded to ``fft_length`` (default: its own innermost dimensions)."
    )
    return rfft


def _make_irfft(op_type, rank, default_name):
    def irfft(input_tensor, fft_length=None, name=None):
        with ops.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            x = _half_spectrum_input(input_tensor, "IRFFT")
            x.shape.with_rank_at_least(rank)
            fft_length = _irfft_length(x, rank) if fft_length is None else _length_tensor(fft_length)
            x = _pad_to_length(x, rank, fft_length, half_last=True)
            return _irfft_op(op_type, x, fft_length, scope)

    irfft.__name__ = default_name
    irfft.__doc__ = (
        f"The real signal of {rank}-D length ``fft_length`` whose non-negative frequencies are ``input_tensor``'s "
        f"{rank} innermost dimension(s) (the inverse of ``rfft``; default length ``2 * (n - 1)`` innermost). The "
        "imaginary parts of the DC and Nyquist terms are ignored."
    )
    return irfft


rfft = _make_rfft("RFFT", 1, "rfft")
rfft2d = _make_rfft("RFFT2D", 2, "rfft2d")
rfft3d = _make_rfft("RFFT3D", 3, "rfft3d")
irfft = _make_irfft("IRFFT", 1, "irfft")
irfft2d = _make_irfft("IRFFT2D", 2, "irfft2d")
irfft3d = _make_irfft("IRFFT3D", 3, "irfft3d")


# The bare N-D ops (``tf.compat.v1.fftnd`` and kin).


def _nd_args(fft_length, axes):
    return _length_tensor(fft_length), ops.convert_to_tensor(axes, dtype=dtypes.int32, name="axes")


def raw_fftnd(input, fft_length, axes, name=None):  # noqa: A002
    """The ``FFTND`` op: the transform over ``axes`` (the innermost ones), cropped or padded to ``fft_length``."""
    with ops.name_scope(name, "FFTND", [input, fft_length, axes]) as scope:
        x = _complex_input(input)
        length, ax = _nd_args(fft_length, axes)
        return make("FFTND", [x, length, ax], {"Tcomplex": type_attr(x.dtype)}, scope)


def raw_ifftnd(input, fft_length, axes, name=None):  # noqa: A002
    """The ``IFFTND`` op: the inverse of :func:`raw_fftnd`."""
    with ops.name_scope(name, "IFFTND", [input, fft_length, axes]) as scope:
        x = _complex_input(input)
        length, ax = _nd_args(fft_length, axes)
        return make("IFFTND", [x, length, ax], {"Tcomplex": type_attr(x.dtype)}, scope)


def raw_rfftnd(input, fft_length, axes, Tcomplex=dtypes.complex64, name=None):  # noqa: A002,N803
    """The ``RFFTND`` op: the real transform over ``axes`` (the innermost ones), each cropped to ``fft_length``."""
    with ops.name_scope(name, "RFFTND", [input, fft_length, axes]) as scope:
        x = ops.convert_to_tensor(input, name="input", preferred_dtype=dtypes.float32)
        length, ax = _nd_args(fft_length, axes)
        attrs = {"Treal": type_attr(x.dtype), "Tcomplex": type_attr(Tcomplex)}
        return make("RFFTND", [x, length, ax], attrs, scope)


def raw_irfftnd(input, fft_length, axes, Treal=dtypes.float32, name=None):  # noqa: A002,N803
    """The ``IRFFTND`` op: the inverse of :func:`raw_rfftnd`."""
    with ops.name_scope(name, "IRFFTND", [input, fft_length, axes]) as scope:
        x = _complex_input(input)
        length, ax = _nd_args(fft_length, axes)
        attrs = {"Treal": type_attr(Treal), "Tcomplex": type_attr(x.dtype)}
        return make("IRFFTND", [x, length, ax], attrs, scope)


# ``tf.signal``'s N-D wrappers.


def _nd_axes(x, axes):
    if axes is None:
        return ops.convert_to_tensor(np.arange(x.shape.ndims, dtype=np.int32), dtype=dtypes.int32)
    return ops.convert_to_tensor(axes, dtype=dtypes.int32)


def _normalise(x, fft_length, norm, divide):
    """``x`` scaled for NumPy's ``norm`` ("backward": as is; "forward"/"ortho": by ``N`` / ``sqrt(N)``)."""
    if norm is None or norm == "backward":
        return x
    lengths = tensor_util.constant_value(fft_length)
    if lengths is None:
        n = math_ops.cast(math_ops.reduce_prod(fft_length), x.dtype)
        if norm == "ortho":
            n = math_ops.sqrt(n)
    else:
        n = float(np.prod(np.asarray(lengths, dtype=np.float64)))
        if norm == "ortho":
            n = float(np.sqrt(n))
    if norm not in ("forward", "ortho"):
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".')
    return x / n if divide else x * n


def _nd_length(x, fft_length, axes, half):
    """``fft_length`` as given, or the input's dimensions along ``axes`` (for an inverse real transform the
    last one ``2 * (n - 1)``). TensorFlow's wrappers take the whole shape whatever ``axes`` says, which only
    works with every axis; NumPy's ``s`` default is what is used here."""
    if fft_length is not None:
        return _length_tensor(fft_length)
    picked = tensor_util.constant_value(axes)
    shape = x.shape
    if picked is not None and shape.ndims is not None:
        dims = [shape.as_list()[int(a)] for a in np.reshape(picked, [-1])]
        if all(d is not None for d in dims):
            if half and dims:
                dims[-1] = max(0, 2 * (dims[-1] - 1))
            return _length_tensor(dims)
    lengths = array_ops.gather(array_ops.shape(x), axes)
    if half:
        last = math_ops.maximum(0, 2 * (lengths[-1:] - 1))
        lengths = array_ops.concat([lengths[:-1], last], 0)
    return lengths


def fftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-D discrete Fourier transform over ``axes`` (default all; they must be the innermost ones).

    Each transformed dimension is cropped or zero-padded to ``fft_length`` (default: the input's shape);
    ``norm`` is NumPy's ("backward", the default, "forward" or "ortho").
    """
    with ops.name_scope(name, "fftnd", [input_tensor, fft_length, axes]) as scope:
        x = _wrapper_complex_input(input_tensor)
        ax = _nd_axes(x, axes)
        length = _nd_length(x, fft_length, ax, half=False)
        x = _normalise(x, length, norm, divide=True)
        return make("FFTND", [x, length, ax], {"Tcomplex": type_attr(x.dtype)}, scope)


def ifftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of :func:`fftnd`."""
    with ops.name_scope(name, "ifftnd", [input_tensor, fft_length, axes]) as scope:
        x = _wrapper_complex_input(input_tensor)
        ax = _nd_axes(x, axes)
        length = _nd_length(x, fft_length, ax, half=False)
        x = _normalise(x, length, norm, divide=False)
        return make("IFFTND", [x, length, ax], {"Tcomplex": type_attr(x.dtype)}, scope)


def rfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-D transform of a real tensor over ``axes`` (the innermost ones), the last one halved.

    Transformed dimensions shorter than ``fft_length`` are zero-padded, longer ones cropped.
    """
    with ops.name_scope(name, "rfftnd", [input_tensor, fft_length, axes]) as scope:
        x = _real_input(input_tensor, "RFFT")
        ax = _nd_axes(x, axes)
        length = _nd_length(x, fft_length, ax, half=False)
        x = _pad_to_length(x, int(ax.shape[0]), length)
        x = _normalise(x, length, norm, divide=True)
        attrs = {"Treal": type_attr(x.dtype), "Tcomplex": type_attr(_complex_of(x.dtype.base_dtype))}
        return make("RFFTND", [x, length, ax], attrs, scope)


def irfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of :func:`rfftnd` (default innermost length ``2 * (n - 1)``)."""
    with ops.name_scope(name, "irfftnd", [input_tensor, fft_length, axes]) as scope:
        x = _half_spectrum_input(input_tensor, "IRFFT")
        ax = _nd_axes(x, axes)
        length = _nd_length(x, fft_length, ax, half=True)
        x = _pad_to_length(x, int(ax.shape[0]), length, half_last=True)
        x = _normalise(x, length, norm, divide=False)
        attrs = {"Treal": type_attr(x.dtype.base_dtype.real_dtype), "Tcomplex": type_attr(x.dtype)}
        return make("IRFFTND", [x, length, ax], attrs, scope)


def _shifts(x, axes, sign):
    shape = array_ops.shape(x)
    if axes is None:
        axes = tuple(range(x.shape.ndims))
        shift = shape // 2
    elif isinstance(axes, int):
        shift = shape[axes] // 2
    else:
        rank = array_ops.rank(x)
        axes = array_ops.where(math_ops.less(axes, 0), axes + rank, axes)
        shift = array_ops.gather(shape, axes) // 2
    return axes, (-shift if sign < 0 else shift)


def fftshift(x, axes=None, name=None):
    """Rolls each of ``axes`` (default all) by half its length, moving the zero frequency to the centre."""
    with ops.name_scope(name, "fftshift") as scope:
        x = ops.convert_to_tensor(x)
        axes, shift = _shifts(x, axes, 1)
        return array_ops_extra.roll(x, shift, axes, scope)


def ifftshift(x, axes=None, name=None):
    """The inverse of :func:`fftshift` (they differ for odd lengths)."""
    with ops.name_scope(name, "ifftshift") as scope:
        x = ops.convert_to_tensor(x)
        axes, shift = _shifts(x, axes, -1)
        return array_ops_extra.roll(x, shift, axes, scope)


__all__ = [
    "fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d",
    "rfft", "irfft", "rfft2d", "irfft2d", "rfft3d", "irfft3d",
    "fftnd", "ifftnd", "rfftnd", "irfftnd", "fftshift", "ifftshift",
]
