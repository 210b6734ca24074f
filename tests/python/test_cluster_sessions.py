"""The cluster paths of the session machinery, in one process: a worker waits for a model another task
makes ready (SessionManager.wait_for_session's loop, its deadline), and every creator hands the ``master``
target to ``tf.Session`` (recorded here by a Session subclass that runs in-process)."""

import threading
import time

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.client import session as session_lib


@pytest.fixture
def targets(monkeypatch):
    """Records the target of every Session the machinery opens (and runs it in-process)."""
    opened = []
    real = session_lib.Session

    class Recording(real):
        def __init__(self, target="", graph=None, config=None):
            opened.append(target)
            super().__init__("", graph=graph, config=config)

    monkeypatch.setattr(session_lib, "Session", Recording)
    return opened


def _flag_ready_op(flag, name):
    """A ready op that reports ``name`` as not initialized until ``flag`` is set (what another task's
    initialization looks like from a worker)."""

    def report():
        return np.array([] if flag.is_set() else [name.encode()], dtype=object)

    op = tf.py_func(report, [], tf.string, stateful=True)
    op.set_shape([None])
    return op


def test_wait_for_session_loops_until_ready(targets):
    ready_for_local = threading.Event()
    ready = threading.Event()
    local = tf.Variable(0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="local")
    local_init = local.initializer
    sm = tf.train.SessionManager(
        local_init_op=local_init, ready_op=_flag_ready_op(ready, "w"),
        ready_for_local_init_op=_flag_ready_op(ready_for_local, "global_step"), recovery_wait_secs=0.05)

    def chief():
        time.sleep(0.15)
        ready_for_local.set()
        time.sleep(0.15)
        ready.set()

    threading.Thread(target=chief, daemon=True).start()
    start = time.monotonic()
    sess = sm.wait_for_session("grpc://ps0:2222", max_wait_secs=5)
    elapsed = time.monotonic() - start
    assert 0.25 < elapsed < 3
    # one session per try, each on the master; the local init ran in every session opened once the
    # model was ready for it, and the returned session is the last one
    assert len(targets) >= 4 and set(targets) == {"grpc://ps0:2222"}
    assert sess.run(local) == 0
    sess.close()


def test_wait_for_session_deadline(targets):
    never = threading.Event()
    sm = tf.train.SessionManager(ready_op=_flag_ready_op(never, "w"), recovery_wait_secs=0.05)
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="not ready after waiting"):
        sm.wait_for_session("grpc://w", max_wait_secs=0.3)
    assert time.monotonic() - start < 2
    assert len(targets) >= 2


class _Hook(tf.train.SessionRunHook):
    def __init__(self):
        self.began = False

    def begin(self):
        self.began = True


def _model():
    # Only local variables: a worker finds the model ready without a chief.
    v = tf.Variable(1.0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="v")
    return tf.assign_add(v, 1.0)


def test_monitored_training_session_worker_uses_master_and_only_user_hooks(targets, tmp_path):
    step = _model()
    mine, chief_only = _Hook(), _Hook()
    with tf.train.MonitoredTrainingSession(master="grpc://worker1:2222", is_chief=False,
                                           checkpoint_dir=str(tmp_path), hooks=[mine],
                                           chief_only_hooks=[chief_only], max_wait_secs=5) as sess:
        assert sess.run(step) == 2.0
        assert [type(h) for h in sess._hooks] == [_Hook]
    assert targets == ["grpc://worker1:2222"]
    assert mine.began and not chief_only.began
    assert not list(tmp_path.iterdir())  # no checkpoint, no summaries from a worker


def test_monitored_training_session_chief_uses_master(targets, tmp_path):
    tf.train.get_or_create_global_step()
    step = _model()
    with tf.train.MonitoredTrainingSession(master="grpc://chief:2222", is_chief=True,
                                           checkpoint_dir=str(tmp_path)) as sess:
        sess.run(step)
    assert targets == ["grpc://chief:2222"]


def test_supervisor_non_chief_waits_on_master(targets):
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):  # a replica's variables need a device
        step = _model()
    sv = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.05)
    sess = sv.prepare_or_wait_for_session("grpc://worker2:2222", max_wait_secs=5)
    assert sess.run(step) == 2.0
    assert targets == ["grpc://worker2:2222"]
    sv.stop()
    sess.close()
