"""Training through tf.nn.dynamic_rnn against real TensorFlow: ``_rnn_dynamic_models.build_training``
(LSTMCell with peepholes and sequence_length, dense layer, softmax cross-entropy) trained for a few
``tf.train.AdamOptimizer`` steps from the same initial weights must give TensorFlow's losses and
final weights (``tests/fixtures/rnn_dynamic/training.npz``, made by
``tools/make_rnn_dynamic_fixtures.py``).
"""

from __future__ import annotations

import pathlib

import numpy as np

import _rnn_dynamic_models as models
import ferroflow as tf

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "rnn_dynamic" / "training.npz"


def test_dynamic_rnn_adam_training_matches_tensorflow():
    with np.load(FIXTURE) as data:
        expected = {key: data[key] for key in data.files}
    with tf.Graph().as_default():
        (x, labels), loss, train_op = models.build_training(tf)
        xv, lv = models.training_feed_values()
        feed = {x: xv, labels: lv}
        tvars = tf.trainable_variables()
        assert sorted(v.op.name for v in tvars) == sorted(k for k in expected if k != "losses")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(models.TRAIN_STEPS):
                value, _ = sess.run([loss, train_op], feed)
                losses.append(value)
            losses.append(sess.run(loss, feed))
            final = {v.op.name: sess.run(v) for v in tvars}
    np.testing.assert_allclose(np.asarray(losses, np.float32), expected["losses"], rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0]
    for name, value in final.items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-4, atol=1e-5, err_msg=name)
