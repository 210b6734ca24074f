"""aymericdamien/TensorFlow-Examples tensorflow_dataset_api.py: tf.data.Dataset.from_tensor_slices((X, Y))
.repeat().batch(batch_size).prefetch(batch_size), a make_initializable_iterator whose initializer is run
with the other init ops, get_next() feeding a tf.layers conv net directly (no placeholders; reuse=True for the test copy), the training loop just
running train_op; also make_one_shot_iterator over a shuffled-free map/batch pipeline and an epoch loop that
ends on tf.errors.OutOfRangeError.

tf.set_random_seed makes the initial weights TF's bits, so the losses are deterministic.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    tf.set_random_seed(9)
    images, labels = fake_mnist(48, seed=101)
    learning_rate = 0.001
    batch_size = 16
    display_step = 2
    n_classes = 10
    dropout = 0.75

    sess = tf.Session()

    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.repeat()
    dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(batch_size)

    iterator = dataset.make_initializable_iterator()
    X, Y = iterator.get_next()

    def conv_net(x, n_classes, dropout, reuse, is_training):
        with tf.variable_scope("ConvNet", reuse=reuse):
            x = tf.reshape(x, shape=[-1, 28, 28, 1])
            conv1 = tf.layers.conv2d(x, 4, 5, activation=tf.nn.relu)
            conv1 = tf.layers.max_pooling2d(conv1, 2, 2)
            conv2 = tf.layers.conv2d(conv1, 8, 3, activation=tf.nn.relu)
            conv2 = tf.layers.max_pooling2d(conv2, 2, 2)
            fc1 = tf.layers.flatten(conv2)
            fc1 = tf.layers.dense(fc1, 32)
            fc1 = tf.layers.dropout(fc1, rate=1 - dropout, training=is_training)
            out = tf.layers.dense(fc1, n_classes)
            out = tf.nn.softmax(out) if not is_training else out
        return out

    logits_train = conv_net(X, n_classes, dropout, reuse=False, is_training=True)
    logits_test = conv_net(X, n_classes, dropout, reuse=True, is_training=False)

    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits_train, labels=Y))
    optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op)

    correct_pred = tf.equal(tf.argmax(logits_test, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

    init = tf.global_variables_initializer()
    sess.run(iterator.initializer)
    sess.run(init)

    losses = []
    for step in range(1, steps + 1):
        if step % display_step == 0 or step == 1:
            _, loss, acc = sess.run([train_op, loss_op, accuracy])
            losses.append(float(loss))
        else:
            sess.run(train_op)

    # One-shot iterator over a finite pipeline, consumed until OutOfRangeError.
    ds = tf.data.Dataset.from_tensor_slices({"x": images[:10], "y": np.argmax(labels[:10], 1)})
    ds = ds.map(lambda d: (d["x"] * 2.0, d["y"])).batch(4)
    it = ds.make_one_shot_iterator()
    nxt = it.get_next()
    batches, sums = [], []
    while True:
        try:
            bx, by = sess.run(nxt)
        except tf.errors.OutOfRangeError:
            break
        batches.append(by.tolist())
        sums.append(float(bx.sum()))
    out = {
        "losses": losses,
        "label_batches": batches,
        "image_sums": sums,
        "output_shapes": [str(s) for s in dataset.output_shapes],
        "output_types": [t.name for t in dataset.output_types],
        "get_next_shapes": [X.get_shape().as_list(), Y.get_shape().as_list()],
        "variables": [v.name for v in tf.trainable_variables()],
    }
    sess.close()
    return out


if __name__ == "__main__":
    run_as_script(main, 6)
