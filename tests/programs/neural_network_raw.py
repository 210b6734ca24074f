"""aymericdamien/TensorFlow-Examples neural_network_raw.py: two hidden layers built from dicts of
tf.Variable(tf.random_normal(...)) weights and biases, a neural_net(x) helper of tf.add(tf.matmul(...)),
softmax_cross_entropy_with_logits loss, AdamOptimizer, and the display steps computing loss and accuracy
together in one sess.run.

tf.set_random_seed fixes the graph seed: TF's seeded random_normal gives the same bits here, so the
whole run is deterministic. The learning rate is 0.01 instead of the original's 0.1: at 0.1 the first
steps (losses in the hundreds from N(0, 1) weights) amplify float rounding past the test's 1e-5.
"""

from _common import fake_mnist, run_as_script

TF_STEPS = 12


def main(tf, steps=12):
    tf.reset_default_graph()
    tf.set_random_seed(1)
    images, labels = fake_mnist(256, seed=31)
    learning_rate = 0.01
    num_steps = steps
    batch_size = 64
    display_step = 4

    n_hidden_1 = 32
    n_hidden_2 = 32
    num_input = 784
    num_classes = 10

    X = tf.placeholder("float", [None, num_input])
    Y = tf.placeholder("float", [None, num_classes])

    weights = {
        "h1": tf.Variable(tf.random_normal([num_input, n_hidden_1])),
        "h2": tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2])),
        "out": tf.Variable(tf.random_normal([n_hidden_2, num_classes])),
    }
    biases = {
        "b1": tf.Variable(tf.random_normal([n_hidden_1])),
        "b2": tf.Variable(tf.random_normal([n_hidden_2])),
        "out": tf.Variable(tf.random_normal([num_classes])),
    }

    def neural_net(x):
        layer_1 = tf.add(tf.matmul(x, weights["h1"]), biases["b1"])
        layer_2 = tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"])
        out_layer = tf.matmul(layer_2, weights["out"]) + biases["out"]
        return out_layer

    logits = neural_net(X)
    prediction = tf.nn.softmax(logits)

    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op)

    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    init = tf.global_variables_initializer()
    losses, accs = [], []
    with tf.Session() as sess:
        sess.run(init)
        for step in range(1, num_steps + 1):
            lo = ((step - 1) * batch_size) % 256
            batch_x, batch_y = images[lo : lo + batch_size], labels[lo : lo + batch_size]
            sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
            if step % display_step == 0 or step == 1:
                loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
                losses.append(float(loss))
                accs.append(float(acc))
        test_acc = sess.run(accuracy, feed_dict={X: images[:100], Y: labels[:100]})
    return {
        "losses": losses,
        "accuracies": accs,
        "test_accuracy": float(test_acc),
        "variables": [v.name for v in tf.global_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, 12)
