"""Record what TensorFlow 2.21's Keras (tf_keras, graph mode: TF 1.x's Keras) gives for the small models of
tests/python/_keras_cases.py, in tests/fixtures/keras/<case>.npz, for tests/python/test_keras.py.

Run from the repository root (TF_USE_LEGACY_KERAS=1 selects tf_keras; disable_v2_behavior gives graph mode):

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_keras_fixtures.py [--compare] [cases]

With --compare, each case also runs with ferroflow (imported first) and the largest differences are printed;
nothing is written.
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

import numpy as np  # noqa: E402

if "--compare" in sys.argv:
    import ferroflow  # noqa: E402  (before tensorflow)

# isort: split
import tensorflow.compat.v1 as tf1  # noqa: E402

import _keras_cases  # noqa: E402

tf1.disable_v2_behavior()

OUT = ROOT / "tests" / "fixtures" / "keras"


def run_tf(name):
    tf1.reset_default_graph()
    tf1.keras.backend.clear_session()
    np.random.seed(0)
    return _keras_cases.run(tf1, name)


def main(argv):
    compare = "--compare" in argv
    names = [a for a in argv if not a.startswith("--")] or list(_keras_cases.CASES)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        ref = run_tf(name)
        if compare:
            ferroflow.keras.backend.clear_session()
            got = _keras_cases.run(ferroflow, name)
            for key in ref:
                if ref[key].dtype.kind in "fi" and key in got and np.shape(got[key]) == ref[key].shape:
                    print(f"{name}.{key}: {np.max(np.abs(np.asarray(got[key], np.float64) - ref[key]), initial=0):.3g}")
                else:
                    print(f"{name}.{key}: TF {ref[key]!r} ferroflow {got.get(key)!r}")
        else:
            np.savez_compressed(OUT / f"{name}.npz", **ref)
            print("wrote", OUT / f"{name}.npz")


if __name__ == "__main__":
    main(sys.argv[1:])
