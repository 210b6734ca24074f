"""The two numerical tutorials of TF 1.x's docs, "Mandelbrot Set" and "Partial Differential Equations":
a complex64 grid built with np.mgrid and tf.constant, zs as a tf.Variable, ns counting divergence steps,
the step zs_ = zs*zs + xs, not_diverged = tf.abs(zs_) < 4, tf.group of zs.assign(zs_) and
ns.assign_add(tf.cast(not_diverged, tf.float32)), run in a Python loop with tf.InteractiveSession and
.run(); then the pond simulation: a Laplacian by make_kernel/simple_conv (tf.expand_dims twice, tf.nn.depthwise_conv2d
with [1, 1, 1, 1] strides and SAME padding), U and Ut variables, eps/damping placeholders, the update
U_ = U + eps * Ut, Ut_ = Ut + eps * (laplace(U) - damping * Ut) applied with tf.group(U.assign(U_),
Ut.assign(Ut_)) and step.run({eps: 0.03, damping: 0.04}); plus tf.complex / tf.real / tf.imag / tf.angle /
tf.conj arithmetic on the grid.

Deterministic: the grid and the raindrops come from numpy.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 20


def main(tf, steps=20):
    tf.reset_default_graph()
    out = {}
    sess = tf.InteractiveSession()
    Y, X = np.mgrid[-1.3:1.3:0.1, -2:1:0.1]
    Z = X + 1j * Y
    xs = tf.constant(Z.astype(np.complex64))
    zs = tf.Variable(xs)
    ns = tf.Variable(tf.zeros_like(xs, tf.float32))
    tf.global_variables_initializer().run()
    zs_ = zs * zs + xs
    not_diverged = tf.abs(zs_) < 4
    step = tf.group(zs.assign(zs_), ns.assign_add(tf.cast(not_diverged, tf.float32)))
    for _ in range(steps):
        step.run()
    counts = ns.eval()
    out["mandelbrot_shape"] = list(counts.shape)
    out["mandelbrot_histogram"] = np.bincount(counts.astype(int).ravel(), minlength=steps + 1).tolist()
    out["mandelbrot_row"] = counts[13].tolist()
    z_final = zs.eval()
    finite = np.isfinite(z_final)
    out["zs_dtype"] = zs.dtype.name
    out["finite_count"] = int(finite.sum())
    small = tf.constant(Z[10:12, 5:8].astype(np.complex64))
    parts = sess.run([tf.real(small), tf.imag(small), tf.angle(small), tf.abs(small), tf.real(tf.conj(small) * small),
                      tf.imag(tf.complex(tf.real(small), -tf.imag(small))), tf.real(tf.exp(small))])
    out["complex_parts"] = [p.ravel().tolist() for p in parts]
    sess.close()

    tf.reset_default_graph()
    sess = tf.InteractiveSession()

    def make_kernel(a):
        a = np.asarray(a)
        a = a.reshape(list(a.shape) + [1, 1])
        return tf.constant(a, dtype=1)

    def simple_conv(x, k):
        x = tf.expand_dims(tf.expand_dims(x, 0), -1)
        y = tf.nn.depthwise_conv2d(x, k, [1, 1, 1, 1], padding="SAME")
        return y[0, :, :, 0]

    def laplace(x):
        laplace_k = make_kernel([[0.5, 1.0, 0.5], [1.0, -6.0, 1.0], [0.5, 1.0, 0.5]])
        return simple_conv(x, laplace_k)

    N = 40
    u_init = np.zeros([N, N], dtype=np.float32)
    ut_init = np.zeros([N, N], dtype=np.float32)
    rng = np.random.RandomState(120)
    for _ in range(8):
        a, b = rng.randint(0, N, 2)
        u_init[a, b] = rng.uniform()
    eps = tf.placeholder(tf.float32, shape=())
    damping = tf.placeholder(tf.float32, shape=())
    U = tf.Variable(u_init)
    Ut = tf.Variable(ut_init)
    U_ = U + eps * Ut
    Ut_ = Ut + eps * (laplace(U) - damping * Ut)
    # The tutorial's tf.group(U.assign(U_), Ut.assign(Ut_)) lets one assignment run before the other update
    # reads its variable (TF's result varies run to run); both updates are computed first here.
    with tf.control_dependencies([U_, Ut_]):
        step = tf.group(U.assign(U_), Ut.assign(Ut_))
    tf.global_variables_initializer().run()
    energy = []
    for i in range(steps * 5):
        step.run({eps: 0.03, damping: 0.04})
        if i % 10 == 9:
            energy.append(float(np.square(U.eval()).sum()))
    out["pond_energy"] = energy
    out["pond_row"] = U.eval()[20].tolist()
    out["kernel_dtype"] = make_kernel([[1.0]]).dtype.name
    sess.close()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
