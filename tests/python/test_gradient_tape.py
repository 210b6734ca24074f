"""tf.GradientTape in a TF1 graph: gradients through the ops recorded while the tape was active.

``_tape_models.describe`` (accessed and explicitly watched variables, watched tensors,
stop_recording, reset, ops made before the tape, unconnected and output gradients, nested tapes
for a second derivative, calls of tf.function and tf.cond, jacobian and batch_jacobian, the
errors, and TF 2's training step in a tf.function: tape, gradient, apply_gradients) against
TensorFlow 2.21 with v2 behaviour disabled and resource variables
(``tests/fixtures/compat_v1_last/gradient_tape.json``, ``tools/make_compat_v1_last_fixtures.py``).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import _tape_models
import ferroflow as tf
import ferroflow.compat.v1 as tf1

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "compat_v1_last"


def test_tape_matches_tensorflow():
    want = json.loads((FIXTURES / "gradient_tape.json").read_text())
    got = _tape_models.describe(tf1)
    assert got["nones"] == want["nones"]
    assert got["watched"] == want["watched"]
    assert got["errors"] == want["errors"]
    steps, want_steps = got.pop("train_step"), want.pop("train_step")
    np.testing.assert_allclose(steps["losses"], want_steps["losses"], rtol=1e-5)
    for key in ("grads", "final"):
        flat = [np.asarray(a, np.float32) for run in steps[key] for a in (run if key == "grads" else [run])]
        want_flat = [np.asarray(a, np.float32) for run in want_steps[key] for a in (run if key == "grads" else [run])]
        assert len(flat) == len(want_flat)
        for g, w in zip(flat, want_flat):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=key)
    assert sorted(got["values"]) == sorted(want["values"])
    for key, values in want["values"].items():
        assert len(got["values"][key]) == len(values), key
        for g, w in zip(got["values"][key], values):
            # ferroflow's float32 tanh can differ from TensorFlow's by an ulp near 1, which 1 - tanh^2 shows.
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=key)


def test_gradient_equals_tf_gradients_over_recorded_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(np.arange(6).reshape(3, 2) / 5.0))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.nn.relu(tf.matmul(x, w)) - 1.0))
        (g_tape,) = tape.gradient(loss, [w])
        (g_ref,) = tf.gradients(loss, [w])
        feed = {x: np.random.RandomState(0).randn(4, 3).astype(np.float32)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([g_tape, g_ref], feed)
        np.testing.assert_array_equal(a, b)


def test_tape_state_errors():
    with tf.Graph().as_default():
        c = tf.constant(2.0)
        tape = tf.GradientTape()
        with pytest.raises(RuntimeError, match="one set of gradients"):
            tape.gradient(c, c)  # never entered
        with pytest.raises(RuntimeError, match="not recording"):
            with tape.stop_recording():
                pass
        with tape:
            tape.watch(c)
            y = c * c
        with pytest.raises(ValueError, match="Tape is not recording"):
            tape._pop_tape()
        with pytest.raises(ValueError, match="number of elements"):
            with tf.GradientTape(persistent=True) as t2:
                t2.watch(c)
                v = tf.placeholder(tf.float32, [None]) * c
            t2.jacobian(v, c)
        g = tape.gradient(y, c)
        with pytest.raises(RuntimeError, match="one set of gradients"):
            tape.jacobian(y, c)
        with tf.Session() as sess:
            assert sess.run(g) == 4.0
