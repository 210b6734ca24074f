"""aymericdamien/TensorFlow-Examples bidirectional_rnn.py: images as sequences (tf.unstack(x, timesteps, 1)),
forward and backward rnn.BasicLSTMCell(num_hidden, forget_bias=1.0), tf.nn.static_bidirectional_rnn
(in the try/except of the original, which falls back to the old signature), the last output through a
dense layer of 2 * num_hidden inputs; plus the dynamic counterpart, tf.nn.bidirectional_dynamic_rnn over the
same sequences with tf.concat of both directions.

tf.set_random_seed makes the LSTM kernels (glorot-uniform from the variable scope) TF's bits, so the losses
are deterministic.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    tf.set_random_seed(5)
    rnn = tf.nn.rnn_cell
    images, labels = fake_mnist(64, seed=71)
    images = images.reshape(-1, 28, 28)[:, ::2, ::2]  # 14 steps of 14 inputs
    learning_rate = 0.01
    batch_size = 32
    num_input = 14
    timesteps = 14
    num_hidden = 16
    num_classes = 10

    X = tf.placeholder("float", [None, timesteps, num_input])
    Y = tf.placeholder("float", [None, num_classes])

    weights = {"out": tf.Variable(tf.random_normal([2 * num_hidden, num_classes]))}
    biases = {"out": tf.Variable(tf.random_normal([num_classes]))}

    def BiRNN(x, weights, biases):
        x = tf.unstack(x, timesteps, 1)
        lstm_fw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
        lstm_bw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
        try:
            outputs, _, _ = tf.nn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x, dtype=tf.float32)
        except Exception:
            outputs = tf.nn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x, dtype=tf.float32)
        return tf.matmul(outputs[-1], weights["out"]) + biases["out"], outputs

    logits, outputs = BiRNN(X, weights, biases)
    prediction = tf.nn.softmax(logits)
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op)
    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    # The dynamic variant over the same batch, in its own scope.
    with tf.variable_scope("dynamic"):
        cell_fw = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
        cell_bw = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
        (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(cell_fw, cell_bw, X, dtype=tf.float32)
        both = tf.concat([out_fw, out_bw], 2)
        dyn_loss = tf.reduce_mean(tf.square(both[:, -1, :]))
        dyn_train = tf.train.AdamOptimizer(0.01).minimize(dyn_loss)

    init = tf.global_variables_initializer()
    losses, dyn_losses = [], []
    with tf.Session() as sess:
        sess.run(init)
        for step in range(steps):
            lo = (step * batch_size) % 64
            batch_x, batch_y = images[lo : lo + batch_size], labels[lo : lo + batch_size]
            _, loss, acc = sess.run([train_op, loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
            losses.append(float(loss))
            _, dl = sess.run([dyn_train, dyn_loss], feed_dict={X: batch_x})
            dyn_losses.append(float(dl))
        c_fw, h_bw = sess.run([st_fw.c, st_bw.h], feed_dict={X: images[:2]})
    return {
        "losses": losses,
        "dyn_losses": dyn_losses,
        "state_sums": [float(np.sum(c_fw)), float(np.sum(h_bw))],
        "outputs": [len(outputs), outputs[0].get_shape().as_list()],
        "both_shape": both.get_shape().as_list(),
        "variables": [v.name for v in tf.trainable_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, 5)
