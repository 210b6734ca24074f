"""aymericdamien/TensorFlow-Examples autoencoder.py: encoder/decoder helpers of sigmoid(add(matmul, b))
layers over dicts of tf.random_normal weights, y_pred/y_true, loss = reduce_mean(tf.pow(y_true - y_pred, 2)),
RMSPropOptimizer, and reconstructions of a test batch by running the decoder op.

tf.set_random_seed makes the initial weights TF's bits, so the losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 10


def main(tf, steps=10):
    tf.reset_default_graph()
    tf.set_random_seed(3)
    images, _ = fake_mnist(128, seed=51)
    learning_rate = 0.01
    batch_size = 64
    num_hidden_1 = 64
    num_hidden_2 = 16
    num_input = 784

    X = tf.placeholder("float", [None, num_input])

    weights = {
        "encoder_h1": tf.Variable(tf.random_normal([num_input, num_hidden_1])),
        "encoder_h2": tf.Variable(tf.random_normal([num_hidden_1, num_hidden_2])),
        "decoder_h1": tf.Variable(tf.random_normal([num_hidden_2, num_hidden_1])),
        "decoder_h2": tf.Variable(tf.random_normal([num_hidden_1, num_input])),
    }
    biases = {
        "encoder_b1": tf.Variable(tf.random_normal([num_hidden_1])),
        "encoder_b2": tf.Variable(tf.random_normal([num_hidden_2])),
        "decoder_b1": tf.Variable(tf.random_normal([num_hidden_1])),
        "decoder_b2": tf.Variable(tf.random_normal([num_input])),
    }

    def encoder(x):
        layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["encoder_h1"]), biases["encoder_b1"]))
        layer_2 = tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["encoder_h2"]), biases["encoder_b2"]))
        return layer_2

    def decoder(x):
        layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["decoder_h1"]), biases["decoder_b1"]))
        layer_2 = tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["decoder_h2"]), biases["decoder_b2"]))
        return layer_2

    encoder_op = encoder(X)
    decoder_op = decoder(encoder_op)

    y_pred = decoder_op
    y_true = X

    loss = tf.reduce_mean(tf.pow(y_true - y_pred, 2))
    optimizer = tf.train.RMSPropOptimizer(learning_rate).minimize(loss)

    init = tf.global_variables_initializer()
    losses = []
    sess = tf.Session()
    sess.run(init)
    for i in range(1, steps + 1):
        lo = ((i - 1) * batch_size) % 128
        batch_x = images[lo : lo + batch_size]
        _, l = sess.run([optimizer, loss], feed_dict={X: batch_x})
        losses.append(float(l))
    g = sess.run(decoder_op, feed_dict={X: images[:4]})
    codes = sess.run(encoder_op, feed_dict={X: images[:4]})
    slots = sorted(v.name for v in tf.global_variables() if "RMSProp" in v.name)
    sess.close()
    return {
        "losses": losses,
        "reconstruction_mean": float(np.mean(g)),
        "code_sum": float(np.sum(codes)),
        "reconstruction_shape": list(g.shape),
        "slots": slots,
    }


if __name__ == "__main__":
    run_as_script(main, 10)
