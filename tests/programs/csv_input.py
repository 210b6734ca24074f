"""Reading CSV the TF1 ways: the "Reading data" guide's queue pipeline (string_input_producer ->
TextLineReader(skip_header_lines=1) -> decode_csv -> tf.stack -> tf.train.shuffle_batch, Coordinator and
start_queue_runners), and the premade-Estimator iris_data.py input function without the Estimator
(TextLineDataset(file).skip(1) per file through flat_map, map(decode_csv into a feature dict), shuffle/repeat/batch, feature columns into
input_layer, a two-layer DNN trained with Adagrad).

The dataset part feeds batches in file order (no shuffle) and loads the weights from numpy, so its losses are
deterministic; the queue part is checked on what does not depend on the order.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 8
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]


def write_csv(path, n, seed):
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        f.write(",".join(CSV_COLUMN_NAMES) + "\n")
        for _ in range(n):
            species = rng.randint(3)
            feats = rng.normal(loc=[5.0 + species, 3.0, 1.5 + 2 * species, 0.3 + species], scale=0.3)
            f.write(",".join("%.2f" % v for v in feats) + ",%d\n" % species)


def main(tf, steps=8):
    tf.reset_default_graph()
    root = tempfile.mkdtemp()
    files = [os.path.join(root, "iris_%d.csv" % i) for i in range(2)]
    write_csv(files[0], 24, 23)
    write_csv(files[1], 24, 24)

    # 1. Queues.
    filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(filename_queue)
    record_defaults = [[1.0], [1.0], [1.0], [1.0], [0]]
    col1, col2, col3, col4, col5 = tf.decode_csv(value, record_defaults=record_defaults)
    features = tf.stack([col1, col2, col3, col4])
    example_batch, label_batch = tf.train.shuffle_batch(
        [features, col5], batch_size=5, capacity=50, min_after_dequeue=10, allow_smaller_final_batch=True
    )
    rows, label_total, feature_total = 0, 0, 0.0
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                ex, lab = sess.run([example_batch, label_batch])
                rows += len(lab)
                label_total += int(lab.sum())
                feature_total += float(ex.sum())
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)

    # 2. Datasets into feature columns.
    def _parse_line(line):
        fields = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0.0], [0.0], [0]])
        features = dict(zip(CSV_COLUMN_NAMES, fields))
        label = features.pop("Species")
        return features, label

    def train_input_fn(batch_size):
        dataset = tf.data.Dataset.from_tensor_slices(files).flat_map(
            lambda f: tf.data.TextLineDataset(f).skip(1)
        )
        dataset = dataset.map(_parse_line)
        return dataset.repeat().batch(batch_size)

    features_t, labels_t = train_input_fn(16).make_one_shot_iterator().get_next()
    my_feature_columns = [tf.feature_column.numeric_column(key=k) for k in CSV_COLUMN_NAMES[:-1]]
    net = tf.feature_column.input_layer(features_t, my_feature_columns)
    for units in [10, 10]:
        net = tf.layers.dense(net, units=units, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 3, activation=None)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels_t, logits=logits)
    train_op = tf.train.AdagradOptimizer(learning_rate=0.1).minimize(
        loss, global_step=tf.train.get_or_create_global_step()
    )
    predicted_classes = tf.argmax(logits, 1)
    accuracy, acc_op = tf.metrics.accuracy(labels=labels_t, predictions=predicted_classes, name="acc_op")
    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for k, v in enumerate(tf.trainable_variables()):
            v.load(fixed_init(v.shape.as_list(), 1200 + k, scale=0.3), sess)
        for _ in range(steps):
            _, l, _ = sess.run([train_op, loss, acc_op])
            losses.append(float(l))
        acc = float(sess.run(accuracy))
        out_shapes = {k: str(v.shape) for k, v in sorted(features_t.items())}
    shutil.rmtree(root)
    return {
        "queue_rows": rows,
        "queue_label_total": label_total,
        "queue_feature_total": round(feature_total, 3),
        "losses": losses,
        "accuracy": acc,
        "feature_shapes": out_shapes,
        "trainable": [v.name for v in tf.trainable_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
