"""tf.map_fn, tf.scan, tf.foldl and tf.foldr with nested structures, as TF1 code used them: map_fn over a tuple of
tensors returning a (tensor, dict-free tuple) with dtype=(...), map_fn with infer_shape and a per-row
tf.py_func-free top_k, scan with a tuple accumulator (running mean and variance by Welford's update), scan with
reverse=True (discounted returns as in policy-gradient code), cumulative max by scan, an exponential moving
average by scan with an initializer, foldl/foldr over nested elems, a scan over a [time, batch] tensor with a
matrix state (a linear dynamical system), and gradients through scan and map_fn trained by SGD.

Deterministic: data and weights from numpy.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    out = {}
    tf.reset_default_graph()
    x = tf.constant(fixed_init([5, 4], 2100, 1.0))
    y = tf.constant(np.arange(5, dtype=np.int32))

    def per_row(elems):
        row, k = elems
        vals, idx = tf.nn.top_k(row, k=2)
        return vals * tf.cast(k, tf.float32), idx

    mapped_vals, mapped_idx = tf.map_fn(per_row, (x, y), dtype=(tf.float32, tf.int32))
    norms = tf.map_fn(lambda r: tf.norm(r), x, infer_shape=True)

    rewards = tf.constant([1.0, 0.0, 0.5, 0.0, 2.0, -1.0])
    returns = tf.scan(lambda acc, r: r + 0.9 * acc, rewards, initializer=0.0, reverse=True)
    cummax = tf.scan(tf.maximum, tf.constant([0.3, 0.1, 0.7, 0.2, 0.9, 0.5]))
    ema = tf.scan(lambda acc, v: 0.8 * acc + 0.2 * v, tf.constant([1.0, 2.0, 3.0, 4.0]), initializer=tf.constant(0.0))

    def welford(acc, v):
        n, mean, m2 = acc
        n = n + 1.0
        delta = v - mean
        mean = mean + delta / n
        m2 = m2 + delta * (v - mean)
        return n, mean, m2

    n_, means, m2s = tf.scan(welford, x, initializer=(tf.constant(0.0), tf.zeros([4]), tf.zeros([4])))
    variances = m2s / tf.maximum(n_[:, None] - 1.0, 1.0)
    folded = tf.foldl(lambda acc, e: acc + e[0] * tf.cast(e[1], tf.float32), (x, y), initializer=tf.zeros([4]))
    folded_r = tf.foldr(lambda acc, v: acc * 0.5 + v, tf.constant([1.0, 2.0, 3.0, 4.0]))

    # A linear dynamical system over [time, batch, dim] with a trainable transition.
    A = tf.Variable(fixed_init([3, 3], 2101, 0.4), name="A")
    inputs = tf.constant(fixed_init([6, 2, 3], 2102, 1.0))
    states = tf.scan(lambda h, u: tf.tanh(tf.matmul(h, A) + u), inputs, initializer=tf.zeros([2, 3]))
    scale = tf.Variable(1.5, name="scale")
    mapped = tf.map_fn(lambda s: tf.reduce_sum(tf.square(s * scale)), states)
    target = tf.constant(np.linspace(0.5, 2.0, 6).astype(np.float32))
    loss = tf.reduce_mean(tf.square(mapped - target))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        r = sess.run({"mapped_vals": mapped_vals, "mapped_idx": mapped_idx, "norms": norms, "returns": returns,
                      "cummax": cummax, "ema": ema, "means": means, "variances": variances, "folded": folded,
                      "folded_r": folded_r, "states": states})
        out["losses"] = [float(sess.run([train, loss])[1]) for _ in range(steps)]
        out["A"] = sess.run(A).ravel().tolist()
    out.update({k: np.asarray(v).ravel().tolist() for k, v in r.items()})
    out["static"] = [str(t.shape) for t in (mapped_vals, mapped_idx, norms, returns, means, states, mapped)]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
