"""Writes tests/fixtures/fft/: the values real TensorFlow computes for every case of
tests/python/_fft_cases.py, and the errors it raises for the refused graphs.

    /path/to/python-with-tensorflow tools/make_fft_fixtures.py

Needs TensorFlow (``pip install tensorflow-cpu``). Each case runs with ``tensorflow.compat.v1``
after ``disable_v2_behavior()`` in a fresh graph and session: one ``Session.run(fetches,
feed_dict)``; each fetch key becomes one array of ``<case>.npz`` and ``<key>__static_shape`` the
static shape TensorFlow inferred. ``errors.json`` records, for every error case, the class and the
message TensorFlow raised (the script fails if either differs from what the case states). Also
rewrites the folder's README.md.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "fft"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _fft_cases  # noqa: E402

README = """# FFT fixtures

One `.npz` per case of `tests/python/_fft_cases.py` (the file name is the case name): one array
per fetch key, the values real TensorFlow computed for that graph, and `<key>__static_shape`, the
static shape TensorFlow inferred (int64, -1 for an unknown dimension; a 0-d -2 for unknown rank).
`errors.json` holds, for each error case, the exception class TensorFlow raised and its message.
`tests/python/test_fft.py` builds the same graphs with ferroflow and compares.

Made by `tools/make_fft_fixtures.py` with TensorFlow {tf_version} (`{tf_package}`), NumPy
{np_version}, Python {py_version}, on CPU ({machine}), through `tensorflow.compat.v1` after
`disable_v2_behavior()`. Inputs come from seeded `np.random.RandomState`s, so the test rebuilds
them identically; only outputs are stored (compressed).

TensorFlow 2.21 has no CPU kernels for `FFTND`, `IFFTND`, `RFFTND` and `IRFFTND`; the test checks
ferroflow's against `numpy.fft` instead.

Regenerate (after changing a case) with a Python that has TensorFlow installed:

    python tools/make_fft_fixtures.py
"""


def run_case(tf, fn):
    g = tf.Graph()
    with g.as_default():
        fetches, feed = fn(tf)
        shapes = {key: _fft_cases.static_shape(t) for key, t in fetches.items()}
        with tf.Session(graph=g) as sess:
            values = sess.run(fetches, feed_dict=feed)
    out = {}
    for key, value in values.items():
        out[key] = np.asarray(value)
        out[key + _fft_cases.STATIC_SHAPE_SUFFIX] = shapes[key]
    return out


def _raised(tf, build, where):
    """(class name, message) of what building (and, for "run", running) the graph raises."""
    g = tf.Graph()
    with g.as_default():
        try:
            made = build(tf) if where != "raw" else build()
            if where in ("run", "raw"):
                t, feed = made if isinstance(made, tuple) else (made, {})
                with tf.Session(graph=g) as sess:
                    sess.run(t, feed_dict=feed)
        except Exception as e:  # the point: record what TensorFlow raises
            return type(e).__name__, str(e)
    return None, None


def main():
    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)

    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.npz"):
        if old.stem not in _fft_cases.CASES:
            old.unlink()
    for name in sorted(_fft_cases.CASES):
        values = run_case(tf, _fft_cases.CASES[name])
        np.savez_compressed(OUT / f"{name}.npz", **values)
        desc = ", ".join(
            f"{k}{list(v.shape)}" for k, v in sorted(values.items()) if not k.endswith(_fft_cases.STATIC_SHAPE_SUFFIX)
        )
        print(f"{name:40s} {desc}")

    raw = tf_root.raw_ops
    raw_ops = {
        "RFFT": lambda x, n, t: raw.RFFT(input=x, fft_length=n, **({"Tcomplex": t} if t else {})),
        "IRFFT": lambda x, n, t: raw.IRFFT(input=x, fft_length=n, **({"Treal": t} if t else {})),
        "RFFT2D": lambda x, n, t: raw.RFFT2D(input=x, fft_length=n, **({"Tcomplex": t} if t else {})),
    }
    errors, bad = {}, []
    cases = {name: (fn, where, cls, text) for name, (fn, where, cls, text) in _fft_cases.ERROR_CASES.items()}
    for name, (fn, cls, text) in _fft_cases.raw_op_error_cases(raw_ops).items():
        cases["raw_" + name] = (fn, "raw", cls, text)
    for name, (fn, where, cls, text) in sorted(cases.items()):
        got_cls, msg = _raised(tf, fn, where)
        if got_cls != cls or text not in (msg or ""):
            bad.append(f"{name}: expected {cls} with {text!r}, TensorFlow raised {got_cls}: {msg!r}")
            continue
        errors[name] = {"class": got_cls, "message": msg}
        print(f"{name:40s} {got_cls}: {text}")
    if bad:
        raise SystemExit("\n".join(bad))
    (OUT / "errors.json").write_text(json.dumps(errors, indent=1, sort_keys=True) + "\n")

    try:
        from importlib.metadata import version

        pkg = "tensorflow-cpu"
        version(pkg)
    except Exception:
        pkg = "tensorflow"
    (OUT / "README.md").write_text(
        README.format(
            tf_version=tf_root.__version__,
            tf_package=pkg,
            np_version=np.__version__,
            py_version=platform.python_version(),
            machine=platform.machine(),
        )
    )


if __name__ == "__main__":
    main()
