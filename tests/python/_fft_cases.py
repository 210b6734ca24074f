"""The FFT family of ``tf.signal`` / ``tf.spectral`` / the top-level ``tf.fft`` names, shared by the
fixture generator (``tools/make_fft_fixtures.py``, run under real TensorFlow 2.21) and the test
(``test_fft.py``, run under ferroflow).

No TensorFlow or ferroflow import here: every ``case_<name>(tf)`` takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behavior disabled, or ``ferroflow``), builds its graph in the
current default graph and returns ``(fetches, feed_dict)``: ``fetches`` maps a plain name to one
tensor, ``feed_dict`` maps placeholders to NumPy arrays from seeded ``RandomState``s. Gradients are
of the real loss ``sum(real(y) * wr + imag(y) * wi)`` (or ``sum(y * w)`` for a real ``y``) with
seeded weights. Placeholders of partly known or unknown shape exercise static shape inference and
the wrappers' graph-side padding.

Fixture files are ``tests/fixtures/fft/<name>.npz``: one array per fetch key plus
``<key>__static_shape`` (see ``static_shape``), the static shape TensorFlow inferred.

``ERROR_CASES`` build graphs TensorFlow refuses, at construction or at run time; the generator
checks that TensorFlow raises the stated class with a message containing the stated text and
records what it raised in ``tests/fixtures/fft/errors.json``.

The rest of ``tf.signal`` (windows, framing, STFTs, DCTs, MDCTs, mel features) has cases here too.

TensorFlow 2.21 has no CPU kernels for the N-D ops (``FFTND``, ``RFFTND``, ...), so they are not
here: ``test_fft.py`` checks them against ``numpy.fft``.
"""

from __future__ import annotations

import numpy as np

STATIC_SHAPE_SUFFIX = "__static_shape"
UNKNOWN_RANK = -2


def static_shape(t):
    """The static shape of a tensor as an int64 array (-1 for unknown dims; 0-d ``UNKNOWN_RANK``)."""
    shape = t.shape
    if shape.ndims is None:
        return np.array(UNKNOWN_RANK, dtype=np.int64)
    return np.array([-1 if d is None else int(d) for d in shape.as_list()], dtype=np.int64)


def tolerance(dtype):
    """Allowed error relative to the largest magnitude of the expected array.

    Two FFT libraries round differently (ducc in TensorFlow, rustfft here); the error of either
    grows like ``eps * log(n)`` relative to the signal's scale, not to each element.
    """
    dtype = np.dtype(dtype)
    if dtype in (np.dtype(np.float32), np.dtype(np.complex64)):
        return 2e-5
    return 1e-11


def _complex(rng, shape, dtype):
    re = rng.uniform(-1, 1, shape)
    im = rng.uniform(-1, 1, shape)
    return (re + 1j * im).astype(dtype)


def _real(rng, shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


def _loss(tf, y, rng):
    """A real scalar depending on every element of ``y`` (weights drawn from ``rng``)."""
    shape = [int(d) for d in y.shape.as_list()]
    if y.dtype.is_complex:
        real_dtype = np.float64 if y.dtype == tf.complex128 else np.float32
        wr = tf.constant(rng.uniform(-1, 1, shape).astype(real_dtype))
        wi = tf.constant(rng.uniform(-1, 1, shape).astype(real_dtype))
        return tf.reduce_sum(tf.math.real(y) * wr + tf.math.imag(y) * wi)
    w = tf.constant(rng.uniform(-1, 1, shape).astype(y.dtype.as_numpy_dtype))
    return tf.reduce_sum(y * w)


CASES = {}


def _case(fn):
    CASES[fn.__name__[len("case_"):]] = fn
    return fn


# Complex transforms: shapes per rank (odd, even, prime, batched, a length-1 axis).
_COMPLEX_SHAPES = {
    1: [(7,), (2, 8), (3, 13), (2, 1, 12), (4, 1)],
    2: [(5, 6), (2, 7, 4), (3, 9, 11), (2, 1, 5)],
    3: [(2, 3, 5), (2, 4, 3, 6), (1, 5, 7, 2)],
}
_COMPLEX_OPS = {
    "fft": ("fft", 1), "ifft": ("ifft", 1), "fft2d": ("fft2d", 2),
    "ifft2d": ("ifft2d", 2), "fft3d": ("fft3d", 3), "ifft3d": ("ifft3d", 3),
}


def _complex_case(op, rank, dtype, seed):
    def case(tf):
        rng = np.random.RandomState(seed)
        fn = getattr(tf.signal, op)
        fetches, feed = {}, {}
        for i, shape in enumerate(_COMPLEX_SHAPES[rank]):
            x = tf.placeholder(dtype, shape, name=f"x{i}")
            feed[x] = _complex(rng, shape, dtype)
            y = fn(x)
            fetches[f"y{i}"] = y
            fetches[f"grad{i}"] = tf.gradients(_loss(tf, y, rng), x)[0]
        # Unknown dimensions and unknown rank: the static shape follows the input's.
        shape = _COMPLEX_SHAPES[rank][1]
        x = tf.placeholder(dtype, [None] * (len(shape) - 1) + [shape[-1]], name="partial")
        feed[x] = _complex(rng, shape, dtype)
        fetches["partial"] = fn(x)
        x = tf.placeholder(dtype, None, name="unknown")
        feed[x] = _complex(rng, shape, dtype)
        fetches["unknown"] = fn(x)
        return fetches, feed

    return case


for _name, (_op, _rank) in _COMPLEX_OPS.items():
    for _dt, _tag in ((np.complex64, "c64"), (np.complex128, "c128")):
        _fn = _complex_case(_op, _rank, _dt, seed=len(CASES) + 1)
        _fn.__name__ = f"case_{_name}_{_tag}"
        _case(_fn)


# Real transforms: (input shape, fft_length or None) per rank; crop, pad, odd and even lengths.
_RFFT_SHAPES = {
    1: [((8,), None), ((3, 9), None), ((2, 10), [6]), ((2, 10), [7]), ((2, 5), [12]), ((3, 13), [13]),
        ((2, 3, 1), None)],
    2: [((4, 6), None), ((2, 5, 7), None), ((2, 6, 9), [4, 5]), ((2, 3, 5), [6, 8]), ((2, 5, 7), [5, 7])],
    3: [((2, 3, 4), None), ((2, 3, 5, 7), None), ((1, 4, 6, 8), [3, 5, 6]), ((2, 3, 4), [4, 5, 6])],
}
# fft_lengths whose gradients TensorFlow can form (equal to the padded input's dimensions).
_RFFT_GRADS = {1: [0, 1, 4, 5], 2: [0, 1, 3, 4]}


def _rfft_case(rank, dtype, seed, module="signal"):
    suffix = "" if rank == 1 else f"{rank}d"

    def case(tf):
        rng = np.random.RandomState(seed)
        ns = getattr(tf, module)
        fn = getattr(ns, "rfft" + suffix)
        fetches, feed = {}, {}
        for i, (shape, length) in enumerate(_RFFT_SHAPES[rank]):
            x = tf.placeholder(dtype, shape, name=f"x{i}")
            feed[x] = _real(rng, shape, dtype)
            y = fn(x, fft_length=length)
            fetches[f"y{i}"] = y
            if i in _RFFT_GRADS.get(rank, ()):
                fetches[f"grad{i}"] = tf.gradients(_loss(tf, y, rng), x)[0]
        # Unknown dims with a constant fft_length, and a fed fft_length (padding in the graph).
        shape, _ = _RFFT_SHAPES[rank][1]
        length = [d + 1 for d in shape[-rank:]]
        x = tf.placeholder(dtype, [None] * len(shape), name="partial")
        feed[x] = _real(rng, shape, dtype)
        fetches["partial"] = fn(x, fft_length=length)
        fed_length = tf.placeholder(tf.int32, [rank], name="fed_length")
        feed[fed_length] = np.array([d + 2 for d in shape[-rank:]], np.int32)
        x = tf.placeholder(dtype, None, name="unknown")
        feed[x] = _real(rng, shape, dtype)
        fetches["fed_length"] = fn(x, fft_length=fed_length)
        fetches["unknown_default"] = fn(x)
        return fetches, feed

    return case


def _irfft_case(rank, dtype, seed, module="signal"):
    suffix = "" if rank == 1 else f"{rank}d"

    def case(tf):
        rng = np.random.RandomState(seed)
        ns = getattr(tf, module)
        fn = getattr(ns, "irfft" + suffix)
        fetches, feed = {}, {}
        for i, (shape, length) in enumerate(_RFFT_SHAPES[rank]):
            # A half spectrum: the innermost dimension of the real shape's transform.
            half = list(shape)
            half[-1] = shape[-1] // 2 + 1
            if length is None and half[-1] == 1:
                continue  # a default length of 0, which TensorFlow's kernel aborts on
            x = tf.placeholder(dtype, half, name=f"x{i}")
            feed[x] = _complex(rng, half, dtype)
            y = fn(x, fft_length=length)
            fetches[f"y{i}"] = y
            if i in _RFFT_GRADS.get(rank, ()) and length is None:
                fetches[f"grad{i}"] = tf.gradients(_loss(tf, y, rng), x)[0]
        # Odd output lengths (the spectrum has no Nyquist term), with gradients.
        shape = {1: (3, 3), 2: (2, 3, 4), 3: (2, 2, 3, 4)}[rank]
        length = {1: [5], 2: [3, 7], 3: [2, 3, 7]}[rank]
        x = tf.placeholder(dtype, shape, name="odd")
        feed[x] = _complex(rng, shape, dtype)
        y = fn(x, fft_length=length)
        fetches["odd"] = y
        if rank in _RFFT_GRADS:
            fetches["odd_grad"] = tf.gradients(_loss(tf, y, rng), x)[0]
        # Unknown dims, fed lengths, unknown rank.
        shape = list(_RFFT_SHAPES[rank][1][0])
        shape[-1] = shape[-1] // 2 + 1
        x = tf.placeholder(dtype, [None] * len(shape), name="partial")
        feed[x] = _complex(rng, shape, dtype)
        fetches["partial"] = fn(x, fft_length=[3] * (rank - 1) + [2 * shape[-1] - 2])
        fed_length = tf.placeholder(tf.int32, [rank], name="fed_length")
        feed[fed_length] = np.array(list(shape[-rank:-1]) + [2 * shape[-1] + 1], np.int32)
        x = tf.placeholder(dtype, None, name="unknown")
        feed[x] = _complex(rng, shape, dtype)
        fetches["fed_length"] = fn(x, fft_length=fed_length)
        # TensorFlow cannot infer a default length for an input of unknown rank; unknown dims it can.
        x = tf.placeholder(dtype, [None] * len(shape), name="unknown_dims")
        feed[x] = _complex(rng, shape, dtype)
        fetches["unknown_default"] = fn(x)
        return fetches, feed

    return case


for _rank in (1, 2, 3):
    for _dt, _tag in ((np.float32, "f32"), (np.float64, "f64")):
        _fn = _rfft_case(_rank, _dt, seed=len(CASES) + 1)
        _fn.__name__ = f"case_rfft{'' if _rank == 1 else f'{_rank}d'}_{_tag}"
        _case(_fn)
    for _dt, _tag in ((np.complex64, "c64"), (np.complex128, "c128")):
        _fn = _irfft_case(_rank, _dt, seed=len(CASES) + 1)
        _fn.__name__ = f"case_irfft{'' if _rank == 1 else f'{_rank}d'}_{_tag}"
        _case(_fn)


@_case
def case_irfft_ignores_dc_and_nyquist_imaginary_parts(tf):
    # Even length: the imaginary parts of the first and last terms do not count; odd: only the first.
    x = tf.constant(np.array([[1 + 5j, 2 + 1j, 3 + 7j], [0.5 - 2j, -1 + 1j, 2 - 3j]], np.complex64))
    return {"even": tf.signal.irfft(x, [4]), "odd": tf.signal.irfft(x, [5]), "odd2d": tf.signal.irfft2d(x, [2, 5])}, {}


@_case
def case_spectral_aliases(tf):
    rng = np.random.RandomState(101)
    x = tf.constant(_real(rng, (3, 10), np.float32))
    z = tf.constant(_complex(rng, (2, 4, 6), np.complex64))
    return {
        "rfft": tf.spectral.rfft(x),
        "irfft": tf.spectral.irfft(tf.spectral.rfft(x), [10]),
        "fft2d": tf.spectral.fft2d(z),
        "top_fft": tf.fft(z),
        "top_ifft2d": tf.ifft2d(z),
        "top_fft3d": tf.fft3d(z),
    }, {}


@_case
def case_python_values(tf):
    # Lists and NumPy arrays are converted as TensorFlow's wrappers convert them.
    return {
        "fft_list": tf.signal.fft([1.0, 2.0, 3.0, 4.0]),
        "fft_c128": tf.signal.fft(np.array([1 + 1j, 2, 3 - 1j], np.complex128)),
        "rfft_list": tf.signal.rfft([1.0, 0.0, -1.0, 2.0, 3.0]),
        "irfft_list": tf.signal.irfft([1.0 + 0j, 2.0 - 1j, 0.5 + 0j]),
    }, {}


@_case
def case_shifts(tf):
    rng = np.random.RandomState(102)
    x = tf.constant(_real(rng, (5, 6, 7), np.float32))
    v = tf.constant(np.arange(-5, 5, dtype=np.float64))
    z = tf.constant(_complex(rng, (4, 5), np.complex64))
    return {
        "shift_all": tf.signal.fftshift(x),
        "ishift_all": tf.signal.ifftshift(x),
        "shift_int": tf.signal.fftshift(x, axes=1),
        "ishift_int": tf.signal.ifftshift(x, axes=-1),
        "shift_tuple": tf.signal.fftshift(x, axes=(0, -1)),
        "ishift_tuple": tf.signal.ifftshift(x, axes=[-1, 0]),
        "vector": tf.signal.fftshift(v),
        "roundtrip": tf.signal.ifftshift(tf.signal.fftshift(v)),
        "complex": tf.signal.fftshift(z, axes=-1),
    }, {}


@_case
def case_empty(tf):
    x = tf.constant(np.zeros((0, 6), np.complex64))
    r = tf.constant(np.zeros((0, 6), np.float32))
    return {"fft": tf.signal.fft(x), "ifft2d": tf.signal.ifft2d(x), "rfft": tf.signal.rfft(r)}, {}


@_case
def case_large_batched(tf):
    # Large enough for the threaded paths: rows, and columns of the 2-D and 3-D transforms.
    rng = np.random.RandomState(103)
    x = tf.placeholder(tf.complex64, (6, 64, 96), name="x")
    r = tf.placeholder(tf.float32, (40, 1000), name="r")
    feed = {x: _complex(rng, (6, 64, 96), np.complex64), r: _real(rng, (40, 1000), np.float32)}
    # Every 5th/7th/11th element is kept, to keep the fixture small while sampling every task's share.
    return {
        "fft": tf.signal.fft(x)[:, ::5, ::7],
        "fft2d": tf.signal.fft2d(x)[:, ::7, ::5],
        "ifft3d": tf.signal.ifft3d(x)[:, ::5, ::7],
        "rfft": tf.signal.rfft(r)[:, ::11],
        "irfft": tf.signal.irfft(tf.signal.rfft(r))[:, ::11],
        "rfft2d": tf.signal.rfft2d(r, [36, 999])[::3, ::11],
    }, feed


# The rest of tf.signal, composed of the transforms: windows, framing, STFTs, DCTs, MDCTs, mel features.


@_case
def case_windows(tf):
    n = tf.placeholder(tf.int32, [], name="n")
    out = {"hann_fed": tf.signal.hann_window(n), "hamming_fed_symmetric": tf.signal.hamming_window(n, periodic=False)}
    for length in (1, 2, 7, 8, 16):
        for periodic in (True, False):
            tag = f"{length}_{'p' if periodic else 's'}"
            out[f"hann_{tag}"] = tf.signal.hann_window(length, periodic=periodic)
            out[f"hamming_{tag}"] = tf.signal.hamming_window(length, periodic=periodic, dtype=tf.float64)
    out["kaiser_10"] = tf.signal.kaiser_window(10)
    out["kaiser_9_beta3_f64"] = tf.signal.kaiser_window(9, beta=3.0, dtype=tf.float64)
    out["kaiser_1"] = tf.signal.kaiser_window(1)
    out["kbd_16"] = tf.signal.kaiser_bessel_derived_window(16)
    out["kbd_12_beta4_f64"] = tf.signal.kaiser_bessel_derived_window(12, beta=4.0, dtype=tf.float64)
    out["vorbis_12"] = tf.signal.vorbis_window(12)
    out["vorbis_9_f64"] = tf.signal.vorbis_window(9, dtype=tf.float64)
    return out, {n: 10}


@_case
def case_frame_and_overlap_add(tf):
    rng = np.random.RandomState(104)
    x = tf.placeholder(tf.float32, (2, 23), name="x")
    m = tf.placeholder(tf.float64, (3, 17, 2), name="m")
    f = tf.placeholder(tf.float32, (2, 5, 8), name="f")
    u = tf.placeholder(tf.float32, None, name="u")
    feed = {x: _real(rng, (2, 23), np.float32), m: _real(rng, (3, 17, 2), np.float64),
            f: _real(rng, (2, 5, 8), np.float32), u: _real(rng, (3, 4, 6), np.float32)}
    framed = tf.signal.frame(x, 6, 4)
    out = {
        "frame": framed,
        "frame_pad_end": tf.signal.frame(x, 6, 4, pad_end=True, pad_value=-2.0),
        "frame_exact_fit": tf.signal.frame(x, 5, 6),
        "frame_axis": tf.signal.frame(m, 4, 3, axis=-2),
        "frame_axis0_pad": tf.signal.frame(m, 5, 5, pad_end=True, axis=1),
        "frame_too_short": tf.signal.frame(x, 30, 4),
        "frame_unknown": tf.signal.frame(u, 3, 2),
        "frame_grad": tf.gradients(_loss(tf, framed, rng), x)[0],
        "ola_3": tf.signal.overlap_and_add(f, 3),
        "ola_8": tf.signal.overlap_and_add(f, 8),
        "ola_11": tf.signal.overlap_and_add(f, 11),
        "ola_unknown": tf.signal.overlap_and_add(u, 4),
    }
    out["ola_grad"] = tf.gradients(_loss(tf, out["ola_3"], rng), f)[0]
    return out, feed


@_case
def case_stft(tf):
    rng = np.random.RandomState(105)
    x = tf.placeholder(tf.float32, (2, 1000), name="x")
    d = tf.placeholder(tf.float64, (3, 300), name="d")
    feed = {x: _real(rng, (2, 1000), np.float32), d: _real(rng, (3, 300), np.float64)}
    s = tf.signal.stft(x, 256, 128)
    out = {
        "stft": s,
        "stft_pad_end": tf.signal.stft(x, 200, 80, pad_end=True),
        "stft_fft_length": tf.signal.stft(d, 64, 16, fft_length=100, window_fn=tf.signal.hamming_window),
        "stft_no_window": tf.signal.stft(d, 50, 25, window_fn=None),
        "istft": tf.signal.inverse_stft(s, 256, 128),
        "istft_exact": tf.signal.inverse_stft(
            s, 256, 128, window_fn=tf.signal.inverse_stft_window_fn(128)),
        "istft_f64": tf.signal.inverse_stft(
            tf.signal.stft(d, 64, 16, fft_length=100), 64, 16, fft_length=100,
            window_fn=tf.signal.inverse_stft_window_fn(16, forward_window_fn=tf.signal.hann_window)),
        "istft_short_fft": tf.signal.inverse_stft(tf.signal.stft(d, 64, 32, fft_length=48), 64, 32, fft_length=48),
    }
    out["stft_grad"] = tf.gradients(tf.reduce_sum(tf.abs(s)), x)[0]
    return out, feed


@_case
def case_dct(tf):
    rng = np.random.RandomState(106)
    x = tf.placeholder(tf.float32, (3, 10), name="x")
    d = tf.placeholder(tf.float64, (2, 7), name="d")
    feed = {x: _real(rng, (3, 10), np.float32), d: _real(rng, (2, 7), np.float64)}
    out = {}
    for t in (1, 2, 3, 4):
        for norm in (None, "ortho") if t != 1 else (None,):
            tag = f"{t}_{norm or 'none'}"
            out[f"dct{tag}"] = tf.signal.dct(x, type=t, norm=norm)
            out[f"idct{tag}"] = tf.signal.idct(d, type=t, norm=norm)
    out["dct2_n_crop"] = tf.signal.dct(x, n=6)
    out["dct2_n_pad"] = tf.signal.dct(d, n=12, norm="ortho")
    out["dct4_n_pad"] = tf.signal.dct(d, type=4, n=9)
    out["spectral_dct"] = tf.spectral.dct(x)
    out["spectral_idct"] = tf.spectral.idct(x, type=3)
    y = tf.signal.dct(x, norm="ortho")
    out["dct_grad"] = tf.gradients(_loss(tf, y, rng), x)[0]
    return out, feed


@_case
def case_mel_and_mfcc(tf):
    rng = np.random.RandomState(107)
    spec = tf.placeholder(tf.float32, (2, 9, 257), name="spec")
    feed = {spec: np.abs(_real(rng, (2, 9, 257), np.float32)) + 0.01}
    m = tf.signal.linear_to_mel_weight_matrix(40, 257, 16000, 20.0, 7600.0)
    mel = tf.tensordot(spec, m, 1)
    log_mel = tf.math.log(mel + 1e-6)
    return {
        "default": tf.signal.linear_to_mel_weight_matrix(),
        "f64": tf.signal.linear_to_mel_weight_matrix(10, 65, 8000, 0.0, 4000.0, dtype=tf.float64),
        "matrix": m,
        "mfcc": tf.signal.mfccs_from_log_mel_spectrograms(log_mel),
        "mfcc_grad": tf.gradients(tf.reduce_sum(tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :13]),
                                  spec)[0],
    }, feed


@_case
def case_mdct(tf):
    rng = np.random.RandomState(108)
    x = tf.placeholder(tf.float32, (2, 64), name="x")
    d = tf.placeholder(tf.float64, (3, 40), name="d")
    feed = {x: _real(rng, (2, 64), np.float32), d: _real(rng, (3, 40), np.float64)}
    c = tf.signal.mdct(x, 16)
    k = tf.signal.mdct(d, 8, window_fn=tf.signal.kaiser_bessel_derived_window, norm="ortho", pad_end=True)
    return {
        "mdct": c,
        "imdct": tf.signal.inverse_mdct(c),
        "mdct_kbd_ortho": k,
        "imdct_kbd_ortho": tf.signal.inverse_mdct(k, window_fn=tf.signal.kaiser_bessel_derived_window, norm="ortho"),
        "mdct_no_window": tf.signal.mdct(d, 12, window_fn=None),
        "imdct_no_window": tf.signal.inverse_mdct(tf.signal.mdct(d, 12, window_fn=None), window_fn=None),
    }, feed


# Graphs TensorFlow refuses: (builder, where it fails, exception class name, text its message holds).
# "build" errors are raised while the graph is built; "run" errors by Session.run.


def _err_fft_float(tf):
    tf.signal.fft(tf.zeros([4], tf.float32))


def _err_fft_scalar(tf):
    tf.signal.fft(tf.constant(1 + 1j, tf.complex64))


def _err_fft2d_rank1(tf):
    tf.signal.fft2d(tf.zeros([4], tf.complex64))


def _err_ifft3d_rank2(tf):
    tf.signal.ifft3d(tf.zeros([4, 4], tf.complex128))


def _err_rfft_int(tf):
    tf.signal.rfft(tf.zeros([4], tf.int32))


def _err_rfft_complex(tf):
    tf.signal.rfft(tf.zeros([4], tf.complex64))


def _err_irfft_float(tf):
    tf.signal.irfft(tf.zeros([4], tf.float32))


def _err_rfft_scalar(tf):
    tf.signal.rfft(tf.constant(1.0))


def _err_rfft2d_rank1(tf):
    tf.signal.rfft2d(tf.zeros([4], tf.float32))


def _err_rfft_length_shape(tf):
    tf.signal.rfft(tf.zeros([4, 4], tf.float32), fft_length=[2, 2])


def _err_irfft_negative_length(tf):
    # TensorFlow creates the op and raises when its static shape is read; ferroflow at once.
    tf.signal.irfft(tf.zeros([4], tf.complex64), fft_length=[-4]).shape.as_list()


def _err_rfft_negative_fed_length(tf):
    n = tf.placeholder(tf.int32, [1])
    return tf.signal.rfft(tf.placeholder_with_default(np.ones([10], np.float32), [None]), fft_length=n), {n: [-2]}


def _err_rfft2d_negative_length(tf):
    n = tf.placeholder(tf.int32, [2])
    return tf.signal.rfft2d(tf.ones([3, 4], tf.float32), fft_length=n), {n: [-1, 4]}


def _err_mdct_frame_length(tf):
    tf.signal.mdct(tf.zeros([2, 40]), 10)


def _err_dct_type(tf):
    tf.signal.dct(tf.zeros([4]), type=5)


def _err_dct1_ortho(tf):
    tf.signal.dct(tf.zeros([4]), type=1, norm="ortho")


def _err_window_dtype(tf):
    tf.signal.hann_window(8, dtype=tf.int32)


def _err_mel_edges(tf):
    tf.signal.linear_to_mel_weight_matrix(20, 129, 8000, 3000.0, 2000.0)


def _err_overlap_add_float_step(tf):
    tf.signal.overlap_and_add(tf.zeros([3, 4]), 2.0)


def _err_rfft3d_gradient(tf):
    x = tf.ones([2, 2, 2], tf.float32)
    tf.gradients(tf.math.real(tf.signal.rfft3d(x)), x)


def _err_irfft3d_gradient(tf):
    x = tf.ones([2, 2, 2], tf.complex64)
    tf.gradients(tf.signal.irfft3d(x), x)


ERROR_CASES = {
    "fft_float": (_err_fft_float, "build", "TypeError", "not in list of allowed values: complex64, complex128"),
    "fft_scalar": (_err_fft_scalar, "build", "ValueError", "Shape must be at least rank 1 but is rank 0"),
    "fft2d_rank1": (_err_fft2d_rank1, "build", "ValueError", "Shape must be at least rank 2 but is rank 1"),
    "ifft3d_rank2": (_err_ifft3d_rank2, "build", "ValueError", "Shape must be at least rank 3 but is rank 2"),
    "rfft_int": (_err_rfft_int, "build", "ValueError", "RFFT requires tf.float32 or tf.float64 inputs"),
    "rfft_complex": (_err_rfft_complex, "build", "ValueError", "RFFT requires tf.float32 or tf.float64 inputs"),
    "irfft_float": (_err_irfft_float, "build", "ValueError", "IRFFT requires tf.complex64 or tf.complex128 inputs"),
    "rfft_scalar": (_err_rfft_scalar, "build", "ValueError", "must have rank at least 1"),
    "rfft2d_rank1": (_err_rfft2d_rank1, "build", "ValueError", "must have rank at least 2"),
    "rfft_length_shape": (_err_rfft_length_shape, "build", "ValueError", "Dimension must be 1 but is 2"),
    "irfft_negative_length": (_err_irfft_negative_length, "build", "ValueError", "Dimension -4 must be >= 0"),
    "rfft_negative_fed_length": (
        _err_rfft_negative_fed_length, "run", "InvalidArgumentError", "fft_length[0] must >= 0, but got: -2"),
    "rfft2d_negative_length": (
        _err_rfft2d_negative_length, "run", "InvalidArgumentError", "fft_length[0] must >= 0, but got: -1"),
    "rfft3d_gradient": (_err_rfft3d_gradient, "build", "LookupError", "RFFT3D"),
    "irfft3d_gradient": (_err_irfft3d_gradient, "build", "LookupError", "IRFFT3D"),
    "mdct_frame_length": (_err_mdct_frame_length, "build", "ValueError", "The frame length must be a multiple of 4."),
    "dct_type": (_err_dct_type, "build", "ValueError", "Types I, II, III and IV (I)DCT are supported."),
    "dct1_ortho": (_err_dct1_ortho, "build", "ValueError", "Normalization is not supported for the Type-I DCT."),
    "window_dtype": (_err_window_dtype, "build", "ValueError", "dtype must be a floating point type"),
    "mel_edges": (_err_mel_edges, "build", "ValueError", "lower_edge_hertz 3000.0 >= upper_edge_hertz 2000.0"),
    "overlap_add_float_step": (_err_overlap_add_float_step, "build", "ValueError", "frame_step must be an integer"),
}


def raw_op_error_cases(raw):
    """Run-time errors of the bare ops (``tf.raw_ops`` under TensorFlow; the module that builds the ops under
    ferroflow), given as callables of ``raw`` returning ``(tensor, feed)``: name -> (builder, class, text)."""
    x = np.arange(10, dtype=np.float32)
    z = (x + 1j * x).astype(np.complex64)
    return {
        "rfft_too_short": (lambda: raw["RFFT"](x, [12], None), "InvalidArgumentError",
                           "Input dimension 0 must have length of at least 12 but got: 10"),
        "irfft_too_short": (lambda: raw["IRFFT"](z, [30], None), "InvalidArgumentError",
                            "Input dimension 0 must have length of at least 16 but got: 10"),
        "rfft2d_too_short": (lambda: raw["RFFT2D"](np.ones((2, 5, 7), np.float32), [8, 4], None),
                             "InvalidArgumentError", "Input dimension 1 must have length of at least 8 but got: 5"),
        "rfft_wrong_tcomplex": (lambda: raw["RFFT"](x, [4], "complex128"), "InvalidArgumentError",
                                "Wrong types for forward real FFT: in=1 out=18"),
        "irfft_wrong_treal": (lambda: raw["IRFFT"](z, [4], "float64"), "InvalidArgumentError",
                              "Wrong types for backward real FFT: in=8 out=2"),
    }
