"""A siamese network with contrastive loss (the TF1 "siamese_tf_mnist" repository and Hadsell et al.): one tower
built by a function under tf.variable_scope("siamese") and called twice with reuse=True (then the same with
tf.AUTO_REUSE and with tf.make_template), Euclidean distance with an epsilon inside tf.sqrt, the contrastive
loss y * d^2 + (1 - y) * max(margin - d, 0)^2 written with tf.maximum, tf.losses.cosine_distance between the
embeddings, L2-normalized embeddings by tf.nn.l2_normalize, and MomentumOptimizer.

Deterministic: pairs and weights from numpy.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    images, onehot = fake_mnist(64, seed=61)
    lab = onehot.argmax(1)
    a, b = images[:32], images[32:]
    same = (lab[:32] == lab[32:]).astype(np.float32)
    same[::3] = 1.0
    b[::3] = a[::3] * 0.9  # some positive pairs
    tf.reset_default_graph()
    x1 = tf.placeholder(tf.float32, [None, 784], name="x1")
    x2 = tf.placeholder(tf.float32, [None, 784], name="x2")
    y = tf.placeholder(tf.float32, [None], name="y")

    def fc_layer(bottom, n_weight, name, seed):
        n_prev = bottom.get_shape()[1]
        W = tf.get_variable(name + "W", initializer=fixed_init([int(n_prev), n_weight], seed, 0.05))
        bias = tf.get_variable(name + "b", shape=[n_weight], initializer=tf.constant_initializer(0.01))
        return tf.nn.bias_add(tf.matmul(bottom, W), bias)

    def network(x):
        fc1 = tf.nn.relu(fc_layer(x, 64, "fc1", 6100))
        fc2 = tf.nn.relu(fc_layer(fc1, 32, "fc2", 6101))
        return fc_layer(fc2, 2, "fc3", 6102)

    with tf.variable_scope("siamese") as scope:
        o1 = network(x1)
        scope.reuse_variables()
        o2 = network(x2)

    margin = 5.0
    eucd2 = tf.reduce_sum(tf.pow(tf.subtract(o1, o2), 2), 1, name="eucd2")
    eucd = tf.sqrt(eucd2 + 1e-6, name="eucd")
    C = tf.constant(margin, name="C")
    pos = tf.multiply(y, eucd2, name="yi_x_eucd2")
    neg = tf.multiply(tf.subtract(1.0, y), tf.pow(tf.maximum(tf.subtract(C, eucd), 0), 2), name="Nyi_x_C_eucd_xx_2")
    losses = tf.add(pos, neg, name="losses")
    loss = tf.reduce_mean(losses, name="loss")
    train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)

    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        e1 = tf.nn.l2_normalize(network(x1), axis=1)
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        e2 = tf.nn.l2_normalize(network(x2), axis=1)
    cos = tf.losses.cosine_distance(e1, e2, axis=1, reduction=tf.losses.Reduction.NONE)

    tmpl = tf.make_template("tmpl", network)
    t1, t2 = tmpl(x1), tmpl(x2)
    tdist = tf.norm(t1 - t2, axis=1)

    out = {"losses": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x1: a, x2: b, y: same}
        for _ in range(steps):
            _, l = sess.run([train, loss], feed)
            out["losses"].append(float(l))
        d, c, td = sess.run([eucd, cos, tdist], feed)
    out["distances"] = d.tolist()
    out["cosine"] = c.ravel().tolist()
    out["template_dist"] = td.tolist()
    out["variables"] = [v.name for v in tf.global_variables()]
    out["names"] = [loss.name, losses.name, eucd.name, neg.name]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
