"""TF1's models/tutorials/image/cifar10 (cifar10_input.py, cifar10.py, cifar10_train.py, cifar10_eval.py),
shrunk: a synthetic CIFAR-10 binary file read by a FixedLengthRecordReader through string_input_producer and
shuffle_batch, distortions, conv/LRN/pool layers with weight decay in the 'losses' collection, moving averages
of the losses and of the variables, an exponential_decay learning rate, MonitoredTrainingSession with
StopAtStepHook/NanTensorHook/a logger hook, then the evaluation script restoring the averaged variables.

Random initial values and random distortions: compared with TensorFlow on names, shapes and collections only.
"""

import os
import shutil
import tempfile
import time

import numpy as np
from _common import run_as_script

TF_STEPS = 8
# Random initial values and distortions, and only 8 steps: the losses are checked to be finite, not against TF.
RANDOM_KEYS = {"losses": "finite"}
IMAGE_SIZE = 24
NUM_CLASSES = 10
BATCH_SIZE = 16
MOVING_AVERAGE_DECAY = 0.9999
NUM_EPOCHS_PER_DECAY = 350.0
LEARNING_RATE_DECAY_FACTOR = 0.1
INITIAL_LEARNING_RATE = 0.1
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 64


def write_fake_cifar(data_dir, n_files=2, per_file=32):
    rng = np.random.RandomState(5)
    names = []
    for i in range(1, n_files + 1):
        recs = []
        for _ in range(per_file):
            label = rng.randint(0, 10)
            img = rng.randint(0, 256, size=3 * 32 * 32).astype(np.uint8)
            img[label * 100 : label * 100 + 100] = 255
            recs.append(np.concatenate([[label], img]).astype(np.uint8).tobytes())
        name = os.path.join(data_dir, "data_batch_%d.bin" % i)
        with open(name, "wb") as f:
            f.write(b"".join(recs))
        names.append(name)
    return names


def read_cifar10(tf, filename_queue):
    class CIFAR10Record:
        pass

    result = CIFAR10Record()
    label_bytes = 1
    result.height = 32
    result.width = 32
    result.depth = 3
    image_bytes = result.height * result.width * result.depth
    record_bytes = label_bytes + image_bytes
    reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
    result.key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    result.label = tf.cast(tf.strided_slice(record_bytes, [0], [label_bytes]), tf.int32)
    depth_major = tf.reshape(
        tf.strided_slice(record_bytes, [label_bytes], [label_bytes + image_bytes]),
        [result.depth, result.height, result.width],
    )
    result.uint8image = tf.transpose(depth_major, [1, 2, 0])
    return result


def _generate_image_and_label_batch(tf, image, label, min_queue_examples, batch_size, shuffle):
    num_preprocess_threads = 2
    if shuffle:
        images, label_batch = tf.train.shuffle_batch(
            [image, label],
            batch_size=batch_size,
            num_threads=num_preprocess_threads,
            capacity=min_queue_examples + 3 * batch_size,
            min_after_dequeue=min_queue_examples,
        )
    else:
        images, label_batch = tf.train.batch(
            [image, label],
            batch_size=batch_size,
            num_threads=num_preprocess_threads,
            capacity=min_queue_examples + 3 * batch_size,
        )
    tf.summary.image("images", images)
    return images, tf.reshape(label_batch, [batch_size])


def distorted_inputs(tf, filenames, batch_size):
    for f in filenames:
        if not tf.gfile.Exists(f):
            raise ValueError("Failed to find file: " + f)
    with tf.name_scope("data_augmentation"):
        filename_queue = tf.train.string_input_producer(filenames)
        read_input = read_cifar10(tf, filename_queue)
        reshaped_image = tf.cast(read_input.uint8image, tf.float32)
        height = IMAGE_SIZE
        width = IMAGE_SIZE
        distorted_image = tf.random_crop(reshaped_image, [height, width, 3])
        distorted_image = tf.image.random_flip_left_right(distorted_image)
        distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
        distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
        float_image = tf.image.per_image_standardization(distorted_image)
        float_image.set_shape([height, width, 3])
        read_input.label.set_shape([1])
        min_fraction_of_examples_in_queue = 0.4
        min_queue_examples = int(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN * min_fraction_of_examples_in_queue)
    return _generate_image_and_label_batch(
        tf, float_image, read_input.label, min_queue_examples, batch_size, shuffle=True
    )


def inputs(tf, filenames, batch_size):
    filename_queue = tf.train.string_input_producer(filenames)
    read_input = read_cifar10(tf, filename_queue)
    reshaped_image = tf.cast(read_input.uint8image, tf.float32)
    resized_image = tf.image.resize_image_with_crop_or_pad(reshaped_image, IMAGE_SIZE, IMAGE_SIZE)
    float_image = tf.image.per_image_standardization(resized_image)
    float_image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
    read_input.label.set_shape([1])
    return _generate_image_and_label_batch(tf, float_image, read_input.label, 20, batch_size, shuffle=False)


def _activation_summary(tf, x):
    tensor_name = x.op.name
    tf.summary.histogram(tensor_name + "/activations", x)
    tf.summary.scalar(tensor_name + "/sparsity", tf.nn.zero_fraction(x))


def _variable_on_cpu(tf, name, shape, initializer):
    with tf.device("/cpu:0"):
        var = tf.get_variable(name, shape, initializer=initializer, dtype=tf.float32)
    return var


def _variable_with_weight_decay(tf, name, shape, stddev, wd):
    var = _variable_on_cpu(tf, name, shape, tf.truncated_normal_initializer(stddev=stddev, dtype=tf.float32))
    if wd is not None:
        weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")
        tf.add_to_collection("losses", weight_decay)
    return var


def inference(tf, images):
    with tf.variable_scope("conv1") as scope:
        kernel = _variable_with_weight_decay(tf, "weights", shape=[5, 5, 3, 16], stddev=5e-2, wd=None)
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
        biases = _variable_on_cpu(tf, "biases", [16], tf.constant_initializer(0.0))
        pre_activation = tf.nn.bias_add(conv, biases)
        conv1 = tf.nn.relu(pre_activation, name=scope.name)
        _activation_summary(tf, conv1)
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME", name="pool1")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    with tf.variable_scope("conv2") as scope:
        kernel = _variable_with_weight_decay(tf, "weights", shape=[5, 5, 16, 16], stddev=5e-2, wd=None)
        conv = tf.nn.conv2d(norm1, kernel, [1, 1, 1, 1], padding="SAME")
        biases = _variable_on_cpu(tf, "biases", [16], tf.constant_initializer(0.1))
        pre_activation = tf.nn.bias_add(conv, biases)
        conv2 = tf.nn.relu(pre_activation, name=scope.name)
        _activation_summary(tf, conv2)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm2")
    pool2 = tf.nn.max_pool(norm2, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME", name="pool2")
    with tf.variable_scope("local3") as scope:
        reshape = tf.reshape(pool2, [images.get_shape().as_list()[0], -1])
        dim = reshape.get_shape()[1].value
        weights = _variable_with_weight_decay(tf, "weights", shape=[dim, 96], stddev=0.04, wd=0.004)
        biases = _variable_on_cpu(tf, "biases", [96], tf.constant_initializer(0.1))
        local3 = tf.nn.relu(tf.matmul(reshape, weights) + biases, name=scope.name)
        _activation_summary(tf, local3)
    with tf.variable_scope("local4") as scope:
        weights = _variable_with_weight_decay(tf, "weights", shape=[96, 48], stddev=0.04, wd=0.004)
        biases = _variable_on_cpu(tf, "biases", [48], tf.constant_initializer(0.1))
        local4 = tf.nn.relu(tf.matmul(local3, weights) + biases, name=scope.name)
        _activation_summary(tf, local4)
    with tf.variable_scope("softmax_linear") as scope:
        weights = _variable_with_weight_decay(tf, "weights", [48, NUM_CLASSES], stddev=1 / 48.0, wd=None)
        biases = _variable_on_cpu(tf, "biases", [NUM_CLASSES], tf.constant_initializer(0.0))
        softmax_linear = tf.add(tf.matmul(local4, weights), biases, name=scope.name)
        _activation_summary(tf, softmax_linear)
    return softmax_linear


def loss(tf, logits, labels):
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example"
    )
    cross_entropy_mean = tf.reduce_mean(cross_entropy, name="cross_entropy")
    tf.add_to_collection("losses", cross_entropy_mean)
    return tf.add_n(tf.get_collection("losses"), name="total_loss")


def _add_loss_summaries(tf, total_loss):
    loss_averages = tf.train.ExponentialMovingAverage(0.9, name="avg")
    losses = tf.get_collection("losses")
    loss_averages_op = loss_averages.apply(losses + [total_loss])
    for l in losses + [total_loss]:
        tf.summary.scalar(l.op.name + " (raw)", l)
        tf.summary.scalar(l.op.name, loss_averages.average(l))
    return loss_averages_op


def train(tf, total_loss, global_step):
    num_batches_per_epoch = NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN / BATCH_SIZE
    decay_steps = int(num_batches_per_epoch * NUM_EPOCHS_PER_DECAY)
    lr = tf.train.exponential_decay(
        INITIAL_LEARNING_RATE, global_step, decay_steps, LEARNING_RATE_DECAY_FACTOR, staircase=True
    )
    tf.summary.scalar("learning_rate", lr)
    loss_averages_op = _add_loss_summaries(tf, total_loss)
    with tf.control_dependencies([loss_averages_op]):
        opt = tf.train.GradientDescentOptimizer(lr)
        grads = opt.compute_gradients(total_loss)
    apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
    for var in tf.trainable_variables():
        tf.summary.histogram(var.op.name, var)
    for grad, var in grads:
        if grad is not None:
            tf.summary.histogram(var.op.name + "/gradients", grad)
    variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY, global_step)
    with tf.control_dependencies([apply_gradient_op]):
        variables_averages_op = variable_averages.apply(tf.trainable_variables())
    return variables_averages_op


def main(tf, steps=8):
    tf.reset_default_graph()
    root = tempfile.mkdtemp()
    filenames = write_fake_cifar(root)
    train_dir = os.path.join(root, "cifar10_train")
    logged = []

    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        with tf.device("/cpu:0"):
            images, labels = distorted_inputs(tf, filenames, BATCH_SIZE)
        logits = inference(tf, images)
        total_loss = loss(tf, logits, labels)
        train_op = train(tf, total_loss, global_step)

        class _LoggerHook(tf.train.SessionRunHook):
            def begin(self):
                self._step = -1
                self._start_time = time.time()

            def before_run(self, run_context):
                self._step += 1
                return tf.train.SessionRunArgs(total_loss)

            def after_run(self, run_context, run_values):
                logged.append((self._step, float(run_values.results)))

        graph_facts = {
            "images_shape": images.shape.as_list(),
            "labels_shape": labels.shape.as_list(),
            "logits_shape": logits.shape.as_list(),
            "losses_collection": sorted(t.op.name for t in tf.get_collection("losses")),
            "trainable": [v.op.name for v in tf.trainable_variables()],
            "variables": sorted(v.op.name for v in tf.global_variables()),
            "moving_average_variables": len(tf.moving_average_variables()),
            "queue_runners": len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)),
            "summaries": len(tf.get_collection(tf.GraphKeys.SUMMARIES)),
        }
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=train_dir,
            hooks=[
                tf.train.StopAtStepHook(last_step=steps),
                tf.train.NanTensorHook(total_loss),
                _LoggerHook(),
            ],
            save_summaries_steps=4,
            config=tf.ConfigProto(log_device_placement=False),
        ) as mon_sess:
            while not mon_sess.should_stop():
                mon_sess.run(train_op)

    # cifar10_eval.py: restore the moving averages into the model's variables and count top-1 hits.
    with tf.Graph().as_default() as g:
        eval_images, eval_labels = inputs(tf, filenames, BATCH_SIZE)
        eval_logits = inference(tf, eval_images)
        top_k_op = tf.nn.in_top_k(eval_logits, eval_labels, 1)
        variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY)
        variables_to_restore = variable_averages.variables_to_restore()
        saver = tf.train.Saver(variables_to_restore)
        summary_op = tf.summary.merge_all()
        summary_writer = tf.summary.FileWriter(os.path.join(root, "eval"), g)
        with tf.Session() as sess:
            ckpt = tf.train.get_checkpoint_state(train_dir)
            saver.restore(sess, ckpt.model_checkpoint_path)
            restored_step = ckpt.model_checkpoint_path.split("/")[-1].split("-")[-1]
            coord = tf.train.Coordinator()
            threads = []
            for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS):
                threads.extend(qr.create_threads(sess, coord=coord, daemon=True, start=True))
            true_count = 0
            for _ in range(2):
                predictions = sess.run([top_k_op])
                true_count += int(np.sum(predictions))
            summary = tf.Summary()
            summary.ParseFromString(sess.run(summary_op))
            summary.value.add(tag="Precision @ 1", simple_value=true_count / (2.0 * BATCH_SIZE))
            summary_writer.add_summary(summary, int(restored_step))
            summary_writer.close()
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        restore_keys = sorted(variables_to_restore)

    shutil.rmtree(root)
    return dict(
        graph_facts,
        logged_steps=[s for s, _ in logged],
        losses=[l for _, l in logged],
        restored_step=int(restored_step),
        restore_keys=restore_keys,
        eval_count_in_range=0 <= true_count <= 2 * BATCH_SIZE,
    )


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
