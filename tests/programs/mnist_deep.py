"""TF1's "Deep MNIST for Experts" (mnist_deep.py): two conv/pool layers, a dense layer with dropout, Adam.

`fixed=True` starts from numpy weights and trains with keep_prob 1.0 (dropout masks are random), so
TensorFlow and ferroflow can be compared step by step; `fixed=False` is the tutorial as written.
"""

import tempfile

from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 6
_counter = [0]


def deepnn(tf, x, fixed):
    def weight_variable(shape):
        if fixed:
            _counter[0] += 1
            initial = tf.constant(fixed_init(shape, _counter[0]))
        else:
            initial = tf.truncated_normal(shape, stddev=0.1)
        return tf.Variable(initial)

    def bias_variable(shape):
        initial = tf.constant(0.1, shape=shape)
        return tf.Variable(initial)

    def conv2d(x, W):
        return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")

    def max_pool_2x2(x):
        return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    with tf.name_scope("reshape"):
        x_image = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope("conv1"):
        W_conv1 = weight_variable([5, 5, 1, 8])
        b_conv1 = bias_variable([8])
        h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
    with tf.name_scope("pool1"):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope("conv2"):
        W_conv2 = weight_variable([5, 5, 8, 16])
        b_conv2 = bias_variable([16])
        h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
    with tf.name_scope("pool2"):
        h_pool2 = max_pool_2x2(h_conv2)
    with tf.name_scope("fc1"):
        W_fc1 = weight_variable([7 * 7 * 16, 64])
        b_fc1 = bias_variable([64])
        h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 16])
        h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope("fc2"):
        W_fc2 = weight_variable([64, 10])
        b_fc2 = bias_variable([10])
        y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    return y_conv, keep_prob


def main(tf, steps=6, fixed=True):
    tf.reset_default_graph()
    _counter[0] = 0
    images, labels = fake_mnist(100, seed=3)
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    y_conv, keep_prob = deepnn(tf, x, fixed)
    with tf.name_scope("loss"):
        cross_entropy = tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv)
    cross_entropy = tf.reduce_mean(cross_entropy)
    with tf.name_scope("adam_optimizer"):
        train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
        correct_prediction = tf.cast(correct_prediction, tf.float32)
    accuracy = tf.reduce_mean(correct_prediction)

    graph_location = tempfile.mkdtemp()
    train_writer = tf.summary.FileWriter(graph_location)
    train_writer.add_graph(tf.get_default_graph())
    train_writer.close()

    train_keep = 1.0 if fixed else 0.5
    losses, accs = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            lo = (i * 50) % 100
            batch = (images[lo : lo + 50], labels[lo : lo + 50])
            if i % 2 == 0:
                accs.append(float(accuracy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})))
            losses.append(float(cross_entropy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})))
            train_step.run(feed_dict={x: batch[0], y_: batch[1], keep_prob: train_keep})
        final = float(cross_entropy.eval(feed_dict={x: images, y_: labels, keep_prob: 1.0}))
    return {
        "losses": losses,
        "train_accuracy": accs,
        "final_loss": final,
        "logits_shape": y_conv.shape.as_list(),
        "variables": [v.name for v in tf.global_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
