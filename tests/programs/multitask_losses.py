"""A TF1 multi-task network trained on the sum of its tf.losses: a shared trunk with a classification head
(tf.losses.softmax_cross_entropy with label_smoothing and per-example weights), a multi-label head
(sigmoid_cross_entropy with label_smoothing), a regression head (huber_loss with delta, absolute_difference,
mean_squared_error with reduction=SUM and NONE), an embedding head (cosine_distance over unit vectors,
mean_pairwise_squared_error), hinge_loss and log_loss on a binary head, each registered in
tf.GraphKeys.LOSSES (or kept out with loss_collection=None), an L2 weight penalty through
tf.contrib-free get_variable regularizers, and tf.losses.get_total_loss() minimized by Adam; then the loss
values of every Reduction kind, the names TF gives them, and the collections.

Weights start from numpy values: every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(70)
    n = 16
    X = rng.randn(n, 6).astype(np.float32)
    cls = rng.randint(0, 3, size=n)
    multi = (rng.rand(n, 4) > 0.5).astype(np.float32)
    reg = rng.randn(n, 2).astype(np.float32)
    emb = rng.randn(n, 3).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    binary = (X[:, 0] > 0).astype(np.float32).reshape(n, 1)

    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y_cls = tf.placeholder(tf.int32, [None], name="y_cls")
    y_multi = tf.placeholder(tf.float32, [None, 4], name="y_multi")
    y_reg = tf.placeholder(tf.float32, [None, 2], name="y_reg")
    y_emb = tf.placeholder(tf.float32, [None, 3], name="y_emb")
    y_bin = tf.placeholder(tf.float32, [None, 1], name="y_bin")
    l2 = lambda w: 0.001 * tf.nn.l2_loss(w)  # noqa: E731
    with tf.variable_scope("trunk", regularizer=l2):
        w = tf.get_variable("w", initializer=fixed_init([6, 10], 700))
        b = tf.get_variable("b", [10], initializer=tf.zeros_initializer(), regularizer=None)
        h = tf.nn.tanh(tf.matmul(x, w) + b)

    def head(name, units, seed):
        with tf.variable_scope(name):
            hw = tf.get_variable("w", initializer=fixed_init([10, units], seed), regularizer=l2)
            hb = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
            return tf.matmul(h, hw) + hb

    cls_logits = head("cls", 3, 701)
    multi_logits = head("multi", 4, 702)
    reg_out = head("reg", 2, 703)
    emb_out = tf.nn.l2_normalize(head("emb", 3, 704), axis=1)
    bin_logit = head("bin", 1, 705)
    bin_prob = tf.sigmoid(bin_logit)

    onehot = tf.one_hot(y_cls, 3)
    example_w = tf.linspace(0.5, 1.5, tf.shape(x)[0])
    losses = {
        "softmax": tf.losses.softmax_cross_entropy(onehot, cls_logits, weights=example_w, label_smoothing=0.1),
        "sigmoid": tf.losses.sigmoid_cross_entropy(y_multi, multi_logits, label_smoothing=0.2),
        "huber": tf.losses.huber_loss(y_reg, reg_out, delta=0.5),
        "absdiff": tf.losses.absolute_difference(y_reg, reg_out, weights=0.5),
        "mse_sum": tf.losses.mean_squared_error(y_reg, reg_out, reduction=tf.losses.Reduction.SUM),
        "cosine": tf.losses.cosine_distance(y_emb, emb_out, axis=1),
        "pairwise": tf.losses.mean_pairwise_squared_error(y_reg, reg_out),
        "hinge": tf.losses.hinge_loss(y_bin, bin_logit),
        "log": tf.losses.log_loss(y_bin, bin_prob),
    }
    unregistered = {
        "mse_none": tf.losses.mean_squared_error(y_reg, reg_out, reduction=tf.losses.Reduction.NONE,
                                                 loss_collection=None),
        "mse_mean": tf.losses.mean_squared_error(y_reg, reg_out, reduction=tf.losses.Reduction.MEAN,
                                                 loss_collection=None),
        "mse_sbnzw": tf.losses.mean_squared_error(
            y_reg, reg_out, weights=tf.constant([[1.0, 0.0]]),
            reduction=tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS, loss_collection=None),
        "mse_sow": tf.losses.mean_squared_error(
            y_reg, reg_out, weights=2.0, reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE, loss_collection=None),
        "sparse_softmax": tf.losses.sparse_softmax_cross_entropy(y_cls, cls_logits, loss_collection=None),
    }
    total = tf.losses.get_total_loss()
    total_no_reg = tf.losses.get_total_loss(add_regularization_losses=False, name="data_loss")
    train_op = tf.train.AdamOptimizer(0.05).minimize(total)
    feed = {x: X, y_cls: cls, y_multi: multi, y_reg: reg, y_emb: emb, y_bin: binary}
    out = {
        "loss_names": {k: v.name for k, v in losses.items()},
        "unregistered_names": {k: v.name for k, v in unregistered.items()},
        "collection": [t.name for t in tf.get_collection(tf.GraphKeys.LOSSES)],
        "regularization": [t.name for t in tf.losses.get_regularization_losses()],
        "total_name": total.name,
        "total_no_reg_name": total_no_reg.name,
        "reductions": sorted(tf.losses.Reduction.all()),
    }
    totals = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run({**losses, **unregistered}, feed)
        out["first"] = {k: np.asarray(v, np.float64).ravel().tolist() for k, v in first.items()}
        for _ in range(steps):
            _, t = sess.run([train_op, total], feed)
            totals.append(float(t))
        out["final"] = {k: float(v) for k, v in sess.run(losses, feed).items()}
        out["final_no_reg"] = float(sess.run(total_no_reg, feed))
        out["final_reg"] = float(sess.run(tf.losses.get_regularization_loss()))
    out["losses"] = totals
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
