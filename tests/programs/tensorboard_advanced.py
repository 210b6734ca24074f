"""aymericdamien/TensorFlow-Examples tensorboard_advanced.py (and tensorboard_basic.py): a multilayer
perceptron built under tf.name_scope('Model'/'Loss'/'SGD'/'Accuracy'), tf.summary.histogram of every
activation, gradients by optimizer.compute_gradients(loss, var_list) then apply_gradients, a histogram per
gradient named var.name + '/gradient', scalar summaries merged by tf.summary.merge_all, and a
tf.summary.FileWriter(logs_path, graph=tf.get_default_graph()) fed add_summary(summary, epoch * total + i).

The event files are read back with tf.train.summary_iterator: tags (TF's name scopes are unique without
regard to case, so the "loss" summary under the "Loss" scope is tagged "loss_1"), steps and the values.
tf.set_random_seed makes the initial weights TF's bits. The losses after the first are not deterministic in
TensorFlow: the run fetches apply_gradients with the loss, and TF's parallel executor may apply W3's update
before the backward pass reads W3 (ref variables), which ferroflow never does; they only have to train.
"""

import glob
import os
import shutil
import tempfile

from _common import fake_mnist, run_as_script

TF_STEPS = 2
RANDOM_KEYS = {"losses": "trained", "summary_losses": "trained"}


def main(tf, steps=2):
    tf.reset_default_graph()
    tf.set_random_seed(7)
    images, labels = fake_mnist(96, seed=81)
    learning_rate = 0.01
    training_epochs = steps
    batch_size = 32
    logs_path = tempfile.mkdtemp()

    n_hidden_1 = 16
    n_hidden_2 = 16
    n_input = 784
    n_classes = 10

    x = tf.placeholder(tf.float32, [None, 784], name="InputData")
    y = tf.placeholder(tf.float32, [None, 10], name="LabelData")

    def multilayer_perceptron(x, weights, biases):
        layer_1 = tf.add(tf.matmul(x, weights["w1"]), biases["b1"])
        layer_1 = tf.nn.relu(layer_1)
        tf.summary.histogram("relu1", layer_1)
        layer_2 = tf.add(tf.matmul(layer_1, weights["w2"]), biases["b2"])
        layer_2 = tf.nn.relu(layer_2)
        tf.summary.histogram("relu2", layer_2)
        out_layer = tf.add(tf.matmul(layer_2, weights["w3"]), biases["b3"])
        return out_layer

    weights = {
        "w1": tf.Variable(tf.random_normal([n_input, n_hidden_1]), name="W1"),
        "w2": tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2]), name="W2"),
        "w3": tf.Variable(tf.random_normal([n_hidden_2, n_classes]), name="W3"),
    }
    biases = {
        "b1": tf.Variable(tf.random_normal([n_hidden_1]), name="b1"),
        "b2": tf.Variable(tf.random_normal([n_hidden_2]), name="b2"),
        "b3": tf.Variable(tf.random_normal([n_classes]), name="b3"),
    }

    with tf.name_scope("Model"):
        pred = multilayer_perceptron(x, weights, biases)

    with tf.name_scope("Loss"):
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))

    with tf.name_scope("SGD"):
        optimizer = tf.train.GradientDescentOptimizer(learning_rate)
        grads = tf.gradients(loss, tf.trainable_variables())
        grads = list(zip(grads, tf.trainable_variables()))
        apply_grads = optimizer.apply_gradients(grads_and_vars=grads)

    with tf.name_scope("Accuracy"):
        acc = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
        acc = tf.reduce_mean(tf.cast(acc, tf.float32))

    init = tf.global_variables_initializer()

    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", acc)
    for var in tf.trainable_variables():
        tf.summary.histogram(var.name, var)
    for grad, var in grads:
        tf.summary.histogram(var.name + "/gradient", grad)
    merged_summary_op = tf.summary.merge_all()

    # tensorboard_basic's variant: compute_gradients/apply_gradients on a second optimizer (not run).
    opt2 = tf.train.GradientDescentOptimizer(learning_rate)
    gvs = opt2.compute_gradients(loss, var_list=[weights["w3"], biases["b3"]])
    opt2.apply_gradients(gvs, name="basic_apply")

    losses = []
    with tf.Session() as sess:
        sess.run(init)
        summary_writer = tf.summary.FileWriter(logs_path, graph=tf.get_default_graph())
        for epoch in range(training_epochs):
            avg_cost = 0.0
            total_batch = int(96 / batch_size)
            for i in range(total_batch):
                batch_xs = images[i * batch_size : (i + 1) * batch_size]
                batch_ys = labels[i * batch_size : (i + 1) * batch_size]
                _, c, summary = sess.run([apply_grads, loss, merged_summary_op], feed_dict={x: batch_xs, y: batch_ys})
                summary_writer.add_summary(summary, epoch * total_batch + i)
                avg_cost += c / total_batch
                losses.append(float(c))
        summary_writer.close()

    events = sorted(glob.glob(os.path.join(logs_path, "events.out.tfevents.*")))
    steps_seen, scalars, tags, has_graph = [], [], set(), False
    for e in tf.train.summary_iterator(events[0]):
        if e.HasField("graph_def"):
            has_graph = True
        for v in e.summary.value:
            tags.add(v.tag)
            if v.tag == "loss_1":
                steps_seen.append(int(e.step))
                scalars.append(float(v.simple_value))
    shutil.rmtree(logs_path)
    return {
        "losses": losses,
        "first_loss": losses[0],
        "summary_losses": scalars,
        "summary_is_fetched_loss": scalars == losses,
        "summary_steps": steps_seen,
        "tags": sorted(tags),
        "has_graph": has_graph,
        "event_files": len(events),
        "gvs": [v.op.name for g, v in gvs],
        "summaries": sorted(t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)),
    }


if __name__ == "__main__":
    run_as_script(main, 2)
