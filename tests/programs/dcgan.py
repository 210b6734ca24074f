"""A DCGAN the way the TF1 tutorials built it with tf.layers: a generator of dense -> conv2d_transpose layers
with batch_normalization(training=...) and leaky relu, a discriminator of strided conv2d layers called twice
under variable_scope(reuse=tf.AUTO_REUSE), sigmoid cross-entropy losses with label smoothing, and two Adam
optimizers over var_lists picked from tf.trainable_variables() by name, under the UPDATE_OPS dependencies.

Every variable is loaded from numpy after initialization and z comes from numpy, so losses are deterministic.
Layers followed by batch normalization have no bias (DCGAN's own rule): such a bias gets a gradient of zero up
to rounding, which Adam would turn into full-size steps of rounding noise.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 4


def generator(tf, z, training):
    with tf.variable_scope("generator", reuse=tf.AUTO_REUSE):
        h = tf.layers.dense(z, 7 * 7 * 16, use_bias=False)
        h = tf.reshape(h, [-1, 7, 7, 16])
        h = tf.layers.batch_normalization(h, training=training)
        h = tf.maximum(0.2 * h, h)
        h = tf.layers.conv2d_transpose(h, 8, 5, strides=2, padding="same", use_bias=False)
        h = tf.layers.batch_normalization(h, training=training)
        h = tf.nn.leaky_relu(h, alpha=0.2)
        logits = tf.layers.conv2d_transpose(h, 1, 5, strides=2, padding="same")
        return tf.tanh(logits)


def discriminator(tf, x):
    with tf.variable_scope("discriminator", reuse=tf.AUTO_REUSE):
        h = tf.layers.conv2d(x, 8, 5, strides=2, padding="same")
        h = tf.nn.leaky_relu(h, alpha=0.2)
        h = tf.layers.conv2d(h, 16, 5, strides=2, padding="same", use_bias=False)
        h = tf.layers.batch_normalization(h, training=True)
        h = tf.nn.leaky_relu(h, alpha=0.2)
        h = tf.layers.flatten(h)
        logits = tf.layers.dense(h, 1)
        return tf.sigmoid(logits), logits


def main(tf, steps=4, fixed=True):
    tf.reset_default_graph()
    images, _ = fake_mnist(64, seed=8, flat=False)
    images = images * 2.0 - 1.0
    rng = np.random.RandomState(9)
    z_dim = 10
    smooth = 0.1

    input_real = tf.placeholder(tf.float32, (None, 28, 28, 1), name="input_real")
    input_z = tf.placeholder(tf.float32, (None, z_dim), name="input_z")
    is_training = tf.placeholder_with_default(True, (), name="is_training")

    g_model = generator(tf, input_z, is_training)
    d_model_real, d_logits_real = discriminator(tf, input_real)
    d_model_fake, d_logits_fake = discriminator(tf, g_model)

    d_loss_real = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(
            logits=d_logits_real, labels=tf.ones_like(d_model_real) * (1 - smooth)
        )
    )
    d_loss_fake = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(logits=d_logits_fake, labels=tf.zeros_like(d_model_fake))
    )
    d_loss = d_loss_real + d_loss_fake
    g_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(logits=d_logits_fake, labels=tf.ones_like(d_model_fake))
    )

    t_vars = tf.trainable_variables()
    d_vars = [var for var in t_vars if var.name.startswith("discriminator")]
    g_vars = [var for var in t_vars if var.name.startswith("generator")]
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        d_train_opt = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(d_loss, var_list=d_vars)
        g_train_opt = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(g_loss, var_list=g_vars)

    d_losses, g_losses = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if fixed:
            for k, v in enumerate(t_vars):
                if "batch_normalization" not in v.name:
                    v.load(fixed_init(v.shape.as_list(), 400 + k, scale=0.05), sess)
        for step in range(steps):
            batch_images = images[(step * 16) % 64 :][:16]
            batch_z = rng.uniform(-1, 1, size=(16, z_dim)).astype(np.float32)
            _, dl = sess.run([d_train_opt, d_loss], feed_dict={input_real: batch_images, input_z: batch_z})
            _, gl = sess.run([g_train_opt, g_loss], feed_dict={input_z: batch_z, input_real: batch_images})
            d_losses.append(float(dl))
            g_losses.append(float(gl))
        samples = sess.run(
            g_model, feed_dict={input_z: rng.uniform(-1, 1, size=(3, z_dim)), is_training: False}
        )
        # The discriminator runs twice per step, so two updates of its moving averages race within one
        # run (TensorFlow leaves their order open): only the generator's are compared.
        moving = [v for v in tf.global_variables() if "moving_" in v.name and v.name.startswith("generator")]
        moving_sum = float(sum(np.abs(sess.run(v)).sum() for v in moving))
    return {
        "d_losses": d_losses,
        "g_losses": g_losses,
        "samples_sum": float(samples.sum()),
        "samples_shape": list(samples.shape),
        "moving_mean_abs_sum": moving_sum,
        "d_vars": [v.name for v in d_vars],
        "g_vars": [v.name for v in g_vars],
        "update_ops": sorted(op.name for op in update_ops),
        "global_variables": len(tf.global_variables()),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
