"""A "reading data" style program: Examples written to TFRecords, read back with tf.data
(TFRecordDataset -> shuffle -> batch -> parse_example -> repeat -> prefetch), train an MLP
to the accuracy the same model reaches fed the same arrays through feed_dict."""

import numpy as np

import ferroflow as tf
from ferroflow.datasets import digits

STEPS = 600
BATCH = 64


def _write_records(path, images, labels):
    with tf.io.TFRecordWriter(path) as w:
        for img, lab in zip(images, labels):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(float_list=tf.train.FloatList(value=img.ravel().astype(np.float32) / 16)),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(lab)])),
            }))
            w.write(ex.SerializeToString())


def _model(x, y):
    w1 = tf.get_variable("w1", [64, 64], initializer=tf.glorot_uniform_initializer(seed=1))
    b1 = tf.get_variable("b1", [64], initializer=tf.zeros_initializer())
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    w2 = tf.get_variable("w2", [64, 10], initializer=tf.glorot_uniform_initializer(seed=2))
    b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    return logits, train


def _accuracy(sess, logits, x, images, labels):
    pred = sess.run(logits, {x: images.reshape(-1, 64).astype(np.float32) / 16})
    return float(np.mean(pred.argmax(axis=1) == labels))


def test_train_from_tfrecords_with_tf_data_matches_feed_dict(tmp_path):
    (tr_x, tr_y), (te_x, te_y) = digits.train_test_split()
    path = str(tmp_path / "digits.tfrecord")
    _write_records(path, tr_x, tr_y)
    features = {
        "image": tf.io.FixedLenFeature([64], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.int64),
    }

    with tf.Graph().as_default():
        ds = (tf.data.TFRecordDataset(path).shuffle(2000, seed=3).batch(BATCH)
              .map(lambda s: tf.io.parse_example(s, features), num_parallel_calls=2).repeat().prefetch(2))
        batch = ds.make_one_shot_iterator().get_next()
        x = tf.placeholder_with_default(batch["image"], [None, 64])
        logits, train = _model(x, batch["label"])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(STEPS):
                s.run(train)
            acc_data = _accuracy(s, logits, x, te_x, te_y)

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        logits, train = _model(x, y)
        rng = np.random.RandomState(0)
        flat = tr_x.reshape(-1, 64).astype(np.float32) / 16
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(STEPS):
                idx = rng.randint(0, len(flat), BATCH)
                s.run(train, {x: flat[idx], y: tr_y[idx]})
            acc_feed = _accuracy(s, logits, x, te_x, te_y)

    assert acc_data > 0.9, acc_data
    assert abs(acc_data - acc_feed) < 0.04, (acc_data, acc_feed)


def test_every_example_read_once_per_epoch(tmp_path):
    (tr_x, tr_y), _ = digits.train_test_split()
    path = str(tmp_path / "d.tfrecord")
    _write_records(path, tr_x[:300], tr_y[:300])
    with tf.Graph().as_default():
        ds = tf.data.TFRecordDataset(path).map(
            lambda s: tf.io.parse_single_example(s, {"label": tf.io.FixedLenFeature([], tf.int64)})["label"]
        ).batch(128).repeat(2)
        nxt = ds.make_one_shot_iterator().get_next()
        sizes, labels = [], []
        with tf.Session() as s:
            try:
                while True:
                    b = s.run(nxt)
                    sizes.append(len(b))
                    labels.extend(b.tolist())
            except tf.errors.OutOfRangeError:
                pass
    assert sizes == [128, 128, 44] * 2
    assert labels == tr_y[:300].tolist() * 2


def test_monitored_training_session_stops_at_the_end_of_the_data():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    with tf.Graph().as_default():
        batch = tf.data.Dataset.from_tensor_slices(x).batch(3).repeat(2).make_one_shot_iterator().get_next()
        w = tf.Variable(0.0)
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(batch) * w, global_step=step)
        runs = 0
        with tf.train.MonitoredTrainingSession() as sess:
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    # 10 rows in batches of 3 (the last one of 1), two epochs; OutOfRangeError ends the loop cleanly.
    assert runs == 8
