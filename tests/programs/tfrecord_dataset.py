"""The TF1 tf.data input pipeline of the "Importing Data" guide: tf.train.Example records written with
tf.python_io.TFRecordWriter, read back with TFRecordDataset -> map(parse_single_example) -> shuffle -> repeat ->
batch, through make_one_shot_iterator (loop until OutOfRangeError) and make_initializable_iterator with
placeholder file names; a small model trains on the batches.

The shuffle is seeded but TF's shuffle order is its own: compared with TensorFlow on what does not depend on
the order (counts, shapes, dtypes, sums), and the model's losses with an unshuffled pipeline.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import run_as_script

TF_STEPS = 10


def _int64_feature(tf, value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes_feature(tf, value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _float_feature(tf, values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def write_records(tf, filename, start, n):
    rng = np.random.RandomState(start)
    with tf.python_io.TFRecordWriter(filename) as writer:
        for i in range(start, start + n):
            x = rng.uniform(-1, 1, size=4).astype(np.float32)
            label = int(x.sum() > 0)
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "x": _float_feature(tf, x.tolist()),
                        "label": _int64_feature(tf, label),
                        "name": _bytes_feature(tf, ("item%d" % i).encode()),
                    }
                )
            )
            writer.write(example.SerializeToString())


def main(tf, steps=10):
    tf.reset_default_graph()
    root = tempfile.mkdtemp()
    files = [os.path.join(root, "train-%05d-of-00002.tfrecord" % i) for i in range(2)]
    write_records(tf, files[0], 0, 30)
    write_records(tf, files[1], 30, 30)

    def _parse_function(example_proto):
        features = {
            "x": tf.FixedLenFeature([4], tf.float32),
            "label": tf.FixedLenFeature((), tf.int64, default_value=0),
            "name": tf.FixedLenFeature((), tf.string, default_value=""),
        }
        parsed_features = tf.parse_single_example(example_proto, features)
        return parsed_features["x"], parsed_features["label"], parsed_features["name"]

    # One-shot iterator over a shuffled, repeated, batched dataset.
    dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.map(_parse_function)
    dataset = dataset.shuffle(buffer_size=100, seed=3)
    dataset = dataset.repeat(2)
    dataset = dataset.batch(16)
    iterator = dataset.make_one_shot_iterator()
    next_x, next_label, next_name = iterator.get_next()
    batch_sizes, names = [], set()
    label_sum, x_sum = 0, 0.0
    with tf.Session() as sess:
        while True:
            try:
                xv, lv, nv = sess.run([next_x, next_label, next_name])
            except tf.errors.OutOfRangeError:
                break
            batch_sizes.append(len(lv))
            label_sum += int(lv.sum())
            x_sum += float(xv.sum())
            names.update(n.decode() for n in nv)

    # Initializable iterator with the file names fed, training a logistic regression.
    filenames = tf.placeholder(tf.string, shape=[None])
    dataset2 = tf.data.TFRecordDataset(filenames).map(_parse_function).repeat().batch(12)
    iterator2 = dataset2.make_initializable_iterator()
    x, label, _ = iterator2.get_next()
    w = tf.Variable(tf.zeros([4, 1]))
    b = tf.Variable(0.0)
    logits = tf.squeeze(tf.matmul(x, w), axis=1) + b
    loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(label, tf.float32), logits=logits)
    )
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(iterator2.initializer, feed_dict={filenames: files})
        for _ in range(steps):
            _, l = sess.run([train_op, loss])
            losses.append(float(l))
        sess.run(iterator2.initializer, feed_dict={filenames: files[1:]})
        first = sess.run(label)
    shutil.rmtree(root)
    return {
        "batch_sizes": batch_sizes,
        "label_sum": label_sum,
        "x_sum": x_sum,
        "distinct_names": len(names),
        "output_shapes": [str(s) for s in tf.data.get_output_shapes(dataset)]
        if hasattr(tf.data, "get_output_shapes")
        else None,
        "output_types": [t.name for t in dataset.output_types],
        "losses": losses,
        "second_file_first_labels": first.tolist(),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
