"""TF1's "MNIST For ML Beginners" (mnist_softmax.py): softmax regression trained with plain gradient descent.

Both the original formulation (softmax, then -sum(y_ * log(y))) and the later one
(softmax_cross_entropy_with_logits) are trained from zeros, so the losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 20


def main(tf, steps=20):
    tf.reset_default_graph()
    images, labels = fake_mnist(600, seed=1)
    test_x, test_y = fake_mnist(200, seed=2)

    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.matmul(x, W) + b
    y_ = tf.placeholder(tf.float32, [None, 10])

    # The later tutorial: the numerically stable op.
    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
    train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)

    # The original tutorial: softmax, log and reduction_indices, on a second set of weights.
    W2 = tf.Variable(tf.zeros([784, 10]))
    b2 = tf.Variable(tf.zeros([10]))
    y2 = tf.nn.softmax(tf.matmul(x, W2) + b2)
    cross_entropy2 = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y2), reduction_indices=[1]))
    train_step2 = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy2)

    sess = tf.InteractiveSession()
    tf.global_variables_initializer().run()
    losses, losses2 = [], []
    for i in range(steps):
        lo = (i * 100) % 600
        batch_xs, batch_ys = images[lo : lo + 100], labels[lo : lo + 100]
        _, l1, _, l2 = sess.run(
            [train_step, cross_entropy, train_step2, cross_entropy2], feed_dict={x: batch_xs, y_: batch_ys}
        )
        losses.append(float(l1))
        losses2.append(float(l2))

    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    acc = sess.run(accuracy, feed_dict={x: test_x, y_: test_y})
    acc2 = accuracy.eval(feed_dict={x: test_x, y_: test_y})
    w_sum = float(np.abs(W.eval()).sum())
    sess.close()
    return {
        "losses": losses,
        "losses_log_softmax": losses2,
        "accuracy": float(acc),
        "accuracy_eval": float(acc2),
        "w_abs_sum": w_sum,
        "variables": [v.name for v in tf.global_variables()],
        "trainable": [v.name for v in tf.trainable_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, 20)
