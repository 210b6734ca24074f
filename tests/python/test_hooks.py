"""The standard SessionRunHooks in a MonitoredSession: logging, stopping, step counting, NaN checks,
summaries, global-step waiting, final ops, feeds, profiling, and the checkpoint hook's timing and listeners.

Checkpoint files themselves are tested in test_monitored_session.py; here a recording saver stands in
for ``tf.train.Saver`` so the hook's schedule can be checked exactly.
"""

import glob
import json
import logging
import os
import threading
import time

import numpy as np
import pytest

import ferroflow as tf


class _RecordingSaver:
    """Saver stand-in: records ``(global_step, path)`` of every save, never touches files."""

    def __init__(self):
        self.saves = []

    def save(self, sess, save_path, global_step=None, write_meta_graph=True, **unused):
        step = int(sess.run(global_step)) if isinstance(global_step, tf.Tensor) else int(global_step)
        self.saves.append((step, save_path))
        return f"{save_path}-{step}"

    def restore(self, sess, save_path):
        raise AssertionError("nothing to restore in these tests")


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


def _model():
    """x -> loss = (w - x)^2 trained by SGD; returns (x, w, loss, train_op, global_step)."""
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [], name="x")
    w = tf.get_variable("w", [], initializer=tf.constant_initializer(1.0))
    loss = tf.square(w - x, name="loss")
    train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=gs)
    return x, w, loss, train_op, gs


def _session(hooks, saver=None):
    scaffold = tf.train.Scaffold(saver=saver or _RecordingSaver())
    return tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold), hooks=hooks)


def _events(logdir):
    out = []
    for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))):
        out.extend(tf.train.summary_iterator(path))
    return out


def _scalars(logdir, tag):
    return [(e.step, v.simple_value) for e in _events(logdir) for v in e.summary.value if v.tag == tag]


def test_logging_tensor_hook_every_n_iter_dict_sorted_and_at_end(caplog):
    x, w, loss, train_op, gs = _model()
    hook = tf.train.LoggingTensorHook({"w": w, "a_step": gs}, every_n_iter=2, at_end=True)
    caplog.set_level(logging.INFO)
    with _session([hook]) as sess:
        for _ in range(5):
            sess.run(train_op, {x: 3.0})
    lines = [r.getMessage() for r in caplog.records if "a_step = " in r.getMessage()]
    # Local iterations 0, 2, 4, then the end. A variable fetched with the train op is read after the
    # update (as a TF reference variable is), so the values are those after runs 1, 3, 5.
    assert len(lines) == 4
    assert [line.split(",")[0] for line in lines] == ["a_step = 1", "a_step = 3", "a_step = 5", "a_step = 5"]
    # Tags sorted; the second log reports the seconds since the first.
    assert lines[0].startswith("a_step = 1, w = 2.0")
    assert lines[1].endswith("sec)") and not lines[0].endswith("sec)")
    # w after 5 SGD steps on (w - 3)^2 with lr 0.25: w <- w - 0.5 (w - 3) = (w + 3) / 2.
    w_end = 1.0
    for _ in range(5):
        w_end = (w_end + 3.0) / 2
    assert f"w = {np.float32(w_end)}" in lines[3]


def test_logging_tensor_hook_names_formatter_secs_and_errors(caplog):
    x, w, loss, train_op, gs = _model()
    seen = []

    def formatter(values):
        seen.append(dict(values))
        return "custom:" + ",".join(sorted(values))

    hook = tf.train.LoggingTensorHook(["w:0", "loss"], every_n_secs=3600, formatter=formatter)
    caplog.set_level(logging.INFO)
    with _session([hook]) as sess:
        for _ in range(3):
            sess.run(train_op, {x: 3.0})
    # Time-based: only the first iteration is due within an hour.
    assert len(seen) == 1 and set(seen[0]) == {"w:0", "loss"}
    # The variable itself is read after the run's update, the loss before it.
    assert seen[0]["w:0"] == pytest.approx(2.0) and seen[0]["loss"] == pytest.approx(4.0)
    assert any(r.getMessage() == "custom:loss,w:0" for r in caplog.records)
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([w])
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([w], every_n_iter=1, every_n_secs=1)
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook([w], every_n_iter=0)


def test_stop_at_step_hook_last_step_and_num_steps():
    x, w, loss, train_op, gs = _model()
    with _session([tf.train.StopAtStepHook(last_step=4)]) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train_op, {x: 1.0})
            runs += 1
        assert runs == 4
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(train_op, {x: 1.0})
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)


def test_stop_at_step_hook_num_steps_counts_from_session_creation():
    x, w, loss, train_op, gs = _model()
    # Start at global step 10: init_fn runs after the init op.
    set_ten = gs.assign(10)
    scaffold = tf.train.Scaffold(saver=_RecordingSaver(), init_fn=lambda scaffold, sess: sess.run(set_ten))
    creator = tf.train.ChiefSessionCreator(scaffold=scaffold)
    with tf.train.MonitoredSession(session_creator=creator, hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        steps = []
        while not sess.should_stop():
            steps.append(sess.run([train_op, gs], {x: 1.0})[1])
    assert steps == [11, 12, 13]


def test_stop_at_step_hook_needs_global_step():
    tf.placeholder(tf.float32, [])
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        _session([tf.train.StopAtStepHook(num_steps=1)])


def test_step_counter_hook_writes_steps_per_sec(tmp_path):
    x, w, loss, train_op, gs = _model()
    hook = tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    with _session([hook]) as sess:
        for _ in range(7):
            sess.run(train_op, {x: 1.0})
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    values = _scalars(tmp_path, "global_step/sec")
    # Triggers at global steps 1 (start of the measurement), 3, 5, 7: a value for each after the first.
    assert [step for step, _ in values] == [3, 5, 7]
    assert all(v > 0 for _, v in values)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)


def test_nan_tensor_hook_raises_or_stops():
    x = tf.placeholder(tf.float32, [], name="x")
    loss = tf.sqrt(x)
    tf.train.get_or_create_global_step()
    with _session([tf.train.NanTensorHook(loss)]) as sess:
        assert sess.run(loss, {x: 4.0}) == pytest.approx(2.0)
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
            sess.run(loss, {x: -1.0})
    assert issubclass(tf.train.NanLossDuringTrainingError, RuntimeError)
    with _session([tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        sess.run(loss, {x: 1.0})
        assert not sess.should_stop()
        sess.run(loss, {x: -1.0})
        assert sess.should_stop()


def test_summary_saver_hook_every_n_steps(tmp_path):
    x, w, loss, train_op, gs = _model()
    summary_op = tf.summary.scalar("w_value", w)
    hook = tf.train.SummarySaverHook(save_steps=3, output_dir=str(tmp_path), summary_op=summary_op)
    expected = {}
    value = 1.0
    with _session([hook]) as sess:
        for step in range(1, 8):
            # The summary reads w before this step's update; it is written at the step after the run.
            expected[step] = value
            sess.run(train_op, {x: 3.0})
            value = (value + 3.0) / 2
    values = _scalars(tmp_path, "w_value")
    assert [s for s, _ in values] == [1, 4, 7]
    for step, v in values:
        assert v == pytest.approx(expected[step])
    starts = [e.step for e in _events(tmp_path) if e.HasField("session_log")]
    assert starts == [1]
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path))


def test_summary_saver_hook_scaffold_summary_op_and_writer(tmp_path):
    x, w, loss, train_op, gs = _model()
    tf.summary.scalar("loss_value", loss)
    scaffold = tf.train.Scaffold(saver=_RecordingSaver())
    writer = tf.summary.FileWriter(str(tmp_path))
    hook = tf.train.SummarySaverHook(save_secs=3600, summary_writer=writer, scaffold=scaffold)
    creator = tf.train.ChiefSessionCreator(scaffold=scaffold)
    with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(train_op, {x: 3.0})
    writer.close()
    # merge_all() became the scaffold's summary op; the first run is due, the next ones not within an hour.
    assert _scalars(tmp_path, "loss_value") == [(1, pytest.approx(4.0))]


def test_global_step_waiter_hook_waits_for_the_step():
    x, w, loss, train_op, gs = _model()
    increment = tf.assign_add(gs, 1)
    hook = tf.train.GlobalStepWaiterHook(wait_until_step=2)
    with tf.train.SingularMonitoredSession(hooks=[hook], scaffold=tf.train.Scaffold(saver=_RecordingSaver())) as sess:
        raw = sess.raw_session()

        def chief():
            time.sleep(0.2)
            raw.run(increment)
            raw.run(increment)

        t = threading.Thread(target=chief)
        t0 = time.monotonic()
        t.start()
        # The run starts only once another "task" has moved the global step to 2.
        step = sess.run([train_op, gs], {x: 1.0})[1]
        waited = time.monotonic() - t0
        t.join()
        assert step == 3 and waited >= 0.2
        # Later runs do not wait.
        t0 = time.monotonic()
        assert sess.run([train_op, gs], {x: 1.0})[1] == 4
        assert time.monotonic() - t0 < 0.4


def test_final_ops_hook_and_feed_fn_hook():
    x, w, loss, train_op, gs = _model()
    scale = tf.placeholder(tf.float32, [], name="scale")
    final = {"w": w, "scaled": w * scale}
    final_hook = tf.train.FinalOpsHook(final, final_ops_feed_dict={scale: 10.0})
    fed = []

    def feed_fn():
        fed.append(len(fed))
        return {x: 5.0}

    with _session([tf.train.FeedFnHook(feed_fn), final_hook]) as sess:
        for _ in range(2):
            sess.run(train_op)  # x comes from the FeedFnHook
        assert final_hook.final_ops_values is None
    # w: 1 -> 3 -> 4 with x = 5.
    assert final_hook.final_ops_values["w"] == pytest.approx(4.0)
    assert final_hook.final_ops_values["scaled"] == pytest.approx(40.0)
    assert fed == [0, 1]


def test_profiler_hook_writes_chrome_traces(tmp_path):
    x, w, loss, train_op, gs = _model()
    hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    with _session([hook]) as sess:
        for _ in range(5):
            sess.run(train_op, {x: 3.0})
    files = sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "timeline-*.json")))
    # The first run starts the timer at its stale step 0; traced runs every 2 steps after it.
    assert files == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-2.json").read_text())
    ops = {e["args"]["name"]: e for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert "loss" in ops and ops["loss"]["args"]["op"] == "Square" and ops["loss"]["dur"] >= 0
    # Arrows from producers to consumers (show_dataflow defaults to True).
    assert any(e.get("ph") == "s" for e in trace["traceEvents"])
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    tagged = [e.tagged_run_metadata.tag for e in _events(tmp_path) if e.HasField("tagged_run_metadata")]
    assert tagged == ["step_2", "step_4"]


class _Listener(tf.train.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls = []
        self.stop_at = stop_at

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return self.stop_at is not None and global_step_value >= self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_checkpoint_saver_hook_schedule_and_listeners(tmp_path):
    x, w, loss, train_op, gs = _model()
    saver = _RecordingSaver()
    listener = _Listener()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, saver=saver, listeners=[listener])
    with _session([hook], saver=saver) as sess:
        for _ in range(7):
            sess.run(train_op, {x: 1.0})
    path = os.path.join(str(tmp_path), "model.ckpt")
    # At creation (step 0), every 3 steps, and at the end (step 7 was not saved yet).
    assert saver.saves == [(0, path), (3, path), (6, path), (7, path)]
    assert listener.calls == [("begin",)] + [
        c for s in (0, 3, 6, 7) for c in (("before_save", s), ("after_save", s))
    ] + [("end", 7)]
    assert (tmp_path / "graph.pbtxt").exists()
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    logged = [(e.step, e.session_log.checkpoint_path) for e in _events(tmp_path) if e.HasField("session_log")]
    assert logged == [(0, path), (3, path), (6, path), (7, path)]


def test_checkpoint_saver_listener_can_stop_and_argument_errors(tmp_path):
    x, w, loss, train_op, gs = _model()
    saver = _RecordingSaver()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, saver=saver, listeners=[_Listener(stop_at=4)],
                                        save_graph_def=False)
    with _session([hook], saver=saver) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train_op, {x: 1.0})
            runs += 1
    assert runs == 4 and [s for s, _ in saver.saves] == [0, 2, 4]
    assert not (tmp_path / "graph.pbtxt").exists()
    with pytest.raises(ValueError, match="cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=saver, scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path))
