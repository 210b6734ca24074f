"""``tf.layers`` models shared by the fixture generator (``tools/make_layers_fixtures.py``, run under
real TensorFlow) and the golden test (``test_layers.py``, run under ferroflow).

No TensorFlow or ferroflow import here: every ``case_<name>(tf)`` takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behavior disabled, or ``ferroflow``), builds its graph in the
current default graph and returns a list of runs ``[(fetches, feed_dict), ...]``: the caller runs
``global_variables_initializer()`` and then each run in order in one session (so a run can train and
a later one read the moving averages). ``fetches`` maps a plain name to a tensor or an op (an op's
value is not stored). Weights come from NumPy-valued ``constant_initializer``s drawn from seeded
``RandomState``s, so both frameworks start from the same values.

Fixture files are ``tests/fixtures/layers/<case>.npz``: ``<run>/<key>`` per fetched tensor, plus
``global_variables``, ``trainable_variables``, ``update_ops`` and ``regularization_losses``: the
names TensorFlow gave them, as string arrays, and ``<var name>__shape`` per global variable.
"""

from __future__ import annotations

import numpy as np

# (rtol, atol) for float32 values: convolutions and reductions sum in a different order than TF's.
TOLERANCE = (2e-4, 2e-5)


def _init(tf, seed, shape, scale=0.3):
    return tf.constant_initializer(np.random.RandomState(seed).uniform(-scale, scale, shape).astype(np.float32))


def _convnet(tf, x, training, reuse):
    """conv2d -> batch_normalization -> max_pooling2d -> flatten -> dense -> dropout -> dense."""
    with tf.variable_scope("net", reuse=reuse):
        h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                             kernel_initializer=_init(tf, 1, [3, 3, 3, 4]), bias_initializer=_init(tf, 2, [4]))
        h = tf.layers.batch_normalization(h, training=training, momentum=0.9,
                                          gamma_initializer=_init(tf, 3, [4], 1.0),
                                          beta_initializer=_init(tf, 4, [4]))
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.flatten(h)
        h = tf.layers.dense(h, 6, activation=tf.nn.tanh, kernel_initializer=_init(tf, 5, [36, 6]),
                            kernel_regularizer=lambda w: 0.01 * tf.reduce_sum(tf.square(w)))
        h = tf.layers.dropout(h, rate=0.5, training=False)
        h = tf.layers.batch_normalization(h, training=training, epsilon=0.01)
        return tf.layers.dense(h, 3, kernel_initializer=_init(tf, 6, [6, 3]), bias_initializer=_init(tf, 7, [3]))


def case_convnet(tf):
    """One training step of a small convnet: forward values, gradients, the UPDATE_OPS' moving averages,
    and the inference-mode model sharing its variables."""
    rs = np.random.RandomState(0)
    images = rs.uniform(0, 1, [5, 6, 6, 3]).astype(np.float32)
    labels = rs.randint(0, 3, [5]).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 6, 6, 3], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    logits = _convnet(tf, x, True, None)
    eval_logits = _convnet(tf, x, False, True)
    xent = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss = xent + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    params = tf.trainable_variables()
    grads = tf.gradients(loss, params)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    feed = {x: images, y: labels}
    first = {"logits": logits, "eval_logits": eval_logits, "loss": loss}
    first.update({"grad/" + v.op.name: g for v, g in zip(params, grads)})
    after = {"logits": logits, "eval_logits": eval_logits}
    after.update({"var/" + v.op.name: v for v in tf.global_variables()})
    return [(first, feed), ({"train": train}, feed), (after, feed)]


def case_bn_training_tensor(tf):
    """batch_normalization with ``training`` a bool tensor: fused (4-D) and not (2-D), both modes."""
    rs = np.random.RandomState(1)
    x4 = tf.constant(rs.normal(1.0, 2.0, [3, 2, 2, 5]).astype(np.float32))
    x2 = tf.constant(rs.normal(-1.0, 0.5, [7, 4]).astype(np.float32))
    x3 = tf.constant(rs.normal(0.0, 1.0, [3, 4, 2]).astype(np.float32))
    training = tf.placeholder_with_default(False, [], name="training")
    a = tf.layers.batch_normalization(x4, training=training, momentum=0.5, name="fused")
    b = tf.layers.batch_normalization(x2, training=training, momentum=0.8, name="plain", center=False)
    c = tf.layers.batch_normalization(x3, axis=1, training=training, momentum=0.7, name="axis1", scale=False)
    d = tf.layers.batch_normalization(x4, axis=[1, 3], training=True, momentum=0.6, name="multi")
    e = tf.layers.batch_normalization(x4, training=True, fused=False, momentum=0.5, name="unfused")
    updates = tf.group(*tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    outs = {"fused": a, "plain": b, "axis1": c, "multi": d, "unfused": e}
    stats = {"var/" + v.op.name: v for v in tf.global_variables() if "moving" in v.op.name}
    return [(dict(outs, updates=updates), {training: True}), (stats, {}),
            (dict(outs, updates=updates), {training: False}), (dict(stats), {})]


def case_layers_zoo(tf):
    """Every layer function with NumPy-valued weights: outputs and gradients of a scalar loss."""
    rs = np.random.RandomState(2)
    x1 = tf.constant(rs.uniform(-1, 1, [2, 9, 3]).astype(np.float32))
    x2 = tf.constant(rs.uniform(-1, 1, [2, 7, 8, 3]).astype(np.float32))
    x3 = tf.constant(rs.uniform(-1, 1, [2, 5, 6, 4, 2]).astype(np.float32))
    out = {}
    out["conv1d_same"] = tf.layers.conv1d(x1, 4, 3, padding="same", kernel_initializer=_init(tf, 10, [3, 3, 4]),
                                          bias_initializer=_init(tf, 11, [4]))
    out["conv1d_causal_dil"] = tf.layers.conv1d(x1, 2, 2, padding="causal", dilation_rate=2,
                                                kernel_initializer=_init(tf, 12, [2, 3, 2]))
    out["conv1d_stride"] = tf.layers.conv1d(x1, 2, 4, strides=2, kernel_initializer=_init(tf, 13, [4, 3, 2]))
    out["conv2d_valid_s2"] = tf.layers.conv2d(x2, 5, (3, 2), strides=2, kernel_initializer=_init(tf, 14, [3, 2, 3, 5]),
                                              bias_initializer=_init(tf, 15, [5]))
    out["conv2d_dilated"] = tf.layers.conv2d(x2, 2, 3, padding="same", dilation_rate=2,
                                             kernel_initializer=_init(tf, 16, [3, 3, 3, 2]))
    out["conv2d_t_same"] = tf.layers.conv2d_transpose(x2, 4, 3, strides=2, padding="same",
                                                      kernel_initializer=_init(tf, 17, [3, 3, 4, 3]),
                                                      bias_initializer=_init(tf, 18, [4]))
    out["conv2d_t_valid"] = tf.layers.conv2d_transpose(x2, 2, (3, 2), strides=(2, 3),
                                                       kernel_initializer=_init(tf, 19, [3, 2, 2, 3]))
    out["conv3d_same"] = tf.layers.conv3d(x3, 3, (3, 2, 3), strides=(2, 1, 2), padding="same",
                                          kernel_initializer=_init(tf, 20, [3, 2, 3, 2, 3]),
                                          bias_initializer=_init(tf, 21, [3]))
    out["conv3d_valid"] = tf.layers.conv3d(x3, 2, 2, kernel_initializer=_init(tf, 22, [2, 2, 2, 2, 2]))
    out["conv3d_t"] = tf.layers.conv3d_transpose(x3, 2, (2, 3, 2), strides=(2, 1, 2), padding="same",
                                                 kernel_initializer=_init(tf, 23, [2, 3, 2, 2, 2]),
                                                 bias_initializer=_init(tf, 24, [2]))
    out["sep2d"] = tf.layers.separable_conv2d(x2, 4, 3, depth_multiplier=2, padding="same",
                                              depthwise_initializer=_init(tf, 25, [3, 3, 3, 2]),
                                              pointwise_initializer=_init(tf, 26, [1, 1, 6, 4]),
                                              bias_initializer=_init(tf, 27, [4]))
    out["sep1d"] = tf.layers.separable_conv1d(x1, 3, 2, strides=2, depthwise_initializer=_init(tf, 28, [2, 3, 1]),
                                              pointwise_initializer=_init(tf, 29, [1, 3, 3]))
    out["max1d"] = tf.layers.max_pooling1d(x1, 3, 2, padding="same")
    out["avg1d"] = tf.layers.average_pooling1d(x1, 2, 2)
    out["max2d"] = tf.layers.max_pooling2d(x2, (3, 2), (2, 2), padding="same")
    out["avg2d"] = tf.layers.average_pooling2d(x2, 3, 2, padding="same")
    out["max3d"] = tf.layers.max_pooling3d(x3, (2, 3, 2), (2, 2, 1), padding="same")
    out["avg3d"] = tf.layers.average_pooling3d(x3, (3, 2, 2), (2, 2, 2), padding="same")
    out["avg3d_valid"] = tf.layers.average_pooling3d(x3, 2, 1)
    out["dense3d"] = tf.layers.dense(x1, 2, activation=tf.nn.relu, kernel_initializer=_init(tf, 30, [3, 2]),
                                     bias_initializer=_init(tf, 31, [2]))
    out["flatten3d"] = tf.layers.flatten(x3)
    loss = tf.add_n([tf.reduce_sum(tf.sin(v) * (i + 1)) for i, v in enumerate(out.values())])
    wrt = [x1, x2, x3] + tf.trainable_variables()
    grads = tf.gradients(loss, wrt)
    fetches = dict(out)
    for name, g in zip(["x1", "x2", "x3"] + [v.op.name for v in wrt[3:]], grads):
        fetches["grad/" + name] = g
    return [(fetches, {})]


def case_names(tf):
    """Variable names and shapes of unnamed, named, nested, reused and class-form layers."""
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    v = tf.placeholder(tf.float32, [None, 5])
    h = tf.layers.conv2d(x, 4, 3)
    h = tf.layers.conv2d(h, 4, 3, use_bias=False)
    h = tf.layers.batch_normalization(h, training=True, scale=False)
    h = tf.layers.conv2d_transpose(h, 2, 3)
    h = tf.layers.separable_conv2d(h, 3, 3)
    f = tf.layers.flatten(h)
    tf.layers.dense(f, 4)
    tf.layers.dense(v, 4, name="fc")
    tf.layers.dense(v, 4, name="fc", reuse=True)
    tf.layers.dense(v, 4, name="shared", reuse=tf.AUTO_REUSE)
    tf.layers.dense(v, 4, name="shared", reuse=tf.AUTO_REUSE)
    with tf.variable_scope("tower"):
        tf.layers.dense(v, 3)
        tf.layers.dense(v, 3)
        tf.layers.batch_normalization(v)
    with tf.variable_scope("tower", reuse=True):
        tf.layers.dense(v, 3)
        tf.layers.dense(v, 3)
        tf.layers.batch_normalization(v)
    layer = tf.layers.Dense(2, name="klass")
    layer(v)
    layer(v)
    tf.layers.Dense(2)(v)
    tf.layers.Conv1D(2, 2)(tf.placeholder(tf.float32, [None, 6, 2]))
    tf.layers.Dense(2, trainable=False, kernel_regularizer=tf.nn.l2_loss, bias_regularizer=tf.nn.l2_loss)(v)
    tf.layers.BatchNormalization(trainable=False)(v, training=True)
    return [({}, {})]


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def checkpoint_model(tf):
    """The model the TensorFlow-written checkpoint holds (default, random initializers): its
    inference-mode logits for ``checkpoint_input()``."""
    x = tf.placeholder(tf.float32, [None, 6, 6, 3], name="x")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, training=False)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 5, activation=tf.nn.relu)
    return x, tf.layers.dense(h, 3)


def checkpoint_input():
    return np.random.RandomState(5).uniform(0, 1, [2, 6, 6, 3]).astype(np.float32)
