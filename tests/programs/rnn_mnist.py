"""The TensorFlow-Examples recurrent networks (recurrent_network.py, bidirectional_rnn.py, dynamic_rnn.py) on
MNIST read row by row: tf.unstack into 28 time steps, static_rnn over a BasicLSTMCell, static_bidirectional_rnn,
and bidirectional_dynamic_rnn over peephole LSTMCells with sequence_length, each with a softmax on the last
output; then the parameter count the way papers' code printed it (np.prod over trainable shapes).

Weights are loaded from numpy after initialization, so the losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    images, labels = fake_mnist(64, seed=17, flat=True)
    images = images.reshape(64, 28, 28)
    timesteps, num_input, num_hidden, num_classes = 28, 28, 16, 10

    X = tf.placeholder("float", [None, timesteps, num_input])
    Y = tf.placeholder("float", [None, num_classes])
    seqlen = tf.placeholder(tf.int32, [None])
    weights = {
        "out": tf.Variable(tf.random_normal([num_hidden, num_classes])),
        "out_bi": tf.Variable(tf.random_normal([2 * num_hidden, num_classes])),
        "out_dyn": tf.Variable(tf.random_normal([2 * num_hidden, num_classes])),
    }
    biases = {
        "out": tf.Variable(tf.random_normal([num_classes])),
        "out_bi": tf.Variable(tf.random_normal([num_classes])),
        "out_dyn": tf.Variable(tf.random_normal([num_classes])),
    }

    def RNN(x, weights, biases):
        x = tf.unstack(x, timesteps, 1)
        with tf.variable_scope("uni"):
            lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
            outputs, states = tf.nn.static_rnn(lstm_cell, x, dtype=tf.float32)
        return tf.matmul(outputs[-1], weights["out"]) + biases["out"]

    def BiRNN(x, weights, biases):
        x = tf.unstack(x, timesteps, 1)
        with tf.variable_scope("bi"):
            lstm_fw_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
            lstm_bw_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
            outputs, _, _ = tf.nn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x, dtype=tf.float32)
        return tf.matmul(outputs[-1], weights["out_bi"]) + biases["out_bi"]

    def DynBiRNN(x, seqlen, weights, biases):
        with tf.variable_scope("dyn"):
            fw = tf.nn.rnn_cell.LSTMCell(num_hidden, use_peepholes=True)
            bw = tf.nn.rnn_cell.LSTMCell(num_hidden, use_peepholes=True)
            (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
                fw, bw, x, sequence_length=seqlen, dtype=tf.float32
            )
        last = tf.concat([st_fw.h, st_bw.h], axis=1)
        return tf.matmul(last, weights["out_dyn"]) + biases["out_dyn"], tf.shape(out_fw)

    logits = RNN(X, weights, biases)
    logits_bi = BiRNN(X, weights, biases)
    logits_dyn, out_shape = DynBiRNN(X, seqlen, weights, biases)
    prediction = tf.nn.softmax(logits)
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    loss_bi = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits_bi, labels=Y))
    loss_dyn = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits_dyn, labels=Y))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1)
    train_op = optimizer.minimize(loss_op + loss_bi + loss_dyn)
    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    total_parameters = 0
    for variable in tf.trainable_variables():
        shape = variable.get_shape()
        variable_parameters = 1
        for dim in shape:
            variable_parameters *= dim.value
        total_parameters += variable_parameters

    lens = np.random.RandomState(18).randint(10, 29, size=64).astype(np.int32)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k, v in enumerate(tf.trainable_variables()):
            v.load(fixed_init(v.shape.as_list(), 900 + k, scale=0.2), sess)
        for step in range(steps):
            lo = (step * 32) % 64
            feed = {X: images[lo : lo + 32], Y: labels[lo : lo + 32], seqlen: lens[lo : lo + 32]}
            _, l1, l2, l3 = sess.run([train_op, loss_op, loss_bi, loss_dyn], feed_dict=feed)
            losses.append([float(l1), float(l2), float(l3)])
        acc = sess.run(accuracy, feed_dict={X: images, Y: labels})
        shape = sess.run(out_shape, feed_dict={X: images[:3], seqlen: lens[:3]})
    return {
        "losses_uni": [l[0] for l in losses],
        "losses_bi": [l[1] for l in losses],
        "losses_dyn": [l[2] for l in losses],
        "accuracy": float(acc),
        "dyn_output_shape": shape.tolist(),
        "total_parameters": int(total_parameters),
        "trainable": [v.name for v in tf.trainable_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
