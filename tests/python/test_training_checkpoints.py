"""Training with real checkpoints (tf.train.Saver): MonitoredTrainingSession end to end and resuming, its
arguments and defaults, recovery from AbortedError/UnavailableError restoring the last checkpoint, and the
Supervisor's timer threads writing checkpoints and summaries that a new Supervisor resumes from."""

import glob
import os
import time

import numpy as np
import pytest

import ferroflow as tf
from test_monitored_session import _Recorder
from test_supervisor import _events, _model, _RecordingSaver


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


def _regression():
    """Linear regression y = 3x - 1 by SGD; returns (gs, w, b, loss, train_op)."""
    gs = tf.train.get_or_create_global_step()
    xs = np.linspace(-1, 1, 8, dtype=np.float32)
    x = tf.constant(xs)
    y = tf.constant(3 * xs - 1)
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(w * x + b - y), name="mse")
    tf.summary.scalar("mse_value", loss)
    train_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=gs)
    return gs, w, b, loss, train_op


def _reference_params(steps):
    """(w, b) after ``steps`` SGD steps of _regression(), in float32 numpy."""
    xs = np.linspace(-1, 1, 8, dtype=np.float32)
    ys = (3 * xs - 1).astype(np.float32)
    w = b = np.float32(0)
    for _ in range(steps):
        err = w * xs + b - ys
        gw = np.float32(np.mean(2 * err * xs))
        gb = np.float32(np.mean(2 * err))
        w, b = np.float32(w - np.float32(0.2) * gw), np.float32(b - np.float32(0.2) * gb)
    return w, b


def _event_values(logdir, tag):
    import os

    out = []
    for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))):
        out.extend((e.step, v.simple_value) for e in tf.train.summary_iterator(path) for v in e.summary.value
                   if v.tag == tag)
    return out


def test_monitored_training_session_trains_saves_and_resumes(tmp_path):
    ckpt_dir = str(tmp_path / "run")
    gs, w, b, loss, train_op = _regression()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, save_checkpoint_steps=5, save_summaries_steps=4,
                                           log_step_count_steps=3,
                                           hooks=[tf.train.StopAtStepHook(last_step=12)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    tf.summary.FileWriterCache.clear()
    latest = tf.train.latest_checkpoint(ckpt_dir)
    assert latest.endswith("model.ckpt-12")
    assert tf.train.load_variable(ckpt_dir, "global_step") == 12
    w12, b12 = _reference_params(12)
    assert tf.train.load_variable(ckpt_dir, "w") == pytest.approx(w12, rel=1e-5)
    state = tf.train.get_checkpoint_state(ckpt_dir)
    # Saved at creation (0), every 5 steps, and at the end.
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["0", "5", "10", "12"]
    # Summaries every 4 steps (the first run, then 4 steps later ...), and steps/sec.
    assert [s for s, _ in _event_values(ckpt_dir, "mse_value")] == [1, 5, 9]
    assert len(_event_values(ckpt_dir, "global_step/sec")) >= 2
    # A second MonitoredTrainingSession on the same directory resumes at global step 12.
    tf.reset_default_graph()
    gs, w, b, loss, train_op = _regression()
    steps = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, save_checkpoint_steps=5,
                                           hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        while not sess.should_stop():
            steps.append(sess.run([train_op, gs, w])[1:])
    assert [s for s, _ in steps] == [13, 14, 15]
    w15, _ = _reference_params(15)
    assert steps[-1][1] == pytest.approx(w15, rel=1e-5)
    assert tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-15")


def test_monitored_training_session_arguments(tmp_path):
    gs, w, b, loss, train_op = _regression()
    log = []
    ckpt_dir = str(tmp_path / "ckpt")
    summary_dir = str(tmp_path / "summaries")
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.train.MonitoredTrainingSession(
        master="", is_chief=True, checkpoint_dir=ckpt_dir, scaffold=tf.train.Scaffold(), hooks=[_Recorder("h", log)],
        chief_only_hooks=[_Recorder("chief", log)], save_checkpoint_secs=3600, save_checkpoint_steps=2,
        save_summaries_steps=None, save_summaries_secs=3600, config=config, stop_grace_period_secs=5,
        log_step_count_steps=None, max_wait_secs=10, summary_dir=summary_dir,
    ) as sess:
        for _ in range(5):
            sess.run(train_op)
    tf.summary.FileWriterCache.clear()
    # chief_only_hooks come first, then the default hooks, then hooks.
    assert [e[0] for e in log if e[1] == "begin"] == ["chief", "h"]
    # save_checkpoint_secs wins over save_checkpoint_steps: saves at creation and at the end only.
    state = tf.train.get_checkpoint_state(ckpt_dir)
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["0", "5"]
    # Summaries by time go to summary_dir: the first run only within an hour; no steps/sec.
    assert [s for s, _ in _event_values(summary_dir, "mse_value")] == [1]
    assert _event_values(summary_dir, "global_step/sec") == []
    assert _event_values(ckpt_dir, "mse_value") == []


def test_monitored_training_session_defaults_and_worker(tmp_path):
    gs, w, b, loss, train_op = _regression()
    ckpt_dir = str(tmp_path)
    # Defaults: checkpoints every 600 s (so at creation and at the end), summaries every 100 steps.
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir) as sess:
        for _ in range(3):
            sess.run(train_op)
    tf.summary.FileWriterCache.clear()
    state = tf.train.get_checkpoint_state(ckpt_dir)
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["0", "3"]
    assert [s for s, _ in _event_values(ckpt_dir, "mse_value")] == [1]
    # Both of a pair None: no checkpoint or summary hook.
    tf.reset_default_graph()
    gs, w, b, loss, train_op = _regression()
    other = str(tmp_path / "none")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=other, save_checkpoint_secs=None,
                                           save_summaries_steps=None, log_step_count_steps=0) as sess:
        sess.run(train_op)
    assert tf.train.latest_checkpoint(other) is None
    # A worker ignores chief_only_hooks and waits for a chief; with per-session variables it times out.
    tf.reset_default_graph()
    _regression()
    log = []
    with pytest.raises(tf.errors.DeadlineExceededError):
        tf.train.MonitoredTrainingSession(is_chief=False, checkpoint_dir=ckpt_dir, max_wait_secs=0.1,
                                          chief_only_hooks=[_Recorder("chief", log)], hooks=[_Recorder("h", log)])
    assert [e[0] for e in log] == ["h"]


class _AbortOnce(tf.train.SessionRunHook):
    """Raises AbortedError after the given run (1-based), as if the worker's server had died during it."""

    def __init__(self, at_run, error=tf.errors.AbortedError):
        self.at_run, self.error = at_run, error
        self.runs = 0
        self.sessions = 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def after_run(self, run_context, run_values):
        self.runs += 1
        if self.runs == self.at_run:
            raise self.error(None, None, "injected: worker preempted")


@pytest.mark.parametrize("error", [tf.errors.AbortedError, tf.errors.UnavailableError])
def test_recovery_restores_the_last_checkpoint_and_training_completes(tmp_path, error):
    gs, w, b, loss, train_op = _regression()
    ckpt_dir = str(tmp_path)
    scaffold = tf.train.Scaffold()
    saver_hook = tf.train.CheckpointSaverHook(ckpt_dir, save_steps=3, scaffold=scaffold)
    abort = _AbortOnce(at_run=8, error=error)
    creator = tf.train.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=ckpt_dir)
    seen = []
    with tf.train.MonitoredSession(session_creator=creator,
                                   hooks=[saver_hook, tf.train.StopAtStepHook(last_step=12), abort]) as sess:
        while not sess.should_stop():
            seen.append(tuple(sess.run([train_op, gs, w])[1:]))
    assert abort.sessions == 2
    steps = [s for s, _ in seen]
    # Run 8 (global step 7 -> 8) died with its session; the new session restored model.ckpt-6 and repeated
    # the run, so global steps 7.. follow the checkpoint: nothing before it was lost.
    assert steps[:7] == [1, 2, 3, 4, 5, 6, 7]
    assert steps[7:] == [7, 8, 9, 10, 11, 12]
    # The variables continued from the checkpoint: the values at each step match uninterrupted SGD.
    for step, w_value in seen:
        assert w_value == pytest.approx(_reference_params(step)[0], rel=1e-5)
    assert tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-12")


def test_singular_monitored_session_restores_a_given_checkpoint(tmp_path):
    gs, w, b, loss, train_op = _regression()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
                                           save_summaries_steps=None, log_step_count_steps=None) as sess:
        for _ in range(4):
            sess.run(train_op)
    tf.summary.FileWriterCache.clear()
    path = str(tmp_path / "model.ckpt-2")
    tf.reset_default_graph()
    gs, w, b, loss, train_op = _regression()
    with tf.train.SingularMonitoredSession(checkpoint_filename_with_path=path) as sess:
        assert sess.run(gs) == 2
        assert sess.raw_session().run(w) == pytest.approx(_reference_params(2)[0], rel=1e-5)


# ---------------------------------------------------------------------------------------------------------
# Supervisor service threads (a recording saver here, so the save schedule can be counted) and resuming.


def test_managed_session_services_write_summaries_and_checkpoints_on_timers(tmp_path):
    gs, w, loss, train_op = _model()
    saver = _RecordingSaver()
    sv = tf.train.Supervisor(logdir=str(tmp_path), saver=saver, save_summaries_secs=0.05, save_model_secs=0.08)
    assert tf.get_default_graph().finalized
    with sv.managed_session() as sess:
        # Train until the checkpoint thread has saved three times (a deadline guards a loaded machine).
        t0 = time.monotonic()
        while (len(saver.saves) < 3 or time.monotonic() - t0 < 0.4) and time.monotonic() - t0 < 20:
            sess.run(train_op)
            time.sleep(0.005)
        final_step = int(sess.run(gs))
    assert sv.should_stop()
    events = _events(tmp_path)
    logs = [(e.session_log.status, e.step) for e in events if e.HasField("session_log")]
    statuses = [s for s, _ in logs]
    assert statuses[0] == tf.SessionLog.START and logs[0][1] == 0
    assert statuses[-1] == tf.SessionLog.STOP
    # Checkpoints every 0.08 s over ~0.5 s: several saves, each logged as a CHECKPOINT event.
    assert len(saver.saves) >= 3
    assert all(path == os.path.join(str(tmp_path), "model.ckpt") for _, path in saver.saves)
    steps = [s for s, _ in saver.saves]
    assert steps == sorted(steps) and steps[-1] <= final_step
    assert statuses.count(tf.SessionLog.CHECKPOINT) == len(saver.saves)
    # Summaries every 0.05 s: the loss at increasing steps, and global steps per second.
    losses = [(e.step, v.simple_value) for e in events for v in e.summary.value if v.tag == "loss_value"]
    rates = [v.simple_value for e in events for v in e.summary.value if v.tag == "global_step/sec"]
    assert len(losses) >= 2 and len(rates) >= 2
    assert losses[0][1] == pytest.approx(16.0, rel=0.5)
    assert [s for s, _ in losses] == sorted(s for s, _ in losses)
    assert all(later <= earlier for (_, earlier), (_, later) in zip(losses, losses[1:]))
    assert any(r > 0 for r in rates)
    # The graph went to graph.pbtxt and the event file.
    assert (tmp_path / "graph.pbtxt").exists()
    assert any(e.HasField("graph_def") for e in events) and any(e.HasField("meta_graph_def") for e in events)

def test_properties_aliases_and_defaults(tmp_path):
    gs, w, loss, train_op = _model()
    saver = _RecordingSaver()
    sv = tf.train.Supervisor(logdir=str(tmp_path), saver=saver, checkpoint_basename="m.ckpt",
                             save_summaries_secs=7, save_model_secs=9)
    assert sv.is_chief and sv.saver is saver and sv.global_step is gs
    assert sv.save_path == os.path.join(str(tmp_path), "m.ckpt")
    assert sv.save_summaries_secs == 7 and sv.save_model_secs == 9
    assert sv.init_op is tf.get_collection(tf.GraphKeys.INIT_OP)[0]
    assert sv.ready_op is tf.get_collection(tf.GraphKeys.READY_OP)[0]
    assert sv.summary_op is tf.get_collection(tf.GraphKeys.SUMMARY_OP)[0]
    assert sv.ready_for_local_init_op is None and sv.init_feed_dict is None
    assert isinstance(sv.session_manager, tf.train.SessionManager)
    assert isinstance(sv.coord, tf.train.Coordinator)
    assert isinstance(sv.summary_writer, tf.summary.FileWriter)
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs]
    assert tf.train.Supervisor.USE_DEFAULT == 0
    for camel, snake in [("PrepareSession", "prepare_or_wait_for_session"), ("StartQueueRunners",
                         "start_queue_runners"), ("StartStandardServices", "start_standard_services"),
                         ("Stop", "stop"), ("RequestStop", "request_stop"), ("Loop", "loop"),
                         ("ShouldStop", "should_stop"), ("StopOnException", "stop_on_exception"),
                         ("WaitForStop", "wait_for_stop"), ("SummaryComputed", "summary_computed")]:
        assert getattr(tf.train.Supervisor, camel) is getattr(tf.train.Supervisor, snake)
    # PrepareSession without services: no threads, then summary_computed writes at the current step.
    sess = sv.PrepareSession(start_standard_services=False)
    sess.run(train_op)
    sv.SummaryComputed(sess, sess.run(sv.summary_op))
    sv.Stop()
    sess.close()
    assert saver.saves == []
    written = [(e.step, v.tag) for e in _events(tmp_path) for v in e.summary.value]
    assert written == [(1, "loss_value")]

def test_supervisor_checkpoints_with_its_saver_and_a_new_supervisor_resumes(tmp_path):
    gs, w, loss, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.05, save_summaries_secs=0.05)
    assert isinstance(sv.saver, tf.train.Saver)
    with sv.managed_session() as sess:
        for _ in range(10):
            sess.run(train_op)
        final_step, final_w = int(sess.run(gs)), float(sess.run(w))
        # Wait for the checkpoint thread to save the final state.
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            latest = tf.train.latest_checkpoint(str(tmp_path))
            if latest is not None and latest.endswith(f"-{final_step}"):
                break
            time.sleep(0.02)
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest is not None and latest.startswith(os.path.join(str(tmp_path), "model.ckpt-"))
    saved_step = int(latest.rsplit("-", 1)[1])
    assert saved_step == final_step
    assert tf.train.load_variable(str(tmp_path), "w") == pytest.approx(final_w)
    # w follows w <- w - 0.1 * 2w from 4.0.
    assert final_w == pytest.approx(4.0 * 0.8 ** final_step, rel=1e-4)
    # A new Supervisor on the same logdir restores instead of initializing.
    tf.reset_default_graph()
    gs, w, loss, train_op = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=3600, save_summaries_secs=3600)
    with sv.managed_session() as sess:
        assert int(sess.run(gs)) == saved_step
        assert float(sess.run(w)) == pytest.approx(final_w)
        sess.run(train_op)

