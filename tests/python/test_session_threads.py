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
