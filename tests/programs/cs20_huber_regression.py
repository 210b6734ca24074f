"""Stanford CS20 (TensorFlow for Deep Learning Research) 03_linreg_dataset.py and the huber-loss exercise:
the birth-rate / life-expectancy data as a tf.data.Dataset.from_tensor_slices((x, y)), an initializable
iterator re-initialized every epoch and drained until tf.errors.OutOfRangeError, w and b from
tf.get_variable(initializer=tf.constant(0.0)), the huber loss written by hand with tf.where(tf.abs(residual) <
delta, ...) as the lecture did, and compared with tf.losses.huber_loss, the squared loss, a FileWriter of the
graph, and the fitted line; then 04_linreg_eager's idea done in graph mode: the same model with
tf.train.MomentumOptimizer over a shuffled, batched dataset (shuffle seeded: TF's order, epoch after epoch).

Deterministic: synthetic data from numpy, variables from constants.
"""

import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 6


def huber_loss(tf, labels, predictions, delta=14.0):
    residual = tf.abs(labels - predictions)

    def f1():
        return 0.5 * tf.square(residual)

    def f2():
        return delta * residual - 0.5 * tf.square(delta)

    return tf.cond(residual < delta, f1, f2)


def main(tf, steps=6):
    rng = np.random.RandomState(220)
    birth = rng.uniform(1.0, 7.0, size=60).astype(np.float32)
    life = (84.0 - 5.5 * birth + rng.normal(0, 2.0, size=60)).astype(np.float32)
    life[::11] -= 25.0  # outliers, where the huber loss helps
    out = {}
    logdir = tempfile.mkdtemp()
    for loss_kind in ("huber_cond", "huber_where", "huber_tf", "squared"):
        tf.reset_default_graph()
        dataset = tf.data.Dataset.from_tensor_slices((birth, life))
        iterator = dataset.make_initializable_iterator()
        X, Y = iterator.get_next()
        w = tf.get_variable("weights", initializer=tf.constant(0.0))
        b = tf.get_variable("bias", initializer=tf.constant(0.0))
        Y_predicted = X * w + b
        if loss_kind == "huber_cond":
            loss = huber_loss(tf, Y, Y_predicted)
        elif loss_kind == "huber_where":
            r = tf.abs(Y - Y_predicted)
            loss = tf.where(r < 14.0, 0.5 * tf.square(r), 14.0 * r - 0.5 * 14.0**2)
        elif loss_kind == "huber_tf":
            loss = tf.losses.huber_loss(Y, Y_predicted, delta=14.0)
        else:
            loss = tf.square(Y - Y_predicted, name="loss")
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.001).minimize(loss)
        epoch_losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            writer = tf.summary.FileWriter(logdir, sess.graph)
            for _ in range(steps):
                sess.run(iterator.initializer)
                total_loss = 0.0
                try:
                    while True:
                        _, l = sess.run([optimizer, loss])
                        total_loss += l
                except tf.errors.OutOfRangeError:
                    pass
                epoch_losses.append(float(total_loss / 60))
            writer.close()
            w_out, b_out = sess.run([w, b])
        out[loss_kind] = {"losses": epoch_losses, "w": float(w_out), "b": float(b_out)}

    # Mini-batches from a shuffled dataset and momentum.
    tf.reset_default_graph()
    ds = tf.data.Dataset.from_tensor_slices((birth, life)).shuffle(60, seed=3).batch(10)
    it = ds.make_initializable_iterator()
    X, Y = it.get_next()
    w = tf.get_variable("weights", initializer=tf.constant(0.0))
    b = tf.get_variable("bias", initializer=tf.constant(0.0))
    loss = tf.reduce_mean(tf.losses.huber_loss(Y, X * w + b, delta=14.0, reduction=tf.losses.Reduction.NONE))
    train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
    batch_losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(it.initializer)
            try:
                while True:
                    batch_losses.append(float(sess.run([train, loss])[1]))
            except tf.errors.OutOfRangeError:
                pass
        out["momentum_fit"] = [float(v) for v in sess.run([w, b])]
    out["batch_losses"] = batch_losses
    out["losses"] = out["huber_cond"]["losses"]
    shutil.rmtree(logdir)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
