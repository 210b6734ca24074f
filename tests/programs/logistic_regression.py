"""aymericdamien/TensorFlow-Examples logistic_regression.py: W and b from tf.zeros, pred = tf.nn.softmax,
cost = reduce_mean(-reduce_sum(y * tf.log(pred), reduction_indices=1)), mini-batches of a shuffled-free
epoch loop with the average cost accumulated in Python, then accuracy with tf.equal/argmax and .eval.

Deterministic: everything starts from zeros.
"""

from _common import fake_mnist, run_as_script

TF_STEPS = 3


def main(tf, steps=3):
    tf.reset_default_graph()
    images, labels = fake_mnist(300, seed=11)
    test_images, test_labels = fake_mnist(100, seed=12)
    learning_rate = 0.01
    training_epochs = steps
    batch_size = 100

    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.float32, [None, 10])

    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))

    pred = tf.nn.softmax(tf.matmul(x, W) + b)
    cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)

    init = tf.global_variables_initializer()
    epoch_costs, batch_costs = [], []
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(training_epochs):  # noqa: B007 (as the original)
            avg_cost = 0.0
            total_batch = int(images.shape[0] / batch_size)
            for i in range(total_batch):
                batch_xs = images[i * batch_size : (i + 1) * batch_size]
                batch_ys = labels[i * batch_size : (i + 1) * batch_size]
                _, c = sess.run([optimizer, cost], feed_dict={x: batch_xs, y: batch_ys})
                avg_cost += c / total_batch
                batch_costs.append(float(c))
            epoch_costs.append(float(avg_cost))

        correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
        acc = accuracy.eval({x: test_images[:50], y: test_labels[:50]})
    return {
        "losses": batch_costs,
        "epoch_costs": epoch_costs,
        "accuracy": float(acc),
        "avg_cost_type": type(epoch_costs[0]).__name__,
        "correct_dtype": correct_prediction.dtype.name,
        "correct_shape": correct_prediction.get_shape().as_list(),
    }


if __name__ == "__main__":
    run_as_script(main, 3)
