"""Writes tests/fixtures/ragged_ops/expected.json: what TensorFlow 2.21 (tf.compat.v1, graph mode) gives for the
cases of tests/fixtures/ragged_ops/ragged_ops_cases.py (TensorFlow functions on RaggedTensors: broadcasting,
tf.where, concat/stack, gather, reductions, to_tensor/from_tensor, gradients), for tests/python/test_ragged_ops.py.

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_ragged_ops_fixtures.py

For each graph case: the static class/dtype/shape of the result and the fetched value (ragged values as flat
values and nested row splits, floats by repr); for each error case the exception class and message (the kernel's
own line for run-time errors); for the gradient cases tf.gradients' values; for the op-type cases, which of the expected ops
TensorFlow's graph holds; and tf_graph.pb, a GraphDef of TensorFlow's ragged ops with the values it fetches.
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


def _tf_graph():
    """Writes tf_graph.pb, a GraphDef TensorFlow builds with its ragged ops (RaggedTensorToTensor fed by
    FIRST_DIM_SIZE/VALUE_ROWIDS and by ROW_SPLITS at two levels, RaggedGather with matrix indices, the
    RaggedTensorToTensor gradient); returns {fetch name: value} for tests/python/test_ragged_ops.py."""
    g = tf.Graph()
    with g.as_default():
        values = tf.constant([1.0, 2.0, 3.0, 4.0], name="values")
        by_rowids = tf.RaggedTensor.from_value_rowids(values, tf.constant([0, 0, 2, 3], tf.int64), nrows=5)
        dense_rowids = tf.identity(by_rowids.to_tensor(default_value=-1.0), name="dense_rowids")
        rr2 = tf.ragged.constant([[[1, 2], [3]], [[4]], [], [[5, 6, 7], [], [8]]], name="rr2")
        tf.identity(rr2.to_tensor(shape=[3, 2, 2]), name="dense_rank2")
        picked = tf.gather(rr2, [[3, 0], [1, 3]])
        for i, s in enumerate(picked.nested_row_splits):
            tf.identity(s, name=f"gather_splits_{i}")
        tf.identity(picked.flat_values, name="gather_values")
        weights = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]])
        (grad,) = tf.gradients(tf.reduce_sum(dense_rowids * weights), [values])
        tf.identity(tf.convert_to_tensor(grad), name="grad_values")
        fetches = ["dense_rowids", "dense_rank2", "gather_splits_0", "gather_splits_1", "gather_splits_2",
                   "gather_values", "grad_values"]
        types = sorted({o.type for o in g.get_operations()} & {"RaggedTensorToTensor", "RaggedGather"})
        assert types == ["RaggedGather", "RaggedTensorToTensor"], types
        with tf.Session() as sess:
            got = sess.run([f + ":0" for f in fetches])
    (HERE / "tf_graph.pb").write_bytes(g.as_graph_def().SerializeToString())
    return {f: cases.describe(v) for f, v in zip(fetches, got)}


def main():
    out = {"tensorflow": tf.__version__, "graph": {}, "build_errors": {}, "run_errors": {}, "gradients": {},
           "op_types": {}}
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
    for name, (build, types) in cases.op_types(tf).items():
        g = tf.Graph()
        with g.as_default():
            build()
        out["op_types"][name] = sorted({o.type for o in g.get_operations()} & set(types))
    out["imported"] = _tf_graph()
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for section in ("build_errors", "run_errors"):
        for name, e in out[section].items():
            print(section, name, e)
    print(len(out["graph"]), "graph cases")


if __name__ == "__main__":
    main()
