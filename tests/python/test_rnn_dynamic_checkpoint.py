"""A TensorFlow checkpoint of a tf.nn.dynamic_rnn model restores into the same model built with
ferroflow: ``_rnn_dynamic_models.build_checkpoint`` (BasicLSTMCell with sequence_length, dense layer
on every step) restored with ``tf.train.Saver`` from ``tests/fixtures/rnn_dynamic/model.ckpt``
gives the outputs TensorFlow computed (``checkpoint_expected.npz``); both made by
``tools/make_rnn_dynamic_fixtures.py``.
"""

from __future__ import annotations

import pathlib

import numpy as np

import _rnn_dynamic_models as models
import ferroflow as tf

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "rnn_dynamic"
CKPT = str(FIXTURE_DIR / "model.ckpt")


def test_tensorflow_checkpoint_restores_dynamic_rnn_outputs():
    with np.load(FIXTURE_DIR / "checkpoint_expected.npz") as data:
        expected = {key: data[key] for key in data.files}
    with tf.Graph().as_default():
        x, fetches = models.build_checkpoint(tf)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == sorted(name for name, _ in tf.train.list_variables(CKPT))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, CKPT)
            got = sess.run(fetches, {x: expected["x"]})
    assert sorted(got) == sorted(k for k in expected if k != "x")
    for key, value in got.items():
        assert value.shape == expected[key].shape, key
        np.testing.assert_allclose(value, expected[key], rtol=1e-5, atol=1e-6, err_msg=key)
    # The sequence of length 0 gives zero outputs and a zero final state.
    zero = models.SEQUENCE_LENGTH.index(0)
    assert not got["outputs"][zero].any() and not got["h"][zero].any()
