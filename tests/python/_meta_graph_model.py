"""The model of the meta-graph export-option tests, written once against either framework.

``build(tf)`` takes ``ferroflow`` or ``tensorflow.compat.v1`` (graph mode,
reference variables), so ``tools/gen_meta_graph_fixtures.py`` builds the same
graph in real TensorFlow as the tests build in ferroflow. Node names are
given explicitly where the two frameworks' automatic names differ.
"""

import numpy as np


def build(tf):
    """A small conv net: ``(x, logits, loss)``; variables get fixed initial values."""
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 6, 6, 1], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    with tf.variable_scope("conv"):
        f = tf.get_variable(
            "filter", [3, 3, 1, 2], initializer=tf.constant_initializer(rng.normal(size=[3, 3, 1, 2]))
        )
        conv = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", name="conv")
        pooled = tf.nn.max_pool(tf.nn.relu(conv), [1, 2, 2, 1], [1, 2, 2, 1], "VALID", name="pool")
    flat = tf.reshape(pooled, [-1, 18], name="flat")
    with tf.variable_scope("dense"):
        # transpose_b=True: a non-default value that must survive stripping.
        k = tf.get_variable("kernel", [3, 18], initializer=tf.constant_initializer(rng.normal(size=[3, 18])))
        b = tf.get_variable("bias", [3], initializer=tf.constant_initializer([0.1, -0.2, 0.3]))
        logits = tf.nn.bias_add(tf.matmul(flat, k, transpose_b=True, name="matmul"), b, name="logits")
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xent")
    loss = tf.reduce_mean(xent, name="loss")
    tf.argmax(logits, 1, name="prediction")
    return x, labels, logits, loss


def batch(seed=0):
    """One batch of inputs for ``build``: ``(x, labels)``."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=[4, 6, 6, 1]).astype(np.float32), rng.integers(0, 3, size=[4]).astype(np.int64)
