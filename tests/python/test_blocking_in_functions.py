"""A queue read inside a loop body or a branch waits like a top-level dequeue: on the caller's thread, not
inside a session pool's one-run-at-a-time turn, so other runs of the session go on while it waits."""

import threading

import numpy as np

import ferroflow as tf


def _session_with_own_pool(graph):
    # A session pool admits one run at a time: a run waiting inside its turn would hold up every other run.
    return tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=1))


def _check_other_runs_proceed_while_waiting(build):
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
        x = tf.placeholder(tf.float32, [])
        enqueue = q.enqueue(x)
        waiting, num_values = build(q)
        other = tf.reduce_sum(tf.range(10.0))
    with _session_with_own_pool(g) as sess:
        result = {}
        waiter = threading.Thread(
            target=lambda: result.setdefault("v", sess.run(waiting, options=tf.RunOptions(timeout_in_ms=20000))))
        waiter.start()
        try:
            done = threading.Event()
            runner = threading.Thread(target=lambda: (sess.run(other), done.set()))
            runner.start()
            # The waiting run must not keep this one out of the pool.
            assert done.wait(5), "a run waited behind a loop blocked on a queue"
            assert waiter.is_alive(), "the loop should still be waiting for data"
        finally:
            for v in [1.0, 2.0, 4.0][:num_values]:
                sess.run(enqueue, feed_dict={x: v})
            waiter.join(20)
            runner.join(20)
    assert not waiter.is_alive() and not runner.is_alive()
    return result["v"]


def test_a_while_loop_dequeuing_in_its_body_waits_outside_the_pool():
    def build(q):
        _, total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + q.dequeue()), [0, 0.0])
        return total, 3

    np.testing.assert_allclose(_check_other_runs_proceed_while_waiting(build), 7.0)


def test_a_branch_dequeuing_waits_outside_the_pool():
    def build(q):
        return tf.cond(tf.constant(True), lambda: q.dequeue() * 2.0, lambda: tf.constant(-1.0)), 1

    np.testing.assert_allclose(_check_other_runs_proceed_while_waiting(build), 2.0)
