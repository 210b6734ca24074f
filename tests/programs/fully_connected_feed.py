"""TF 1.x "TensorFlow Mechanics 101" (fully_connected_feed.py with mnist.py): placeholder_inputs,
inference with tf.name_scope('hidden1') and tf.truncated_normal(stddev=1/sqrt(n)) weights, loss through
sparse_softmax_cross_entropy_with_logits(labels=tf.to_int64(labels)), training() with a scalar summary and
a global_step variable, evaluation() with tf.nn.in_top_k, fill_feed_dict over a DataSet-like next_batch,
do_eval counting true_count over steps_per_epoch, tf.summary.merge_all + FileWriter(log_dir, sess.graph),
saver.save(sess, checkpoint_file, global_step=step) every few steps, and the log directory managed with
tf.gfile.Exists / DeleteRecursively / MakeDirs.

tf.set_random_seed makes the truncated-normal weights TF's bits, so losses and precisions are deterministic.
"""

import math
import os
import shutil
import tempfile

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 8

NUM_CLASSES = 10
IMAGE_PIXELS = 784


class DataSet:
    def __init__(self, images, labels):
        self.images, self.labels = images, labels
        self.num_examples = len(images)
        self._index = 0

    def next_batch(self, batch_size, fake_data=False):
        start = self._index
        self._index += batch_size
        if self._index > self.num_examples:
            start, self._index = 0, batch_size
        return self.images[start : self._index], self.labels[start : self._index]


def inference(tf, images, hidden1_units, hidden2_units):
    with tf.name_scope("hidden1"):
        weights = tf.Variable(
            tf.truncated_normal([IMAGE_PIXELS, hidden1_units], stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([hidden1_units]), name="biases")
        hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
    with tf.name_scope("hidden2"):
        weights = tf.Variable(
            tf.truncated_normal([hidden1_units, hidden2_units], stddev=1.0 / math.sqrt(float(hidden1_units))),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([hidden2_units]), name="biases")
        hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
    with tf.name_scope("softmax_linear"):
        weights = tf.Variable(
            tf.truncated_normal([hidden2_units, NUM_CLASSES], stddev=1.0 / math.sqrt(float(hidden2_units))),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([NUM_CLASSES]), name="biases")
        logits = tf.matmul(hidden2, weights) + biases
    return logits


def loss(tf, logits, labels):
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(tf, loss, learning_rate):
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    train_op = optimizer.minimize(loss, global_step=global_step)
    return train_op


def evaluation(tf, logits, labels):
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))


def main(tf, steps=8):
    tf.reset_default_graph()
    images, onehot = fake_mnist(160, seed=111)
    labels = np.argmax(onehot, 1).astype(np.int32)
    data_sets = {
        "train": DataSet(images[:96], labels[:96]),
        "validation": DataSet(images[96:128], labels[96:128]),
        "test": DataSet(images[128:], labels[128:]),
    }
    batch_size = 16
    log_dir = os.path.join(tempfile.mkdtemp(), "logs", "fully_connected_feed")
    out = {}

    if tf.gfile.Exists(log_dir):
        tf.gfile.DeleteRecursively(log_dir)
    tf.gfile.MakeDirs(log_dir)
    out["made_dir"] = tf.gfile.Exists(log_dir) and tf.gfile.IsDirectory(log_dir)

    def placeholder_inputs(batch_size):
        images_placeholder = tf.placeholder(tf.float32, shape=(batch_size, IMAGE_PIXELS))
        labels_placeholder = tf.placeholder(tf.int32, shape=(batch_size))
        return images_placeholder, labels_placeholder

    def fill_feed_dict(data_set, images_pl, labels_pl):
        images_feed, labels_feed = data_set.next_batch(batch_size)
        return {images_pl: images_feed, labels_pl: labels_feed}

    def do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data_set):
        true_count = 0
        steps_per_epoch = data_set.num_examples // batch_size
        num_examples = steps_per_epoch * batch_size
        for _ in range(steps_per_epoch):
            feed_dict = fill_feed_dict(data_set, images_placeholder, labels_placeholder)
            true_count += sess.run(eval_correct, feed_dict=feed_dict)
        precision = float(true_count) / num_examples
        return int(true_count), precision

    with tf.Graph().as_default():
        tf.set_random_seed(11)
        images_placeholder, labels_placeholder = placeholder_inputs(batch_size)
        logits = inference(tf, images_placeholder, 32, 16)
        loss_op = loss(tf, logits, labels_placeholder)
        train_op = training(tf, loss_op, 0.1)
        eval_correct = evaluation(tf, logits, labels_placeholder)
        summary = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
        sess = tf.Session()
        summary_writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(init)
        losses, evals = [], []
        for step in range(steps):
            feed_dict = fill_feed_dict(data_sets["train"], images_placeholder, labels_placeholder)
            _, loss_value = sess.run([train_op, loss_op], feed_dict=feed_dict)
            losses.append(float(loss_value))
            if step % 2 == 0:
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
            if (step + 1) % 4 == 0 or (step + 1) == steps:
                checkpoint_file = os.path.join(log_dir, "model.ckpt")
                saver.save(sess, checkpoint_file, global_step=step)
                for name in ("train", "validation", "test"):
                    evals.append(do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data_sets[name]))
        summary_writer.close()
        sess.close()
        out["losses"] = losses
        out["evals"] = evals
        out["names"] = [logits.op.name, loss_op.op.name, eval_correct.op.name, train_op.name]
        out["variables"] = [v.name for v in tf.global_variables()]
        out["losses_collection"] = [t.name for t in tf.get_collection(tf.GraphKeys.LOSSES)]
    out["default_graph_untouched"] = len(tf.get_default_graph().get_operations())
    files = sorted(tf.gfile.ListDirectory(log_dir))
    out["files"] = [f for f in files if not f.startswith("events.")]
    out["event_files"] = len([f for f in files if f.startswith("events.")])
    out["glob"] = len(tf.gfile.Glob(os.path.join(log_dir, "model.ckpt-*.index")))
    tf.gfile.DeleteRecursively(log_dir)
    out["deleted"] = not tf.gfile.Exists(log_dir)
    shutil.rmtree(os.path.dirname(os.path.dirname(log_dir)))
    return out


if __name__ == "__main__":
    run_as_script(main, 8)
