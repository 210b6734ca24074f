"""TF1 probabilistic modelling with tf.distributions beyond the Normal (the "Bayesian methods for hackers"
style TF1 ports): robust linear regression with a tf.distributions.StudentT likelihood (df, loc from the
model, a softplus scale) fitted by maximum a posteriori with Normal priors and Adam; a mixture of two
Gaussians whose weights carry a tf.distributions.Dirichlet prior (softmax-parameterized, log_prob of the
weights added to the objective, tf.reduce_logsumexp over components); a tf.distributions.Multinomial over
class counts with its log_prob, mean and covariance; seeded samples of all three (StudentT and Dirichlet
samples are TF's bits), entropies, KL(Dirichlet || Dirichlet), cdf and the statistics of each.

Weights start from numpy values and every sample is seeded: the results are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 8


def main(tf, steps=8):
    tf.reset_default_graph()
    ds = tf.distributions
    rng = np.random.RandomState(180)
    X = rng.uniform(-2, 2, size=40).astype(np.float32)
    Y = (1.5 * X - 0.5 + 0.3 * rng.standard_t(2.0, size=40)).astype(np.float32)
    Y[::9] += 6.0  # outliers

    # Robust regression.
    w = tf.Variable(0.1, name="w")
    b = tf.Variable(0.0, name="b")
    raw_scale = tf.Variable(0.0, name="raw_scale")
    likelihood = ds.StudentT(df=3.0, loc=w * X + b, scale=tf.nn.softplus(raw_scale), name="likelihood")
    prior = ds.Normal(loc=0.0, scale=5.0)
    log_post = tf.reduce_sum(likelihood.log_prob(Y)) + prior.log_prob(w) + prior.log_prob(b)
    train = tf.train.AdamOptimizer(0.1).minimize(-log_post)

    # Gaussian mixture with a Dirichlet prior on its weights.
    Z = np.concatenate([rng.normal(-2.0, 0.5, 30), rng.normal(1.5, 0.7, 50)]).astype(np.float32)
    logits = tf.Variable([0.0, 0.0], name="mixture_logits")
    means = tf.Variable([-1.0, 1.0], name="means")
    log_sd = tf.Variable([0.0, 0.0], name="log_sd")
    weights = tf.nn.softmax(logits)
    dirichlet = ds.Dirichlet(concentration=[2.0, 2.0], name="weight_prior")
    components = ds.Normal(loc=means, scale=tf.exp(log_sd))
    per_point = tf.log(weights) + components.log_prob(Z[:, None])
    mix_ll = tf.reduce_sum(tf.reduce_logsumexp(per_point, axis=1)) + dirichlet.log_prob(weights)
    train_mix = tf.train.AdamOptimizer(0.1).minimize(-mix_ll)

    counts = ds.Multinomial(total_count=10.0, probs=[0.5, 0.3, 0.2], name="counts")
    st = ds.StudentT(df=[2.5, 5.0], loc=0.0, scale=[1.0, 2.0])
    out = {}
    losses, mix_losses = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, lp = sess.run([train, log_post])
            losses.append(-float(lp))
            _, ml = sess.run([train_mix, mix_ll])
            mix_losses.append(-float(ml))
        r = sess.run({
            "fit": [w, b, tf.nn.softplus(raw_scale)],
            "weights": weights,
            "means": means,
            "st_cdf": st.cdf([-1.0, 0.5]),
            "st_entropy": st.entropy(),
            "st_variance": st.variance(),
            "st_sample": st.sample(4, seed=21),
            "dirichlet_sample": dirichlet.sample(3, seed=22),
            "dirichlet_entropy": dirichlet.entropy(),
            "dirichlet_kl": ds.kl_divergence(dirichlet, ds.Dirichlet([1.0, 3.0])),
            "counts_log_prob": counts.log_prob([[5.0, 3.0, 2.0], [10.0, 0.0, 0.0]]),
            "counts_mean": counts.mean(),
            "counts_covariance": counts.covariance(),
            "counts_sample": counts.sample(2, seed=23),
        })
    out = {k: np.asarray(v, np.float64).ravel().tolist() for k, v in r.items()}
    out["losses"] = losses
    out["mix_losses"] = mix_losses
    out["names"] = [likelihood.name, dirichlet.name, counts.name]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
