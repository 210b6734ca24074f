"""Regenerate tests/fixtures/compat_v1_last/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_compat_v1_last_fixtures.py

The last Python-level names of ``tf.compat.v1`` (issue 23), run by TensorFlow in graph mode
(``tensorflow.compat.v1`` with v2 behaviour disabled; ``TF_USE_LEGACY_KERAS=1`` so
``tf.nn.rnn_cell`` is TensorFlow 1's cells):

* ``state_saving_rnn.npz``: for each model of ``tests/python/_state_saving_models.py``, the outputs
  (stacked, ``<kind>/outputs/<run>``) and final state (``<kind>/state/<run>``, the pieces of a tuple
  state stacked) of two ``Session.run`` calls in a row, the second starting from the state the
  first saved;
* ``module.json``: what ``tests/python/_module_models.py``'s ``describe`` sees of a few
  ``tf.Module`` subclasses (names, name scopes, variable lists, op names, values);
* ``function.json``: what ``tests/python/_function_models.py``'s ``describe`` sees of
  ``tf.function`` and ``tf.compat.v1.wrap_function`` (trace counts, call op types, values and
  gradients, variable names, error classes);
* ``gradient_tape.json``: what ``tests/python/_tape_models.py``'s ``describe`` sees of
  ``tf.GradientTape`` (which gradients are None, their values, watched variables, error classes),
  with control flow v2 on for that part (TensorFlow's tape refuses TF1 ``tf.cond`` in a graph);
* ``quantize_training/``: ``<case>.input.pb`` GraphDefs built by TensorFlow and, where the rewrite
  succeeds, ``<case>.output.pb``, what ``tf.train.do_quantize_training_on_graphdef`` made of them
  (``model``: a Saver, variables, Relu/Tanh/Relu6/Sigmoid/Reshape/Identity inputs, a Conv2D, a
  control input, gradient MatMuls; ``small``: 4 bits); ``errors.json``, the error class and first
  message line of the cases TensorFlow refuses (three unknown inputs, 0 bits, two Savers);
  ``small_runs.npz``: the ``small`` output run by TensorFlow on two inputs in a row (``outputs``)
  and the learned ranges after them (``ranges``: x min, x max, w min, w max).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "compat_v1_last"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _function_models  # noqa: E402
import _module_models  # noqa: E402
import _state_saving_models as ssm  # noqa: E402
import _tape_models  # noqa: E402


def state_saving_rnn(tf):
    arrays = {}
    for kind in ssm.KINDS:
        with tf.Graph().as_default():
            x, outputs, state = ssm.build(tf, kind)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for step in range(2):
                    out, st = sess.run([outputs, state], {x: ssm.input_values(step)})
                    arrays[f"{kind}/outputs/{step}"] = np.stack(out)
                    arrays[f"{kind}/state/{step}"] = np.stack(st) if isinstance(st, tuple) else st
    np.savez(OUT / "state_saving_rnn.npz", **arrays)


def module(tf):
    (OUT / "module.json").write_text(json.dumps(_module_models.describe(tf), indent=1) + "\n")


def function(tf):
    (OUT / "function.json").write_text(json.dumps(_function_models.describe(tf), indent=1) + "\n")


def gradient_tape(tf):
    tf.enable_control_flow_v2()
    try:
        described = _tape_models.describe(tf)
    finally:
        tf.disable_control_flow_v2()
    (OUT / "gradient_tape.json").write_text(json.dumps(described, indent=1) + "\n")


def quantize_training(tf):
    """Input and output GraphDefs of TensorFlow's rewrite, and its errors."""
    qdir = OUT / "quantize_training"
    qdir.mkdir(parents=True, exist_ok=True)
    errors = {}

    def write(name, graph_def, num_bits):
        (qdir / f"{name}.input.pb").write_bytes(graph_def.SerializeToString(deterministic=True))
        try:
            out = tf.train.do_quantize_training_on_graphdef(graph_def, num_bits)
        except Exception as e:  # the class and message are what the test compares
            errors[name] = [type(e).__name__, str(e).splitlines()[0]]
            return None
        (qdir / f"{name}.output.pb").write_bytes(out.SerializeToString(deterministic=True))
        return out

    rng = np.random.RandomState(5)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        w1 = tf.Variable(rng.randn(8, 6).astype(np.float32), name="w1")
        h1 = tf.nn.relu(tf.matmul(x, w1), name="h1")
        w2 = tf.constant(rng.randn(6, 4).astype(np.float32), name="w2")
        with tf.control_dependencies([tf.no_op(name="before_h2")]):
            h2 = tf.tanh(tf.matmul(h1, w2), name="h2")
        w3 = tf.Variable(rng.randn(4, 4).astype(np.float32), name="w3")
        h3 = tf.nn.relu6(tf.matmul(tf.identity(h2, name="h2_id"), w3), name="h3")
        image = tf.reshape(h3, [-1, 2, 2, 1], name="image")
        filt = tf.Variable(rng.randn(1, 1, 1, 2).astype(np.float32), name="filt")
        conv = tf.nn.conv2d(image, filt, [1, 1, 1, 1], "SAME", name="conv")
        s = tf.sigmoid(tf.reshape(conv, [-1, 8]), name="s")
        logits = tf.matmul(s, w1, name="logits")  # w1/read again: one quantize op for both uses
        loss = tf.reduce_mean(tf.square(logits), name="loss")
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        tf.train.Saver()
    write("model", g.as_graph_def(), 8)

    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(np.float32), name="w")
        tf.nn.relu(tf.matmul(x, w), name="y")
    small = write("small", g.as_graph_def(), 4)
    feeds = [np.linspace(-2.0, 2.0, 6).reshape(2, 3).astype(np.float32),
             np.linspace(-0.5, 3.0, 6).reshape(2, 3).astype(np.float32)]
    runs = []
    with tf.Graph().as_default():
        tf.import_graph_def(small, name="")
        with tf.Session() as sess:
            sess.run("w/Assign")
            for feed in feeds:
                runs.append(sess.run("y:0", {"x:0": feed}))
            ranges = sess.run(["x/Min/Variable:0", "x/Max/Variable:0", "w/read/Min/Variable:0",
                               "w/read/Max/Variable:0"])
    np.savez(qdir / "small_runs.npz", feeds=np.stack(feeds), outputs=np.stack(runs), ranges=np.asarray(ranges))

    with tf.Graph().as_default() as g:
        a, b, c = (tf.placeholder(tf.float32, [2, 2], name=n) for n in "abc")
        tf.matmul(tf.matmul(a + 1.0, b * 2.0), c - 1.0)
    write("three_inputs", g.as_graph_def(), 8)
    write("zero_bits", g.as_graph_def(), 0)
    with tf.Graph().as_default() as g:
        v = tf.Variable(tf.ones([2, 2]), name="v")
        tf.matmul(v, v)
        tf.train.Saver()
        tf.train.Saver()
    write("two_savers", g.as_graph_def(), 8)
    (qdir / "errors.json").write_text(json.dumps(errors, indent=1) + "\n")


def main():
    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    OUT.mkdir(parents=True, exist_ok=True)
    state_saving_rnn(tf)
    module(tf)
    function(tf)
    gradient_tape(tf)
    quantize_training(tf)
    (OUT / "README.md").write_text(
        f"# Fixtures for the last tf.compat.v1 names (issue 23)\n\n"
        f"Written by `tools/make_compat_v1_last_fixtures.py` with TensorFlow {tf_root.__version__} "
        f"(graph mode, tf-keras cells), NumPy {np.__version__}, on CPU; that script's docstring says what "
        f"each file holds. The tests never import TensorFlow.\n"
    )


if __name__ == "__main__":
    main()
