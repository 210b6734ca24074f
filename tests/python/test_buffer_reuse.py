"""Large buffers are reused (the native module's caching allocator).

A freed buffer of 4 MiB or more goes back to the next request of the same
size with whatever its last owner left in it. These tests check that no
result sees those leftovers: zero-filled results are zero, every element of
a computed result is computed, and restoring a checkpoint twice gives the
saved values each time.
"""

import os
import subprocess
import sys

import numpy as np

import ferroflow as tf

# 2M float32 = 8 MiB: over the allocator's 4 MiB threshold.
N = 1 << 21


def _run_twice(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed), sess.run(fetch, feed)


def test_zeros_after_a_freed_buffer_of_the_same_size_are_zero():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [N])
        busy = x * 3.0 + 1.0
        zeros = tf.zeros([N])
        zeros_like = tf.zeros_like(x)
        with tf.Session() as sess:
            feed = {x: np.full(N, 7.0, np.float32)}
            for _ in range(3):
                np.testing.assert_array_equal(sess.run(busy, feed), np.full(N, 22.0, np.float32))
                z, zl = sess.run([zeros, zeros_like], feed)
                assert not z.any() and not zl.any()


def test_results_in_reused_buffers_are_fully_computed():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    row = rng.standard_normal(1 << 11).astype(np.float32)
    with tf.Graph().as_default():
        pa = tf.placeholder(tf.float32, [N])
        pb = tf.placeholder(tf.float32, [N])
        pr = tf.placeholder(tf.float32, [1 << 11])
        outs = [
            pa + pb,
            pa * pb,
            tf.reshape(pa, [1 << 10, 1 << 11]) - pr,  # broadcast
            tf.abs(pa),
            tf.identity(pb),
        ]
        want = [a + b, a * b, a.reshape(1 << 10, 1 << 11) - row, np.abs(a), b]
        first, second = _run_twice(outs, {pa: a, pb: b, pr: row})
        for got1, got2, w in zip(first, second, want):
            np.testing.assert_array_equal(got1, w)
            np.testing.assert_array_equal(got2, w)


def test_repeated_restores_give_the_saved_values(tmp_path):
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(N).astype(np.float32) for _ in range(2)]
    with tf.Graph().as_default():
        vs = [tf.Variable(v, name=f"v{i}") for i, v in enumerate(values)]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))
            for _ in range(3):
                sess.run([v.assign(tf.zeros([N])) for v in vs])
                saver.restore(sess, path)
                for v, want in zip(sess.run(vs), values):
                    np.testing.assert_array_equal(v, want)


def test_the_cache_can_be_turned_off():
    code = (
        "import numpy as np, ferroflow as tf\n"
        f"x = tf.placeholder(tf.float32, [{N}])\n"
        "y = x + 1.0\n"
        "with tf.Session() as s:\n"
        "    for _ in range(3):\n"
        f"        assert (s.run(y, {{x: np.ones({N}, np.float32)}}) == 2.0).all()\n"
        "print('ok')\n"
    )
    env = dict(os.environ, FERROFLOW_BUFFER_CACHE_MB="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
