"""aymericdamien/TensorFlow-Examples nearest_neighbor.py: L1 distance through tf.add(xtr, tf.negative(xte)),
tf.abs and reduce_sum(reduction_indices=1), the nearest index from tf.arg_min(distance, 0), then a Python
loop over the test set running the graph once per test sample and comparing np.argmax of the labels.
"""

import numpy as np
from _common import fake_mnist, run_as_script

TF_STEPS = 40


def main(tf, steps=40):
    tf.reset_default_graph()
    Xtr, Ytr = fake_mnist(200, seed=21)
    Xte, Yte = fake_mnist(steps, seed=22)

    xtr = tf.placeholder("float", [None, 784])
    xte = tf.placeholder("float", [784])

    distance = tf.reduce_sum(tf.abs(tf.add(xtr, tf.negative(xte))), reduction_indices=1)
    pred = tf.arg_min(distance, 0)

    accuracy = 0.0
    init = tf.global_variables_initializer()
    nn_indices, distances = [], []
    with tf.Session() as sess:
        sess.run(init)
        for i in range(len(Xte)):
            nn_index = sess.run(pred, feed_dict={xtr: Xtr, xte: Xte[i, :]})
            nn_indices.append(int(nn_index))
            if np.argmax(Ytr[nn_index]) == np.argmax(Yte[i]):
                accuracy += 1.0 / len(Xte)
        d = sess.run(distance, feed_dict={xtr: Xtr[:5], xte: Xte[0]})
        distances = d.tolist()
    return {
        "nn_indices": nn_indices,
        "accuracy": accuracy,
        "distances": distances,
        "pred_dtype": pred.dtype.name,
        "pred_shape": str(pred.get_shape()),
        "distance_shape": str(distance.get_shape()),
        "op_types": [pred.op.type, distance.op.type],
    }


if __name__ == "__main__":
    run_as_script(main, 40)
