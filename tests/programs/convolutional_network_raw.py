"""aymericdamien/TensorFlow-Examples convolutional_network_raw.py: conv2d/maxpool2d helper functions
(tf.nn.conv2d + tf.nn.bias_add + relu, tf.nn.max_pool with ksize [1, k, k, 1]), the input reshaped with
tf.reshape(x, shape=[-1, 28, 28, 1]), a fully connected layer reshaped from weights['wd1'].get_shape(),
tf.nn.dropout with a keep_prob placeholder (0.75 while training, 1.0 for evaluation), Adam.

tf.set_random_seed fixes the graph seed; the initial weights and the dropout masks are TF's bits for that
seed, so the losses are deterministic.
"""

from _common import fake_mnist, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    tf.set_random_seed(2)
    images, labels = fake_mnist(96, seed=41)
    learning_rate = 0.001
    batch_size = 32
    num_input = 784
    num_classes = 10
    dropout = 0.75

    X = tf.placeholder(tf.float32, [None, num_input])
    Y = tf.placeholder(tf.float32, [None, num_classes])
    keep_prob = tf.placeholder(tf.float32)

    def conv2d(x, W, b, strides=1):
        x = tf.nn.conv2d(x, W, strides=[1, strides, strides, 1], padding="SAME")
        x = tf.nn.bias_add(x, b)
        return tf.nn.relu(x)

    def maxpool2d(x, k=2):
        return tf.nn.max_pool(x, ksize=[1, k, k, 1], strides=[1, k, k, 1], padding="SAME")

    def conv_net(x, weights, biases, dropout):
        x = tf.reshape(x, shape=[-1, 28, 28, 1])
        conv1 = conv2d(x, weights["wc1"], biases["bc1"])
        conv1 = maxpool2d(conv1, k=2)
        conv2 = conv2d(conv1, weights["wc2"], biases["bc2"])
        conv2 = maxpool2d(conv2, k=2)
        fc1 = tf.reshape(conv2, [-1, weights["wd1"].get_shape().as_list()[0]])
        fc1 = tf.add(tf.matmul(fc1, weights["wd1"]), biases["bd1"])
        fc1 = tf.nn.relu(fc1)
        fc1 = tf.nn.dropout(fc1, dropout)
        out = tf.add(tf.matmul(fc1, weights["out"]), biases["out"])
        return out

    weights = {
        "wc1": tf.Variable(tf.random_normal([5, 5, 1, 4], stddev=0.1)),
        "wc2": tf.Variable(tf.random_normal([5, 5, 4, 8], stddev=0.1)),
        "wd1": tf.Variable(tf.random_normal([7 * 7 * 8, 32], stddev=0.1)),
        "out": tf.Variable(tf.random_normal([32, num_classes], stddev=0.1)),
    }
    biases = {
        "bc1": tf.Variable(tf.random_normal([4], stddev=0.1)),
        "bc2": tf.Variable(tf.random_normal([8], stddev=0.1)),
        "bd1": tf.Variable(tf.random_normal([32], stddev=0.1)),
        "out": tf.Variable(tf.random_normal([num_classes], stddev=0.1)),
    }

    logits = conv_net(X, weights, biases, keep_prob)
    prediction = tf.nn.softmax(logits)

    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op)

    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    init = tf.global_variables_initializer()
    losses, eval_losses = [], []
    with tf.Session() as sess:
        sess.run(init)
        for step in range(steps):
            lo = (step * batch_size) % 96
            batch_x, batch_y = images[lo : lo + batch_size], labels[lo : lo + batch_size]
            _, loss = sess.run([train_op, loss_op], feed_dict={X: batch_x, Y: batch_y, keep_prob: dropout})
            losses.append(float(loss))
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y, keep_prob: 1.0})
            eval_losses.append(float(loss))
        test_acc = sess.run(accuracy, feed_dict={X: images, Y: labels, keep_prob: 1.0})
    return {
        "losses": losses,
        "eval_losses": eval_losses,
        "test_accuracy": float(test_acc),
        "fc_shape": weights["wd1"].get_shape().as_list(),
        "logits_shape": logits.get_shape().as_list(),
    }


if __name__ == "__main__":
    run_as_script(main, 6)
