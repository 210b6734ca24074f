"""Denormal floats are flushed to zero inside kernels, as TensorFlow's CPU runtime does (FTZ + DAZ).

Expected values were taken from TensorFlow 2.21's tf.compat.v1 Session on CPU.
"""

import numpy as np

import ferroflow as tf

TINY32 = np.float32(1e-40)  # below float32's smallest normal (1.18e-38)


def test_denormal_inputs_and_results_become_zero():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        y = tf.placeholder(tf.float64, [None])
        with tf.Session() as sess:
            scaled, squared, total = sess.run([x * 1.0, x * x, tf.reduce_sum(x)], {x: [TINY32, 1e-20, 3.0]})
            np.testing.assert_array_equal(scaled, np.array([0.0, 1e-20, 3.0], np.float32))
            np.testing.assert_array_equal(squared, np.array([0.0, 0.0, 9.0], np.float32))
            assert total == np.float32(3.0)
            np.testing.assert_array_equal(sess.run(y * 1.0, {y: [1e-310, 1e-160]}), [0.0, 1e-160])


def test_parallel_kernels_flush_too():
    # Large enough that the kernels split the work over the worker threads.
    big = np.full(1 << 20, TINY32, np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        out = x * 1.0
        for config in (None, tf.ConfigProto(intra_op_parallelism_threads=2)):
            with tf.Session(config=config) as sess:
                assert not np.any(sess.run(out, {x: big}))


def test_the_callers_thread_keeps_ieee_arithmetic():
    with tf.Graph().as_default():
        c = tf.constant(1.0) * 2.0
        with tf.Session() as sess:
            sess.run(c)
    # numpy on the interpreter's thread still produces denormals after Session.run.
    a, b = np.array([1e-20], np.float32), np.array([1e-20], np.float32)
    assert (a * b)[0] > 0
