"""Session.run from several Python threads at once, on the shared pool and on a session's own pool."""

import threading

import numpy as np
import pytest

import ferroflow as tf


@pytest.mark.parametrize("intra_op_threads", [0, 2, 3])
def test_concurrent_training_steps_finish_and_count(intra_op_threads):
    # Large enough that the update kernel splits its work over the pool while it holds the variable's
    # lock: on a session's own pool this used to deadlock as soon as two steps overlapped.
    w = tf.Variable(np.ones(1 << 18, np.float32), name="w")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_sum(w * w), global_step=step)
    config = tf.ConfigProto(intra_op_parallelism_threads=intra_op_threads)
    sess = tf.Session(config=config)
    sess.run(tf.global_variables_initializer())
    errors = []

    def work():
        try:
            for _ in range(50):
                sess.run(train)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "concurrent Session.run calls did not finish (deadlock)"
    assert not errors
    assert sess.run(step) == 200
    expected = 0.98**200  # 200 steps of w -= 0.01 * 2w
    got = sess.run(w)[:4]
    if intra_op_threads:
        # Runs on a session's own pool take turns: exactly the sequential result.
        np.testing.assert_allclose(got, np.full(4, expected, np.float32), rtol=1e-4)
    else:
        # Side by side, a step may compute its gradient from a value another step is about to update
        # (TF's use_locking=False race): steps are then larger, never smaller.
        assert np.all((got > 0) & (got <= expected * (1 + 1e-4)))
    sess.close()


def _train_mlp(intra_op_threads, steps=4, inter_op_threads=0):
    """A few Adam steps of a 784-512-512-10 MLP (products big enough to split over threads)."""
    rng = np.random.default_rng(5)
    with tf.Graph().as_default():
        x = tf.constant(rng.standard_normal((128, 784)).astype(np.float32))
        y = tf.constant(rng.integers(0, 10, 128).astype(np.int32))
        h = x
        for i, (a, b) in enumerate([(784, 512), (512, 512), (512, 10)]):
            w = tf.Variable(rng.uniform(-0.05, 0.05, (a, b)).astype(np.float32), name=f"w{i}")
            h = tf.matmul(h, w)
            if i < 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        config = tf.ConfigProto(
            intra_op_parallelism_threads=intra_op_threads, inter_op_parallelism_threads=inter_op_threads)
        with tf.Session(config=config) as sess:
            assert sess._native.inter_op_threads == max(1, inter_op_threads)
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            return sess.run(tf.trainable_variables())


def test_training_is_bit_identical_for_every_thread_count():
    # Issue 18: every output element is one sum in an order fixed by the problem, never by the split.
    ref = _train_mlp(1)
    for threads in (2, 3, 0):  # 0: the process-wide kernel team
        for a, b in zip(ref, _train_mlp(threads)):
            np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_inter_op_threads_run_independent_ops_with_the_same_bits():
    # inter_op_parallelism_threads > 1: small independent ops run beside the big ones, same values.
    ref = _train_mlp(0)
    for inter in (2, 4):
        for a, b in zip(ref, _train_mlp(0, inter_op_threads=inter)):
            np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_inter_op_threads_keep_concurrent_runs_and_queues_working():
    # A queue's dequeue may block: such runs go one op at a time; others run with inter-op workers.
    config = tf.ConfigProto(inter_op_parallelism_threads=3)
    with tf.Graph().as_default(), tf.Session(config=config) as sess:
        q = tf.FIFOQueue(10, tf.float32, shapes=[()])
        enq = q.enqueue_many([tf.range(5.0)])
        deq = q.dequeue()
        parts = [tf.reduce_sum(tf.square(tf.range(float(i + 1)))) for i in range(6)]
        sess.run(enq)
        assert [sess.run(deq) for _ in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert sess.run(parts) == [sum(j * j for j in range(i + 1)) for i in range(6)]


def test_default_thread_count_follows_the_cpu_affinity_mask():
    # A process pinned to one CPU (taskset, a Kubernetes CPU set) gets one thread, not one per host core.
    import os
    import subprocess
    import sys

    cpus = sorted(os.sched_getaffinity(0))
    code = "import ferroflow as tf; print(tf.Session()._native.intra_op_threads)"
    for allowed in ({cpus[0]}, set(cpus)):
        out = subprocess.run(
            [sys.executable, "-c", code],
            preexec_fn=lambda a=allowed: os.sched_setaffinity(0, a),
            capture_output=True,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k != "RAYON_NUM_THREADS"},
        )
        assert out.returncode == 0, out.stderr
        assert int(out.stdout.split()[-1]) == len(allowed)
