"""TF1's mnist_with_summaries.py: name-scoped layers with variable_summaries, image/histogram/scalar
summaries, merge_all, train/test FileWriters, and a FULL_TRACE step written with add_run_metadata.

Weights start from numpy values and the keep probability is 1.0, so losses are deterministic.
"""

import glob
import os
import shutil
import tempfile

from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 12


def main(tf, steps=12):
    tf.reset_default_graph()
    images, labels_onehot = fake_mnist(120, seed=4)
    labels = labels_onehot.argmax(1)
    log_dir = os.path.join(tempfile.mkdtemp(), "logs")
    if tf.gfile.Exists(log_dir):
        tf.gfile.DeleteRecursively(log_dir)
    tf.gfile.MakeDirs(log_dir)

    sess = tf.InteractiveSession()
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, 784], name="x-input")
        y_ = tf.placeholder(tf.int64, [None], name="y-input")
    with tf.name_scope("input_reshape"):
        image_shaped_input = tf.reshape(x, [-1, 28, 28, 1])
        tf.summary.image("input", image_shaped_input, 10)

    seeds = iter(range(100, 200))

    def weight_variable(shape):
        return tf.Variable(tf.constant(fixed_init(shape, next(seeds))))

    def bias_variable(shape):
        initial = tf.constant(0.1, shape=shape)
        return tf.Variable(initial)

    def variable_summaries(var):
        with tf.name_scope("summaries"):
            mean = tf.reduce_mean(var)
            tf.summary.scalar("mean", mean)
            with tf.name_scope("stddev"):
                stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
            tf.summary.scalar("stddev", stddev)
            tf.summary.scalar("max", tf.reduce_max(var))
            tf.summary.scalar("min", tf.reduce_min(var))
            tf.summary.histogram("histogram", var)

    def nn_layer(input_tensor, input_dim, output_dim, layer_name, act=tf.nn.relu):
        with tf.name_scope(layer_name):
            with tf.name_scope("weights"):
                weights = weight_variable([input_dim, output_dim])
                variable_summaries(weights)
            with tf.name_scope("biases"):
                biases = bias_variable([output_dim])
                variable_summaries(biases)
            with tf.name_scope("Wx_plus_b"):
                preactivate = tf.matmul(input_tensor, weights) + biases
                tf.summary.histogram("pre_activations", preactivate)
            activations = act(preactivate, name="activation")
            tf.summary.histogram("activations", activations)
            return activations

    hidden1 = nn_layer(x, 784, 50, "layer1")
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar("dropout_keep_probability", keep_prob)
        dropped = tf.nn.dropout(hidden1, keep_prob)
    y = nn_layer(dropped, 50, 10, "layer2", act=tf.identity)

    with tf.name_scope("cross_entropy"):
        with tf.name_scope("total"):
            cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
    tf.summary.scalar("cross_entropy", cross_entropy)
    with tf.name_scope("train"):
        train_step = tf.train.AdamOptimizer(0.001).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        with tf.name_scope("correct_prediction"):
            correct_prediction = tf.equal(tf.argmax(y, 1), y_)
        with tf.name_scope("accuracy"):
            accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    tf.summary.scalar("accuracy", accuracy)

    merged = tf.summary.merge_all()
    train_writer = tf.summary.FileWriter(log_dir + "/train", sess.graph)
    test_writer = tf.summary.FileWriter(log_dir + "/test")
    tf.global_variables_initializer().run()

    def feed_dict(train, i):
        if train:
            lo = (i * 20) % 100
            xs, ys, k = images[lo : lo + 20], labels[lo : lo + 20], 1.0
        else:
            xs, ys, k = images[100:], labels[100:], 1.0
        return {x: xs, y_: ys, keep_prob: k}

    accs, losses, traced = [], [], []
    for i in range(steps):
        if i % 5 == 0:
            summary, acc = sess.run([merged, accuracy], feed_dict=feed_dict(False, i))
            test_writer.add_summary(summary, i)
            accs.append(float(acc))
        else:
            if i % 10 == 9:
                run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                run_metadata = tf.RunMetadata()
                summary, _, loss = sess.run(
                    [merged, train_step, cross_entropy],
                    feed_dict=feed_dict(True, i),
                    options=run_options,
                    run_metadata=run_metadata,
                )
                train_writer.add_run_metadata(run_metadata, "step%03d" % i)
                train_writer.add_summary(summary, i)
                traced.append(len(run_metadata.step_stats.dev_stats) > 0)
            else:
                summary, _, loss = sess.run([merged, train_step, cross_entropy], feed_dict=feed_dict(True, i))
                train_writer.add_summary(summary, i)
            losses.append(float(loss))
    train_writer.close()
    test_writer.close()

    parsed = tf.Summary()
    parsed.ParseFromString(summary)
    tags = sorted(v.tag for v in parsed.value)
    kinds = sorted({v.WhichOneof("value") for v in parsed.value})
    events = {}
    for sub in ("train", "test"):
        (path,) = glob.glob(os.path.join(log_dir, sub, "events.out.tfevents.*"))
        kinds_seen = []
        for e in tf.train.summary_iterator(path):
            kinds_seen.append(e.WhichOneof("what"))
        events[sub] = sorted(set(kinds_seen))
        events[sub + "_summaries"] = kinds_seen.count("summary")
    sess.close()
    shutil.rmtree(os.path.dirname(log_dir))
    return {
        "losses": losses,
        "test_accuracy": accs,
        "summary_tags": tags,
        "summary_kinds": kinds,
        "events": events,
        "traced": traced,
        "summary_collection": len(tf.get_collection(tf.GraphKeys.SUMMARIES)),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
