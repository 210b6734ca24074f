"""Write tests/fixtures/int_wrap.json: how TensorFlow 2.21 (graph mode, as TF1 programs run) turns Python
and NumPy numbers into integer tensors: ``tf.compat.v1.constant(value, dtype)`` and values fed to integer
placeholders. Out-of-range ints wrap around (``constant(-1, tf.uint8)`` is 255), floats are refused by
``constant`` but truncated by feeds, and ints beyond uint64's range raise ``OverflowError``.

Run from the repository root with the TensorFlow virtualenv (the tests never import TensorFlow):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_int_wrap_fixtures.py

Each case is ``{"dtype", "value", "result"}``; a value written ``{"np": dtype, "v": x}`` is
``np.asarray(x, dtype)`` (a NumPy scalar when ``x`` is a number). ``result`` is ``{"value": list-or-int,
"dtype"}`` or ``{"error": class name, "message": text}``. ``tests/python/test_int_wrap.py`` replays them.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "int_wrap.json"
v1 = tf.compat.v1
INT_DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]


def decode(value):
    """A case's value: JSON as it is, or a NumPy scalar or array."""
    if isinstance(value, dict):
        arr = np.asarray(value["v"], dtype=value["np"])
        return arr if value.get("array") or arr.ndim else arr[()]
    return value


def outcome(make):
    try:
        with tf.Graph().as_default():
            t = make()
            with v1.Session() as sess:
                out = sess.run(t)
        return {"value": np.asarray(out).tolist(), "dtype": np.asarray(out).dtype.name}
    except Exception as e:  # noqa: BLE001 - every error is part of the record
        return {"error": type(e).__name__, "message": str(e)}


def constant_values(dtype):
    info = np.iinfo(dtype)
    return [
        -1, info.min - 1, info.max + 1, info.max, info.min, -(2**31), 2**32, 2**63, 2**64, -(2**63) - 1,
        [-1, 2], [1, info.max + 1], [[1], [-1]], [2**63, -1], [2**64], True, [True, 2], 1.5, 3.0, [1.0, 2],
        {"np": "int64", "v": -1}, {"np": "int64", "v": [-1, 300]}, {"np": "float32", "v": -1.0},
        {"np": "uint64", "v": 2**64 - 1}, {"np": "float64", "v": -1.0, "array": True},
    ]


def main():
    v1.disable_eager_execution()
    constants, feeds = [], []
    for name in INT_DTYPES:
        dt = tf.as_dtype(name)
        for value in constant_values(name):
            result = outcome(lambda value=value, dt=dt: v1.constant(decode(value), dt))
            constants.append({"dtype": name, "value": value, "result": result})
        for value in [[-1, 300], [2**63], [1.5, -2.7], [2**64], [True, False]]:
            feeds.append({"dtype": name, "value": value, "result": feed_outcome(dt, value)})
    OUT.write_text(json.dumps({"constants": constants, "feeds": feeds}, indent=1) + "\n")
    print(f"wrote {len(constants)} constant and {len(feeds)} feed cases to {OUT}")


def feed_outcome(dt, value):
    try:
        with tf.Graph().as_default():
            p = v1.placeholder(dt, [None])
            with v1.Session() as sess:
                out = sess.run(p, {p: value})
        return {"value": np.asarray(out).tolist(), "dtype": np.asarray(out).dtype.name}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__, "message": str(e)}


if __name__ == "__main__":
    main()
