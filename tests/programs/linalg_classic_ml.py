"""Classic machine learning with tf.linalg in TF1 graphs: ridge regression in closed form by
tf.matrix_solve_ls(l2_regularizer=...) with fast=True and fast=False, tf.linalg.lstsq, the normal equations by
tf.cholesky + tf.cholesky_solve, Gaussian-process regression (RBF kernel by broadcasting, tf.linalg.
cholesky, tf.matrix_triangular_solve lower/adjoint, the log marginal likelihood with tf.log of the diagonal
by tf.matrix_diag_part, its gradient w.r.t. the length scale trained with Adam), LDA-style eigen
decomposition by tf.self_adjoint_eig of a whitened scatter matrix (signs fixed), tf.linalg.logdet /
slogdet, tf.qr least squares, tf.svd pseudo-inverse vs tf.linalg.pinv-free matrix_inverse, tf.trace and
tf.linalg.expm-free matrix powers by tf.while_loop.

Deterministic: data from numpy, float64 where the closed forms need it.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    rng = np.random.RandomState(121)
    X = rng.normal(size=(20, 4))
    true_w = np.array([[1.5], [-2.0], [0.5], [0.0]])
    y = X @ true_w + 0.1 * rng.normal(size=(20, 1))
    out = {}
    tf.reset_default_graph()
    A = tf.constant(X)
    b = tf.constant(y)
    ridge_fast = tf.matrix_solve_ls(A, b, l2_regularizer=0.5, fast=True)
    ridge_slow = tf.matrix_solve_ls(A, b, l2_regularizer=0.0, fast=False)
    lstsq = tf.linalg.lstsq(A, b)
    gram = tf.matmul(A, A, transpose_a=True) + 0.5 * tf.eye(4, dtype=tf.float64)
    chol = tf.cholesky(gram)
    normal = tf.cholesky_solve(chol, tf.matmul(A, b, transpose_a=True))
    q, r = tf.qr(A)
    qr_sol = tf.matrix_triangular_solve(r, tf.matmul(q, b, transpose_a=True), lower=False)
    s, u, v = tf.svd(A)
    pinv = tf.matmul(v, tf.matmul(tf.matrix_diag(1.0 / s), u, transpose_b=True))
    svd_sol = tf.matmul(pinv, b)
    inv_sol = tf.matmul(tf.matrix_inverse(tf.matmul(A, A, transpose_a=True)), tf.matmul(A, b, transpose_a=True))
    sign, logabs = tf.linalg.slogdet(gram)
    fetch = {"ridge_fast": ridge_fast, "ridge_slow": ridge_slow, "lstsq": lstsq, "normal": normal,
             "qr_sol": qr_sol, "svd_sol": svd_sol, "inv_sol": inv_sol, "logdet": tf.linalg.logdet(gram),
             "slogdet": tf.stack([sign, logabs]), "trace": tf.trace(gram), "singular": s}

    # Two-class LDA: the leading eigenvector of Sw^-1/2 Sb Sw^-1/2.
    labels = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(np.int32)
    lab = tf.constant(labels)
    m0 = tf.reduce_mean(tf.boolean_mask(A, tf.equal(lab, 0)), 0)
    m1 = tf.reduce_mean(tf.boolean_mask(A, tf.equal(lab, 1)), 0)
    c0 = tf.boolean_mask(A, tf.equal(lab, 0)) - m0
    c1 = tf.boolean_mask(A, tf.equal(lab, 1)) - m1
    Sw = tf.matmul(c0, c0, transpose_a=True) + tf.matmul(c1, c1, transpose_a=True)
    d = tf.expand_dims(m1 - m0, 1)
    Sb = tf.matmul(d, d, transpose_b=True)
    ew, ev = tf.self_adjoint_eig(Sw)
    w_half = tf.matmul(ev, tf.matmul(tf.matrix_diag(tf.rsqrt(ew)), ev, transpose_b=True))
    M = tf.matmul(w_half, tf.matmul(Sb, w_half))
    vals, vecs = tf.self_adjoint_eig(M)
    lead = vecs[:, -1]
    lead = lead * tf.sign(lead[0])
    fetch["lda_values"] = vals
    fetch["lda_direction"] = lead

    # Matrix power by repeated squaring in a while loop.
    P = tf.constant([[0.9, 0.1], [0.2, 0.8]], tf.float64)

    def body(k, acc, base):
        odd = tf.equal(tf.mod(k, 2), 1)
        acc = tf.cond(odd, lambda: tf.matmul(acc, base), lambda: acc)
        return k // 2, acc, tf.matmul(base, base)

    _, P13, _ = tf.while_loop(lambda k, a, b: k > 0, body, [tf.constant(13), tf.eye(2, dtype=tf.float64), P])
    fetch["P13"] = P13
    with tf.Session() as sess:
        r = sess.run(fetch)
    out.update({k: np.asarray(v).ravel().tolist() for k, v in r.items()})

    # GP regression: fit the RBF length scale and noise by the log marginal likelihood.
    tf.reset_default_graph()
    xs = np.linspace(-3, 3, 15)[:, None]
    ys = np.sin(xs) + 0.05 * rng.normal(size=xs.shape)
    x_t = tf.constant(xs)
    y_t = tf.constant(ys)
    log_ls = tf.Variable(np.log(0.5), dtype=tf.float64, name="log_length_scale")
    log_noise = tf.Variable(np.log(0.1), dtype=tf.float64, name="log_noise")
    sq = tf.square(x_t - tf.transpose(x_t))
    K = tf.exp(-0.5 * sq / tf.exp(2.0 * log_ls)) + tf.exp(2.0 * log_noise) * tf.eye(15, dtype=tf.float64)
    L = tf.linalg.cholesky(K)
    alpha = tf.matrix_triangular_solve(L, y_t, lower=True)
    alpha = tf.matrix_triangular_solve(L, alpha, lower=True, adjoint=True)
    nll = (0.5 * tf.reduce_sum(y_t * alpha) + tf.reduce_sum(tf.log(tf.matrix_diag_part(L)))
           + 7.5 * np.log(2 * np.pi))
    x_star = tf.constant(np.array([[0.5], [1.7]]))
    k_star = tf.exp(-0.5 * tf.square(x_star - tf.transpose(x_t)) / tf.exp(2.0 * log_ls))
    mean_star = tf.matmul(k_star, alpha)
    train = tf.train.AdamOptimizer(0.05).minimize(nll)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(steps):
            losses.append(float(sess.run(nll)))
            sess.run(train)
        out["gp_mean"] = sess.run(mean_star).ravel().tolist()
        out["gp_params"] = [float(t) for t in sess.run([log_ls, log_noise])]
    out["losses"] = losses
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
