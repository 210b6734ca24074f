"""aymericdamien/TensorFlow-Examples linear_regression.py: W and b start from numpy's randn (Python floats,
so float32 variables), the cost is reduce_sum(pow(pred - Y, 2)) / (2 * n), and every epoch feeds the samples
one at a time through a zip loop before printing the cost over the whole set; sess.run(W) and sess.run(b)
read the fit, and a test set is scored with the same formula.

Deterministic: the initial values come from a seeded numpy generator.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random

    rng.seed(3)
    learning_rate = 0.01
    training_epochs = steps
    display_step = 2

    train_X = np.asarray([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167,
                          7.042, 10.791, 5.313, 7.997, 5.654, 9.27, 3.1])
    train_Y = np.asarray([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221,
                          2.827, 3.465, 1.65, 2.904, 2.42, 2.94, 1.3])
    n_samples = train_X.shape[0]

    X = tf.placeholder("float")
    Y = tf.placeholder("float")

    W = tf.Variable(rng.randn(), name="weight")
    b = tf.Variable(rng.randn(), name="bias")

    pred = tf.add(tf.multiply(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * n_samples)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)

    init = tf.global_variables_initializer()
    costs, displayed = [], []
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(training_epochs):
            for (x, y) in zip(train_X, train_Y):
                sess.run(optimizer, feed_dict={X: x, Y: y})
            c = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
            costs.append(float(c))
            if (epoch + 1) % display_step == 0:
                displayed.append("Epoch: %04d cost= %.9f W= %s b= %s" % (epoch + 1, c, sess.run(W), sess.run(b)))
        training_cost = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
        w_value, b_value = sess.run(W), sess.run(b)

        test_X = np.asarray([6.83, 4.668, 8.9, 7.91, 5.7, 8.7, 3.1, 2.1])
        test_Y = np.asarray([1.84, 2.273, 3.2, 2.831, 2.92, 3.24, 1.35, 1.03])
        testing_cost = sess.run(
            tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * test_X.shape[0]), feed_dict={X: test_X, Y: test_Y}
        )
    return {
        "losses": costs,
        "training_cost": float(training_cost),
        "testing_cost": float(testing_cost),
        "W": float(w_value),
        "b": float(b_value),
        "W_type": type(w_value).__name__,
        "dtypes": [W.dtype.base_dtype.name, b.dtype.base_dtype.name, pred.dtype.name],
        "shapes": [str(X.get_shape()), str(pred.get_shape()), str(cost.get_shape())],
        "displayed_count": len(displayed),
        "variables": [v.name for v in tf.global_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, 6)
