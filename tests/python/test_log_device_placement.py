"""ConfigProto.log_device_placement and tf.debugging.set_log_device_placement: each node's device on stderr, in
TensorFlow's "name: (Type): device" lines, the first time a run meets the node."""

import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


@pytest.fixture(autouse=True)
def _fresh_graph_and_switch():
    with tf.Graph().as_default():
        yield
    tf.debugging.set_log_device_placement(False)


def test_config_switch_logs_every_node_once(capsys):
    a = tf.constant(2.0, name="a")
    b = tf1.multiply(a, 3.0, name="mul")
    with tf1.Session(config=tf1.ConfigProto(log_device_placement=True)) as sess:
        assert sess.run(b) == 6.0
        first = capsys.readouterr().err.splitlines()
        assert f"a: (Const): {CPU}" in first
        assert f"mul: (Mul): {CPU}" in first
        sess.run(b)
        assert capsys.readouterr().err == ""  # nothing new to place
        c = tf1.add(b, 1.0, name="later")
        sess.run(c)
        assert f"later: (AddV2): {CPU}" in capsys.readouterr().err.splitlines()


def test_debugging_switch_applies_to_new_sessions(capsys):
    assert tf.debugging.get_log_device_placement() is False
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
        x = tf.constant(1, name="x")
    with tf1.Session() as sess:
        sess.run(x)
    assert capsys.readouterr().err == ""
    tf.debugging.set_log_device_placement(True)
    assert tf.debugging.get_log_device_placement() is True
    with tf1.Session() as sess:
        sess.run(x)
    assert f"x: (Const): {CPU}" in capsys.readouterr().err.splitlines()
