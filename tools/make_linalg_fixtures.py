"""Write tests/fixtures/linalg/linalg.npz: the values and gradients of every case of
tests/python/_linalg_cases.py computed by real TensorFlow (tf.compat.v1 graphs), plus TensorFlow's error
classes and messages for bad input (TensorFlow 2.21's Cholesky does not fail on a matrix that is not
positive definite: it returns NaNs, which the ``cholesky_not_pd`` case records), for tests/python/test_linalg.py.

Keys are ``<case>/out<i>`` and ``<case>/d<input>``; errors are ``error/<name>/class`` and
``error/<name>/message``. Run from the repository root with a Python that has TensorFlow 2.21:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_linalg_fixtures.py
"""

import importlib.util
import pathlib

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("_linalg_cases", ROOT / "tests" / "python" / "_linalg_cases.py")
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)

ERRORS = {
    "inverse_singular": lambda: tf1.matrix_inverse(np.array([[1.0, 2.0], [2.0, 4.0]])),
    "solve_singular": lambda: tf1.matrix_solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones((2, 1))),
}


def main():
    store = {}
    for name in cases.CASES:
        for k, v in cases.run_case(tf1, name).items():
            store[f"{name}/{k}"] = v
    for name, build in ERRORS.items():
        g = tf1.Graph()
        with g.as_default(), tf1.Session() as s:
            try:
                s.run(build())
                raise AssertionError(f"{name} did not fail")
            except tf.errors.OpError as e:
                store[f"error/{name}/class"] = np.array(type(e).__name__)
                # The kernel's own line (TF 2.21 prefixes "Graph execution error:" and the node's traceback).
                line = [ln for ln in e.message.splitlines() if "invertible" in ln][0]
                store[f"error/{name}/message"] = np.array(line.strip())
    out = ROOT / "tests" / "fixtures" / "linalg"
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "linalg.npz", **store)
    print(f"wrote {len(store)} arrays to {out / 'linalg.npz'}")


if __name__ == "__main__":
    main()
