"""Second-order and custom gradients as TF1 research code wrote them: Hessian-vector products by double
backprop (tf.gradients of tf.reduce_sum(grad * v), the "Pearlmutter trick" used by TRPO/natural-gradient
code) over a list of variables, a conjugate-gradient solve of H x = g with that HVP fed through a placeholder
(as TRPO's cg), tf.hessians of a small network's loss,
tf.custom_gradient for a numerically stable log1pexp and a straight-through sign estimator, and
tf.RegisterGradient + gradient_override_map({"Sign": ...}) for binarized weights (BinaryConnect) trained
with SGD.

Deterministic: everything from numpy.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5
_REGISTERED = {}


def main(tf, steps=5):
    out = {}
    tf.reset_default_graph()
    x = tf.constant(fixed_init([8, 3], 1500, 1.0))
    y = tf.constant(fixed_init([8, 1], 1501, 1.0))
    w1 = tf.Variable(fixed_init([3, 4], 1502, 0.5))
    w2 = tf.Variable(fixed_init([4, 1], 1503, 0.5))
    params = [w1, w2]
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2) - y))
    grads = tf.gradients(loss, params)
    flat_grad = tf.concat([tf.reshape(g, [-1]) for g in grads], 0)
    vec = tf.placeholder(tf.float32, [16], name="vec")

    def hvp(v):
        parts, start = [], 0
        for p in params:
            n = int(np.prod(p.shape.as_list()))
            parts.append(tf.reshape(v[start:start + n], p.shape))
            start += n
        gvp = tf.add_n([tf.reduce_sum(g * t) for g, t in zip(grads, parts)])
        return tf.concat([tf.reshape(h, [-1]) for h in tf.gradients(gvp, params)], 0) + 0.1 * v

    Hv = hvp(vec)

    # TRPO's conjugate gradient (numpy, one session call per Hessian-vector product).
    def cg(sess, f_Ax, b, iters=5):
        p, r = b.copy(), b.copy()
        x_ = np.zeros_like(b)
        rdotr = r.dot(r)
        for _ in range(iters):
            z = f_Ax(p)
            alpha = rdotr / p.dot(z)
            x_ += alpha * p
            r -= alpha * z
            new = r.dot(r)
            p = r + (new / rdotr) * p
            rdotr = new
        return x_

    h_w2 = tf.hessians(loss, w2)[0]

    @tf.custom_gradient
    def log1pexp(t):
        e = tf.exp(t)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))

        return tf.log(1 + e), grad

    @tf.custom_gradient
    def ste_sign(t):
        def grad(dy):
            return dy * tf.cast(tf.abs(t) <= 1.0, tf.float32)

        return tf.sign(t), grad

    t = tf.constant([-3.0, -0.5, 0.0, 0.5, 3.0, 50.0])
    lpe, lpe_grad = log1pexp(t), tf.gradients(log1pexp(t), t)[0]
    ste_grad = tf.gradients(tf.reduce_sum(ste_sign(t) * tf.range(6, dtype=tf.float32)), t)[0]

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v0 = fixed_init([16], 1504, 1.0)
        out["hvp"] = sess.run(Hv, {vec: v0}).tolist()
        b = sess.run(flat_grad)
        cg_x = cg(sess, lambda p: sess.run(Hv, {vec: p}), b)
        out["cg_x"] = cg_x.tolist()
        out["cg_small_residual"] = bool(np.linalg.norm(sess.run(Hv, {vec: cg_x}) - b) < 1e-3)
        out["hessian_w2"] = sess.run(h_w2).ravel().tolist()
        out["log1pexp"], out["log1pexp_grad"], out["ste_grad"] = [a.tolist() for a in sess.run([lpe, lpe_grad, ste_grad])]

    # BinaryConnect: sign() forward, identity gradient through gradient_override_map.
    tf.reset_default_graph()
    if "BinaryIdentity" + tf.__name__ not in _REGISTERED:
        name = "BinaryIdentity_" + tf.__name__.replace(".", "_")

        @tf.RegisterGradient(name)
        def _binary_identity(op, grad):
            return tf.clip_by_value(grad, -1.0, 1.0)

        _REGISTERED["BinaryIdentity" + tf.__name__] = name
    grad_name = _REGISTERED["BinaryIdentity" + tf.__name__]
    xb = tf.constant(fixed_init([16, 5], 1505, 1.0))
    yb = tf.constant((fixed_init([16, 1], 1506, 1.0) > 0).astype(np.float32))
    w_real = tf.Variable(fixed_init([5, 1], 1507, 0.5))
    g = tf.get_default_graph()
    with g.gradient_override_map({"Sign": grad_name}):
        w_bin = tf.sign(w_real)
    logits = tf.matmul(xb, w_bin)
    bloss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=logits))
    opt = tf.train.GradientDescentOptimizer(0.5)
    gv = opt.compute_gradients(bloss, [w_real])
    with tf.control_dependencies([opt.apply_gradients(gv)]):
        clip = tf.assign(w_real, tf.clip_by_value(w_real, -1.0, 1.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(steps):
            losses.append(float(sess.run(bloss)))
            sess.run(clip)
        out["binary_w"] = sess.run(w_real).ravel().tolist()
    out["losses"] = losses
    out["sign_grad_type"] = w_bin.op.get_attr("_gradient_op_type").decode() == grad_name
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
