"""The FFT family (``tf.signal``, ``tf.spectral``, the top-level ``tf.fft`` names) against real TensorFlow.

Every case of ``_fft_cases.py`` is built with ferroflow in a fresh graph, run once and compared
fetch by fetch (values, dtypes, shapes, static shapes) with what TensorFlow 2.21 computed for the
same graph (``tests/fixtures/fft/<case>.npz``, made by ``tools/make_fft_fixtures.py``); the refused
graphs must raise TensorFlow's error class with its message (``errors.json``). Gradients are also
checked against central finite differences, and the N-D ops (which TensorFlow 2.21 only runs on
GPUs) against ``numpy.fft``.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _fft_cases import (
    CASES,
    ERROR_CASES,
    STATIC_SHAPE_SUFFIX,
    UNKNOWN_RANK,
    raw_op_error_cases,
    static_shape,
    tolerance,
)
from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, type_attr

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "fft"


def _load(name):
    path = FIXTURE_DIR / f"{name}.npz"
    assert path.exists(), f"no fixture {path}: run tools/make_fft_fixtures.py under TensorFlow"
    with np.load(path) as data:
        values = {k: data[k] for k in data.files if not k.endswith(STATIC_SHAPE_SUFFIX)}
        shapes = {k[: -len(STATIC_SHAPE_SUFFIX)]: data[k] for k in data.files if k.endswith(STATIC_SHAPE_SUFFIX)}
    return values, shapes


def _check_static_shape(where, want, got, runtime_shape):
    """Every dimension TensorFlow knows ferroflow must know and agree on; where TensorFlow does not
    know, ferroflow may, but only the value the run produced."""
    if want.ndim == 0:
        assert int(want) == UNKNOWN_RANK
        if got.ndim == 0:
            return
        assert len(got) == len(runtime_shape), f"{where}: static rank {len(got)}, value shape {runtime_shape}"
        want = np.full(len(got), -1)
    assert got.ndim == 1, f"{where}: static rank unknown, TensorFlow knows shape {want.tolist()}"
    assert len(got) == len(want), f"{where}: static shape {got.tolist()}, TensorFlow infers {want.tolist()}"
    for i, (w, g, d) in enumerate(zip(want, got, runtime_shape)):
        if w >= 0:
            assert g == w, f"{where}: static shape {got.tolist()}, TensorFlow infers {want.tolist()} (dim {i})"
        else:
            assert g < 0 or g == d, f"{where}: static shape {got.tolist()}, value shape {runtime_shape} (dim {i})"


def _assert_close(where, got, want):
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, TensorFlow gives {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, TensorFlow gives {want.shape}"
    if want.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got.astype(np.complex128) - want.astype(np.complex128))))
    assert err <= tolerance(want.dtype) * scale, f"{where}: max error {err:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_fft_matches_tensorflow(name):
    expected, expected_shapes = _load(name)
    g = tf.Graph()
    with g.as_default():
        fetches, feed = CASES[name](tf)
        assert sorted(fetches) == sorted(expected), "fetch keys differ from the fixture's arrays"
        shapes = {key: static_shape(t) for key, t in fetches.items()}
        with tf.Session(graph=g) as sess:
            got = sess.run(fetches, feed_dict=feed)
    for key in sorted(expected):
        value = np.asarray(got[key])
        where = f"{name}: fetch {key!r}"
        _assert_close(where, value, expected[key])
        _check_static_shape(where, expected_shapes[key], shapes[key], value.shape)


def _raw_ops():
    """The bare ops, built as ``tf.raw_ops`` would (``out`` overrides Tcomplex / Treal)."""

    def real_op(op_type):
        def build(x, n, out):
            x = ops.convert_to_tensor(x)
            attrs = {"Treal": type_attr(x.dtype), "Tcomplex": type_attr(out or dtypes.complex64)}
            return make(op_type, [x, ops.convert_to_tensor(n, dtype=dtypes.int32)], attrs)

        return build

    def inverse_op(op_type):
        def build(x, n, out):
            x = ops.convert_to_tensor(x)
            attrs = {"Treal": type_attr(out or dtypes.float32), "Tcomplex": type_attr(x.dtype)}
            return make(op_type, [x, ops.convert_to_tensor(n, dtype=dtypes.int32)], attrs)

        return build

    return {"RFFT": real_op("RFFT"), "RFFT2D": real_op("RFFT2D"), "IRFFT": inverse_op("IRFFT")}


def _error_cases():
    cases = {name: (fn, where, cls, text) for name, (fn, where, cls, text) in ERROR_CASES.items()}
    for name, (fn, cls, text) in raw_op_error_cases(_raw_ops()).items():
        cases["raw_" + name] = (fn, "raw", cls, text)
    return cases


@pytest.mark.parametrize("name", sorted(_error_cases()))
def test_fft_errors_match_tensorflow(name):
    recorded = json.loads((FIXTURE_DIR / "errors.json").read_text())[name]
    fn, where, cls, text = _error_cases()[name]
    assert recorded["class"] == cls and text in recorded["message"]
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(Exception) as info:
            made = fn(tf) if where != "raw" else fn()
            if where in ("run", "raw"):
                t, feed = made if isinstance(made, tuple) else (made, {})
                with tf.Session(graph=g) as sess:
                    sess.run(t, feed_dict=feed)
    assert type(info.value).__name__ == cls, f"raised {type(info.value).__name__}: {info.value}"
    assert text in str(info.value)


# Gradients against central finite differences (float64 / complex128).


def _numeric_grad(f, x, eps=1e-6):
    """d f / d x of a real function of a real or complex array; for complex x, TensorFlow's convention
    ``d/d re + 1j * d/d im``."""
    grad = np.zeros_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)
    parts = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
    for i in range(flat.size):
        for unit in parts:
            orig = flat[i]
            flat[i] = orig + eps * unit
            hi = f(x)
            flat[i] = orig - eps * unit
            lo = f(x)
            flat[i] = orig
            out[i] += unit * (hi - lo) / (2 * eps)
    return grad


GRADIENT_CASES = [
    ("fft", (3, 5), np.complex128, None),
    ("ifft", (2, 6), np.complex128, None),
    ("fft2d", (2, 3, 4), np.complex128, None),
    ("ifft2d", (3, 5), np.complex128, None),
    ("fft3d", (2, 2, 3), np.complex128, None),
    ("ifft3d", (2, 3, 2), np.complex128, None),
    ("rfft", (2, 8), np.float64, None),
    ("rfft", (2, 7), np.float64, None),
    ("rfft", (3, 5), np.float64, [9]),
    ("rfft2d", (2, 4, 6), np.float64, None),
    ("rfft2d", (3, 5), np.float64, None),
    ("irfft", (2, 5), np.complex128, None),
    ("irfft", (2, 4), np.complex128, [7]),
    ("irfft2d", (4, 5), np.complex128, None),
    ("irfft2d", (2, 3, 4), np.complex128, [3, 7]),
]


@pytest.mark.parametrize("op,shape,dtype,length", GRADIENT_CASES)
def test_fft_gradients_match_finite_differences(op, shape, dtype, length):
    rng = np.random.RandomState(7)
    if np.iscomplexobj(np.zeros(1, dtype)):
        x0 = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    else:
        x0 = rng.uniform(-1, 1, shape).astype(dtype)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(dtype, shape)
        fn = getattr(tf.signal, op)
        y = fn(x) if op.startswith(("fft", "ifft")) else fn(x, fft_length=length)
        out_shape = y.shape.as_list()
        wr = rng.uniform(-1, 1, out_shape)
        wi = rng.uniform(-1, 1, out_shape)
        if y.dtype.is_complex:
            loss = tf.reduce_sum(tf.math.real(y) * wr + tf.math.imag(y) * wi)
        else:
            loss = tf.reduce_sum(y * wr)
        grad = tf.gradients(loss, x)[0]
        with tf.Session(graph=g) as sess:
            got = sess.run(grad, {x: x0})
            want = _numeric_grad(lambda v: float(sess.run(loss, {x: v})), x0.copy())
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# The N-D ops: TensorFlow 2.21 has no CPU kernels for them, so NumPy is the reference.


def _run(t, feed=None):
    with tf.Session(graph=t.graph) as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fftnd_matches_numpy(dtype):
    rng = np.random.RandomState(3)
    x = (rng.uniform(-1, 1, (2, 5, 6, 7)) + 1j * rng.uniform(-1, 1, (2, 5, 6, 7))).astype(dtype)
    tol = 1e-4 if dtype == np.complex64 else 1e-11
    cases = [
        (None, None, np.fft.fftn(x)),
        ([4, 9], [-2, -1], np.fft.fftn(x, s=[4, 9], axes=[2, 3])),
        ([3, 6, 8], [1, 2, 3], np.fft.fftn(x, s=[3, 6, 8], axes=[1, 2, 3])),
    ]
    with tf.Graph().as_default():
        for length, axes, want in cases:
            y = tf.signal.fftnd(tf.constant(x), fft_length=length, axes=axes)
            assert y.dtype == dtype and y.shape.as_list() == list(want.shape)
            np.testing.assert_allclose(_run(y), want, rtol=tol, atol=tol * np.abs(want).max())
            back = tf.signal.ifftnd(y, fft_length=length, axes=axes)
            want_back = np.fft.ifftn(want, axes=[-a - 1 for a in range(len(axes or x.shape))][::-1])
            np.testing.assert_allclose(_run(back), want_back, rtol=tol, atol=tol)
        for norm in ("ortho", "forward"):
            y = tf.signal.fftnd(tf.constant(x), axes=[-1], norm=norm)
            np.testing.assert_allclose(_run(y), np.fft.fftn(x, axes=[-1], norm=norm), rtol=tol, atol=tol * 10)
            z = tf.signal.ifftnd(y, axes=[-1], norm=norm)
            np.testing.assert_allclose(_run(z), x, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rfftnd_and_irfftnd_match_numpy(dtype):
    rng = np.random.RandomState(4)
    x = rng.uniform(-1, 1, (3, 6, 7, 9)).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    with tf.Graph().as_default():
        for length, axes in ((None, [1, 2, 3]), ([5, 8], [2, 3]), ([8, 12], [-2, -1]), ([6], [3])):
            y = tf.signal.rfftnd(tf.constant(x), fft_length=length, axes=axes)
            want = np.fft.rfftn(x, s=length, axes=[a % 4 for a in axes])
            assert y.shape.as_list() == list(want.shape)
            np.testing.assert_allclose(_run(y), want, rtol=tol, atol=tol * np.abs(want).max())
            n = length or [x.shape[a] for a in axes]
            back = tf.signal.irfftnd(y, fft_length=n, axes=axes)
            want_back = np.fft.irfftn(want, s=n, axes=[a % 4 for a in axes])
            assert back.shape.as_list() == list(want_back.shape)
            np.testing.assert_allclose(_run(back), want_back, rtol=tol, atol=tol)
        # The bare ops (tf.rfftnd / tf.irfftnd at the top level) crop but never pad.
        y = tf.rfftnd(tf.constant(x), [4, 6], [-2, -1], Tcomplex=tf.complex128 if dtype == np.float64 else tf.complex64)
        np.testing.assert_allclose(_run(y), np.fft.rfftn(x[..., :4, :6], axes=[2, 3]), rtol=tol, atol=tol * 10)
        z = tf.irfftnd(y, [4, 6], [2, 3], Treal=tf.float64 if dtype == np.float64 else tf.float32)
        np.testing.assert_allclose(_run(z), x[..., :4, :6], rtol=tol, atol=tol * 10)


def test_nd_ops_refuse_axes_they_cannot_transform():
    x = np.ones((2, 3, 4), np.complex64)
    with tf.Graph().as_default():
        for axes, text in (([0, 2], "axes must be successive and ascending."),
                           ([0, 1], "The last axis to perform transform on must be -1.")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=text):
                _run(tf.fftnd(x, [2, 2], axes))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"fft_length must have shape \[2\], but got: 1"):
            _run(tf.fftnd(x, [2], [1, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="fft_length\\[0\\] must >= 0, but got: -3"):
            n = tf.placeholder(tf.int32, [1])
            _run(tf.ifftnd(x, n, [2]), {n: [-3]})


def test_zero_fft_length_gives_empty_outputs():
    # TensorFlow's kernel aborts the process on a zero length over a non-empty input; ferroflow
    # returns the empty result the output shape calls for.
    with tf.Graph().as_default():
        x = np.ones((3, 5), np.float32)
        y = tf.signal.rfft(x, [0])
        assert y.shape.as_list() == [3, 0]
        assert _run(y).shape == (3, 0)
        z = tf.signal.irfft(np.ones((3, 4), np.complex64), [0])
        assert _run(z).shape == (3, 0)


def test_huge_fft_length_is_a_typed_error():
    # An empty batch passes the length checks; the output it asks for cannot exist.
    with tf.Graph().as_default():
        x = np.zeros((2**20, 0), np.complex64)
        with pytest.raises(tf.errors.ResourceExhaustedError, match="IRFFT"):
            _run(_raw_ops()["IRFFT"](x, [2**31 - 1], None))


def test_names_exist_where_tensorflow_has_them():
    import ferroflow.compat.v1 as v1

    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "fftnd", "ifftnd", "rfftnd", "irfftnd"):
        assert callable(getattr(v1, name)), name
        assert callable(getattr(tf, name)), name
    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d",
                 "rfft3d", "irfft3d", "fftnd", "ifftnd", "rfftnd", "irfftnd", "fftshift", "ifftshift"):
        assert callable(getattr(v1.signal, name)), name
    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d",
                 "rfft3d", "irfft3d"):
        assert getattr(v1.spectral, name) is getattr(tf.signal, name), name
