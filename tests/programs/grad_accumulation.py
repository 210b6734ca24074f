"""Gradient accumulation over mini-batches, the TF1 recipe for batches that do not fit in memory: one
non-trainable accumulator per trainable variable (tf.Variable(tf.zeros_like(v.initialized_value()),
trainable=False)), zero_ops by tf.assign, accumulate_ops by tf.assign_add of the gradients from
opt.compute_gradients, the averaged sums clipped by tf.clip_by_global_norm and applied with
opt.apply_gradients(zip(...)); then the same model trained on the whole batch to show the two agree; gradient
tensors fetched back by their graph names (gradients/..._grad/tuple/control_dependency_1:0, as TF1 users
looked them up in TensorBoard), compute_gradients with GATE_NONE and GATE_GRAPH, tf.global_norm, clip_by_value
and clip_by_average_norm per gradient, and the printed dtypes of reference variables (float32_ref) and
their reads.

Weights start from numpy values, so every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def build(tf):
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    with tf.variable_scope("mlp"):
        w1 = tf.get_variable("w1", initializer=fixed_init([6, 8], 500))
        b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", initializer=fixed_init([8, 2], 501))
        b2 = tf.get_variable("b2", [2], initializer=tf.constant_initializer(0.1))
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    return x, y, loss


def main(tf, steps=5):
    rng = np.random.RandomState(50)
    X = rng.randn(24, 6).astype(np.float32)
    Y = np.eye(2, dtype=np.float32)[(X[:, 0] + X[:, 1] > 0).astype(int)]
    n_micro = 3
    micro = np.split(np.arange(24), n_micro)
    out = {}

    tf.reset_default_graph()
    x, y, loss = build(tf)
    tvars = tf.trainable_variables()
    opt = tf.train.GradientDescentOptimizer(0.5)
    accum = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]
    zero_ops = [a.assign(tf.zeros_like(a)) for a in accum]
    gvs = opt.compute_gradients(loss, tvars)
    accum_ops = [accum[i].assign_add(gv[0]) for i, gv in enumerate(gvs)]
    averaged = [a / n_micro for a in accum]
    clipped, norm = tf.clip_by_global_norm(averaged, 1.0)
    train_step = opt.apply_gradients(zip(clipped, tvars))
    out["grad_names"] = [g.name for g, _ in gvs]
    out["var_dtypes"] = [repr(v.dtype) for v in tvars]
    out["var_base_dtypes"] = [v.dtype.base_dtype.name for v in tvars]
    out["accum_dtypes"] = [str(a.dtype) for a in accum]
    out["read_dtypes"] = [v.value().dtype.name for v in tvars]
    out["var_repr"] = repr(tvars[0])
    accumulated_losses, norms = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(zero_ops)
            total = 0.0
            for idx in micro:
                _, l = sess.run([accum_ops, loss], {x: X[idx], y: Y[idx]})
                total += l
            _, n = sess.run([train_step, norm])
            accumulated_losses.append(total / n_micro)
            norms.append(float(n))
        graph = tf.get_default_graph()
        by_name = [graph.get_tensor_by_name(name) for name in out["grad_names"]]
        fetched = sess.run(by_name, {x: X, y: Y})
        out["fetched_grad_norms"] = [float(np.linalg.norm(g)) for g in fetched]
        out["final_loss"] = float(sess.run(loss, {x: X, y: Y}))
    out["accumulated_losses"] = accumulated_losses
    out["norms"] = norms
    node_names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    out["gate_nodes"] = sorted(n for n in node_names if "/tuple/" in n)

    # The whole batch at once: the same updates (the mean over equal micro-batches is the full mean).
    tf.reset_default_graph()
    x, y, loss = build(tf)
    tvars = tf.trainable_variables()
    opt = tf.train.GradientDescentOptimizer(0.5)
    grads, _ = zip(*opt.compute_gradients(loss, tvars, gate_gradients=tf.train.Optimizer.GATE_NONE))
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    train_step = opt.apply_gradients(zip(clipped, tvars))
    out["gate_none_names"] = [g.name for g in grads]
    full_losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l = sess.run([train_step, loss], {x: X, y: Y})
            full_losses.append(float(l))
    out["full_losses"] = full_losses

    # GATE_GRAPH, global_norm and per-gradient clipping.
    tf.reset_default_graph()
    x, y, loss = build(tf)
    opt = tf.train.AdamOptimizer(0.05)
    gvs = opt.compute_gradients(loss, gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    out["gate_graph_names"] = [g.name for g, _ in gvs]
    gnorm = tf.global_norm([g for g, _ in gvs])
    capped = [
        (tf.clip_by_value(g, -0.1, 0.1) if i % 2 == 0 else tf.clip_by_average_norm(g, 0.05), v)
        for i, (g, v) in enumerate(gvs)
    ]
    train_op = opt.apply_gradients(capped)
    adam_losses, gnorms = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l, n = sess.run([train_op, loss, gnorm], {x: X, y: Y})
            adam_losses.append(float(l))
            gnorms.append(float(n))
    out["adam_losses"] = adam_losses
    out["global_norms"] = gnorms
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
