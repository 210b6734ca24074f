"""tf.train.Supervisor without checkpoint files: managed_session, loop, stop and exceptions, non-chief
rules, basic_train_loop. The service threads writing checkpoints and summaries, the properties and the
CamelCase aliases are tested in test_training_checkpoints.py (they need tf.train.Saver)."""

import glob
import os
import threading
import time

import pytest

import ferroflow as tf


class _RecordingSaver:
    """Saver stand-in recording the global step of every save (thread-safe: saves come from a service
    thread)."""

    def __init__(self):
        self.saves = []
        self._lock = threading.Lock()

    def save(self, sess, save_path, global_step=None, **unused):
        step = int(sess.run(global_step)) if global_step is not None else None
        with self._lock:
            self.saves.append((step, save_path))
        return save_path

    def restore(self, sess, save_path):
        raise AssertionError("nothing to restore")


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


def _events(logdir):
    out = []
    for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))):
        out.extend(tf.train.summary_iterator(path))
    return out


def _model():
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [], initializer=tf.constant_initializer(4.0))
    loss = tf.square(w, name="loss")
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    tf.summary.scalar("loss_value", loss)
    return gs, w, loss, train_op



def test_managed_session_reraises_and_swallows_out_of_range(tmp_path):
    gs, w, loss, train_op = _model()
    sv = tf.train.Supervisor(logdir=None, saver=None, summary_op=None)
    with pytest.raises(ValueError, match="body failed"):
        with sv.managed_session() as sess:
            sess.run(train_op)
            raise ValueError("body failed")
    assert sv.should_stop()
    # A new managed session clears the stop; OutOfRangeError is the normal end of input.
    with sv.managed_session() as sess:
        assert not sv.should_stop()
        raise tf.errors.OutOfRangeError(None, None, "no more input")
    assert sv.should_stop()


def test_loop_stop_and_thread_exceptions():
    gs, w, loss, train_op = _model()
    sv = tf.train.Supervisor(logdir=None, saver=None)
    calls = []
    with sv.managed_session() as sess:
        looper = sv.loop(0.02, calls.append, args=("tick",))
        assert isinstance(looper, tf.train.LooperThread)
        time.sleep(0.12)
        sess.run(train_op)
    assert not looper.is_alive() and len(calls) >= 2
    # An exception in a looper thread stops the supervisor and is re-raised when the session ends.
    with pytest.raises(KeyError, match="looper broke"):
        with sv.managed_session():
            sv.Loop(None, lambda: (_ for _ in ()).throw(KeyError("looper broke")))
            assert sv.coord.wait_for_stop(5)
    # stop_on_exception / request_stop / wait_for_stop.
    sv2 = tf.train.Supervisor(logdir=None, saver=None, graph=tf.Graph())
    with sv2.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "end")
    sv2.wait_for_stop()
    assert sv2.should_stop()



def test_non_chief_and_errors(tmp_path):
    _model()
    # As in TensorFlow, a non-chief supervisor wants every variable placed on a device.
    with pytest.raises(ValueError, match="When using replicas, all Variables must have their device set"):
        tf.train.Supervisor(logdir=str(tmp_path), saver=None, is_chief=False)
    tf.reset_default_graph()
    with tf.device("/cpu:0"):
        _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), saver=None, is_chief=False, recovery_wait_secs=0.05)
    # Only a chief writes events or checkpoints.
    assert sv.summary_writer is None and sv.save_path is None and sv.save_model_secs is None
    with pytest.raises(RuntimeError, match="Only chief supervisor can start standard services"):
        sv.start_standard_services(None)
    # A worker waits for a chief to initialize; variables are per session here, so it times out.
    with pytest.raises(tf.errors.DeadlineExceededError):
        sv.prepare_or_wait_for_session(max_wait_secs=0.1)
    sv = tf.train.Supervisor(logdir=None, saver=None, summary_writer=None, graph=tf.Graph())
    with sv.managed_session() as sess:
        with pytest.raises(RuntimeError, match="Writing a summary requires a summary writer"):
            sv.summary_computed(sess, b"")
        # Without a logdir there are no standard services.
        assert sv.start_standard_services(sess) == []


def test_basic_train_loop_retries_after_aborted():
    gs, w, loss, train_op = _model()
    sv = tf.train.Supervisor(logdir=None, saver=None)
    calls = []

    def step(sess, scale, offset=0):
        sess.run(train_op)
        calls.append(int(sess.run(gs)) * scale + offset)
        if len(calls) == 2:
            raise tf.errors.AbortedError(None, None, "server restarted")
        if len(calls) == 5:
            sv.request_stop()

    tf.train.basic_train_loop(sv, step, args=(10,), kwargs={"offset": 1})
    # The abort ended the first session; the second starts again from the initializers.
    assert calls == [11, 21, 11, 21, 31]
