"""CycleGAN and pix2pix losses written with plain TF1 ops (as the tf.contrib-free reimplementations did): a
tiny encoder-decoder generator (tf.layers.conv2d with strides, tf.layers.conv2d_transpose, instance
normalization by tf.nn.moments over [1, 2] with keep_dims), a PatchGAN discriminator with leaky ReLU
(tf.nn.leaky_relu), LSGAN losses (tf.reduce_mean(tf.squared_difference(D(x), 1))), the cycle-consistency L1
loss, identity loss, pix2pix's sigmoid cross-entropy GAN loss plus lambda * L1, separate generator and
discriminator variable lists by scope, Adam with beta1=0.5, and alternating updates.

Deterministic: weights from tf.set_random_seed'd initializers replaced by numpy values after init.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 3


def instance_norm(tf, x, name):
    with tf.variable_scope(name):
        depth = x.get_shape()[3]
        scale = tf.get_variable("scale", [depth], initializer=tf.random_normal_initializer(1.0, 0.02))
        offset = tf.get_variable("offset", [depth], initializer=tf.constant_initializer(0.0))
        mean, variance = tf.nn.moments(x, axes=[1, 2], keep_dims=True)
        inv = tf.rsqrt(variance + 1e-5)
        return scale * (x - mean) * inv + offset


def generator(tf, x, name, reuse=False):
    with tf.variable_scope(name, reuse=reuse):
        h = tf.nn.relu(instance_norm(tf, tf.layers.conv2d(x, 8, 3, padding="same", name="c1"), "in1"))
        h = tf.nn.relu(instance_norm(tf, tf.layers.conv2d(h, 16, 3, strides=2, padding="same", name="c2"), "in2"))
        h = tf.nn.relu(instance_norm(tf, tf.layers.conv2d_transpose(h, 8, 3, strides=2, padding="same",
                                                                    name="d1"), "in3"))
        return tf.nn.tanh(tf.layers.conv2d(h, 3, 3, padding="same", name="out"))


def discriminator(tf, x, name, reuse=False):
    with tf.variable_scope(name, reuse=reuse):
        h = tf.nn.leaky_relu(tf.layers.conv2d(x, 8, 4, strides=2, padding="same", name="c1"), 0.2)
        h = tf.nn.leaky_relu(instance_norm(tf, tf.layers.conv2d(h, 16, 4, strides=2, padding="same", name="c2"),
                                           "in2"), 0.2)
        return tf.layers.conv2d(h, 1, 4, padding="same", name="patch")


def main(tf, steps=3):
    rng = np.random.RandomState(91)
    A = rng.uniform(-1, 1, size=(2, 16, 16, 3)).astype(np.float32)
    B = np.tanh(A[:, :, ::-1, :] * 1.5).astype(np.float32)
    out = {}
    tf.reset_default_graph()
    real_A = tf.placeholder(tf.float32, [None, 16, 16, 3], name="real_A")
    real_B = tf.placeholder(tf.float32, [None, 16, 16, 3], name="real_B")
    fake_B = generator(tf, real_A, "G")
    fake_A = generator(tf, real_B, "F")
    cyc_A = generator(tf, fake_B, "F", reuse=True)
    cyc_B = generator(tf, fake_A, "G", reuse=True)
    d_B_real = discriminator(tf, real_B, "D_B")
    d_B_fake = discriminator(tf, fake_B, "D_B", reuse=True)
    d_A_real = discriminator(tf, real_A, "D_A")
    d_A_fake = discriminator(tf, fake_A, "D_A", reuse=True)
    cycle_loss = tf.reduce_mean(tf.abs(real_A - cyc_A)) + tf.reduce_mean(tf.abs(real_B - cyc_B))
    identity_loss = tf.reduce_mean(tf.abs(generator(tf, real_B, "G", reuse=True) - real_B))
    g_loss = (tf.reduce_mean(tf.squared_difference(d_B_fake, 1.0)) + tf.reduce_mean(tf.squared_difference(d_A_fake, 1.0))
              + 10.0 * cycle_loss + 5.0 * identity_loss)
    d_loss = 0.5 * (tf.reduce_mean(tf.squared_difference(d_B_real, 1.0)) + tf.reduce_mean(tf.square(d_B_fake))
                    + tf.reduce_mean(tf.squared_difference(d_A_real, 1.0)) + tf.reduce_mean(tf.square(d_A_fake)))
    t_vars = tf.trainable_variables()
    g_vars = [v for v in t_vars if v.name.startswith("G/") or v.name.startswith("F/")]
    d_vars = [v for v in t_vars if v.name.startswith("D_")]
    g_opt = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(g_loss, var_list=g_vars)
    d_opt = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(d_loss, var_list=d_vars)

    # pix2pix: conditional discriminator on the concatenated pair, sigmoid GAN loss + lambda * L1.
    with tf.variable_scope("pix2pix"):
        d_real = discriminator(tf, tf.concat([real_A, real_B], axis=3), "D")
        d_fake = discriminator(tf, tf.concat([real_A, fake_B], axis=3), "D", reuse=True)
    p2p_g = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.ones_like(d_fake)))
    p2p_l1 = tf.reduce_mean(tf.abs(real_B - fake_B))
    p2p_gen = p2p_g + 100.0 * p2p_l1
    p2p_d = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real, labels=tf.ones_like(d_real)) +
                           tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.zeros_like(d_fake)))

    feed = {real_A: A, real_B: B}
    g_losses, d_losses = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i, v in enumerate(tf.global_variables()):
            if "Adam" in v.op.name or "power" in v.op.name:
                continue
            shape = v.shape.as_list()
            base = np.ones(shape) if v.op.name.endswith("scale") else 0.0
            v.load((base + np.random.RandomState(9100 + i).standard_normal(shape) * 0.1).astype(np.float32), sess)
        out["p2p"] = [float(t) for t in sess.run([p2p_gen, p2p_d, p2p_l1], feed)]
        for _ in range(steps):
            _, gl = sess.run([g_opt, g_loss], feed)
            _, dl = sess.run([d_opt, d_loss], feed)
            g_losses.append(float(gl))
            d_losses.append(float(dl))
        out["cycle"] = float(sess.run(cycle_loss, feed))
        out["fake_B_sum"] = float(sess.run(fake_B, feed).sum())
    out["losses"] = g_losses
    out["d_losses"] = d_losses
    out["shapes"] = [str(t.shape) for t in (fake_B, d_B_real, d_real)]
    out["n_g_vars"] = len(g_vars)
    out["n_d_vars"] = len(d_vars)
    out["n_vars"] = len(tf.global_variables())
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
