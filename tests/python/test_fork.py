"""A fork()ed child (multiprocessing's default start method on Linux) keeps
only the forking thread. Kernels, optimizer updates and checkpoint I/O there
must run on that thread alone instead of waiting forever for pool threads
that no longer exist."""

import os
import time

import numpy as np
import pytest

import ferroflow as tf

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _workload(ckpt_dir):
    """Runs every parallel path once (products, elementwise ops, reductions,
    a fused optimizer update, a checkpoint save and restore) and returns the
    numbers they produced."""
    rng = np.random.default_rng(7)
    a_np = rng.standard_normal((384, 512)).astype(np.float32)
    with tf.Graph().as_default():
        a = tf.constant(a_np)
        prod = tf.matmul(a, a, transpose_b=True)
        total = tf.reduce_sum(tf.nn.relu(prod) * 0.5 + 1.0)
        w = tf.Variable(np.linspace(-1, 1, 1 << 20, dtype=np.float32), name="w")
        u = tf.Variable(np.full(1 << 19, 3.0, np.float32), name="u")
        loss = tf.reduce_sum(w * w) + tf.reduce_sum(u)
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            t = sess.run(total)
            for _ in range(3):
                sess.run(train)
            path = saver.save(sess, os.path.join(ckpt_dir, "model"))
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, path)
            w_val, u_val = sess.run([w, u])
    return t, w_val, u_val


def test_a_forked_child_runs_parallel_kernels_and_checkpoints(tmp_path):
    parent_dir = tmp_path / "parent"
    child_dir = tmp_path / "child"
    parent_dir.mkdir()
    child_dir.mkdir()
    # The parent's pools are running when it forks.
    expected = _workload(str(parent_dir))
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            got = _workload(str(child_dir))
            same = got[0] == expected[0] and all(np.array_equal(g, e) for g, e in zip(got[1:], expected[1:]))
            code = 0 if same else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung (waiting for pool threads that fork() did not copy)")
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    assert code != 2, "the forked child computed different numbers than its parent"
    assert code == 0, f"the forked child failed (exit code {code})"
    # The child's checkpoint is complete.
    assert tf.train.latest_checkpoint(str(child_dir)) is not None
