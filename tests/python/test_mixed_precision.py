"""Mixed precision: TF1's loss scales and loss-scaling optimizer against TensorFlow 2.21's values.

Fixtures: tests/fixtures/mixed_precision/loss_scale.json, made by
tools/make_mixed_precision_fixtures.py with TensorFlow 2.21.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mixed_precision")
with open(os.path.join(FIXTURES, "loss_scale.json")) as _fh:
    LOSS_SCALE = json.load(_fh)


@pytest.mark.parametrize("case", LOSS_SCALE["cases"], ids=lambda c: c["name"])
def test_loss_scale_sequence_matches_tensorflow(case):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        w = tf.get_variable("w", initializer=tf.constant([0.5, -0.25]))
        loss = tf.reduce_sum(w * x * 3.0)
        gs = tf.train.get_or_create_global_step()
        if case["fixed"] is not None:
            ls = tf.train.experimental.FixedLossScale(case["fixed"])
        else:
            ls = tf.train.experimental.DynamicLossScale(**case["kwargs"])
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.GradientDescentOptimizer(0.01), ls)
        train = opt.minimize(loss, global_step=gs)
        assert sorted(v.name for v in tf.global_variables()) == case["variables"]
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for feed, want in zip(LOSS_SCALE["feeds"], case["steps"]):
                sess.run(train, {x: float(feed)})
                scale = sess.run(ls())
                assert float(scale) == want["loss_scale"], feed
                if case["fixed"] is None:
                    assert int(sess.run(ls._num_good_steps)) == want["good_steps"]
                np.testing.assert_array_equal(sess.run(w), np.float32(want["w"]))
                assert int(sess.run(gs)) == want["global_step"]


def test_dynamic_loss_scale_defaults_and_config():
    with tf.Graph().as_default():
        ls = tf.train.experimental.DynamicLossScale()
        assert (ls.initial_loss_scale, ls.increment_period, ls.multiplier) == (2.0 ** 15, 2000, 2.0)
        cfg = ls.get_config()
        assert cfg == {"initial_loss_scale": 32768.0, "increment_period": 2000, "multiplier": 2.0}
        again = tf.train.experimental.DynamicLossScale.from_config(cfg)
        assert again.get_config() == cfg
        assert ls._current_loss_scale.dtype.base_dtype == tf.float32
        assert ls._num_good_steps.dtype.base_dtype == tf.int64
        assert not ls._current_loss_scale.trainable
        assert tf.trainable_variables() == []


def test_fixed_loss_scale_errors_and_update():
    with pytest.raises(ValueError, match="at least 1"):
        tf.train.experimental.FixedLossScale(0.5)
    with pytest.raises(ValueError, match="Python int or float"):
        tf.train.experimental.FixedLossScale("2")
    with tf.Graph().as_default():
        ls = tf.train.experimental.FixedLossScale(64)
        op, should_apply = ls.update([tf.constant(1.0)])
        assert should_apply is True
        assert op.type == "NoOp"
        with tf.Session() as s:
            assert s.run(ls()) == 64.0
    assert repr(ls) == "FixedLossScale(64.0)"


def test_wrapper_checks_and_enable_rewrite():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="instance of Optimizer"):
            tf.train.experimental.MixedPrecisionLossScaleOptimizer(object(), "dynamic")
        with pytest.raises(ValueError, match="cannot be None"):
            tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), None)
        with pytest.raises(ValueError, match="Could not interpret"):
            tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), "x")
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.train.GradientDescentOptimizer(0.1))
        try:
            want = LOSS_SCALE["enable_rewrite"]
            assert type(opt).__name__ == want["type"]
            assert type(opt.loss_scale).__name__ == want["loss_scale"]
            assert opt.get_name() == want["name"]
            with pytest.raises(ValueError, match="must not already be"):
                tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
            # On a CPU the rewrite changes no dtype: a float32 matmul stays float32.
            x = tf.constant(np.ones((2, 3), np.float32))
            w = tf.Variable(np.ones((3, 1), np.float32))
            y = tf.matmul(x, w)
            train = opt.minimize(tf.reduce_sum(y))
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                s.run(train)
                assert s.run(y).dtype == np.float32
                np.testing.assert_allclose(s.run(w), np.full((3, 1), 0.8, np.float32), rtol=1e-6)
            names = {v.name for v in opt.variables()}
            assert {"current_loss_scale:0", "good_steps:0"} <= names
        finally:
            tf.train.experimental.disable_mixed_precision_graph_rewrite()
    assert tf.compat.v1.mixed_precision.experimental.DynamicLossScale is tf.train.experimental.DynamicLossScale


def test_loss_scale_survives_a_checkpoint(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        x = tf.placeholder(tf.float32, [])
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.AdamOptimizer(0.1), tf.train.experimental.DynamicLossScale(4.0, 1, 2.0))
        train = opt.minimize(tf.reduce_sum(w * x))
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(train, {x: 1.0})
            s.run(train, {x: 1.0})
            assert s.run(opt.loss_scale()) == 16.0
            path = saver.save(s, str(tmp_path / "m"))
        with tf.Session() as s:
            saver.restore(s, path)
            assert s.run(opt.loss_scale()) == 16.0
            assert opt.get_slot(w, "m") is not None


def test_python_state_is_abstract():
    class Holder(tf.train.experimental.PythonState):
        def __init__(self):
            self.value = b"1"

        def serialize(self):
            return self.value

        def deserialize(self, string_value):
            self.value = string_value

    h = Holder()
    h.deserialize(b"abc")
    assert h.serialize() == b"abc"
    with pytest.raises(TypeError):
        tf.train.experimental.PythonState()
