"""Two ``tf.nn.dynamic_rnn`` models written once against either framework, for
``tools/make_rnn_dynamic_fixtures.py`` (run under real TensorFlow) and the tests
``test_rnn_training_golden.py`` and ``test_rnn_dynamic_checkpoint.py`` (run under ferroflow).

No TensorFlow or ferroflow import here: each function takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behaviour disabled and ``TF_USE_LEGACY_KERAS=1``, or
``ferroflow``) and builds in the current default graph.

* ``build_training(tf)``: an LSTMCell over a batch of sequences with ``sequence_length``, a dense
  layer on the final ``h``, mean sparse softmax cross-entropy, ``tf.train.AdamOptimizer``.
  Every variable starts from ``variable_value(name, shape)`` (a custom getter gives it a constant
  initializer), so both frameworks start from the same weights.
* ``build_checkpoint(tf)``: a BasicLSTMCell ``dynamic_rnn`` with ``sequence_length`` and a dense
  layer on every output, with the frameworks' own (random) initializers: the values come from
  the TensorFlow checkpoint the tool saves.
"""

from __future__ import annotations

import zlib

import numpy as np

BATCH, TIME, DEPTH, CLASSES = 4, 5, 3, 3
TRAIN_STEPS = 3
LEARNING_RATE = 0.05
SEQUENCE_LENGTH = [5, 3, 0, 4]


def variable_value(name, shape):
    """The initial value of training variable ``name`` (its name without ``:0``)."""
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    return (0.5 * rng.randn(*shape)).astype(np.float32)


def _deterministic_getter(tf):
    def custom_getter(getter, name, *args, **kwargs):  # TF passes getter= and name= by keyword
        shape = [int(d) for d in kwargs["shape"]]
        kwargs["initializer"] = tf.constant_initializer(variable_value(name, shape))
        return getter(name, *args, **kwargs)

    return custom_getter


def _dense(tf, x, units, name):
    """A dense layer from two ``get_variable``s (ferroflow has no ``tf.layers``)."""
    with tf.variable_scope(name):
        kernel = tf.get_variable("kernel", [int(x.shape[-1]), units], tf.float32)
        bias = tf.get_variable("bias", [units], tf.float32, initializer=tf.zeros_initializer())
    return tf.matmul(x, kernel) + bias


def training_feed_values():
    rng = np.random.RandomState(2024)
    x = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)
    labels = np.array([0, 2, 1, 2], np.int32)
    return x, labels


def build_training(tf):
    """``(placeholders (x, labels), loss, train_op)``."""
    x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH], name="x")
    labels = tf.placeholder(tf.int32, [BATCH], name="labels")
    with tf.variable_scope("train_model", custom_getter=_deterministic_getter(tf)):
        cell = tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True)
        _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=SEQUENCE_LENGTH, dtype=tf.float32)
        logits = _dense(tf, state.h, CLASSES, "dense")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.AdamOptimizer(LEARNING_RATE).minimize(loss)
    return (x, labels), loss, train_op


def checkpoint_feed_values():
    rng = np.random.RandomState(7)
    return rng.randn(BATCH, TIME, DEPTH).astype(np.float32)


def build_checkpoint(tf):
    """``(x, fetches)``: ``fetches`` maps a name to a tensor (outputs, final c and h, logits)."""
    x = tf.placeholder(tf.float32, [None, None, DEPTH], name="x")
    with tf.variable_scope("ckpt_model"):
        cell = tf.nn.rnn_cell.BasicLSTMCell(5)
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=SEQUENCE_LENGTH, dtype=tf.float32)
        flat = tf.reshape(outputs, [-1, 5])
        logits = tf.reshape(_dense(tf, flat, CLASSES, "dense"), [BATCH, -1, CLASSES])
    return x, {"outputs": outputs, "c": state.c, "h": state.h, "logits": logits}
