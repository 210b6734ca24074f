"""The TF1 "batch normalization from scratch" recipe: tf.nn.moments over the batch (and over [0, 1, 2] for a
conv layer), population statistics kept by tf.train.ExponentialMovingAverage whose apply() runs under
tf.control_dependencies, the train/test switch by tf.cond(is_training, ...) returning the batch or averaged
statistics, tf.nn.batch_normalization with learned scale and offset, and a classifier head with
tf.nn.l2_normalize'd features; evaluation ranks classes with tf.nn.top_k and tf.nn.in_top_k.

Weights come from numpy, so everything is deterministic.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    images, onehot = fake_mnist(64, seed=22, flat=False)
    images = images[:, ::4, ::4, :]  # 7x7
    labels = np.argmax(onehot, 1).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 7, 7, 1])
    y = tf.placeholder(tf.int32, [None])
    is_training = tf.placeholder(tf.bool, [])

    def batch_norm(inputs, axes, decay=0.9, epsilon=1e-3, name="bn"):
        with tf.variable_scope(name):
            size = inputs.get_shape()[-1]
            scale = tf.Variable(tf.ones([size]), name="scale")
            beta = tf.Variable(tf.zeros([size]), name="beta")
            batch_mean, batch_var = tf.nn.moments(inputs, axes, name="moments")
            ema = tf.train.ExponentialMovingAverage(decay=decay)

            def mean_var_with_update():
                ema_apply_op = ema.apply([batch_mean, batch_var])
                with tf.control_dependencies([ema_apply_op]):
                    return tf.identity(batch_mean), tf.identity(batch_var)

            mean, var = tf.cond(is_training, mean_var_with_update,
                                lambda: (ema.average(batch_mean), ema.average(batch_var)))
            return tf.nn.batch_normalization(inputs, mean, var, beta, scale, epsilon), ema

    w1 = tf.Variable(fixed_init([3, 3, 1, 4], 2201, 0.5), name="w1")
    conv = tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME")
    bn1, ema1 = batch_norm(conv, [0, 1, 2], name="bn1")
    h1 = tf.nn.relu(bn1)
    flat = tf.reshape(h1, [-1, 7 * 7 * 4])
    w2 = tf.Variable(fixed_init([7 * 7 * 4, 16], 2202), name="w2")
    bn2, ema2 = batch_norm(tf.matmul(flat, w2), [0], name="bn2")
    feats = tf.nn.l2_normalize(tf.nn.relu(bn2), axis=1)
    w3 = tf.Variable(fixed_init([16, 10], 2203, 1.0), name="w3")
    logits = tf.matmul(feats, w3) * 5.0
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    top_vals, top_idx = tf.nn.top_k(tf.nn.softmax(logits), k=3)
    in_top3 = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 3), tf.float32))

    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            lo = (i * 16) % 64
            _, l = sess.run([train, loss], {x: images[lo : lo + 16], y: labels[lo : lo + 16], is_training: True})
            losses.append(float(l))
        test_loss, tv, ti, t3 = sess.run([loss, top_vals, top_idx, in_top3],
                                         {x: images[:8], y: labels[:8], is_training: False})
        avg = sess.run([ema1.average(v) for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)[:2]])
    return {
        "losses": losses,
        "test_loss": float(test_loss),
        "top_values": tv[:2].tolist(),
        "top_indices": ti.tolist(),
        "in_top3": float(t3),
        "averages": [a.tolist() for a in avg],
        "ema_vars": sorted(v.op.name for v in tf.global_variables() if "ExponentialMovingAverage" in v.op.name),
        "moving_average_collection": [v.op.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)],
    }


if __name__ == "__main__":
    run_as_script(main, 5)
