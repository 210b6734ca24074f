"""TF1 variational inference with tf.distributions (the Edward-free Bayesian regression / Bayes-by-backprop
recipes): a mean-field Normal posterior over weights with softplus scales, reparameterized samples from
q.sample(seed=...), log-likelihood from tf.distributions.Normal(...).log_prob, KL to the prior by
tf.distributions.kl_divergence, an ELBO minimized by Adam; plus Bernoulli/Categorical/Beta/Gamma/Exponential/
Uniform/Laplace log_probs, entropies, means, variances and seeded samples, Gamma and Beta KLs, and batch/event
shapes. (Dirichlet, Multinomial and StudentT are not in ferroflow's tf.distributions yet.)

tf.set_random_seed and op seeds make the samples TF's bits, so the ELBO values are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    tf.set_random_seed(24)
    rng = np.random.RandomState(24)
    X = rng.randn(20, 3).astype(np.float32)
    Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.1 * rng.randn(20)).astype(np.float32)
    ds = tf.distributions

    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None])
    q_mu = tf.Variable(np.zeros(3, np.float32), name="q_mu")
    q_rho = tf.Variable(np.full(3, -3.0, np.float32), name="q_rho")
    q = ds.Normal(loc=q_mu, scale=tf.nn.softplus(q_rho), name="q_w")
    prior = ds.Normal(loc=tf.zeros(3), scale=tf.ones(3))
    w = q.sample(seed=7)
    likelihood = ds.Normal(loc=tf.reduce_sum(x * w, 1), scale=0.5)
    elbo = tf.reduce_sum(likelihood.log_prob(y)) - tf.reduce_sum(ds.kl_divergence(q, prior))
    train = tf.train.AdamOptimizer(0.1).minimize(-elbo)

    p = tf.constant([0.2, 0.7])
    dists = {
        "bernoulli": ds.Bernoulli(probs=p),
        "categorical": ds.Categorical(logits=tf.constant([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]])),
        "beta": ds.Beta(concentration1=tf.constant([2.0, 3.0]), concentration0=tf.constant([5.0, 1.5])),
        "gamma": ds.Gamma(concentration=tf.constant([2.0, 9.0]), rate=tf.constant([1.0, 2.0])),
        "exponential": ds.Exponential(rate=tf.constant([0.5, 3.0])),
        "uniform": ds.Uniform(low=tf.constant([0.0, 1.0]), high=tf.constant([2.0, 5.0])),
        "laplace": ds.Laplace(loc=tf.constant([0.0, 1.0]), scale=tf.constant([1.0, 0.5])),
    }
    points = {
        "bernoulli": tf.constant([1, 0]),
        "categorical": tf.constant([1, 2]),
        "beta": tf.constant([0.3, 0.8]),
        "gamma": tf.constant([1.5, 4.0]),
        "exponential": tf.constant([0.3, 2.0]),
        "uniform": tf.constant([0.5, 4.5]),
        "laplace": tf.constant([-0.5, 1.2]),
    }
    stats = {}
    for k, d in dists.items():
        stats[k] = {"log_prob": d.log_prob(points[k]), "entropy": d.entropy(), "sample": d.sample(3, seed=11)}
        if k not in ("categorical",):
            stats[k]["mean"] = d.mean()
            stats[k]["variance"] = d.variance()
        if k in ("gamma", "beta", "exponential", "laplace", "uniform"):
            stats[k]["cdf"] = d.cdf(points[k])
    stats["kl"] = {
        "gamma": ds.kl_divergence(dists["gamma"], ds.Gamma(concentration=3.0, rate=[1.5, 0.5])),
        "beta": ds.kl_divergence(dists["beta"], ds.Beta(concentration1=1.5, concentration0=[2.0, 4.0])),
        "exponential": ds.kl_divergence(dists["exponential"], ds.Exponential(rate=1.0)),
    }
    stats["modes"] = {"gamma": dists["gamma"].mode(), "beta": dists["beta"].mode(), "laplace": dists["laplace"].mode()}

    out = {"elbo": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            out["elbo"].append(float(sess.run([train, elbo], {x: X, y: Y})[1]))
        out["q_mu"] = sess.run(q_mu).tolist()
        vals = sess.run(stats)
        out["stats"] = {k: {s: np.asarray(v).tolist() for s, v in d.items()} for k, d in vals.items()}
    out["shapes"] = {k: [str(d.batch_shape), str(d.event_shape)] for k, d in dists.items()}
    out["names"] = [q.name, ds.kl_divergence(q, prior).op.name, likelihood.log_prob(y).op.name]
    return out


if __name__ == "__main__":
    run_as_script(main, 5)
