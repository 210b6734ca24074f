"""Neural style transfer the TF1 way (Gatys et al. as in anishathalye/neural-style and the TF1 blog posts):
a fixed convolutional "VGG" of tf.constant weights with avg_pool, content and style features of constant
images, Gram matrices from reshape + matmul(transpose_a=True), the style loss summed over layers with
tf.add_n, tf.image.total_variation, the image itself the only tf.Variable (optimized by Adam with var_list),
and the pixels clipped back into range by tf.assign(clip_by_value) after each step.

All weights and images are numpy constants, so the losses are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 8
LAYERS = ("conv1_1", "conv1_2", "conv2_1")


def net(tf, weights, image):
    current = image
    features = {}
    for name in LAYERS:
        kernel, bias = weights[name]
        current = tf.nn.relu(
            tf.nn.bias_add(
                tf.nn.conv2d(current, tf.constant(kernel), strides=(1, 1, 1, 1), padding="SAME"), bias
            )
        )
        features[name] = current
        if name == "conv1_2":
            current = tf.nn.avg_pool(current, ksize=(1, 2, 2, 1), strides=(1, 2, 2, 1), padding="SAME")
    return features


def gram(tf, layer):
    _, h, w, c = layer.get_shape().as_list()
    feats = tf.reshape(layer, (-1, c))
    return tf.matmul(feats, feats, transpose_a=True) / (h * w * c)


def main(tf, steps=8):
    tf.reset_default_graph()
    rng = np.random.RandomState(26)
    content_img = rng.uniform(0, 1, (1, 16, 16, 3)).astype(np.float32)
    style_img = np.tile(np.linspace(0, 1, 16, dtype=np.float32)[None, :, None, None], (1, 1, 16, 3))
    channels = {"conv1_1": (3, 8), "conv1_2": (8, 8), "conv2_1": (8, 12)}
    weights = {
        n: (fixed_init((3, 3, ci, co), 1400 + i, 0.3), np.full(co, 0.01, np.float32))
        for i, (n, (ci, co)) in enumerate(channels.items())
    }

    with tf.Graph().as_default(), tf.Session() as sess:
        content_features = sess.run(net(tf, weights, tf.constant(content_img))["conv1_2"])
        style_net = net(tf, weights, tf.constant(style_img))
        style_grams = {n: sess.run(gram(tf, style_net[n])) for n in LAYERS}

    with tf.Graph().as_default():
        image = tf.Variable(tf.constant(content_img * 0.5 + 0.25), name="image")
        feats = net(tf, weights, image)
        content_loss = 2 * tf.nn.l2_loss(feats["conv1_2"] - content_features) / content_features.size
        style_losses = []
        for n in LAYERS:
            g = gram(tf, feats[n])
            style_losses.append(2 * tf.nn.l2_loss(g - style_grams[n]) / style_grams[n].size)
        style_loss = tf.add_n(style_losses) / len(LAYERS)
        tv_loss = tf.reduce_sum(tf.image.total_variation(image)) / image.shape.num_elements()
        loss = 1.0 * content_loss + 50.0 * style_loss + 0.1 * tv_loss
        train_step = tf.train.AdamOptimizer(0.02, beta1=0.9, beta2=0.999, epsilon=1e-08).minimize(
            loss, var_list=[image]
        )
        clip = tf.assign(image, tf.clip_by_value(image, 0.0, 1.0))
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                _, l = sess.run([train_step, loss])
                sess.run(clip)
                losses.append(float(l))
            parts = sess.run([content_loss, style_loss, tv_loss])
            final = sess.run(image)
    return {
        "losses": losses,
        "final_parts": [float(p) for p in parts],
        "image_mean": float(final.mean()),
        "image_range": [float(final.min()), float(final.max())],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
