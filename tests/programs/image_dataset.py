"""aymericdamien/TensorFlow-Examples build_an_image_dataset.py: a folder per class of image files, a Python
walk that collects paths and integer labels, tf.convert_to_tensor of both, tf.train.slice_input_producer
(shuffle=True with a seed), tf.read_file + tf.image.decode_jpeg(channels=CHANNELS), tf.image.resize_images,
normalisation by 1/127.5 - 1, tf.train.batch with capacity and num_threads, then a small net trained with
tf.train.start_queue_runners and a Coordinator; plus the tf.data way (tf.data.Dataset.from_tensor_slices
over the file names, map with decode_png) on the PNG copies.

The files are written by the program with Pillow (PNG) and with tf.image.encode_jpeg. Decoded JPEG pixels may
differ by rounding between decoders, so only their shapes and dtypes are compared; PNG pixels must be exact.
The queue-fed batches are shuffled with a seeded slice_input_producer but run on threads, so the queue path
records shapes and that the loss is finite.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 3

N_CLASSES = 2
IMG_HEIGHT = 16
IMG_WIDTH = 16
CHANNELS = 3


def write_images(tf, root):
    from PIL import Image

    rng = np.random.RandomState(5)
    for c in range(N_CLASSES):
        os.makedirs(os.path.join(root, "class%d" % c))
        for i in range(4):
            h, w = 20 + 2 * i, 24 - 2 * i
            img = rng.randint(0, 60, size=(h, w, 3)).astype(np.uint8)
            img[:, :, c] += 150
            Image.fromarray(img).save(os.path.join(root, "class%d" % c, "img%d.png" % i))
            with tf.Graph().as_default(), tf.Session() as s:
                data = s.run(tf.image.encode_jpeg(tf.constant(img), quality=95))
            with open(os.path.join(root, "class%d" % c, "img%d.jpg" % i), "wb") as f:
                f.write(data)


def read_images(tf, dataset_path, ext, batch_size):
    imagepaths, labels = list(), list()
    label = 0
    classes = sorted(os.walk(dataset_path).__next__()[1])
    for c in classes:
        c_dir = os.path.join(dataset_path, c)
        walk = os.walk(c_dir).__next__()
        for sample in sorted(walk[2]):
            if sample.endswith(ext):
                imagepaths.append(os.path.join(c_dir, sample))
                labels.append(label)
        label += 1

    imagepaths = tf.convert_to_tensor(imagepaths, dtype=tf.string)
    labels = tf.convert_to_tensor(labels, dtype=tf.int32)
    image, label = tf.train.slice_input_producer([imagepaths, labels], shuffle=True, seed=3)

    image = tf.read_file(image)
    image = tf.image.decode_jpeg(image, channels=CHANNELS)
    image = tf.image.resize_images(image, [IMG_HEIGHT, IMG_WIDTH])
    image = image * 1.0 / 127.5 - 1.0

    X, Y = tf.train.batch([image, label], batch_size=batch_size, capacity=batch_size * 8, num_threads=2)
    return X, Y


def main(tf, steps=3):
    tf.reset_default_graph()
    tf.set_random_seed(10)
    root = tempfile.mkdtemp()
    write_images(tf, root)
    out = {}

    X, Y = read_images(tf, root, ".jpg", batch_size=4)
    with tf.variable_scope("ConvNet"):
        net = tf.layers.conv2d(X, 4, 3, activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.flatten(net)
        logits = tf.layers.dense(net, N_CLASSES)
    loss_op = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss_op)
    init = tf.global_variables_initializer()
    losses = []
    with tf.Session() as sess:
        sess.run(init)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for _ in range(steps):
            _, l, xb, yb = sess.run([train_op, loss_op, X, Y])
            losses.append(float(l))
        coord.request_stop()
        coord.join(threads)
    out["queue_losses_finite"] = bool(np.all(np.isfinite(losses)))
    out["queue_batch"] = [list(xb.shape), xb.dtype.name, list(yb.shape), yb.dtype.name]
    out["queue_range"] = bool(xb.min() >= -1.0 and xb.max() <= 1.0)
    out["X_shape"] = X.get_shape().as_list()
    out["queue_runners"] = sorted(qr.name for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))

    # The tf.data way over the PNG copies: exact pixels, resized with bilinear (resize_images' default).
    tf.reset_default_graph()
    files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".png"))
    labels = [0 if "class0" in f else 1 for f in files]

    def parse(filename, label):
        image_string = tf.read_file(filename)
        image_decoded = tf.image.decode_png(image_string, channels=3)
        image_resized = tf.image.resize_images(image_decoded, [IMG_HEIGHT, IMG_WIDTH])
        return image_resized, label

    ds = tf.data.Dataset.from_tensor_slices((tf.constant(files), tf.constant(labels))).map(parse).batch(4)
    it = ds.make_one_shot_iterator()
    nxt = it.get_next()
    raw = tf.image.decode_image(tf.read_file(files[0]))
    with tf.Session() as sess:
        sums, labs = [], []
        for _ in range(2):
            im, lb = sess.run(nxt)
            sums.append(float(im.astype(np.float64).sum()))
            labs.append(lb.tolist())
        r = sess.run(raw)
    out["png_sums"] = sums
    out["png_labels"] = labs
    out["decode_image"] = [list(r.shape), r.dtype.name, int(r.astype(np.int64).sum())]
    out["png_types"] = [t.name for t in ds.output_types]
    out["png_shapes"] = [str(s) for s in ds.output_shapes]
    shutil.rmtree(root)
    return out


if __name__ == "__main__":
    run_as_script(main, 3)
