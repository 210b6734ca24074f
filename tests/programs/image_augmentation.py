"""A TF1 image-augmentation input pipeline as the classification tutorials and tensorflow/models
preprocessing wrote it: tf.data.Dataset.from_tensor_slices over uint8 images, map() with
tf.image.convert_image_dtype, resize_image_with_crop_or_pad (pad then crop), tf.random_crop to the training
size, random_flip_left_right / random_flip_up_down, random_brightness, random_contrast, random_saturation and
random_hue (all with op seeds under a graph seed), central_crop, rot90 by a random k from
tf.random_uniform(maxval=4, dtype=tf.int32), adjust_gamma, per_image_standardization and a final
clip_by_value; batch, a one-shot iterator, and a small conv net trained on the augmented batches; the
eval-side map (central crop + standardization only) run on the same images.

tf.set_random_seed and the op seeds make every random choice TF's own bits.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


def main(tf, steps=4):
    tf.reset_default_graph()
    tf.set_random_seed(150)
    rng = np.random.RandomState(150)
    images = rng.randint(0, 256, size=(8, 20, 20, 3)).astype(np.uint8)
    labels = np.arange(8) % 2

    def train_preprocess(image, label):
        image = tf.image.convert_image_dtype(image, tf.float32)
        image = tf.image.resize_image_with_crop_or_pad(image, 24, 24)
        image = tf.random_crop(image, [16, 16, 3], seed=1)
        image = tf.image.random_flip_left_right(image, seed=2)
        image = tf.image.random_flip_up_down(image, seed=3)
        image = tf.image.random_brightness(image, max_delta=32.0 / 255.0, seed=4)
        image = tf.image.random_contrast(image, lower=0.5, upper=1.5, seed=5)
        image = tf.image.random_saturation(image, lower=0.5, upper=1.5, seed=6)
        image = tf.image.random_hue(image, max_delta=0.2, seed=7)
        k = tf.random_uniform([], maxval=4, dtype=tf.int32, seed=8)
        image = tf.image.rot90(image, k)
        image = tf.image.adjust_gamma(tf.clip_by_value(image, 0.0, 1.0), gamma=1.2)
        image = tf.image.per_image_standardization(image)
        return image, label

    def eval_preprocess(image, label):
        image = tf.image.convert_image_dtype(image, tf.float32)
        image = tf.image.central_crop(image, 0.8)
        image = tf.image.resize_images(image, [16, 16])
        return tf.image.per_image_standardization(image), label

    train_ds = (tf.data.Dataset.from_tensor_slices((images, labels)).map(train_preprocess).batch(4).repeat())
    eval_ds = tf.data.Dataset.from_tensor_slices((images, labels)).map(eval_preprocess).batch(8)
    x, y = train_ds.make_one_shot_iterator().get_next()
    ex, ey = eval_ds.make_one_shot_iterator().get_next()

    def net(inp, reuse):
        with tf.variable_scope("net", reuse=reuse):
            w = tf.get_variable("conv", initializer=fixed_init([3, 3, 3, 4], 1500, 0.2))
            h = tf.nn.relu(tf.nn.conv2d(inp, w, [1, 2, 2, 1], "SAME"))
            pooled = tf.reduce_mean(h, axis=[1, 2])
            dw = tf.get_variable("dense", initializer=fixed_init([4, 2], 1501, 0.3))
            return tf.matmul(pooled, dw)

    logits = net(x, False)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    eval_logits = net(ex, True)
    out = {"train_shapes": str(x.shape), "eval_shapes": str(ex.shape)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses, batch_sums = [], []
        for _ in range(steps):
            _, l, xb = sess.run([train_op, loss, x])
            losses.append(float(l))
            batch_sums.append(float(np.abs(xb).sum()))
        ev, ex_np = sess.run([eval_logits, ex])
    out["losses"] = losses
    out["batch_abs_sums"] = batch_sums
    out["eval_logits"] = ev.ravel().tolist()
    out["eval_image_head"] = ex_np[0, :2, :2].ravel().tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
