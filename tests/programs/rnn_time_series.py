"""Géron's TF1 "Hands-On Machine Learning" chapter 14 time-series RNNs: next-step prediction of a sine-like
series with tf.nn.dynamic_rnn over tf.nn.rnn_cell.BasicRNNCell(activation=tf.nn.relu), the output
projection done as the book's "more efficient" trick (reshape the outputs to [-1, n_neurons], one
tf.layers.dense, reshape back to [-1, n_steps, n_outputs]), MSE and Adam; a stacked MultiRNNCell of GRUCells
with tf.nn.rnn_cell.DropoutWrapper(input_keep_prob) switched off for evaluation through a placeholder, and
the "creative" generation loop feeding the model's own predictions back (sequence.append) in Python.

Weights come from a variable_scope initializer of numpy values; keep probabilities are 1.0: deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6
T_MIN, T_MAX, RESOLUTION = 0, 30, 0.1


def time_series(t):
    return t * np.sin(t) / 3 + 2 * np.sin(t * 5)


def next_batch(rng, batch_size, n_steps):
    t0 = rng.rand(batch_size, 1) * (T_MAX - T_MIN - n_steps * RESOLUTION)
    Ts = t0 + np.arange(0.0, n_steps + 1) * RESOLUTION
    ys = time_series(Ts)
    return ys[:, :-1].reshape(-1, n_steps, 1).astype(np.float32), ys[:, 1:].reshape(-1, n_steps, 1).astype(np.float32)


def main(tf, steps=6):
    n_steps, n_inputs, n_neurons, n_outputs = 10, 1, 16, 1
    out = {}

    def init(shape, dtype=None, partition_info=None):
        return tf.constant(fixed_init(list(shape), 2400 + int(np.prod(shape)), 0.2), dtype=dtype)

    for kind in ("basic", "stacked_gru"):
        tf.reset_default_graph()
        rng = np.random.RandomState(240)
        X = tf.placeholder(tf.float32, [None, n_steps, n_inputs])
        y = tf.placeholder(tf.float32, [None, n_steps, n_outputs])
        keep_prob = tf.placeholder_with_default(1.0, shape=())
        with tf.variable_scope("model", initializer=init):
            if kind == "basic":
                cell = tf.nn.rnn_cell.BasicRNNCell(num_units=n_neurons, activation=tf.nn.relu)
            else:
                cells = [tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(num_units=n_neurons),
                                                       input_keep_prob=keep_prob) for _ in range(2)]
                cell = tf.nn.rnn_cell.MultiRNNCell(cells)
            rnn_outputs, states = tf.nn.dynamic_rnn(cell, X, dtype=tf.float32)
            stacked_rnn_outputs = tf.reshape(rnn_outputs, [-1, n_neurons])
            stacked_outputs = tf.layers.dense(stacked_rnn_outputs, n_outputs)
            outputs = tf.reshape(stacked_outputs, [-1, n_steps, n_outputs])
        loss = tf.reduce_mean(tf.square(outputs - y))
        training_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss)
        losses = []
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            for _ in range(steps):
                X_batch, y_batch = next_batch(rng, 8, n_steps)
                sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
                losses.append(float(loss.eval(feed_dict={X: X_batch, y: y_batch})))
            sequence = [0.0] * n_steps
            for _ in range(8):
                X_batch = np.array(sequence[-n_steps:]).reshape(1, n_steps, 1)
                y_pred = sess.run(outputs, feed_dict={X: X_batch})
                sequence.append(float(y_pred[0, -1, 0]))
        out[kind] = {"losses": losses, "generated": sequence[n_steps:],
                     "variables": sorted(v.op.name for v in tf.trainable_variables())}
    out["losses"] = out["basic"]["losses"]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
