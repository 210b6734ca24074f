"""aymericdamien/TensorFlow-Examples gan.py: glorot_init through tf.random_normal(stddev=1/sqrt(n/2)),
generator and discriminator as dicts of variables, the discriminator applied to real and generated images,
gen_loss = -mean(log(disc_fake)), disc_loss = -mean(log(disc_real) + log(1 - disc_fake)), two AdamOptimizers
each minimizing over its own var_list, and noise from np.random.uniform(-1, 1).

tf.set_random_seed makes the initial weights TF's bits and the noise comes from a seeded numpy generator, so
both losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 8


def main(tf, steps=8):
    tf.reset_default_graph()
    tf.set_random_seed(4)
    np.random.seed(4)
    images, _ = fake_mnist(128, seed=61)
    batch_size = 32
    learning_rate = 0.0002
    image_dim = 784
    gen_hidden_dim = 32
    disc_hidden_dim = 32
    noise_dim = 20

    def glorot_init(shape):
        return tf.random_normal(shape=shape, stddev=1.0 / tf.sqrt(shape[0] / 2.0))

    weights = {
        "gen_hidden1": tf.Variable(glorot_init([noise_dim, gen_hidden_dim])),
        "gen_out": tf.Variable(glorot_init([gen_hidden_dim, image_dim])),
        "disc_hidden1": tf.Variable(glorot_init([image_dim, disc_hidden_dim])),
        "disc_out": tf.Variable(glorot_init([disc_hidden_dim, 1])),
    }
    biases = {
        "gen_hidden1": tf.Variable(tf.zeros([gen_hidden_dim])),
        "gen_out": tf.Variable(tf.zeros([image_dim])),
        "disc_hidden1": tf.Variable(tf.zeros([disc_hidden_dim])),
        "disc_out": tf.Variable(tf.zeros([1])),
    }

    def generator(x):
        hidden_layer = tf.matmul(x, weights["gen_hidden1"])
        hidden_layer = tf.add(hidden_layer, biases["gen_hidden1"])
        hidden_layer = tf.nn.relu(hidden_layer)
        out_layer = tf.matmul(hidden_layer, weights["gen_out"])
        out_layer = tf.add(out_layer, biases["gen_out"])
        out_layer = tf.nn.sigmoid(out_layer)
        return out_layer

    def discriminator(x):
        hidden_layer = tf.matmul(x, weights["disc_hidden1"])
        hidden_layer = tf.add(hidden_layer, biases["disc_hidden1"])
        hidden_layer = tf.nn.relu(hidden_layer)
        out_layer = tf.matmul(hidden_layer, weights["disc_out"])
        out_layer = tf.add(out_layer, biases["disc_out"])
        out_layer = tf.nn.sigmoid(out_layer)
        return out_layer

    gen_input = tf.placeholder(tf.float32, shape=[None, noise_dim], name="input_noise")
    disc_input = tf.placeholder(tf.float32, shape=[None, image_dim], name="disc_input")

    gen_sample = generator(gen_input)
    disc_real = discriminator(disc_input)
    disc_fake = discriminator(gen_sample)

    gen_loss = -tf.reduce_mean(tf.log(disc_fake))
    disc_loss = -tf.reduce_mean(tf.log(disc_real) + tf.log(1.0 - disc_fake))

    optimizer_gen = tf.train.AdamOptimizer(learning_rate=learning_rate)
    optimizer_disc = tf.train.AdamOptimizer(learning_rate=learning_rate)

    gen_vars = [weights["gen_hidden1"], weights["gen_out"], biases["gen_hidden1"], biases["gen_out"]]
    disc_vars = [weights["disc_hidden1"], weights["disc_out"], biases["disc_hidden1"], biases["disc_out"]]

    train_gen = optimizer_gen.minimize(gen_loss, var_list=gen_vars)
    train_disc = optimizer_disc.minimize(disc_loss, var_list=disc_vars)

    init = tf.global_variables_initializer()
    gl_list, dl_list = [], []
    with tf.Session() as sess:
        sess.run(init)
        for i in range(1, steps + 1):
            lo = ((i - 1) * batch_size) % 128
            batch_x = images[lo : lo + batch_size]
            z = np.random.uniform(-1.0, 1.0, size=[batch_size, noise_dim])
            feed_dict = {disc_input: batch_x, gen_input: z}
            _, _, gl, dl = sess.run([train_gen, train_disc, gen_loss, disc_loss], feed_dict=feed_dict)
            gl_list.append(float(gl))
            dl_list.append(float(dl))
        z = np.random.uniform(-1.0, 1.0, size=[4, noise_dim])
        g = sess.run(gen_sample, feed_dict={gen_input: z})
    return {
        "gen_losses": gl_list,
        "disc_losses": dl_list,
        "sample_mean": float(np.mean(g)),
        "sample_shape": list(g.shape),
        "adam_vars": sorted(v.name for v in tf.global_variables() if "Adam" in v.name or "power" in v.name),
    }


if __name__ == "__main__":
    run_as_script(main, 8)
