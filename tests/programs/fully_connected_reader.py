"""TF 1.x's fully_connected_reader.py (how_tos/reading_data) with the "Threading and Queues" guide: examples
written with tf.python_io.TFRecordWriter as tf.train.Example protos (int64/bytes/float features), read back by
tf.train.string_input_producer(num_epochs=...) + tf.TFRecordReader + tf.parse_single_example (FixedLenFeature
and VarLenFeature), tf.decode_raw of the image bytes, cast and scale, tf.train.shuffle_batch... here
tf.train.batch for a deterministic order, the num_epochs local variable initialized by
tf.local_variables_initializer, the training loop `while not coord.should_stop()` ended by OutOfRangeError;
and the queue guide's explicit tf.FIFOQueue with enqueue_many/dequeue/size, a RandomShuffleQueue with a
seed, and a tf.train.QueueRunner added with tf.train.add_queue_runner and started by start_queue_runners.

Weights start from zeros; one reading thread keeps the order fixed, so the losses are deterministic.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 2


def write(tf, path, images, labels):
    def _int64_feature(value):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    def _bytes_feature(value):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    with tf.python_io.TFRecordWriter(path) as writer:
        for index in range(images.shape[0]):
            image_raw = (images[index] * 255).astype(np.uint8).tobytes()
            example = tf.train.Example(features=tf.train.Features(feature={
                "height": _int64_feature(28),
                "width": _int64_feature(28),
                "label": _int64_feature(int(labels[index])),
                "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(index % 3)))),
                "image_raw": _bytes_feature(image_raw),
            }))
            writer.write(example.SerializeToString())


def main(tf, steps=2):
    tf.reset_default_graph()
    images, onehot = fake_mnist(40, seed=19)
    labels = np.argmax(onehot, 1)
    root = tempfile.mkdtemp()
    path = os.path.join(root, "train.tfrecords")
    write(tf, path, images.reshape(-1, 28, 28), labels)
    out = {"record_count": sum(1 for _ in tf.python_io.tf_record_iterator(path))}

    def read_and_decode(filename_queue):
        reader = tf.TFRecordReader()
        _, serialized_example = reader.read(filename_queue)
        features = tf.parse_single_example(serialized_example, features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
            "tags": tf.VarLenFeature(tf.int64),
        })
        image = tf.decode_raw(features["image_raw"], tf.uint8)
        image.set_shape([784])
        image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5
        label = tf.cast(features["label"], tf.int32)
        return image, label, features["tags"]

    with tf.name_scope("input"):
        filename_queue = tf.train.string_input_producer([path], num_epochs=steps, shuffle=False)
        image, label, tags = read_and_decode(filename_queue)
        n_tags = tf.size(tags.values)
        images_b, labels_b, tags_b = tf.train.batch([image, label, n_tags], batch_size=10, num_threads=1,
                                                    capacity=40)

    w = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    logits = tf.matmul(images_b, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels_b, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())

    losses, tag_counts = [], []
    with tf.Session() as sess:
        sess.run(init_op)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            step = 0
            while not coord.should_stop():
                _, loss_value, tc = sess.run([train_op, loss, tags_b])
                losses.append(float(loss_value))
                tag_counts.append(tc.tolist())
                step += 1
        except tf.errors.OutOfRangeError:
            out["done"] = "Done training for %d epochs, %d steps." % (steps, step)
        finally:
            coord.request_stop()
        coord.join(threads)
    out["losses"] = losses
    out["tag_counts"] = tag_counts
    out["local_variables"] = [v.op.name for v in tf.local_variables()]
    out["queue_runners"] = sorted(qr.name for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))

    # The Threading and Queues guide.
    tf.reset_default_graph()
    q = tf.FIFOQueue(10, "float")
    init = q.enqueue_many(([0.0, 10.0, 20.0],))
    x = q.dequeue()
    y = x + 1
    q_inc = q.enqueue([y])
    rq = tf.RandomShuffleQueue(capacity=20, min_after_dequeue=0, dtypes=[tf.int32], shapes=[[]], seed=3)
    fill = rq.enqueue_many([tf.range(8)])
    counter = tf.Variable(0, name="counter")
    increment = tf.assign_add(counter, 1)
    feed_q = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    qr = tf.train.QueueRunner(feed_q, [feed_q.enqueue(increment)] * 1)
    tf.train.add_queue_runner(qr)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        init.run()
        for _ in range(4):
            q_inc.run()
        out["fifo_size"] = int(sess.run(q.size()))
        out["fifo"] = [float(sess.run(q.dequeue())) for _ in range(3)]
        sess.run(fill)
        out["shuffled_is_permutation"] = sorted(int(sess.run(rq.dequeue())) for _ in range(8)) == list(range(8))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        got = sorted(int(sess.run(feed_q.dequeue())) for _ in range(5))
        coord.request_stop()
        sess.run(feed_q.close(cancel_pending_enqueues=True))
        coord.join(threads)
        # (Not necessarily distinct in TF: the enqueued assign_add result is a ref read later by the enqueue.)
        out["queue_runner_values"] = len(got) == 5 and min(got) >= 1
    shutil.rmtree(root)
    return out


if __name__ == "__main__":
    run_as_script(main, 2)
