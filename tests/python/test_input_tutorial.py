"""The TF1 "reading data" tutorial, end to end: handwritten digits written as tf.train.Examples to TFRecord files,
read back by string_input_producer -> TFRecordReader -> parse_single_example -> decode_raw -> shuffle_batch with
queue runners, training a softmax classifier until the input runs out after NUM_EPOCHS epochs."""

import numpy as np

import ferroflow as tf
from ferroflow.datasets import digits

NUM_EPOCHS = 30
BATCH = 64


def _write_records(path, images, labels):
    with tf.io.TFRecordWriter(str(path)) as w:
        for img, label in zip(images, labels):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[img.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }))
            w.write(ex.SerializeToString())


def _model(x):
    with tf.variable_scope("softmax", reuse=tf.AUTO_REUSE):
        w = tf.get_variable("w", [64, 10], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
    return tf.matmul(x, w) + b


def test_reading_data_tutorial_trains_to_a_sane_accuracy(tmp_path):
    (train_x, train_y), (test_x, test_y) = digits.train_test_split()
    files = []
    for i in range(2):
        path = tmp_path / f"digits-{i}.tfrecord"
        _write_records(path, train_x[i::2].reshape(-1, 64).astype(np.uint8), train_y[i::2])
        files.append(str(path))

    with tf.Graph().as_default():
        tf.set_random_seed(1)
        filename_queue = tf.train.string_input_producer(files, num_epochs=NUM_EPOCHS)
        _, serialized = tf.TFRecordReader().read(filename_queue)
        features = tf.parse_single_example(serialized, features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        })
        image = tf.cast(tf.reshape(tf.decode_raw(features["image_raw"], tf.uint8), [64]), tf.float32) / 16.0
        label = tf.cast(features["label"], tf.int32)
        images, labels = tf.train.shuffle_batch([image, label], batch_size=BATCH, capacity=1000,
                                                min_after_dequeue=500, num_threads=2,
                                                allow_smaller_final_batch=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=_model(images)))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)

        test_in = tf.placeholder(tf.float32, [None, 64])
        predict = tf.argmax(_model(test_in), axis=1)

        seen = 0
        with tf.Session() as s:
            s.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord=coord)
            opts = tf.RunOptions(timeout_in_ms=30000)
            try:
                while not coord.should_stop():
                    _, n = s.run([train, tf.shape(labels)[0]], options=opts)
                    seen += int(n)
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
            pred = s.run(predict, {test_in: test_x.reshape(-1, 64).astype(np.float32) / 16.0})

    # Every training example was read once per epoch, no more and no less.
    assert seen == NUM_EPOCHS * len(train_y)
    accuracy = float(np.mean(pred == test_y))
    assert accuracy > 0.9, accuracy
