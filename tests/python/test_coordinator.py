"""tf.train.Coordinator, LooperThread, SecondOrStepTimer and the queue-runner functions."""

import sys
import threading
import time

import pytest

import ferroflow as tf


def _stoppable(coord, started=None):
    def body():
        if started is not None:
            started.set()
        while not coord.should_stop():
            time.sleep(0.005)

    return threading.Thread(target=body)


def test_request_stop_flag_and_clear():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)
    coord.request_stop()
    assert coord.should_stop()
    assert coord.wait_for_stop(0.01)
    coord.clear_stop()
    assert not coord.should_stop()


def test_exception_in_one_thread_stops_all_and_join_reraises():
    coord = tf.train.Coordinator()
    started = threading.Event()
    workers = [_stoppable(coord, started) for _ in range(3)]

    def failing():
        started.wait()
        try:
            raise ValueError("worker 4 broke")
        except ValueError as e:
            coord.request_stop(e)

    threads = workers + [threading.Thread(target=failing)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="worker 4 broke") as info:
        coord.join(threads, stop_grace_period_secs=5)
    # The traceback reaches the failing thread's frame.
    assert "failing" in {f.name for f in __import__("traceback").extract_tb(info.value.__traceback__)}
    assert all(not t.is_alive() for t in threads)
    assert coord.should_stop() and coord.joined


def test_exc_info_tuple_and_first_exception_wins():
    coord = tf.train.Coordinator()
    try:
        raise KeyError("first")
    except KeyError:
        coord.request_stop(sys.exc_info())
    try:
        raise TypeError("second")
    except TypeError as e:
        coord.request_stop(e)
    with pytest.raises(KeyError, match="first"):
        coord.raise_requested_exception()
    with pytest.raises(KeyError, match="first"):
        coord.join([])


def test_stop_on_exception_reports_and_swallows():
    coord = tf.train.Coordinator()

    def body():
        with coord.stop_on_exception():
            raise RuntimeError("from the with block")

    t = threading.Thread(target=body)
    t.start()
    with pytest.raises(RuntimeError, match="from the with block"):
        coord.join([t])


def test_clean_stop_exception_types():
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    assert coord.should_stop()
    coord.join([])  # nothing re-raised
    coord = tf.train.Coordinator(clean_stop_exception_types=(StopIteration,))
    coord.request_stop(StopIteration())
    coord.join([])
    coord = tf.train.Coordinator(clean_stop_exception_types=())
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    with pytest.raises(tf.errors.OutOfRangeError):
        coord.join([])


def test_grace_period_runtime_error_names_laggards():
    coord = tf.train.Coordinator()
    release = threading.Event()
    good = _stoppable(coord)
    laggard = threading.Thread(target=release.wait, name="stubborn-thread")
    good.start()
    laggard.start()
    coord.request_stop()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running: stubborn-thread"):
        coord.join([good, laggard], stop_grace_period_secs=0.3)
    waited = time.monotonic() - t0
    assert 0.25 <= waited < 3.0
    assert not good.is_alive()
    release.set()
    laggard.join()


def test_ignore_live_threads_and_exception_over_runtime_error():
    coord = tf.train.Coordinator()
    release = threading.Event()
    laggard = threading.Thread(target=release.wait, name="slow")
    laggard.start()
    coord.request_stop()
    coord.join([laggard], stop_grace_period_secs=0.05, ignore_live_threads=True)
    # A reported exception takes precedence over the laggards' RuntimeError.
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("root cause"))
    with pytest.raises(ValueError, match="root cause"):
        coord.join([laggard], stop_grace_period_secs=0.05)
    release.set()
    laggard.join()


def test_registered_threads_are_joined_and_exception_after_join_raises_at_once():
    coord = tf.train.Coordinator()
    done = []
    t = threading.Thread(target=lambda: done.append(coord.wait_for_stop(5)))
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    coord.join()
    assert done == [True] and coord.joined
    with pytest.raises(ValueError, match="too late"):
        coord.request_stop(ValueError("too late"))


def test_join_without_stop_returns_when_threads_end():
    coord = tf.train.Coordinator()
    threads = [threading.Thread(target=time.sleep, args=(0.05,)) for _ in range(2)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    coord.join(threads)
    assert time.monotonic() - t0 < 1.0
    assert not coord.should_stop()


def test_looper_thread_timer_and_loop():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.02, target=calls.append, args=("tick",))
    assert looper.daemon and looper.is_alive()
    time.sleep(0.15)
    coord.request_stop()
    coord.join(stop_grace_period_secs=2)
    assert not looper.is_alive()
    assert 3 <= len(calls) <= 12 and set(calls) == {"tick"}


def test_looper_thread_subclass_hooks_and_errors():
    coord = tf.train.Coordinator()
    events = []

    class Counter(tf.train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            if events.count("run") == 3:
                raise ValueError("third iteration failed")

        def stop_loop(self):
            events.append("stop")

    Counter(coord, None).start()
    with pytest.raises(ValueError, match="third iteration failed"):
        coord.join(stop_grace_period_secs=2)
    # The exception ended the loop before stop_loop.
    assert events == ["start", "run", "run", "run"]
    with pytest.raises(ValueError, match="must be a Coordinator"):
        tf.train.LooperThread("not a coordinator", 1)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), 1, args=(1,))


def test_second_or_step_timer():
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.last_triggered_step() is None
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert [s for s in range(1, 10) if timer.should_trigger_for_step(s)] == [3, 4, 5, 6, 7, 8, 9]
    secs, steps = timer.update_last_triggered_step(3)
    assert steps == 3 and secs >= 0
    assert not timer.should_trigger_for_step(3)
    assert not timer.should_trigger_for_step(5) and timer.should_trigger_for_step(6)
    timer.reset()
    assert timer.should_trigger_for_step(1)
    timed = tf.train.SecondOrStepTimer(every_secs=0.05)
    timed.update_last_triggered_step(10)
    assert not timed.should_trigger_for_step(11)
    time.sleep(0.06)
    assert timed.should_trigger_for_step(11)


def test_start_queue_runners_without_queue_runners():
    with pytest.raises(ValueError, match="No default session is registered"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="sess must be a `tf.Session` object"):
        tf.train.start_queue_runners(sess=object())
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        assert tf.train.start_queue_runners(sess=sess, coord=coord, daemon=False, start=False) == []
        assert tf.train.start_queue_runners() == []


def test_add_queue_runner_and_start():
    created = []

    class FakeRunner:
        def create_threads(self, sess, coord=None, daemon=False, start=False):
            t = threading.Thread(target=lambda: None, daemon=daemon)
            if start:
                t.start()
            created.append((sess, coord, daemon, start))
            return [t]

    tf.train.add_queue_runner(FakeRunner())
    tf.train.add_queue_runner(FakeRunner(), collection="mine")
    with tf.Session() as sess:
        threads = tf.train.start_queue_runners(sess)
        assert len(threads) == 1 and created == [(sess, None, True, True)]
        threads = tf.train.start_queue_runners(sess, daemon=False, start=False, collection="mine")
        assert len(threads) == 1 and not threads[0].is_alive()


class _NamedQueue:
    """What a QueueRunner needs of a queue when close_op and cancel_op are given: a name."""

    name = "fake_queue"


def _counting_enqueue(limit):
    """An "enqueue" op that counts up to ``limit`` and then fails like a closed queue would."""
    counter = tf.get_variable("counter", [], tf.int32, initializer=tf.zeros_initializer())
    with tf.control_dependencies([tf.debugging.assert_less(counter, limit)]):
        enqueue = tf.assign_add(counter, 1)
    return counter, enqueue


def test_queue_runner_threads_run_until_closed_then_close_once():
    counter, enqueue = _counting_enqueue(20)
    closed = tf.get_variable("closed", [], tf.int32, initializer=tf.zeros_initializer())
    close_op = tf.assign_add(closed, 1)
    qr = tf.train.QueueRunner(_NamedQueue(), [enqueue, enqueue], close_op=close_op, cancel_op=tf.no_op(),
                              queue_closed_exception_types=(tf.errors.InvalidArgumentError,))
    assert qr.name == "fake_queue" and qr.enqueue_ops == [enqueue, enqueue] and qr.close_op is close_op
    tf.train.add_queue_runner(qr)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        # Two enqueue threads and the one that cancels on a stop.
        assert len(threads) == 3 and all(t.daemon for t in threads)
        for t in threads[:2]:
            t.join(10)
        # Each thread ran until its op "closed"; the last one ran close_op, once.
        assert 20 <= sess.run(counter) <= 21
        assert sess.run(closed) == 1
        assert not coord.should_stop() and qr.exceptions_raised == []
        coord.request_stop()
        coord.join(stop_grace_period_secs=5)


# Without a coordinator the enqueue thread re-raises its error after recording it, as in TensorFlow.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_queue_runner_reports_errors_and_stops_on_request():
    counter, enqueue = _counting_enqueue(10**9)
    cancelled = tf.get_variable("cancelled", [], tf.int32, initializer=tf.zeros_initializer())
    cancel_op = tf.assign_add(cancelled, 1)
    qr = tf.train.QueueRunner(_NamedQueue(), [enqueue], close_op=tf.no_op(), cancel_op=cancel_op)
    bad = tf.train.QueueRunner(_NamedQueue(), [tf.debugging.assert_less(counter, -1)], close_op=tf.no_op(),
                               cancel_op=tf.no_op())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        # While they run, a second call for the same session creates nothing.
        assert qr.create_threads(sess, coord=coord) == []
        time.sleep(0.05)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(counter) > 0 and sess.run(cancelled) == 1
        # An unexpected error goes to the coordinator, which re-raises it from join().
        coord = tf.train.Coordinator()
        bad_threads = bad.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError):
            coord.join(bad_threads, stop_grace_period_secs=5)
        # Without a coordinator it is kept in exceptions_raised.
        (t,) = bad.create_threads(sess, start=True)
        t.join(5)
        assert len(bad.exceptions_raised) == 1
        assert isinstance(bad.exceptions_raised[0], tf.errors.InvalidArgumentError)
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        tf.train.QueueRunner(_NamedQueue(), [])
    with pytest.raises(TypeError, match="must be a tuple of tf.errors.OpError subclasses"):
        tf.train.QueueRunner(_NamedQueue(), [enqueue], close_op=tf.no_op(), cancel_op=tf.no_op(),
                             queue_closed_exception_types=(ValueError,))
