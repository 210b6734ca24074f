"""TF1 learning-rate schedules as training scripts wired them: a global_step from
tf.train.get_or_create_global_step, tf.train.exponential_decay (smooth and staircase, the cifar10 and
Inception idiom), piecewise_constant with boundaries over an int64 step (the ResNet idiom), polynomial_decay
(with and without cycle), natural_exp_decay, inverse_time_decay, cosine_decay, cosine_decay_restarts
(t_mul, m_mul) and linear_cosine_decay, each evaluated at every step while a MomentumOptimizer driven by one
of them trains a small regression with minimize(global_step=...); a tf.train.Saver keeps the step and a
restored session resumes the schedule where it stopped.

Everything starts from numpy values: the rates and losses are deterministic.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 12


def main(tf, steps=12):
    tf.reset_default_graph()
    rng = np.random.RandomState(41)
    X = rng.rand(32, 4).astype(np.float32)
    Y = (X @ np.array([[2.0], [-1.0], [0.5], [1.5]], np.float32) - 0.25).astype(np.float32)

    global_step = tf.train.get_or_create_global_step()
    schedules = {
        "exponential": tf.train.exponential_decay(0.1, global_step, 4, 0.5),
        "exponential_staircase": tf.train.exponential_decay(0.1, global_step, 4, 0.5, staircase=True),
        "piecewise": tf.train.piecewise_constant(global_step, [3, 7], [0.1, 0.05, 0.01]),
        "polynomial": tf.train.polynomial_decay(0.1, global_step, 10, end_learning_rate=0.001, power=2.0),
        "polynomial_cycle": tf.train.polynomial_decay(0.1, global_step, 5, end_learning_rate=0.01, cycle=True),
        "natural_exp": tf.train.natural_exp_decay(0.1, global_step, 3, 0.3, staircase=True),
        "inverse_time": tf.train.inverse_time_decay(0.1, global_step, 2, 0.5),
        "cosine": tf.train.cosine_decay(0.1, global_step, 10, alpha=0.1),
        "cosine_restarts": tf.train.cosine_decay_restarts(0.1, global_step, 4, t_mul=2.0, m_mul=0.5),
        "linear_cosine": tf.train.linear_cosine_decay(0.1, global_step, 10, num_periods=1.0, beta=0.01),
    }
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(fixed_init([4, 1], 4100), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    learning_rate = schedules["exponential_staircase"]
    tf.summary.scalar("learning_rate", learning_rate)
    train_op = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, global_step=global_step)
    saver = tf.train.Saver()
    ckpt_dir = tempfile.mkdtemp()

    names = sorted(schedules)
    rates = {k: [] for k in names}
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            values = sess.run([schedules[k] for k in names])
            for k, v in zip(names, values):
                rates[k].append(float(v))
            _, l = sess.run([train_op, loss], {x: X, y: Y})
            losses.append(float(l))
        saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=global_step)
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))
        resumed_step = int(sess.run(global_step))
        resumed_rate = float(sess.run(learning_rate))
        _, l = sess.run([train_op, loss], {x: X, y: Y})
        resumed_loss = float(l)
    shutil.rmtree(ckpt_dir)
    return {
        "losses": losses,
        "rates": rates,
        # piecewise_constant's result is a tf.case Merge in TF (a select chain here), and cosine_decay's ops are
        # laid out for TF's bits after its graph optimizer (not its names): those two names are left out.
        "rate_names": {k: schedules[k].op.name for k in names if k not in ("piecewise", "cosine")},
        "rate_dtypes": {k: schedules[k].dtype.name for k in names},
        "global_step_dtype": global_step.dtype.base_dtype.name,
        "resumed_step": resumed_step,
        "resumed_rate": resumed_rate,
        "resumed_loss": resumed_loss,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
