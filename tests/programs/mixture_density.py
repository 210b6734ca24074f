"""hardmaru's TF1 "Mixture Density Networks with TensorFlow" (and the Bishop toy problem): the inverted
sinusoid data, a tanh hidden layer from tf.random_normal-free numpy weights, the output split with
tf.split(output, 3, 1) into pi logits, log sigma and mu, pi by a max-subtracted softmax (tf.reduce_max,
tf.exp, tf.reciprocal of the sum), sigma by tf.exp, the Gaussian mixture density written out with
tf.subtract/tf.multiply/tf.square and a constant 1/sqrt(2*pi), the loss -log(reduce_sum(pi * density)) and a
numerically stable twin with tf.reduce_logsumexp, both trained with tf.train.AdamOptimizer; then sampling the
mixture with numpy from the predicted parameters as the blog post does.

Weights start from numpy values; the sampling uses a seeded numpy generator: everything is deterministic.
"""

import math

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 10
KMIX = 5


def main(tf, steps=10):
    rng = np.random.RandomState(170)
    n = 200
    y_data = np.float32(rng.uniform(-10.5, 10.5, (1, n))).T
    r_data = np.float32(rng.normal(size=(n, 1)))
    x_data = np.float32(np.sin(0.75 * y_data) * 7.0 + y_data * 0.5 + r_data * 1.0)
    out = {}
    for stable in (False, True):
        tf.reset_default_graph()
        x = tf.placeholder(dtype=tf.float32, shape=[None, 1], name="x")
        y = tf.placeholder(dtype=tf.float32, shape=[None, 1], name="y")
        n_hidden = 24
        n_out = KMIX * 3
        Wh = tf.Variable(fixed_init([1, n_hidden], 1700, 0.5))
        bh = tf.Variable(fixed_init([1, n_hidden], 1701, 0.5))
        Wo = tf.Variable(fixed_init([n_hidden, n_out], 1702, 0.5))
        bo = tf.Variable(fixed_init([1, n_out], 1703, 0.5))
        hidden_layer = tf.nn.tanh(tf.matmul(x, Wh) + bh)
        output = tf.matmul(hidden_layer, Wo) + bo

        def get_mixture_coef(output):
            out_pi, out_sigma, out_mu = tf.split(output, 3, 1)
            max_pi = tf.reduce_max(out_pi, 1, keepdims=True)
            out_pi = tf.subtract(out_pi, max_pi)
            out_pi = tf.exp(out_pi)
            normalize_pi = tf.reciprocal(tf.reduce_sum(out_pi, 1, keepdims=True))
            out_pi = tf.multiply(normalize_pi, out_pi)
            out_sigma = tf.exp(out_sigma)
            return out_pi, out_sigma, out_mu

        out_pi, out_sigma, out_mu = get_mixture_coef(output)
        def tf_normal(y, mu, sigma, oneDivSqrtTwoPI=1 / math.sqrt(2 * math.pi)):
            result = tf.subtract(y, mu)
            result = tf.multiply(result, tf.reciprocal(sigma))
            result = -tf.square(result) / 2
            return tf.multiply(tf.exp(result), tf.reciprocal(sigma)) * oneDivSqrtTwoPI

        if stable:
            log_pi = tf.nn.log_softmax(tf.split(output, 3, 1)[0])
            z = (y - out_mu) / out_sigma
            log_density = -0.5 * tf.square(z) - tf.log(out_sigma) - 0.5 * math.log(2 * math.pi)
            lossfunc = -tf.reduce_mean(tf.reduce_logsumexp(log_pi + log_density, 1))
        else:
            result = tf.multiply(tf_normal(y, out_mu, out_sigma), out_pi)
            result = tf.reduce_sum(result, 1, keepdims=True)
            lossfunc = tf.reduce_mean(-tf.log(result))
        train_op = tf.train.AdamOptimizer().minimize(lossfunc)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                _, l = sess.run([train_op, lossfunc], feed_dict={x: x_data, y: y_data})
                losses.append(float(l))
            x_test = np.float32(np.arange(-15, 15, 3.0)).reshape(-1, 1)
            pi_test, sigma_test, mu_test = sess.run(get_mixture_coef(output), feed_dict={x: x_test})
        draw = np.random.RandomState(171)
        samples = []
        for i in range(len(x_test)):
            idx = int(np.searchsorted(np.cumsum(pi_test[i]), draw.rand()))
            idx = min(idx, KMIX - 1)
            samples.append(float(mu_test[i, idx] + draw.randn() * sigma_test[i, idx]))
        key = "stable" if stable else "blog"
        out[key] = {"losses": losses, "pi": pi_test.ravel().tolist(), "sigma": sigma_test.ravel().tolist(),
                    "mu": mu_test.ravel().tolist(), "samples": samples}
    out["losses"] = out["blog"]["losses"]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
