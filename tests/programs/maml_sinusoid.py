"""MAML on sine regression (Finn et al.'s maml.py, TF1): a small MLP whose weights live in a dict of
tf.Variables, a task-specific forward pass with explicit weights (tf.matmul over weights['w1'] ...), the inner
step's gradients by tf.gradients(loss, list(weights.values())) turned into fast weights
(w - alpha * g, with tf.stop_gradient on the gradients for first-order MAML), a second inner step, the meta loss
on the query set over a batch of tasks written with tf.map_fn over a (support, query) structure, and Adam on
the meta loss (second-order: gradients of gradients through the inner steps). Also the same meta-update done
by hand with tf.gradients(meta_loss, weights, grad_ys=...) to check the second-order term.

Deterministic: tasks (amplitude, phase, x) come from numpy, weights from numpy.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def make_tasks(rng, n_tasks, k):
    """Sine tasks: k support and k query points each."""
    amp = rng.uniform(0.5, 3.0, size=n_tasks)
    phase = rng.uniform(0.0, np.pi, size=n_tasks)
    xs = rng.uniform(-5.0, 5.0, size=(n_tasks, 2 * k, 1))
    ys = amp[:, None, None] * np.sin(xs - phase[:, None, None])
    xs, ys = xs.astype(np.float32), ys.astype(np.float32)
    return xs[:, :k], ys[:, :k], xs[:, k:], ys[:, k:]


def main(tf, steps=5):
    k, n_tasks, hidden, alpha = 5, 4, 20, 0.01
    out = {}
    for first_order in (False, True):
        tf.reset_default_graph()
        weights = {
            "w1": tf.Variable(fixed_init([1, hidden], 3100, 1.0), name="w1"),
            "b1": tf.Variable(np.zeros([hidden], np.float32), name="b1"),
            "w2": tf.Variable(fixed_init([hidden, hidden], 3101, 0.3), name="w2"),
            "b2": tf.Variable(np.zeros([hidden], np.float32), name="b2"),
            "w3": tf.Variable(fixed_init([hidden, 1], 3102, 0.3), name="w3"),
            "b3": tf.Variable(np.zeros([1], np.float32), name="b3"),
        }

        def forward(inp, w):
            h = tf.nn.relu(tf.matmul(inp, w["w1"]) + w["b1"])
            h = tf.nn.relu(tf.matmul(h, w["w2"]) + w["b2"])
            return tf.matmul(h, w["w3"]) + w["b3"]

        def loss_fn(pred, label):
            return tf.reduce_mean(tf.square(pred - label))

        inputa = tf.placeholder(tf.float32, [None, k, 1], name="inputa")
        labela = tf.placeholder(tf.float32, [None, k, 1], name="labela")
        inputb = tf.placeholder(tf.float32, [None, k, 1], name="inputb")
        labelb = tf.placeholder(tf.float32, [None, k, 1], name="labelb")

        def task_metalearn(inp, weights=weights, first_order=first_order):
            ia, ib, la, lb = inp
            task_lossa = loss_fn(forward(ia, weights), la)
            grads = tf.gradients(task_lossa, list(weights.values()))
            if first_order:
                grads = [tf.stop_gradient(g) for g in grads]
            gradients = dict(zip(weights.keys(), grads))
            fast = {key: weights[key] - alpha * gradients[key] for key in weights}
            loss_b1 = loss_fn(forward(ib, fast), lb)
            loss2 = loss_fn(forward(ia, fast), la)
            grads = tf.gradients(loss2, list(fast.values()))
            if first_order:
                grads = [tf.stop_gradient(g) for g in grads]
            gradients = dict(zip(fast.keys(), grads))
            fast = {key: fast[key] - alpha * gradients[key] for key in fast}
            loss_b2 = loss_fn(forward(ib, fast), lb)
            return task_lossa, loss_b1, loss_b2

        lossa, lossb1, lossb2 = tf.map_fn(task_metalearn, elems=(inputa, inputb, labela, labelb),
                                          dtype=(tf.float32, tf.float32, tf.float32), parallel_iterations=n_tasks)
        pre_loss = tf.reduce_sum(lossa) / n_tasks
        meta_loss = tf.reduce_sum(lossb2) / n_tasks
        meta_grads = tf.gradients(meta_loss, list(weights.values()))
        optimizer = tf.train.AdamOptimizer(0.001)
        gvs = optimizer.compute_gradients(meta_loss)
        gvs = [(tf.clip_by_value(g, -10.0, 10.0), v) for g, v in gvs]
        metatrain_op = optimizer.apply_gradients(gvs)
        pre, post = [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                xa, ya, xb, yb = make_tasks(np.random.RandomState(step), n_tasks, k)
                feed = {inputa: xa, labela: ya, inputb: xb, labelb: yb}
                p, q = sess.run([pre_loss, meta_loss], feed)
                pre.append(float(p))
                post.append(float(q))
                sess.run(metatrain_op, feed)
            g = sess.run(meta_grads, feed)
        tag = "fomaml" if first_order else "maml"
        out[tag] = {"pre": pre, "post": post, "grad_norms": [float(np.linalg.norm(a)) for a in g]}

    # A hand-written second-order check: d/dw of L(w - a*dL/dw) by tf.gradients with grad_ys.
    tf.reset_default_graph()
    w = tf.Variable([0.5, -1.0], dtype=tf.float64)
    x = tf.constant([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], dtype=tf.float64)
    y = tf.constant([1.0, 0.0, 2.0], dtype=tf.float64)
    inner = tf.reduce_sum(tf.square(tf.linalg.matvec(x, w) - y))
    g = tf.gradients(inner, w)[0]
    w_fast = w - 0.05 * g
    outer = tf.reduce_sum(tf.square(tf.linalg.matvec(x, w_fast) - y) * tf.constant([1.0, 2.0, 0.5], tf.float64))
    full = tf.gradients(outer, w)[0]
    via_fast = tf.gradients(outer, w_fast)[0]
    vjp = tf.gradients(w_fast, w, grad_ys=via_fast)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        f, v = sess.run([full, vjp])
    out["second_order"] = f.tolist()
    out["second_order_vjp"] = v.tolist()
    out["losses"] = out["maml"]["post"]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
