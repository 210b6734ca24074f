"""tf.data iterators and threads: Session.close stops prefetching threads at once and leaks none."""

import os
import threading
import time

import numpy as np
import pytest

import ferroflow as tf


def _threads():
    return len(os.listdir("/proc/self/task"))


def _settle(target, timeout=5.0):
    """The thread count once it is back to ``target`` (or the deadline passed)."""
    end = time.monotonic() + timeout
    while _threads() > target and time.monotonic() < end:
        time.sleep(0.01)
    return _threads()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_close_with_prefetching_iterator_is_fast_and_leaks_no_thread():
    # Warm the kernel pools so that only the pipeline's threads come and go.
    with tf.Graph().as_default(), tf.Session() as s:
        s.run(tf.matmul(tf.ones([64, 64]), tf.ones([64, 64])))
    before = _threads()
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(10**9).map(lambda v: v * 2, num_parallel_calls=2).prefetch(8)
        ds = ds.map(lambda v: v + 1).prefetch(4)
        nxt = ds.make_one_shot_iterator().get_next()
        s = tf.Session()
        assert [int(s.run(nxt)) for _ in range(5)] == [1, 3, 5, 7, 9]
        assert _threads() >= before + 2, "two prefetching threads run"
        start = time.monotonic()
        s.close()
        assert time.monotonic() - start < 1.0
    assert _settle(before) == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_reinitializing_stops_the_previous_threads():
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(10**9).prefetch(2).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as s:
            s.run(it.initializer)
            s.run(nxt)
            running = _threads()
            for _ in range(5):
                s.run(it.initializer)
                assert int(s.run(nxt)) == 0
            assert _settle(running) == running


def test_close_wakes_a_get_next_waiting_for_a_slow_pipeline():
    big = np.ones((600, 600), np.float32)
    with tf.Graph().as_default():
        m = tf.constant(big)

        def slow(v):
            x = m
            for _ in range(20):
                x = tf.matmul(x, m) / 600.0
            return v + tf.cast(tf.reduce_sum(x) * 0.0, tf.int64)

        ds = tf.data.Dataset.range(100).map(slow).prefetch(1)
        nxt = ds.make_one_shot_iterator().get_next()
        s = tf.Session()
        errors = []

        def pull():
            try:
                while True:
                    s.run(nxt)
            except (tf.errors.CancelledError, tf.errors.OutOfRangeError) as e:
                errors.append(type(e))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        t = threading.Thread(target=pull)
        t.start()
        time.sleep(0.2)
        start = time.monotonic()
        s.close()
        assert time.monotonic() - start < 1.0
        t.join(10)
        assert not t.is_alive()
        assert errors and errors[0] is tf.errors.CancelledError, errors


def test_get_next_honours_run_timeout():
    big = np.ones((800, 800), np.float32)
    with tf.Graph().as_default():
        m = tf.constant(big)

        def slow(v):
            x = m
            for _ in range(40):
                x = tf.matmul(x, m) / 800.0
            return v + tf.cast(tf.reduce_sum(x) * 0.0, tf.int64)

        nxt = tf.data.Dataset.range(100).map(slow).prefetch(1).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            opts = tf.RunOptions(timeout_in_ms=5)
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(nxt, options=opts)
