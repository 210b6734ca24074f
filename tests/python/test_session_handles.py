"""tf.get_session_handle / get_session_tensor / delete_session_tensor: tensors kept in a session between
runs, as TF1's documentation describes them (TensorFlow 2.21's own session refuses the documented example:
"Expects arg[0] to be string but float is provided", so the expected values here are computed directly)."""

import gc

import numpy as np
import pytest

import ferroflow.compat.v1 as tf
from ferroflow.ops.session_ops import TensorHandle


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def test_the_documented_example():
    a, b = tf.constant(10.0), tf.constant(5.0)
    h = tf.get_session_handle(tf.multiply(a, b))
    assert h.op.type == "GetSessionHandle" and h.dtype == tf.string
    with tf.Session() as sess:
        handle = sess.run(h)
        assert isinstance(handle, TensorHandle)
        assert handle.handle == "GetSessionHandle;0;/job:localhost/replica:0/task:0/device:CPU:0"
        p, x = tf.get_session_tensor(handle.handle, tf.float32)
        assert p.dtype == tf.string and x.op.type == "GetSessionTensor" and x.dtype == tf.float32
        y = tf.multiply(x, 10)
        assert sess.run(y, feed_dict={p: handle.handle}) == 500.0
        # The TensorHandle itself may be fed, and read back with eval().
        assert sess.run(y, feed_dict={p: handle}) == 500.0
        assert handle.eval() == 50.0


def test_a_kept_tensor_feeds_the_next_step_without_python_copies():
    x = tf.placeholder(tf.float32, [3])
    keep = tf.get_session_handle(x * 2.0)
    with tf.Session() as sess:
        handle = sess.run(keep, feed_dict={x: np.array([1.0, 2.0, 3.0], np.float32)})
        p, kept = tf.get_session_tensor(handle.handle, tf.float32)
        again = tf.get_session_handle(kept + 1.0)
        second = sess.run(again, feed_dict={p: handle})
        assert handle.handle != second.handle  # every kept tensor has its own id
        np.testing.assert_allclose(second.eval(), [3.0, 5.0, 7.0])
        np.testing.assert_allclose(handle.eval(), [2.0, 4.0, 6.0])


def test_deleted_tensors_are_gone_and_wrong_dtypes_are_refused():
    h = tf.get_session_handle(tf.constant([1, 2, 3]))
    with tf.Session() as sess:
        handle = sess.run(h)
        p, wrong = tf.get_session_tensor(handle.handle, tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
            sess.run(wrong, feed_dict={p: handle})
        holder, deleter = tf.delete_session_tensor(handle.handle)
        sess.run(deleter, feed_dict={holder: handle.handle})
        p2, right = tf.get_session_tensor(handle.handle, tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            sess.run(right, feed_dict={p2: handle.handle})


def test_handles_belong_to_their_session_and_are_dropped_when_collected():
    h = tf.get_session_handle(tf.constant(3.0))
    with tf.Session() as first, tf.Session() as second:
        handle = first.run(h)
        p, x = tf.get_session_tensor(handle.handle, tf.float32)
        assert first.run(x, feed_dict={p: handle}) == 3.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            second.run(x, feed_dict={p: handle})
        # Ten collected handles are deleted from the session together, as in TensorFlow.
        names = []
        for _ in range(10):
            dropped = first.run(h)
            names.append(dropped.handle)
            del dropped
            gc.collect()
        for name in names:
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
                first.run(x, feed_dict={p: name})
        assert first.run(x, feed_dict={p: handle}) == 3.0


def test_only_tensors_have_handles():
    with pytest.raises(TypeError, match="must be of type Tensor"):
        tf.get_session_handle(1.0)
