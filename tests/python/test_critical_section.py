"""``tf.CriticalSection`` (ops MutexV2/MutexLock/ConsumeMutexLock), ``tf.check_pinned`` and
``tf.nondifferentiable_batch_function`` (issue 23). The critical section is checked with threads running
``Session.run`` at once; check_pinned as TensorFlow's CPU build behaves (every run fails, "not pinned")."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ferroflow as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# ---------------------------------------------------------------- 3. check_pinned


def test_check_pinned_builds_like_identity_and_fails_when_run():
    x = tf.constant([[1.0, 2.0]])
    y = tf.check_pinned(x, name="pinned")
    assert y.op.type == "CheckPinned" and y.op.name == "pinned"
    assert y.dtype == tf.float32 and y.shape.as_list() == [1, 2]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="not pinned"):
            sess.run(y)


# ---------------------------------------------------------------- 6. CriticalSection


def test_critical_section_serializes_concurrent_runs():
    v = tf.Variable(0, name="counter")
    cs = tf.CriticalSection(name="cs")
    assert cs.name == "cs"

    def count():
        value = tf.identity(v)
        with tf.control_dependencies([value]):
            with tf.control_dependencies([tf.assign_add(v, 1)]):
                return tf.identity(value)

    out = cs.execute(count)
    assert out.dtype == tf.int32
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"MutexV2", "MutexLock", "ConsumeMutexLock"} <= types
    threads, per_thread = 4, 60
    seen = []
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work():
            mine = [int(sess.run(out)) for _ in range(per_thread)]
            seen.extend(mine)

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert sess.run(v) == threads * per_thread
    # Each read-and-increment happened alone: every count was seen exactly once.
    assert sorted(seen) == list(range(threads * per_thread))


def test_two_executions_in_one_run_and_a_failed_run_release_the_lock():
    v = tf.Variable(0.0)
    cs = tf.CriticalSection()

    def add(k):
        return lambda: tf.assign_add(v, k) + 0.0

    a, b = cs.execute(add(1.0)), cs.execute(add(10.0))
    bad = cs.execute(lambda: tf.debugging.check_numerics(tf.identity(v) / 0.0, "nan"))
    with tf.Session() as sess:
        sess.run(v.initializer)
        # One run holds the mutex twice, one execution after the other.
        assert sorted(sess.run([a, b])) == [1.0, 11.0]
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad)
        assert sess.run(a) == 12.0  # the failed run let go of the mutex


def test_critical_section_refuses_nesting_and_shared_exclusive_resources():
    v = tf.Variable(1.0)
    cs = tf.CriticalSection()
    with pytest.raises(ValueError, match="already running"):
        cs.execute(lambda: cs.execute(lambda: tf.identity(v)))
    cs.execute(lambda: tf.assign_add(v, 1.0))
    with pytest.raises(ValueError, match="exclusive"):
        tf.CriticalSection().execute(lambda: tf.assign_add(v, 1.0))
    with pytest.raises(ValueError, match="critical_section_def"):
        tf.CriticalSection(critical_section_def=object())


# ---------------------------------------------------------------- 7. nondifferentiable_batch_function


def test_nondifferentiable_batch_function_gives_the_functions_outputs_and_no_gradient():
    @tf.nondifferentiable_batch_function(1, 8, 100000)
    def double_plus(a, b):
        return a * 2.0 + b, tf.reduce_sum(a, axis=1)

    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 3])
    s, r = double_plus(x, y)
    assert tf.gradients(s, x) == [None]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    yv = np.ones([2, 3], np.float32)
    with tf.Session() as sess:
        got_s, got_r = sess.run([s, r], {x: xv, y: yv})
    np.testing.assert_array_equal(got_s, xv * 2 + yv)
    np.testing.assert_array_equal(got_r, xv.sum(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="monotonically"):
        tf.nondifferentiable_batch_function(1, 8, 10, allowed_batch_sizes=[4, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size"):
        tf.nondifferentiable_batch_function(1, 0, 10)


