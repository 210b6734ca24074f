"""tf.nn.static_state_saving_rnn: static_rnn whose state comes from and goes back to a state saver.

Values against TensorFlow 2.21 (``tests/fixtures/compat_v1_last/state_saving_rnn.npz``, made by
``tools/make_compat_v1_last_fixtures.py`` from the models of ``_state_saving_models.py``): two runs
in a row, the second starting from the state the first saved, for a BasicLSTMCell (a tuple state
under two names) and a GRUCell (one name), with and without ``sequence_length``.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import _state_saving_models as ssm
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "compat_v1_last"


@pytest.fixture(scope="module")
def expected():
    with np.load(FIXTURES / "state_saving_rnn.npz") as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("kind", ssm.KINDS)
def test_two_runs_match_tensorflow(kind, expected):
    with tf.Graph().as_default():
        x, outputs, state = ssm.build(tf, kind)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(2):
                out, st = sess.run([outputs, state], {x: ssm.input_values(step)})
                st = np.stack(st) if isinstance(st, tuple) else st
                np.testing.assert_allclose(np.stack(out), expected[f"{kind}/outputs/{step}"], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(st, expected[f"{kind}/state/{step}"], rtol=1e-5, atol=1e-6)


class _RecordingSaver:
    """TensorFlow's test idiom: zeros in, the saved tensors recorded, an identity per save."""

    def __init__(self, size):
        self.size = size
        self.saved = {}

    def state(self, name):
        return tf.zeros([2, self.size], name=f"zero_{name}")

    def save_state(self, name, value):
        self.saved[name] = value
        return tf.identity(value, name=f"save_{name}")


def test_saves_are_control_inputs_of_last_output_and_state():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        saver = _RecordingSaver(3)
        inputs = [tf.ones([2, 2]) for _ in range(2)]
        outputs, state = tf.nn.static_state_saving_rnn(cell, inputs, saver, ("c", "h"))
        assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple)
        assert sorted(saver.saved) == ["c", "h"]
        saves = {saver.saved[n].graph.get_operation_by_name(f"save_{n}") for n in ("c", "h")}
        for t in [outputs[-1], state.c, state.h]:
            assert t.op.type == "Identity"
            assert set(t.op.control_inputs) == saves
        assert not outputs[0].op.control_inputs
        # The first output is the cell's output at step 0; the zeros came from the saver.
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, h = sess.run([outputs[-1], state.h])
        np.testing.assert_array_equal(out, h)


def test_state_name_must_match_state_structure():
    with tf.Graph().as_default():
        inputs = [tf.ones([2, 2])]
        with pytest.raises(ValueError, match="should be the same type as `cell.state_size`"):
            tf.nn.static_state_saving_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), inputs, _RecordingSaver(3), "c")
        with pytest.raises(ValueError, match="should be the same type"):
            tf.nn.static_state_saving_rnn(tf.nn.rnn_cell.GRUCell(3), inputs, _RecordingSaver(3), ("a", "b"))
        with pytest.raises(ValueError, match="mismatched.*3 elements.*2 elements"):
            tf.nn.static_state_saving_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), inputs, _RecordingSaver(3),
                                          ("a", "b", "c"))
        with pytest.raises(ValueError, match="inputs must not be empty"):
            tf.nn.static_state_saving_rnn(tf.nn.rnn_cell.GRUCell(3), [], _RecordingSaver(3), "s")
