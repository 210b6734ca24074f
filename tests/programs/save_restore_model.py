"""aymericdamien/TensorFlow-Examples save_restore_model.py: train a multilayer perceptron for a few epochs,
saver.save(sess, model_path) (returning the path), then a brand-new tf.Session that runs the initializer,
saver.restore(sess, model_path) and resumes training, with accuracy measured after each phase.

tf.set_random_seed makes the initial weights TF's bits; the restored session continues exactly where the
first stopped, so the losses of both phases are deterministic.
"""

import os
import shutil
import tempfile

from _common import fake_mnist, run_as_script

TF_STEPS = 3


def main(tf, steps=3):
    tf.reset_default_graph()
    tf.set_random_seed(8)
    images, labels = fake_mnist(64, seed=91)
    learning_rate = 0.001
    batch_size = 32
    model_dir = tempfile.mkdtemp()
    model_path = os.path.join(model_dir, "model.ckpt")

    n_hidden_1 = 16
    n_hidden_2 = 16
    n_input = 784
    n_classes = 10

    x = tf.placeholder("float", [None, n_input])
    y = tf.placeholder("float", [None, n_classes])

    def multilayer_perceptron(x, weights, biases):
        layer_1 = tf.add(tf.matmul(x, weights["h1"]), biases["b1"])
        layer_1 = tf.nn.relu(layer_1)
        layer_2 = tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"])
        layer_2 = tf.nn.relu(layer_2)
        out_layer = tf.matmul(layer_2, weights["out"]) + biases["out"]
        return out_layer

    weights = {
        "h1": tf.Variable(tf.random_normal([n_input, n_hidden_1])),
        "h2": tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2])),
        "out": tf.Variable(tf.random_normal([n_hidden_2, n_classes])),
    }
    biases = {
        "b1": tf.Variable(tf.random_normal([n_hidden_1])),
        "b2": tf.Variable(tf.random_normal([n_hidden_2])),
        "out": tf.Variable(tf.random_normal([n_classes])),
    }

    pred = multilayer_perceptron(x, weights, biases)
    cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
    optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(cost)
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))

    def train_epochs(sess, n):
        out = []
        for _ in range(n):
            total_batch = int(64 / batch_size)
            avg_cost = 0.0
            for i in range(total_batch):
                batch_x = images[i * batch_size : (i + 1) * batch_size]
                batch_y = labels[i * batch_size : (i + 1) * batch_size]
                _, c = sess.run([optimizer, cost], feed_dict={x: batch_x, y: batch_y})
                avg_cost += c / total_batch
            out.append(float(avg_cost))
        return out

    print("Starting 1st session...")
    with tf.Session() as sess:
        sess.run(init)
        first = train_epochs(sess, steps)
        acc1 = accuracy.eval({x: images, y: labels})
        save_path = saver.save(sess, model_path)

    print("Starting 2nd session...")
    with tf.Session() as sess:
        sess.run(init)
        load_path = saver.restore(sess, model_path)
        acc_restored = accuracy.eval({x: images, y: labels})
        second = train_epochs(sess, steps)
        acc2 = accuracy.eval({x: images, y: labels})
    files = sorted(os.listdir(model_dir))
    shutil.rmtree(model_dir)
    return {
        "first_costs": first,
        "second_costs": second,
        "accuracies": [float(acc1), float(acc_restored), float(acc2)],
        "save_path_is_model_path": save_path == model_path,
        "restore_returns": repr(load_path),
        "files": files,
        "saved_vars": sorted(saver._var_list.keys()) if isinstance(getattr(saver, "_var_list", None), dict) else None,
    }


if __name__ == "__main__":
    run_as_script(main, 3)
