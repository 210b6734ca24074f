"""A small U-Net and a 1-D temporal conv net written with tf.nn primitives beyond conv2d, as segmentation and
audio repositories did in TF1: tf.nn.conv1d (stride, SAME/VALID, dilations via tf.nn.convolution), causal
padding with tf.pad, tf.nn.separable_conv2d and tf.nn.depthwise_conv2d (rate), tf.nn.atrous_conv2d,
tf.nn.conv2d_transpose with output_shape from tf.shape and tf.stack, tf.layers.separable_conv2d, skip
concatenations, tf.nn.avg_pool / max_pool with VALID and SAME, tf.image.resize_nearest_neighbor upsampling,
and a pixel-wise sigmoid loss trained with RMSProp.

Deterministic: weights from numpy.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


def main(tf, steps=4):
    rng = np.random.RandomState(131)
    images = rng.uniform(0, 1, size=(2, 16, 16, 3)).astype(np.float32)
    masks = (images.mean(3, keepdims=True) > 0.5).astype(np.float32)
    signal = np.sin(np.linspace(0, 12, 64))[None, :, None] * np.ones((2, 1, 2))
    signal = (signal + 0.1 * rng.normal(size=signal.shape)).astype(np.float32)
    out = {}
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 16, 16, 3], name="x")
    m = tf.placeholder(tf.float32, [None, 16, 16, 1], name="mask")

    def w(shape, seed, scale=0.2):
        return tf.Variable(fixed_init(shape, seed, scale))

    dw1 = w([3, 3, 3, 2], 1300)
    pw1 = w([1, 1, 6, 8], 1301)
    e1 = tf.nn.relu(tf.nn.separable_conv2d(x, dw1, pw1, strides=[1, 1, 1, 1], padding="SAME"))
    p1 = tf.nn.max_pool(e1, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    dw2 = w([3, 3, 8, 1], 1302)
    e2 = tf.nn.relu(tf.nn.depthwise_conv2d(p1, dw2, [1, 1, 1, 1], "SAME", rate=[2, 2]))
    p2 = tf.nn.avg_pool(e2, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    a = tf.nn.relu(tf.nn.atrous_conv2d(p2, w([3, 3, 8, 16], 1303), rate=2, padding="SAME"))
    up_w = w([2, 2, 8, 16], 1304)
    batch = tf.shape(x)[0]
    u1 = tf.nn.conv2d_transpose(a, up_w, output_shape=tf.stack([batch, 8, 8, 8]), strides=[1, 2, 2, 1], padding="SAME")
    u1 = tf.nn.relu(tf.concat([u1, e2], axis=3))
    u2 = tf.image.resize_nearest_neighbor(u1, [16, 16])
    u2 = tf.concat([u2, e1], axis=3)
    sep = tf.layers.separable_conv2d(u2, 4, 3, padding="same", depth_multiplier=1, activation=tf.nn.relu,
                                     depthwise_initializer=tf.constant_initializer(fixed_init([3, 3, 24, 1], 1305, 0.2)),
                                     pointwise_initializer=tf.constant_initializer(fixed_init([1, 1, 24, 4], 1306, 0.2)))
    logits = tf.nn.conv2d(sep, w([1, 1, 4, 1], 1307), [1, 1, 1, 1], "SAME")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=m, logits=logits))
    train = tf.train.RMSPropOptimizer(0.01).minimize(loss)

    # 1-D temporal convolutions (WaveNet-style causal, dilated).
    s = tf.placeholder(tf.float32, [None, 64, 2], name="signal")
    k1 = w([3, 2, 4], 1308)
    c1 = tf.nn.conv1d(tf.pad(s, [[0, 0], [2, 0], [0, 0]]), k1, stride=1, padding="VALID")
    k2 = w([2, 4, 4], 1309)
    c2 = tf.nn.convolution(tf.pad(c1, [[0, 0], [2, 0], [0, 0]]), k2, padding="VALID", dilation_rate=[2])
    c3 = tf.nn.conv1d(c2, w([3, 4, 2], 1310), stride=2, padding="SAME")
    pred = tf.layers.conv1d(c3, 2, 1, kernel_initializer=tf.constant_initializer(fixed_init([1, 2, 2], 1311, 0.3)))
    target = s[:, ::2, :]
    loss1d = tf.reduce_mean(tf.square(pred - target))
    train1d = tf.train.AdamOptimizer(0.01).minimize(loss1d)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: images, m: masks, s: signal}
        losses, l1 = [], []
        for _ in range(steps):
            _, _, a_, b_ = sess.run([train, train1d, loss, loss1d], feed)
            losses.append(float(a_))
            l1.append(float(b_))
        lg, c = sess.run([logits, c2], feed)
    out["losses"] = losses
    out["losses_1d"] = l1
    out["logits_sum"] = float(lg.sum())
    out["c2_sum"] = float(c.sum())
    out["shapes"] = [str(t.shape) for t in (e1, p1, e2, p2, a, u1, u2, sep, c1, c2, c3, pred)]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
