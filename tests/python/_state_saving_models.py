"""``tf.nn.static_state_saving_rnn`` models written once against either framework, for
``tools/make_compat_v1_last_fixtures.py`` (run under real TensorFlow) and
``test_static_state_saving_rnn.py`` (run under ferroflow).

No TensorFlow or ferroflow import here: ``build(tf, kind)`` takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behaviour disabled and ``TF_USE_LEGACY_KERAS=1``, or
``ferroflow``) and builds in the current default graph. Every weight comes from
``variable_value(name, shape)`` so both frameworks compute with the same numbers, and the
state lives in ``VariableStateSaver``: one non-trainable variable per state name, read by
``state`` and assigned by ``save_state``, so a second ``Session.run`` starts where the first
ended (truncated backpropagation through time over a long sequence cut into pieces).
"""

from __future__ import annotations

import zlib

import numpy as np

BATCH, TIME, DEPTH = 2, 3, 2
KINDS = ("lstm", "gru", "gru_lengths")
SEQUENCE_LENGTH = [3, 1]


def variable_value(name, shape):
    """The value of model variable ``name`` (without ``:0``)."""
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    return (0.5 * rng.randn(*shape)).astype(np.float32)


def _constant_getter(tf):
    def custom_getter(getter, name, *args, **kwargs):
        shape = [int(d) for d in kwargs["shape"]]
        kwargs["initializer"] = tf.constant_initializer(variable_value(name, shape))
        return getter(name, *args, **kwargs)

    return custom_getter


class VariableStateSaver:
    """A state saver keeping each named state in a variable of shape ``[BATCH, size]``."""

    def __init__(self, tf, sizes):
        self._tf = tf
        with tf.variable_scope("saved_state"):
            self.variables = {
                name: tf.get_variable(name, [BATCH, size], tf.float32, initializer=tf.zeros_initializer(),
                                      trainable=False)
                for name, size in sizes.items()
            }

    def state(self, name):
        return self._tf.identity(self.variables[name], name=f"state_{name}")

    def save_state(self, name, value):
        return self._tf.assign(self.variables[name], value, name=f"save_{name}")


def input_values(step):
    """The input for ``Session.run`` number ``step`` (0, 1, ...)."""
    return np.random.RandomState(100 + step).randn(TIME, BATCH, DEPTH).astype(np.float32)


def build(tf, kind):
    """``(x, outputs, state)``: ``x`` a ``[TIME, BATCH, DEPTH]`` placeholder, ``outputs`` the list
    of per-step outputs and ``state`` the final state (a tuple of two for ``lstm``)."""
    x = tf.placeholder(tf.float32, [TIME, BATCH, DEPTH], name="x")
    inputs = tf.unstack(x)
    lengths = None
    if kind == "lstm":
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        saver = VariableStateSaver(tf, {"c": 4, "h": 4})
        names = ("c", "h")
    else:
        cell = tf.nn.rnn_cell.GRUCell(3)
        saver = VariableStateSaver(tf, {"s": 3})
        names = "s"
        if kind == "gru_lengths":
            lengths = tf.constant(SEQUENCE_LENGTH)
    with tf.variable_scope("model", custom_getter=_constant_getter(tf)):
        outputs, state = tf.nn.static_state_saving_rnn(cell, inputs, saver, names, sequence_length=lengths)
    return x, outputs, state
