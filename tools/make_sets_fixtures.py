"""Write tests/fixtures/sets.json: what TensorFlow 2.21 (graph mode, tf.compat.v1) gives for the tf.sets calls of
tests/python/_sets_cases.py (each SparseTensor's indices, values and dense_shape; set_size's counts) and the
first line of each run-time error of ``run_errors``. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_sets_fixtures.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow.compat.v1 as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _sets_cases import cases, run_errors  # noqa: E402

tf.disable_v2_behavior()


def plain(a):
    a = np.asarray(a)
    return {"dtype": "string" if a.dtype.kind == "O" else str(a.dtype), "shape": list(a.shape),
            "values": [v.decode() if isinstance(v, bytes) else v.item() for v in a.ravel()]}


def main():
    out = {"results": {}, "errors": {}}
    with tf.Graph().as_default():
        made = cases(tf)
        with tf.Session() as sess:
            for name, value in sess.run(made).items():
                if isinstance(value, tf.SparseTensorValue):
                    out["results"][name] = {"indices": plain(value.indices), "values": plain(value.values),
                                            "dense_shape": plain(value.dense_shape)}
                else:
                    out["results"][name] = {"dense": plain(value)}
    for name, fn in run_errors(tf).items():
        with tf.Graph().as_default():
            try:
                t = fn()
                with tf.Session() as sess:
                    sess.run(t)
                out["errors"][name] = None
            except (tf.errors.OpError, ValueError) as e:
                msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
                # The kernel's own line: graph-mode messages start with where the op was made.
                lines = [ln for ln in msg.splitlines() if ln.strip() and not ln.startswith((" ", "\t"))
                         and not ln.startswith(("Graph execution error", "Detected at node", "Node:"))]
                out["errors"][name] = [type(e).__name__, lines[-1]]
    path = ROOT / "tests" / "fixtures" / "sets.json"
    path.write_text(json.dumps(out, sort_keys=True) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
