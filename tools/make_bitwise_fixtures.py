"""Regenerate tests/fixtures/bitwise/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_bitwise_fixtures.py

For each integer dtype ferroflow has (int8, int16, int32, int64, uint8, uint16), runs
``tf.bitwise.bitwise_and/or/xor``, ``left_shift``, ``right_shift``, ``invert`` and
``tf.raw_ops.PopulationCount`` on seeded values that include each type's extremes, with shift
amounts that include negative ones, zero, ``bits - 1``, ``bits`` and far beyond, and one
broadcasting pair. ``bitwise.json`` holds inputs and outputs as integer lists, plus the exception
classes TensorFlow raises for a float input and for mixed dtypes.
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "bitwise"
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16")
BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")


def _values(rng, dtype, n):
    info = np.iinfo(dtype)
    extremes = np.array([info.min, info.max, 0, 1, info.max // 3], dtype=dtype)
    return np.concatenate([extremes, rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)])


def _shifts(rng, dtype, n):
    bits = np.iinfo(dtype).bits
    info = np.iinfo(dtype)
    fixed = [0, 1, bits - 1, bits, min(bits + 5, info.max), info.max]
    if info.min < 0:
        fixed += [-1, info.min]
    else:
        fixed += [2, 3]
    picked = np.array(fixed, dtype=dtype)
    return np.concatenate([picked, rng.integers(0, bits, size=n - len(fixed) + 5, dtype=dtype)])


def main():
    import tensorflow as tf

    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261128)
    cases = []
    for dtype in DTYPES:
        x = _values(rng, dtype, 11)  # 16 values
        y = _values(rng, dtype, 11)
        s = _shifts(rng, dtype, 11)  # 16 shift amounts
        for fn in BINARY:
            other = s if fn.endswith("shift") else y
            out = getattr(tf.bitwise, fn)(tf.constant(x), tf.constant(other))
            cases.append({"fn": fn, "dtype": dtype, "x": x.tolist(), "y": other.tolist(),
                          "out": out.numpy().tolist(), "out_dtype": out.dtype.name})
        for fn, op in (("invert", tf.bitwise.invert), ("population_count", tf.raw_ops.PopulationCount)):
            out = op(x=tf.constant(x)) if fn == "population_count" else op(tf.constant(x))
            cases.append({"fn": fn, "dtype": dtype, "x": x.tolist(), "out": out.numpy().tolist(),
                          "out_dtype": out.dtype.name})
        # broadcasting: [4, 1] against [3]
        bx = x[:4].reshape(4, 1)
        for fn, by in (("bitwise_xor", y[:3]), ("right_shift", s[:3])):
            out = getattr(tf.bitwise, fn)(tf.constant(bx), tf.constant(by))
            cases.append({"fn": fn, "dtype": dtype, "x": bx.tolist(), "y": by.tolist(),
                          "out": out.numpy().tolist(), "out_dtype": out.dtype.name})

    errors = []
    for label, build in (
        ("float_input", lambda: tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))),
        ("float_invert", lambda: tf.bitwise.invert(tf.constant([1.5]))),
        ("mixed_dtypes", lambda: tf.bitwise.left_shift(tf.constant([1], tf.int32), tf.constant([1], tf.int64))),
    ):
        g = tf.Graph()
        with g.as_default():
            try:
                build()
                errors.append({"case": label, "error": None})
            except (TypeError, ValueError) as e:
                errors.append({"case": label, "error": type(e).__name__})
    doc = {"tensorflow": tf.__version__, "numpy": np.__version__, "cases": cases, "errors": errors}
    (OUT / "bitwise.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    (OUT / "README.md").write_text(
        "# tf.bitwise fixtures\n\nWritten by `tools/make_bitwise_fixtures.py` with TensorFlow "
        f"{tf.__version__}: inputs and outputs of tf.bitwise's six functions and tf.raw_ops.PopulationCount "
        "for int8/int16/int32/int64/uint8/uint16 (type extremes, out-of-range shift amounts, broadcasting), "
        "and the exception classes of bad dtypes (graph mode). Used by `tests/python/test_bitwise.py`.\n")
    print(len(cases), "cases", errors)


if __name__ == "__main__":
    main()
