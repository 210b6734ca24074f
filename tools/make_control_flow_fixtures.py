"""Writes tests/fixtures/control_flow/<case>.npz: the values real TensorFlow computes for every
control-flow case in tests/python/_control_flow_cases.py.

    /path/to/python-with-tensorflow tools/make_control_flow_fixtures.py [--only name,name]

Needs TensorFlow (``pip install tensorflow-cpu``); it runs each case with ``tensorflow.compat.v1``
after ``disable_v2_behavior()`` (TF1 graphs, TF1 control flow, ref variables), in a fresh graph
and session: ``global_variables_initializer``, then one ``Session.run(fetches, feed_dict)``.
Each fetch key becomes one array of the .npz. Also rewrites the folder's README.md.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
# tf.compat.v1.nn.rnn_cell (the dynamic_rnn cases) is TF1's cells only with tf-keras as Keras.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "control_flow"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _control_flow_cases  # noqa: E402

README = """# Control-flow fixtures

One `.npz` per case of `tests/python/_control_flow_cases.py` (the file name is the case name),
holding one array per fetch key: the values that real TensorFlow computed for that graph.
`tests/python/test_control_flow_golden.py` builds the same graphs with ferroflow and compares.

Made by `tools/make_control_flow_fixtures.py` with TensorFlow {tf_version} (`{tf_package}`),
NumPy {np_version}, Python {py_version}, on CPU, through `tensorflow.compat.v1` after
`disable_v2_behavior()` (TF1 control flow: Switch/Merge/Enter/Exit/NextIteration; ref variables;
`tf.switch_case` alone is built as a functional `StatelessCase` op even then), with
`TF_USE_LEGACY_KERAS=1` so that `tf.nn.rnn_cell` is TF1's cells (from tf-keras).
Each case runs in a fresh `tf.Graph` and `tf.Session`: `global_variables_initializer()`, then a
single `Session.run(fetches, feed_dict)`. Feeds come from seeded `np.random.RandomState`s and
variables from `tf.constant_initializer` with fixed arrays, so the values are reproducible.

Regenerate (after changing a case) with a Python that has TensorFlow installed:

    python tools/make_control_flow_fixtures.py            # every case
    python tools/make_control_flow_fixtures.py --only while_rnn,cond_true
"""


def run_case(tf, fn):
    g = tf.Graph()
    with g.as_default():
        fetches, feed = fn(tf)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(fetches, feed_dict=feed)
    out = {}
    for key, value in values.items():
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"fetch {key!r} is not an array ({type(value).__name__})")
        out[key] = arr
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="comma-separated case names")
    args = parser.parse_args()

    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)

    names = sorted(_control_flow_cases.CASES)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in _control_flow_cases.CASES]
        if unknown:
            raise SystemExit(f"unknown cases: {unknown}")
    else:
        # A full run owns the folder: drop fixtures whose case is gone.
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("*.npz"):
            if old.stem not in _control_flow_cases.CASES:
                old.unlink()

    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        values = run_case(tf, _control_flow_cases.CASES[name])
        np.savez(OUT / f"{name}.npz", **values)
        desc = ", ".join(f"{k}{list(v.shape)}:{v.dtype}" for k, v in sorted(values.items()))
        print(f"{name:40s} {desc}")

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
        )
    )


if __name__ == "__main__":
    main()
