"""Writes tests/fixtures/ragged_module/expected.json: what TensorFlow 2.21 (tf.compat.v1, graph mode) gives for
the tf.ragged cases of tests/fixtures/ragged_module/ragged_module_cases.py, for tests/python/test_ragged_module.py.

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_ragged_module_fixtures.py

For each graph case: the static class/dtype/shape of what was built and the fetched value (ragged values as
flat values and nested row splits, floats by repr), or the build error; for each error case: the exception
class and message; for the value cases, the NumPy-side result; for the gradient cases, tf.gradients' values
(None where TensorFlow gives None); and tf.compat.v1.ragged's public names and signatures.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ragged_module"
sys.path.insert(0, str(HERE))
import ragged_module_cases as cases  # noqa: E402


def _split(built):
    return built if isinstance(built, tuple) else (built, None)


def _node_message(text):
    """The kernel's own message in a graph-execution error (the line after ``Node: '...'``)."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: "):
            return lines[i + 1]
    return text


def main():
    out = {"tensorflow": tf.__version__, "graph": {}, "build_errors": {}, "run_errors": {}, "values": {},
           "gradients": {}, "signatures": {}}
    for name, build in cases.graph_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                fetch, feed = _split(build())
            except Exception as e:  # noqa: BLE001
                print("BUILD FAILED", name, type(e).__name__, e)
                continue
            out["graph"][name] = {"static": cases.static_info(tf, fetch),
                                  "value": cases.describe(sess.run(fetch, feed))}
    for name, build in cases.build_errors(tf).items():
        with tf.Graph().as_default():
            try:
                build()
            except Exception as e:  # noqa: BLE001 - the class is what is recorded
                out["build_errors"][name] = [type(e).__name__, str(e)]
            else:
                out["build_errors"][name] = None
    for name, build in cases.run_errors(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                fetch = build()
            except Exception as e:  # noqa: BLE001
                print("BUILD FAILED", name, type(e).__name__, e)
                continue
            try:
                sess.run(fetch)
            except Exception as e:  # noqa: BLE001
                out["run_errors"][name] = [type(e).__name__, _node_message(str(e))]
            else:
                out["run_errors"][name] = None
    for name, build in cases.value_cases(tf).items():
        out["values"][name] = cases.describe(build())
    for name, build in cases.gradient_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            ys, xs = build()
            grads = tf.gradients(ys, xs)
            out["gradients"][name] = [None if g is None else cases.describe(sess.run(tf.convert_to_tensor(g))) for g in grads]
    for name in sorted(n for n in dir(tf.ragged) if not n.startswith("_")):
        obj = getattr(tf.ragged, name)
        sig = None if inspect.isclass(obj) else [p for p in inspect.signature(obj).parameters]
        out["signatures"][name] = sig
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for section in ("build_errors", "run_errors"):
        for name, e in out[section].items():
            print(section, name, e)
    print(len(out["graph"]), "graph cases")


if __name__ == "__main__":
    main()
