"""A TF1 variational autoencoder as the well-known blog/tutorial versions wrote it (Metzen's VariationalAutoencoder
class): xavier_init weights from tf.random_uniform, a recognition network giving z_mean and z_log_sigma_sq, the
reparameterisation z = mean + sqrt(exp(log_sigma_sq)) * eps with eps from tf.random_normal, a Bernoulli
reconstruction loss written with tf.log, the closed-form KL term, Adam; plus the later formulation of the same
losses with tf.distributions (Normal, Bernoulli, kl_divergence) and sigmoid_cross_entropy_with_logits.

Weights are loaded from numpy and eps is fed (a random op's output can be fed like a placeholder), so the
losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 10


def xavier_init(tf, fan_in, fan_out, constant=1):
    low = -constant * np.sqrt(6.0 / (fan_in + fan_out))
    high = constant * np.sqrt(6.0 / (fan_in + fan_out))
    return tf.random_uniform((fan_in, fan_out), minval=low, maxval=high, dtype=tf.float32)


class VariationalAutoencoder:
    def __init__(self, tf, network_architecture, transfer_fct, learning_rate=0.001, batch_size=20):
        self.tf = tf
        self.network_architecture = network_architecture
        self.transfer_fct = transfer_fct
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.x = tf.placeholder(tf.float32, [None, network_architecture["n_input"]])
        self._create_network()
        self._create_loss_optimizer()
        init = tf.global_variables_initializer()
        self.sess = tf.InteractiveSession()
        self.sess.run(init)

    def _create_network(self):
        tf = self.tf
        network_weights = self._initialize_weights(**self.network_architecture)
        self.z_mean, self.z_log_sigma_sq = self._recognition_network(
            network_weights["weights_recog"], network_weights["biases_recog"]
        )
        n_z = self.network_architecture["n_z"]
        self.eps = tf.random_normal((self.batch_size, n_z), 0, 1, dtype=tf.float32)
        self.z = tf.add(self.z_mean, tf.multiply(tf.sqrt(tf.exp(self.z_log_sigma_sq)), self.eps))
        self.x_reconstr_mean, self.x_reconstr_logits = self._generator_network(
            network_weights["weights_gener"], network_weights["biases_gener"]
        )

    def _initialize_weights(self, n_hidden_recog_1, n_hidden_gener_1, n_input, n_z):
        tf = self.tf
        all_weights = dict()
        all_weights["weights_recog"] = {
            "h1": tf.Variable(xavier_init(tf, n_input, n_hidden_recog_1)),
            "out_mean": tf.Variable(xavier_init(tf, n_hidden_recog_1, n_z)),
            "out_log_sigma": tf.Variable(xavier_init(tf, n_hidden_recog_1, n_z)),
        }
        all_weights["biases_recog"] = {
            "b1": tf.Variable(tf.zeros([n_hidden_recog_1], dtype=tf.float32)),
            "out_mean": tf.Variable(tf.zeros([n_z], dtype=tf.float32)),
            "out_log_sigma": tf.Variable(tf.zeros([n_z], dtype=tf.float32)),
        }
        all_weights["weights_gener"] = {
            "h1": tf.Variable(xavier_init(tf, n_z, n_hidden_gener_1)),
            "out_mean": tf.Variable(xavier_init(tf, n_hidden_gener_1, n_input)),
        }
        all_weights["biases_gener"] = {
            "b1": tf.Variable(tf.zeros([n_hidden_gener_1], dtype=tf.float32)),
            "out_mean": tf.Variable(tf.zeros([n_input], dtype=tf.float32)),
        }
        return all_weights

    def _recognition_network(self, weights, biases):
        tf = self.tf
        layer_1 = self.transfer_fct(tf.add(tf.matmul(self.x, weights["h1"]), biases["b1"]))
        z_mean = tf.add(tf.matmul(layer_1, weights["out_mean"]), biases["out_mean"])
        z_log_sigma_sq = tf.add(tf.matmul(layer_1, weights["out_log_sigma"]), biases["out_log_sigma"])
        return z_mean, z_log_sigma_sq

    def _generator_network(self, weights, biases):
        tf = self.tf
        layer_1 = self.transfer_fct(tf.add(tf.matmul(self.z, weights["h1"]), biases["b1"]))
        logits = tf.add(tf.matmul(layer_1, weights["out_mean"]), biases["out_mean"])
        return tf.nn.sigmoid(logits), logits

    def _create_loss_optimizer(self):
        tf = self.tf
        reconstr_loss = -tf.reduce_sum(
            self.x * tf.log(1e-10 + self.x_reconstr_mean)
            + (1 - self.x) * tf.log(1e-10 + 1 - self.x_reconstr_mean),
            1,
        )
        latent_loss = -0.5 * tf.reduce_sum(
            1 + self.z_log_sigma_sq - tf.square(self.z_mean) - tf.exp(self.z_log_sigma_sq), 1
        )
        self.cost = tf.reduce_mean(reconstr_loss + latent_loss)
        self.optimizer = tf.train.AdamOptimizer(learning_rate=self.learning_rate).minimize(self.cost)

        # The same two terms with tf.distributions and the logits.
        q_z = tf.distributions.Normal(loc=self.z_mean, scale=tf.sqrt(tf.exp(self.z_log_sigma_sq)))
        p_z = tf.distributions.Normal(loc=tf.zeros_like(self.z_mean), scale=tf.ones_like(self.z_mean))
        kl = tf.reduce_sum(tf.distributions.kl_divergence(q_z, p_z), axis=1)
        p_x = tf.distributions.Bernoulli(logits=self.x_reconstr_logits)
        log_lik = tf.reduce_sum(p_x.log_prob(self.x), axis=1)
        self.cost_distributions = tf.reduce_mean(kl - log_lik)
        xent = tf.reduce_sum(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=self.x, logits=self.x_reconstr_logits), axis=1
        )
        self.cost_logits = tf.reduce_mean(xent + latent_loss)
        self.sample_shape = tf.shape(q_z.sample())

    def partial_fit(self, X, eps):
        opt, cost, c2, c3 = self.sess.run(
            (self.optimizer, self.cost, self.cost_distributions, self.cost_logits),
            feed_dict={self.x: X, self.eps: eps},
        )
        return cost, c2, c3

    def transform(self, X):
        return self.sess.run(self.z_mean, feed_dict={self.x: X})


def main(tf, steps=10):
    tf.reset_default_graph()
    images, _ = fake_mnist(100, seed=14)
    network_architecture = dict(n_hidden_recog_1=32, n_hidden_gener_1=32, n_input=784, n_z=4)
    vae = VariationalAutoencoder(
        tf, network_architecture, transfer_fct=tf.nn.softplus, learning_rate=0.001, batch_size=20
    )
    for k, v in enumerate(tf.trainable_variables()):
        v.load(fixed_init(v.shape.as_list(), 700 + k), vae.sess)
    rng = np.random.RandomState(15)
    costs, costs_dist, costs_logits = [], [], []
    for i in range(steps):
        batch_xs = images[(i * 20) % 100 :][:20]
        eps = rng.standard_normal((20, 4)).astype(np.float32)
        c1, c2, c3 = vae.partial_fit(batch_xs, eps)
        costs.append(float(c1))
        costs_dist.append(float(c2))
        costs_logits.append(float(c3))
    z_mu = vae.transform(images[:20])
    sample_shape = vae.sess.run(vae.sample_shape, feed_dict={vae.x: images[:20]})
    unfed_cost = vae.sess.run(vae.cost, feed_dict={vae.x: images[:20]})
    vae.sess.close()
    return {
        "costs": costs,
        "costs_distributions": costs_dist,
        "costs_logits": costs_logits,
        "z_mean_abs_sum": float(np.abs(z_mu).sum()),
        "sample_shape": sample_shape.tolist(),
        "unfed_cost_finite": bool(np.isfinite(unfed_cost)),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
