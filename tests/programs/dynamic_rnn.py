"""aymericdamien/TensorFlow-Examples dynamic_rnn.py: a toy sequence generator of variable-length linear and
random sequences padded to max_seq_len, a seqlen placeholder, tf.contrib-free tf.nn.rnn_cell.BasicLSTMCell
under tf.nn.static_rnn(..., sequence_length=seqlen), then the last relevant output picked with
tf.stack/tf.transpose, tf.range(0, batch_size) * max_seq_len + (seqlen - 1), tf.reshape to [-1, n_hidden]
and tf.gather. The same pick is also done on tf.nn.dynamic_rnn's outputs and compared.

tf.set_random_seed makes the initial weights TF's bits; the data comes from a seeded numpy generator.
"""

import random

import numpy as np
from _common import run_as_script

TF_STEPS = 6


class ToySequenceData:
    """Linear sequences (label [1, 0]) and random ones (label [0, 1]), padded with zeros to max_seq_len."""

    def __init__(self, n_samples=1000, max_seq_len=20, min_seq_len=3, max_value=1000):
        self.data = []
        self.labels = []
        self.seqlen = []
        for _ in range(n_samples):
            len_ = random.randint(min_seq_len, max_seq_len)
            self.seqlen.append(len_)
            if random.random() < 0.5:
                rand_start = random.randint(0, max_value - len_)
                s = [[float(i) / max_value] for i in range(rand_start, rand_start + len_)]
                s += [[0.0] for _ in range(max_seq_len - len_)]
                self.data.append(s)
                self.labels.append([1.0, 0.0])
            else:
                s = [[float(random.randint(0, max_value)) / max_value] for _ in range(len_)]
                s += [[0.0] for _ in range(max_seq_len - len_)]
                self.data.append(s)
                self.labels.append([0.0, 1.0])
        self.batch_id = 0

    def next(self, batch_size):
        if self.batch_id == len(self.data):
            self.batch_id = 0
        end = min(self.batch_id + batch_size, len(self.data))
        batch_data = self.data[self.batch_id : end]
        batch_labels = self.labels[self.batch_id : end]
        batch_seqlen = self.seqlen[self.batch_id : end]
        self.batch_id = end
        return batch_data, batch_labels, batch_seqlen


def main(tf, steps=6):
    tf.reset_default_graph()
    tf.set_random_seed(6)
    random.seed(6)
    learning_rate = 0.01
    batch_size = 16
    seq_max_len = 12
    n_hidden = 16
    n_classes = 2

    trainset = ToySequenceData(n_samples=64, max_seq_len=seq_max_len)
    testset = ToySequenceData(n_samples=32, max_seq_len=seq_max_len)

    x = tf.placeholder("float", [None, seq_max_len, 1])
    y = tf.placeholder("float", [None, n_classes])
    seqlen = tf.placeholder(tf.int32, [None])

    weights = {"out": tf.Variable(tf.random_normal([n_hidden, n_classes]))}
    biases = {"out": tf.Variable(tf.random_normal([n_classes]))}

    def dynamicRNN(x, seqlen, weights, biases):
        x = tf.unstack(x, seq_max_len, 1)
        lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(n_hidden)
        outputs, states = tf.nn.static_rnn(lstm_cell, x, dtype=tf.float32, sequence_length=seqlen)
        outputs = tf.stack(outputs)
        outputs = tf.transpose(outputs, [1, 0, 2])
        batch_size = tf.shape(outputs)[0]
        index = tf.range(0, batch_size) * seq_max_len + (seqlen - 1)
        outputs = tf.gather(tf.reshape(outputs, [-1, n_hidden]), index)
        return tf.matmul(outputs, weights["out"]) + biases["out"], outputs, states, lstm_cell

    pred, last, states, cell = dynamicRNN(x, seqlen, weights, biases)
    cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate).minimize(cost)
    correct_pred = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    # tf.nn.dynamic_rnn with the same (built) cell: its last relevant output must be static_rnn's.
    dyn_out, dyn_state = tf.nn.dynamic_rnn(cell, x, sequence_length=seqlen, dtype=tf.float32)
    idx = tf.stack([tf.range(tf.shape(dyn_out)[0]), seqlen - 1], axis=1)
    dyn_last = tf.gather_nd(dyn_out, idx)

    init = tf.global_variables_initializer()
    losses, accs = [], []
    with tf.Session() as sess:
        sess.run(init)
        for _ in range(steps):
            batch_x, batch_y, batch_seqlen = trainset.next(batch_size)
            feed = {x: batch_x, y: batch_y, seqlen: batch_seqlen}
            sess.run(optimizer, feed_dict=feed)
            acc, loss = sess.run([accuracy, cost], feed_dict=feed)
            losses.append(float(loss))
            accs.append(float(acc))
        test_feed = {x: testset.data, y: testset.labels, seqlen: testset.seqlen}
        test_acc = sess.run(accuracy, feed_dict=test_feed)
        a, b, st_c, dyn_c = sess.run([last, dyn_last, states.c, dyn_state.c], feed_dict=test_feed)
    return {
        "losses": losses,
        "accuracies": accs,
        "test_accuracy": float(test_acc),
        "static_vs_dynamic": float(np.max(np.abs(a - b))) < 1e-5,
        "state_vs_dynamic": float(np.max(np.abs(st_c - dyn_c))) < 1e-5,
        "last_sum": float(np.sum(a)),
        "variables": [v.name for v in tf.global_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, 6)
