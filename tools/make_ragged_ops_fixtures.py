"""Writes tests/fixtures/ragged_ops/expected.json: what TensorFlow 2.21 (tf.compat.v1, graph mode) gives for the
cases of tests/fixtures/ragged_ops/ragged_ops_cases.py (TensorFlow functions on RaggedTensors: broadcasting,
tf.where, concat/stack, gather, reductions, to_tensor/from_tensor, gradients), for tests/python/test_ragged_ops.py.

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_ragged_ops_fixtures.py

For each graph case: the static class/dtype/shape of the result and the fetched value (ragged values as flat
values and nested row splits, floats by repr); for each error case the exception class and message (the kernel's
own line for run-time errors); for the gradient cases tf.gradients' values.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ragged_ops"
sys.path.insert(0, str(HERE))
import ragged_ops_cases as cases  # noqa: E402


def _node_message(text):
    """The kernel's own message in a graph-execution error (the line after ``Node: '...'``)."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: "):
            return lines[i + 1]
    return text


def main():
    out = {"tensorflow": tf.__version__, "graph": {}, "build_errors": {}, "run_errors": {}, "gradients": {}}
    for name, build in cases.graph_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                fetch = build()
            except Exception as e:  # noqa: BLE001
                print("BUILD FAILED", name, type(e).__name__, e)
                continue
            out["graph"][name] = {"static": cases.static_info(tf, fetch), "value": cases.describe(sess.run(fetch))}
    for name, build in cases.build_errors(tf).items():
        with tf.Graph().as_default():
            try:
                build()
            except Exception as e:  # noqa: BLE001 - the class is what is recorded
                out["build_errors"][name] = [type(e).__name__, str(e)]
            else:
                print("NO BUILD ERROR", name)
    for name, build in cases.run_errors(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                fetch = build()
                sess.run(fetch)
            except tf.errors.OpError as e:
                out["run_errors"][name] = [type(e).__name__, _node_message(str(e))]
            except Exception as e:  # noqa: BLE001
                print("BUILD FAILED", name, type(e).__name__, e)
            else:
                print("NO RUN ERROR", name)
    for name, build in cases.gradient_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            ys, xs = build()
            grads = tf.gradients(ys, xs)
            out["gradients"][name] = [None if g is None else cases.describe(sess.run(tf.convert_to_tensor(g)))
                                      for g in grads]
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for section in ("build_errors", "run_errors"):
        for name, e in out[section].items():
            print(section, name, e)
    print(len(out["graph"]), "graph cases")


if __name__ == "__main__":
    main()
