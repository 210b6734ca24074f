"""Runs whose steps wait for each other, as TensorFlow runs them: a dequeue and the enqueue that feeds it in one
`Session.run`, a `take_grad` and its `apply_grad`, a loop dequeuing what the same run enqueues. TensorFlow runs the
ops of a step concurrently; ferroflow runs waiting steps after the others, and on threads of their own when two of
them are independent (crates/runtime/src/plan/waiting.rs). Expected values: tools/check_waiting_steps_tf.py under
TensorFlow 2.21. Every run carries a deadline, so a regression fails instead of hanging."""

import threading
import time

import numpy as np
import pytest

import ferroflow.compat.v1 as tf

LIMIT = tf.RunOptions(timeout_in_ms=10000)


def _queue(capacity=10):
    return tf.FIFOQueue(capacity, tf.float32, shapes=[])


def test_dequeue_and_the_enqueue_feeding_it_in_one_run():
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue()
        assert s.run([q.dequeue(), q.enqueue(3.0)], options=LIMIT) == [3.0, None]


def test_enqueue_many_beyond_capacity_and_dequeue_many_in_one_run():
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue(capacity=1)
        _, got = s.run([q.enqueue_many([[1.0, 2.0, 3.0]]), q.dequeue_many(3)], options=LIMIT)
        np.testing.assert_array_equal(got, [1.0, 2.0, 3.0])


def test_dequeue_and_close_in_one_run_is_out_of_range():
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue()
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run([q.dequeue(), q.close()], options=LIMIT)


def test_a_chain_of_waits_beside_the_enqueue_that_starts_it():
    with tf.Graph().as_default(), tf.Session() as s:
        a, b = _queue(), _queue()
        put_b = b.enqueue(a.dequeue() * 2)
        with tf.control_dependencies([put_b]):
            y = tf.identity(b.dequeue())
        assert s.run([y, a.enqueue(5.0)], options=LIMIT) == [10.0, None]


def test_take_grad_waits_for_the_apply_grad_of_the_same_run():
    with tf.Graph().as_default(), tf.Session() as s:
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
        assert s.run([acc.take_grad(1), acc.apply_grad(4.0, local_step=0)], options=LIMIT) == [4.0, None]


def test_a_loop_dequeues_what_the_same_run_enqueues():
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue()
        loop = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + q.dequeue()), [0, 0.0])
        (i, total), _ = s.run([loop, q.enqueue_many([[1.0, 2.0, 3.0]])], options=LIMIT)
        assert (i, total) == (3, 6.0)


def test_a_failing_step_ends_the_waits_of_its_run_and_takes_nothing():
    with tf.Graph().as_default(), tf.Session() as s:
        a, b = _queue(), _queue()
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run([a.dequeue(), b.dequeue(), tf.assert_equal(1, 2)], options=LIMIT)
        assert time.monotonic() - start < 5
        s.run(a.enqueue(1.0))
        assert s.run(a.size()) == 1  # the abandoned dequeue took nothing
        assert s.run(a.dequeue(), options=LIMIT) == 1.0


def test_waits_on_threads_keep_the_run_deadline():
    with tf.Graph().as_default(), tf.Session() as s:
        a, b = _queue(), _queue()
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run([a.dequeue(), b.dequeue()], options=tf.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - start < 5


def test_closing_the_session_cancels_waits_on_threads():
    with tf.Graph().as_default():
        a, b = _queue(), _queue()
        both = [a.dequeue(), b.dequeue()]
        s = tf.Session()
        errors = []

        def run():
            try:
                s.run(both, options=LIMIT)
            except tf.errors.OpError as e:
                errors.append(type(e))

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.2)
        s.close()
        t.join(5)
        assert not t.is_alive()
        assert errors == [tf.errors.CancelledError]


def test_two_waits_in_a_loop_body_fed_by_the_same_run():
    with tf.Graph().as_default(), tf.Session() as s:
        a, b = _queue(), _queue()
        loop = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + a.dequeue() + b.dequeue()), [0, 0.0])
        (i, total), _, _ = s.run([loop, a.enqueue_many([[1.0, 2.0, 3.0]]), b.enqueue_many([[10.0, 20.0, 30.0]])],
                                 options=LIMIT)
        assert (i, total) == (3, 66.0)


def test_waits_that_never_block_keep_results_and_order():
    with tf.Graph().as_default(), tf.Session() as s:
        a, b = _queue(), _queue()
        s.run([a.enqueue_many([[1.0, 2.0]]), b.enqueue_many([[3.0, 4.0]])])
        x, y = a.dequeue(), b.dequeue()
        assert s.run([x, y, x + y], options=LIMIT) == [1.0, 3.0, 4.0]
        assert s.run({"sum": x + y, "x": x}, options=LIMIT) == {"sum": 6.0, "x": 2.0}


def test_a_constant_under_control_dependencies_waits_for_them():
    """The global step's increment reads a constant made under the update's control dependencies (as
    Optimizer.apply_gradients builds it): when the wait before it fails, nothing after it ran."""
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue()
        v = tf.Variable(0.0)
        with tf.control_dependencies([q.dequeue()]):
            one = tf.constant(1.0)
        inc = tf.assign_add(v, one)
        s.run(v.initializer)
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(inc, options=tf.RunOptions(timeout_in_ms=100))
        assert s.run(v) == 0.0
        s.run(q.enqueue(5.0))
        assert s.run(inc, options=LIMIT) == 1.0


def test_a_constant_under_control_dependencies_orders_inter_op_runs():
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        first = tf.assign(v, 10.0)
        with tf.control_dependencies([first]):
            one = tf.constant(1.0)
        inc = tf.assign_add(v, one)
        config = tf.ConfigProto(inter_op_parallelism_threads=2)
        with tf.Session(config=config) as s:
            for _ in range(50):
                s.run(v.initializer)
                assert s.run(inc) == 11.0


def test_a_traced_run_of_independent_waits_finishes():
    """Traced runs time each node on one thread; one with independent waits runs like any other (without node
    timings) rather than hang."""
    with tf.Graph().as_default(), tf.Session() as s:
        q = _queue()
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=10000)
        assert s.run([q.dequeue(), q.enqueue(3.0)], options=options, run_metadata=meta) == [3.0, None]
