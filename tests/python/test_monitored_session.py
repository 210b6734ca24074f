"""MonitoredSession, SingularMonitoredSession, Scaffold and the session creators: hook call order and
arguments, merging of hook fetches/feeds/options, stopping, closing, run_step_fn, coordinated threads,
recovery after AbortedError/UnavailableError."""

import threading

import numpy as np
import pytest

import ferroflow as tf


class _NoFileSaver:
    """Saver stand-in for sessions that never save or restore (no checkpoint_dir)."""

    def save(self, *args, **kwargs):
        raise AssertionError("not expected to save")

    def restore(self, *args, **kwargs):
        raise AssertionError("not expected to restore")


def _creator(**kwargs):
    kwargs.setdefault("saver", _NoFileSaver())
    return tf.train.ChiefSessionCreator(scaffold=tf.train.Scaffold(**kwargs))


class _Recorder(tf.train.SessionRunHook):
    """Logs every call with what it can check about its arguments."""

    def __init__(self, name, log, fetches=None, feeds=None, options=None):
        self.name, self.log = name, log
        self.fetches, self.feeds, self.options = fetches, feeds, options
        self.values = []
        self.contexts = []

    def begin(self):
        self.log.append((self.name, "begin", tf.get_default_graph().finalized))

    def after_create_session(self, session, coord):
        assert isinstance(session, tf.Session) and isinstance(coord, tf.train.Coordinator)
        self.log.append((self.name, "after_create_session", session.graph.finalized))

    def before_run(self, run_context):
        self.contexts.append(run_context)
        self.log.append((self.name, "before_run"))
        if self.fetches is None and self.feeds is None and self.options is None:
            return None
        return tf.train.SessionRunArgs(self.fetches, feed_dict=self.feeds, options=self.options)

    def after_run(self, run_context, run_values):
        assert run_context is self.contexts[-1]
        self.values.append(run_values)
        self.log.append((self.name, "after_run"))

    def end(self, session):
        assert isinstance(session, tf.Session)
        self.log.append((self.name, "end"))


def test_hook_call_order_and_arguments():
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.constant(2.0, name="b")
    out = a * b
    log = []
    h1 = _Recorder("h1", log, fetches={"b": b, "pair": [b, out]})
    h2 = _Recorder("h2", log)
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[h1, h2]) as sess:
        assert log == [
            ("h1", "begin", False), ("h2", "begin", False),
            ("h1", "after_create_session", True), ("h2", "after_create_session", True),
        ]
        del log[:]
        assert sess.run(out, feed_dict={a: 3.0}) == pytest.approx(6.0)
        assert log == [("h1", "before_run"), ("h2", "before_run"), ("h1", "after_run"), ("h2", "after_run")]
        del log[:]
    assert log == [("h1", "end"), ("h2", "end")]
    ctx = h1.contexts[0]
    assert ctx is h2.contexts[0]
    assert ctx.original_args == tf.train.SessionRunArgs(out, {a: 3.0})
    assert isinstance(ctx.session, tf.Session)
    # Each hook gets the results of its own fetches, in their structure; None without fetches.
    res = h1.values[0].results
    assert res["b"] == pytest.approx(2.0) and res["pair"][0] == pytest.approx(2.0)
    assert res["pair"][1] == pytest.approx(6.0)
    assert h2.values[0].results is None
    assert isinstance(h1.values[0].options, tf.RunOptions)
    assert isinstance(h1.values[0].run_metadata, tf.RunMetadata)


def test_hook_feeds_merge_and_conflicts():
    a = tf.placeholder(tf.float32, [], name="a")
    c = tf.placeholder(tf.float32, [], name="c")
    total = a + 10 * c
    h_feed_c = _Recorder("fc", [], feeds={c: 1.0})
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[h_feed_c]) as sess:
        # The hook's feed and the caller's feed go into the same run.
        assert sess.run(total, feed_dict={a: 2.0}) == pytest.approx(12.0)
        # The caller feeding the same tensor as a hook is an error.
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={a: 2.0, c: 5.0})
    tf.reset_default_graph()
    a = tf.placeholder(tf.float32, [], name="a")
    a1 = a + 1
    hooks = [_Recorder("x", [], feeds={a: 1.0}), _Recorder("y", [], feeds={a: 2.0})]
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=hooks) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            sess.run(a1)


def test_hook_run_options_merge_into_a_traced_run():
    x = tf.constant(np.arange(4, dtype=np.float32))
    y = tf.reduce_sum(x * x, name="sumsq")
    tracer = _Recorder("t", [], fetches=y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    plain = _Recorder("p", [])
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[tracer, plain]) as sess:
        meta = tf.RunMetadata()
        assert sess.run(y, run_metadata=meta) == pytest.approx(14.0)
    # The hook's trace level applied to the whole run; every hook sees the same options and metadata.
    assert tracer.values[0].options.trace_level == tf.RunOptions.FULL_TRACE
    assert plain.values[0].run_metadata is tracer.values[0].run_metadata is meta
    nodes = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert "sumsq" in nodes


def test_request_stop_should_stop_and_run_after_stop():
    v = tf.constant(1.0)

    class StopAfter(tf.train.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 3:
                run_context.request_stop()
                assert run_context.stop_requested

    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[StopAfter()]) as sess:
        n = 0
        while not sess.should_stop():
            sess.run(v)
            n += 1
        assert n == 3
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(v)
    assert sess.should_stop()


def test_close_context_manager_and_errors():
    x = tf.placeholder(tf.float32, [], name="x")
    x2 = x * 2
    log = []
    hook = _Recorder("h", log)
    # OutOfRangeError and StopIteration in the block end training normally: end() runs, nothing escapes.
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[hook]) as sess:
        raise tf.errors.OutOfRangeError(None, None, "input exhausted")
    assert log[-1] == ("h", "end")
    log.clear()
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[hook]) as sess:
        raise StopIteration
    assert log[-1] == ("h", "end")
    log.clear()
    # Any other exception escapes and end() is not called.
    with pytest.raises(ValueError, match="model bug"):
        with tf.train.MonitoredSession(session_creator=_creator(), hooks=[hook]) as sess:
            raise ValueError("model bug")
    assert ("h", "end") not in log
    # close() without a with block; closing twice is an error.
    sess = tf.train.MonitoredSession(session_creator=_creator())
    assert sess.graph is tf.get_default_graph()
    assert sess.run(x2, {x: 1.5}) == pytest.approx(3.0)
    sess.close()
    assert sess.should_stop() and sess.graph is None
    with pytest.raises(RuntimeError, match="Session is already closed"):
        sess.close()


def test_run_step_fn_with_step_context():
    c = tf.placeholder(tf.float32, [], name="c")
    v = tf.add(c, 4.0)
    w = tf.add(c, 0.5)
    log = []
    hook = _Recorder("h", log)
    results = []

    def step_fn(step_context):
        assert isinstance(step_context.session, tf.Session)
        a = step_context.session.run(v, feed_dict={c: 0.5})  # no hooks
        if len(results) == 2:
            step_context.request_stop()
        return a, step_context.run_with_hooks(fetches=w, feed_dict={c: 0.1})

    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[hook]) as sess:
        while not sess.should_stop():
            results.append(sess.run_step_fn(step_fn))
    assert len(results) == 2
    assert results[0][0] == pytest.approx(4.5) and results[0][1] == pytest.approx(0.6)
    # Hooks ran only around run_with_hooks: twice.
    assert [e for e in log if e[1] == "before_run"] == [("h", "before_run")] * 2

    class Stepper:
        def step(self, step_context):
            return step_context.session.run(w, {c: 1.0})

    with tf.train.SingularMonitoredSession(scaffold=tf.train.Scaffold(saver=_NoFileSaver())) as sess:
        assert sess.run_step_fn(Stepper().step) == pytest.approx(1.5)
        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context` argument"):
            sess.run_step_fn(lambda ctx, extra: None)
        # A stop requested inside step_fn surfaces as StopIteration, then should_stop() is True.
        with pytest.raises(StopIteration):
            sess.run_step_fn(lambda step_context: step_context.request_stop())
        assert sess.should_stop()


def test_coordinated_thread_errors_surface_and_threads_are_joined():
    v = tf.constant(3.0)
    started = []

    class ThreadHook(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            def body():
                with coord.stop_on_exception():
                    coord.wait_for_stop(0.05)
                    raise ValueError("input thread failed")

            t = threading.Thread(target=body)
            coord.register_thread(t)
            t.start()
            started.append(t)

    sess = tf.train.MonitoredSession(session_creator=_creator(), hooks=[ThreadHook()])
    started[0].join(5)
    # MonitoredSession.should_stop() answers True rather than raising; close() re-raises the error.
    assert sess.should_stop()
    with pytest.raises(ValueError, match="input thread failed"):
        sess.close()
    # A SingularMonitoredSession (no recovery layer) raises it from should_stop() already.
    sess = tf.train.SingularMonitoredSession(hooks=[ThreadHook()], scaffold=tf.train.Scaffold(saver=_NoFileSaver()))
    started[1].join(5)
    assert sess.run(v) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="input thread failed"):
        sess.should_stop()
    with pytest.raises(ValueError, match="input thread failed"):
        sess.close()
    assert not any(t.is_alive() for t in started)


def test_singular_monitored_session_raw_session_and_no_recovery():
    v = tf.get_variable("v", [], initializer=tf.constant_initializer(5.0))
    flaky = _FlakyHook(fail_at={2: tf.errors.AbortedError})
    with tf.train.SingularMonitoredSession(hooks=[flaky], scaffold=tf.train.Scaffold(saver=_NoFileSaver())) as sess:
        raw = sess.raw_session()
        assert isinstance(raw, tf.Session)
        assert raw.run(v) == pytest.approx(5.0)
        sess.run(v)
        with pytest.raises(tf.errors.AbortedError):
            sess.run(v)
    assert flaky.sessions == 1


class _FlakyHook(tf.train.SessionRunHook):
    """Raises the given error class in before_run of the given (1-based) run numbers; counts sessions."""

    def __init__(self, fail_at):
        self.fail_at = dict(fail_at)
        self.runs = 0
        self.sessions = 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def before_run(self, run_context):
        self.runs += 1
        error = self.fail_at.pop(self.runs, None)
        if error is not None:
            raise error(None, None, f"injected failure at run {self.runs}")


def test_recovery_recreates_the_session_and_repeats_the_run():
    v = tf.get_variable("v", [], initializer=tf.constant_initializer(1.0))
    inc = tf.assign_add(v, 1.0)
    flaky = _FlakyHook(fail_at={3: tf.errors.AbortedError, 5: tf.errors.UnavailableError})
    with tf.train.MonitoredSession(session_creator=_creator(), hooks=[flaky]) as sess:
        values = [sess.run(inc) for _ in range(4)]
    # Without a checkpoint the new session starts from the initializers again.
    assert values == [2.0, 3.0, 2.0, 2.0]
    assert flaky.sessions == 3


def test_scaffold_defaults_collections_and_copy():
    v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
    lv = tf.get_variable("lv", [], initializer=tf.zeros_initializer(), collections=[tf.GraphKeys.LOCAL_VARIABLES])
    tf.summary.scalar("v0", v[0])
    saver = _NoFileSaver()
    calls = []
    scaffold = tf.train.Scaffold(saver=saver, init_fn=lambda s, sess: calls.append((s, sess.run(v))))
    assert scaffold.init_op is None
    scaffold.finalize()
    g = tf.get_default_graph()
    assert g.finalized
    for key, op in [
        (tf.GraphKeys.INIT_OP, scaffold.init_op), (tf.GraphKeys.READY_OP, scaffold.ready_op),
        (tf.GraphKeys.READY_FOR_LOCAL_INIT_OP, scaffold.ready_for_local_init_op),
        (tf.GraphKeys.LOCAL_INIT_OP, scaffold.local_init_op), (tf.GraphKeys.SUMMARY_OP, scaffold.summary_op),
    ]:
        assert tf.get_collection(key) == [op]
    assert scaffold.saver is saver
    with tf.Session() as sess:
        # Before initialization the ready ops name what is missing.
        assert sorted(sess.run(scaffold.ready_op)) == [b"lv", b"v"]
        assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"v"]
        sess.run(scaffold.init_op)
        assert list(sess.run(scaffold.ready_op)) == [b"lv"]
        sess.run(scaffold.local_init_op)
        assert sess.run(scaffold.ready_op).size == 0
    creator = tf.train.ChiefSessionCreator(scaffold=scaffold)
    sess = creator.create_session()
    assert calls and calls[0][0] is scaffold and np.array_equal(calls[0][1], [1.0, 1.0])
    assert sess.run(lv) == 0.0
    copied = tf.train.Scaffold(copy_from_scaffold=scaffold, ready_op=scaffold.init_op)
    assert copied.ready_op is scaffold.init_op and copied.local_init_op is scaffold.local_init_op
    assert copied.saver is saver
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance"):
        tf.train.Scaffold(copy_from_scaffold=object())


def test_scaffold_get_or_default():
    made = []
    assert tf.train.Scaffold.get_or_default("x", "my_key", lambda: made.append(1) or "built") == "built"
    assert tf.get_collection("my_key") == ["built"]
    assert tf.train.Scaffold.get_or_default("x", "my_key", lambda: made.append(1)) == "built"
    assert made == [1]
    tf.add_to_collection("my_key", "second")
    with pytest.raises(RuntimeError, match="More than one item in the collection my_key"):
        tf.train.Scaffold.get_or_default("x", "my_key", lambda: None)


def test_worker_session_creator_waits_for_a_ready_model():
    tf.constant(1.0)
    # Nothing to initialize: a worker's session is ready at once.
    worker = tf.train.WorkerSessionCreator(scaffold=tf.train.Scaffold(saver=_NoFileSaver()), max_wait_secs=1)
    assert isinstance(worker.create_session(), tf.Session)
    tf.reset_default_graph()
    tf.get_variable("v", [], initializer=tf.zeros_initializer())
    # Variables live in each session (no shared server), so only a chief can make them ready.
    worker = tf.train.WorkerSessionCreator(scaffold=tf.train.Scaffold(saver=_NoFileSaver()), max_wait_secs=0.1)
    with pytest.raises(tf.errors.DeadlineExceededError, match="Session was not ready after waiting 0.1 secs"):
        worker.create_session()


def test_session_creator_interface():
    with pytest.raises(NotImplementedError, match="create_session is not implemented"):
        tf.train.SessionCreator().create_session()


def test_closing_hands_the_graph_back_editable():
    # MonitoredSession finalizes the graph it was given; closing makes it editable again (as TF does),
    # so a program can build evaluation ops after training.
    v = tf.get_variable("v", [], initializer=tf.ones_initializer())
    with tf.train.MonitoredSession(session_creator=_creator()) as sess:
        assert tf.get_default_graph().finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(1.0)
        assert sess.run(v) == 1.0
    assert not tf.get_default_graph().finalized
    doubled = v * 2
    with tf.Session() as plain:
        plain.run(tf.global_variables_initializer())
        assert plain.run(doubled) == 2.0
