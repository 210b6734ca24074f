"""Classic TF1 numerical programs: k-means by hand (broadcast squared distances via tf.expand_dims, tf.argmin
assignments, tf.unsorted_segment_sum of points and counts, tf.assign of the new centroids, a Python loop until
the assignments stop changing), PCA through the covariance matrix and tf.self_adjoint_eig / tf.svd (signs fixed),
power iteration in a tf.while_loop with maximum_iterations, tf.matrix_inverse / tf.matrix_solve /
tf.matrix_determinant / tf.cholesky for least squares, and tf.cumsum / tf.cumprod / tf.reduce_logsumexp.

All inputs are fixed, so everything is deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(27)
    centers_true = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]], np.float32)
    points_np = np.concatenate([c + rng.randn(20, 2).astype(np.float32) for c in centers_true])
    k = 3
    points = tf.constant(points_np)
    centroids = tf.Variable(points_np[[0, 20, 40]] + 0.5, name="centroids")
    distances = tf.reduce_sum(tf.square(tf.expand_dims(points, 0) - tf.expand_dims(centroids, 1)), 2)
    assignments = tf.argmin(distances, 0)
    sums = tf.unsorted_segment_sum(points, assignments, k)
    counts = tf.unsorted_segment_sum(tf.ones_like(points), assignments, k)
    update = tf.assign(centroids, sums / counts)
    inertia = tf.reduce_sum(tf.reduce_min(distances, 0))

    # PCA.
    X = tf.constant(rng.randn(50, 4).astype(np.float32) @ np.diag([3.0, 1.0, 0.5, 0.1]).astype(np.float32))
    Xc = X - tf.reduce_mean(X, 0)
    cov = tf.matmul(Xc, Xc, transpose_a=True) / 49.0
    evals, evecs = tf.self_adjoint_eig(cov)
    s, u, v = tf.svd(Xc)
    top = evecs[:, -1] * tf.sign(evecs[0, -1])
    top_svd = v[:, 0] * tf.sign(v[0, 0])

    # Power iteration with tf.while_loop.
    def body(i, vec):
        w = tf.matmul(cov, vec)
        return i + 1, w / tf.norm(w)

    _, power = tf.while_loop(lambda i, vec: i < 200, body, (tf.constant(0), tf.ones([4, 1]) / 2.0),
                             maximum_iterations=50)
    power = power[:, 0] * tf.sign(power[0, 0])

    A = tf.constant([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    b = tf.constant([[1.0], [2.0], [3.0]])
    solutions = [tf.matmul(tf.matrix_inverse(A), b), tf.matrix_solve(A, b),
                 tf.cholesky_solve(tf.cholesky(A), b)]
    det = tf.matrix_determinant(A)
    seq = tf.constant([1.0, 2.0, 3.0, 4.0])
    scans = [tf.cumsum(seq), tf.cumsum(seq, exclusive=True, reverse=True), tf.cumprod(seq),
             tf.reduce_logsumexp(seq)]

    out = {"inertia": [], "changes": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prev = None
        for _ in range(steps):
            a, i = sess.run([assignments, inertia])
            out["inertia"].append(float(i))
            out["changes"].append(None if prev is None else int((a != prev).sum()))
            prev = a
            sess.run(update)
        out["centroids"] = np.round(sess.run(centroids), 4).tolist()
        r = sess.run({"evals": evals, "top": top, "top_svd": top_svd, "s": s, "power": power, "det": det,
                      "solutions": solutions, "scans": scans})
    out["evals"] = r["evals"].tolist()
    out["top"] = r["top"].tolist()
    out["top_svd"] = r["top_svd"].tolist()
    out["singular_values"] = r["s"].tolist()
    out["power"] = r["power"].tolist()
    out["det"] = float(r["det"])
    out["solutions"] = [x.ravel().tolist() for x in r["solutions"]]
    out["scans"] = [np.asarray(x).tolist() for x in r["scans"]]
    return out


if __name__ == "__main__":
    run_as_script(main, 6)
