"""A TF1 fully convolutional segmentation net as the FCN/U-Net tutorials wrote it with tf.nn primitives:
tf.nn.conv2d encoders with tf.nn.max_pool, an atrous context layer (tf.nn.atrous_conv2d), upsampling by
tf.nn.conv2d_transpose with an explicit output_shape built from tf.shape (and a strided one), a skip connection
merged with tf.concat, tf.image.resize_bilinear of the coarse logits (align_corners), a per-pixel
sparse_softmax_cross_entropy_with_logits over [N, H, W, C] logits, pixel accuracy and mean IoU with
tf.metrics.mean_iou, and Adam.

tf.set_random_seed makes the truncated-normal weights TF's bits, so the losses are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 4


def make_batch(rng, n, size=16):
    images = rng.uniform(0, 0.2, size=(n, size, size, 1)).astype(np.float32)
    masks = np.zeros((n, size, size), np.int32)
    for i in range(n):
        r, c = rng.randint(2, size - 8, size=2)
        k = rng.randint(1, 3)
        images[i, r : r + 6, c : c + 6, 0] += 0.4 * k
        masks[i, r : r + 6, c : c + 6] = k
    return images, masks


def main(tf, steps=4):
    tf.reset_default_graph()
    tf.set_random_seed(18)
    rng = np.random.RandomState(18)
    num_classes = 3
    x = tf.placeholder(tf.float32, [None, 16, 16, 1], name="image")
    y = tf.placeholder(tf.int32, [None, 16, 16], name="mask")

    def weight(shape, name):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.2), name=name)

    def bias(n, name):
        return tf.Variable(tf.constant(0.05, shape=[n]), name=name)

    c1 = tf.nn.relu(tf.nn.conv2d(x, weight([3, 3, 1, 8], "w1"), [1, 1, 1, 1], "SAME") + bias(8, "b1"))
    p1 = tf.nn.max_pool(c1, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")  # 8x8
    c2 = tf.nn.relu(tf.nn.conv2d(p1, weight([3, 3, 8, 16], "w2"), [1, 1, 1, 1], "SAME") + bias(16, "b2"))
    p2 = tf.nn.max_pool(c2, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")  # 4x4
    ctx = tf.nn.relu(tf.nn.atrous_conv2d(p2, weight([3, 3, 16, 16], "w_atrous"), rate=2, padding="SAME"))

    batch = tf.shape(x)[0]
    up_w = weight([3, 3, 8, 16], "w_up")  # [h, w, out, in]
    up1 = tf.nn.conv2d_transpose(ctx, up_w, tf.stack([batch, 8, 8, 8]), [1, 2, 2, 1], padding="SAME")
    merged = tf.concat([tf.nn.relu(up1), p1], axis=3)
    coarse = tf.nn.conv2d(merged, weight([1, 1, 16, num_classes], "w_score"), [1, 1, 1, 1], "VALID")
    up2 = tf.nn.conv2d_transpose(coarse, weight([4, 4, num_classes, num_classes], "w_up2"),
                                 tf.stack([batch, 16, 16, num_classes]), [1, 2, 2, 1], padding="SAME")
    logits = up2 + tf.image.resize_bilinear(coarse, [16, 16], align_corners=True)

    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    pred = tf.argmax(logits, axis=3, output_type=tf.int32)
    pixel_acc = tf.reduce_mean(tf.cast(tf.equal(pred, y), tf.float32))
    miou, miou_update = tf.metrics.mean_iou(y, pred, num_classes)

    losses, accs = [], []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for _ in range(steps):
            xb, yb = make_batch(rng, 4)
            _, l, a, _ = sess.run([train, loss, pixel_acc, miou_update], {x: xb, y: yb})
            losses.append(float(l))
            accs.append(float(a))
        iou = sess.run(miou)
        xb, yb = make_batch(np.random.RandomState(3), 2)
        lg = sess.run(logits, {x: xb})
    return {
        "losses": losses,
        "pixel_accuracies": accs,
        "mean_iou": float(iou),
        "logit_sums": [float(v) for v in lg.sum(axis=(1, 2, 3))],
        "shapes": [up1.get_shape().as_list(), up2.get_shape().as_list(), ctx.get_shape().as_list(),
                   logits.get_shape().as_list()],
    }


if __name__ == "__main__":
    run_as_script(main, 4)
