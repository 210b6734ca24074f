"""tf.debugging.enable_check_numerics / disable_check_numerics (TF 2.21's message wording)."""

import threading

import numpy as np
import pytest

import ferroflow.compat.v1 as tf


@pytest.fixture(autouse=True)
def _off_afterwards():
    yield
    tf.debugging.disable_check_numerics()


def test_nan_is_caught_at_the_op_that_made_it():
    with tf.Graph().as_default(), tf.Session() as s:
        tf.debugging.enable_check_numerics()
        x = tf.placeholder(tf.float32, [2])
        y = tf.log(x, name="mylog")
        z = tf.identity(y) * 2.0
        np.testing.assert_allclose(s.run(z, {x: [1.0, np.e]}), [0.0, 2.0], rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            s.run(z, {x: [1.0, -1.0]})
        msg = str(e.value)
        assert 'Detected Infinity or NaN in output 0 of graph op "Log"' in msg
        assert "mylog" in msg and "shape: (2,)" in msg


def test_only_ops_created_while_enabled_are_checked():
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.placeholder(tf.float32)
        before = tf.log(x)
        tf.debugging.enable_check_numerics()
        after = tf.sqrt(x)
        tf.debugging.disable_check_numerics()
        later = tf.log(x) * 1.0
        assert np.isinf(s.run(before, {x: 0.0})) and np.isinf(s.run(later, {x: 0.0}))
        with pytest.raises(tf.errors.InvalidArgumentError, match='graph op "Sqrt"'):
            s.run(after, {x: -1.0})
        assert after.op.get_attr("_check_numerics") is True


def test_integer_ops_and_other_threads_are_unaffected():
    tf.debugging.enable_check_numerics()
    marked = {}

    def build():
        with tf.Graph().as_default():
            marked["other"] = "_check_numerics" in tf.log(tf.constant(1.0)).op.node_def.attr

    t = threading.Thread(target=build)
    t.start()
    t.join()
    assert marked["other"] is False  # enable_check_numerics is per thread, as in TF
    with tf.Graph().as_default(), tf.Session() as s:
        assert s.run(tf.constant(7) // 2) == 3
