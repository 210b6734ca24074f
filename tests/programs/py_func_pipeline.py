"""TF1 programs that call back into Python: tf.py_func inside Dataset.map to load and augment examples with
numpy (its outputs given static shapes with set_shape, as the tutorials advise), tf.py_func in the graph
for a numpy-computed metric with several outputs and a stateful=False hint, tf.py_func returning a string,
a straight-through gradient around a numpy op (the TF1 recipe x + tf.stop_gradient(f(x) - x)), and a training
loop on the py_func-fed pipeline (the map's callbacks must outlive its traced function graph).

Weights are zeros and the data comes from seeded numpy, so the losses are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(16)
    table = rng.randn(20, 3).astype(np.float32)
    targets = (table @ np.array([0.5, -1.0, 2.0], np.float32) > 0).astype(np.int64)

    def load(i):
        # numpy "file loading": a row and its label, plus a flipped copy as augmentation.
        row = table[i]
        return np.concatenate([row, row[::-1]]).astype(np.float32), targets[i]

    def tf_load(i):
        x, y = tf.py_func(load, [i], [tf.float32, tf.int64])
        x.set_shape([6])
        y.set_shape([])
        return x, y

    ds = tf.data.Dataset.range(20).map(tf_load, num_parallel_calls=2).batch(5).repeat()
    x, y = ds.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([6, 2]), name="w")
    logits = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

    def np_stats(a):
        return np.float32(a.mean()), np.float32(a.std()), np.int32(a.size)

    m, s, n = tf.py_func(np_stats, [logits], [tf.float32, tf.float32, tf.int32], stateful=False, name="stats")
    desc = tf.py_func(lambda v: ("loss=%.3f" % v).encode(), [loss], tf.string)

    # Straight-through rounding: forward np.round, backward identity.
    z = tf.placeholder(tf.float32, [4])
    rounded = tf.py_func(np.round, [z], tf.float32)
    st = z + tf.stop_gradient(rounded - z)
    st_grad = tf.gradients(tf.reduce_sum(st * tf.constant([1.0, 2.0, 3.0, 4.0])), z)[0]

    losses, stats = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l, mm, ss, nn = sess.run([train, loss, m, s, n])
            losses.append(float(l))
            stats.append([float(mm), float(ss), int(nn)])
        d = sess.run(desc)
        r, g = sess.run([st, st_grad], {z: [0.2, 1.7, -2.5, 3.49]})
    return {
        "losses": losses,
        "stats": stats,
        "desc_prefix": d.decode()[:5],
        "straight_through": [r.tolist(), g.tolist()],
        "shapes": [x.get_shape().as_list(), y.get_shape().as_list(), str(m.get_shape()), str(desc.get_shape())],
        "types": [m.dtype.name, n.dtype.name, desc.dtype.name, m.op.type],
    }


if __name__ == "__main__":
    run_as_script(main, 5)
