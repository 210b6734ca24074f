"""Writes tests/fixtures/graph_util/: what real TensorFlow's tf.compat.v1.graph_util and import_graph_def do.

    /path/to/python-with-tensorflow tools/make_graph_util_fixtures.py

Everything runs with ``tensorflow.compat.v1`` after ``disable_v2_behavior()``. Files:

- ``ref_graph.pb``: a fixed graph with ref variables (VariableV2), CheckNumerics, Identity,
  StopGradient, control inputs and a branch the output does not need (see ``build_ref_graph``).
- ``resource_graph.pb``: a small graph with resource variables (VarHandleOp + ReadVariableOp).
- ``expected.json``: for each case (graph, function, arguments) the nodes TensorFlow's
  function returned, in order: name, op, inputs, and for Const nodes the dtype and the value
  (nested lists); also the messages of the ValueErrors ``import_graph_def`` raises for
  names missing from the GraphDef.
- ``variables.npz``: the values the session held for each fetch that
  ``convert_variables_to_constants`` makes (``<fetch name>`` keys), so a test can replay them.
- ``frozen_mlp.pb``, ``mlp.npz``: a tiny MLP (3 -> 4 relu -> 2 softmax, fixed weights) frozen
  by ``convert_variables_to_constants(sess, graph_def, ["probs"])``, with an input batch ``x``
  and TensorFlow's output ``probs`` for it.
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "graph_util"

W = np.array([[0.5, -1.0], [0.25, 2.0], [-0.75, 0.125]], dtype=np.float32)
B = np.array([0.1, -0.2], dtype=np.float32)


def build_ref_graph():
    """x -> MatMul(w) -> Add(b) -> Relu (after ^CheckNumerics) -> Identity -> StopGradient -> Identity (after
    ^NoOp) -> Mul -> out, plus an Identity used only as a control input and an unused variable branch."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(W, name="w", use_resource=False)
        b = tf.Variable(B, name="b", use_resource=False)
        h = tf.add(tf.matmul(x, w, name="matmul"), b, name="add")
        check = tf.debugging.check_numerics(h, "bad add", name="check")
        with tf.control_dependencies([check]):
            act = tf.nn.relu(h, name="act")
        ident = tf.identity(act, name="ident")
        sg = tf.stop_gradient(ident, name="sg")
        marker = tf.identity(sg, name="marker")
        noop = tf.no_op(name="noop")
        with tf.control_dependencies([noop, marker]):
            guarded = tf.identity(sg, name="guarded")
        tf.multiply(guarded, tf.constant(2.0, name="two"), name="out")
        unused = tf.Variable(np.float32(3.0), name="unused", use_resource=False)
        tf.multiply(unused, 3.0, name="unused_out")
        init = tf.global_variables_initializer()
    return g, init


def build_resource_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        rw = tf.get_variable("rw", initializer=W, use_resource=True)
        rb = tf.get_variable("rb", initializer=B, use_resource=True)
        tf.nn.relu(tf.matmul(x, rw) + rb, name="out")
        init = tf.global_variables_initializer()
    return g, init


def build_mlp():
    rng = np.random.RandomState(7)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w1 = tf.Variable(rng.randn(3, 4).astype(np.float32), name="dense/kernel", use_resource=False)
        b1 = tf.Variable(rng.randn(4).astype(np.float32), name="dense/bias", use_resource=False)
        w2 = tf.Variable(rng.randn(4, 2).astype(np.float32), name="logits/kernel", use_resource=False)
        b2 = tf.Variable(rng.randn(2).astype(np.float32), name="logits/bias", use_resource=False)
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        tf.nn.softmax(tf.matmul(hidden, w2) + b2, name="probs")
        init = tf.global_variables_initializer()
    return g, init, rng.randn(5, 3).astype(np.float32)


def node_rows(graph_def):
    rows = []
    for n in graph_def.node:
        row = {"name": n.name, "op": n.op, "input": list(n.input)}
        if n.op == "Const":
            row["dtype"] = int(n.attr["dtype"].type)
            row["value"] = tf.make_ndarray(n.attr["value"].tensor).tolist()
        if n.op == "Identity":
            row["T"] = int(n.attr["T"].type)
        rows.append(row)
    return rows


class RecordingSession:
    """Wraps a Session and keeps every value ``run`` returns for a list of fetch names."""

    def __init__(self, sess, store):
        self._sess, self._store = sess, store

    def run(self, fetches, *args, **kwargs):
        values = self._sess.run(fetches, *args, **kwargs)
        for name, value in zip(fetches, values):
            self._store[name] = value
        return values

    def __getattr__(self, name):
        return getattr(self._sess, name)


def import_errors(graph_def):
    cases = {
        "input_map_missing": lambda: dict(input_map={"nope:0": tf.constant(1.0)}),
        "input_map_missing_no_index": lambda: dict(input_map={"nope": tf.constant(1.0)}),
        "input_map_bad_index": lambda: dict(input_map={"x:3": tf.constant(1.0)}),
        "input_map_missing_control": lambda: dict(input_map={"^nope": tf.constant(1.0)}),
        "return_op_missing": lambda: dict(return_elements=["nope"]),
        "return_tensor_missing": lambda: dict(return_elements=["nope:0"]),
        "return_tensor_bad_index": lambda: dict(return_elements=["x:5"]),
    }
    out = {}
    for key, make_kwargs in cases.items():
        with tf.Graph().as_default():
            try:
                tf.import_graph_def(graph_def, **make_kwargs())
            except ValueError as e:
                out[key] = str(e)
            else:
                raise AssertionError(f"{key}: no error")
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    expected, fetched = {}, {}

    g, init = build_ref_graph()
    gd = g.as_graph_def()
    (OUT / "ref_graph.pb").write_bytes(gd.SerializeToString())
    gu = tf.graph_util
    expected["extract_out"] = node_rows(gu.extract_sub_graph(gd, ["out"]))
    expected["extract_out_unused"] = node_rows(gu.extract_sub_graph(gd, ["unused_out", "out"]))
    expected["remove_training"] = node_rows(gu.remove_training_nodes(gd))
    expected["remove_training_protected"] = node_rows(gu.remove_training_nodes(gd, protected_nodes=["ident", "check"]))
    with tf.Session(graph=g) as sess:
        sess.run(init)
        rec = RecordingSession(sess, fetched)
        expected["convert_out"] = node_rows(gu.convert_variables_to_constants(rec, gd, ["out"]))
        expected["convert_out_unused"] = node_rows(gu.convert_variables_to_constants(rec, gd, ["out", "unused_out"]))
        expected["convert_whitelist"] = node_rows(gu.convert_variables_to_constants(
            rec, gd, ["out", "unused_out"], variable_names_whitelist=["w", "unused"]))
        expected["convert_blacklist"] = node_rows(gu.convert_variables_to_constants(
            rec, gd, ["out", "unused_out"], variable_names_blacklist=["w"]))

    g, init = build_resource_graph()
    gd = g.as_graph_def()
    (OUT / "resource_graph.pb").write_bytes(gd.SerializeToString())
    with tf.Session(graph=g) as sess:
        sess.run(init)
        rec = RecordingSession(sess, fetched)
        expected["convert_resource"] = node_rows(gu.convert_variables_to_constants(rec, gd, ["out"]))

    g, init, x = build_mlp()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        frozen = gu.convert_variables_to_constants(sess, g.as_graph_def(), ["probs"])
        probs = sess.run("probs:0", {"x:0": x})
    (OUT / "frozen_mlp.pb").write_bytes(frozen.SerializeToString())
    np.savez(OUT / "mlp.npz", x=x, probs=probs)
    expected["frozen_mlp"] = [{"name": n.name, "op": n.op, "input": list(n.input)} for n in frozen.node]

    expected["import_errors"] = import_errors(frozen)
    expected["tensorflow_version"] = tf.VERSION
    np.savez(OUT / "variables.npz", **fetched)
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print("wrote", sorted(p.name for p in OUT.iterdir()))


if __name__ == "__main__":
    main()
