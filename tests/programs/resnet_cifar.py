"""TF1's official/resnet (resnet_model.py, cifar10_main.py) shrunk: building blocks v2 with
tf.layers.batch_normalization(fused=True, training=...), fixed padding for strided convolutions
(tf.pad + 'VALID'), projection shortcuts, tf.layers.conv2d without bias, global average pooling by
reduce_mean(keepdims=True) and tf.squeeze, weight decay added as tf.add_n of tf.nn.l2_loss over the trainable
variables (batch norm's excluded by name), MomentumOptimizer(momentum=0.9) with a piecewise_constant learning
rate, and the UPDATE_OPS dependency; evaluation with training=False and tf.metrics.accuracy.

Weights are loaded from numpy after initialization, so losses and the moving statistics are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4


def fixed_padding(tf, inputs, kernel_size):
    pad_total = kernel_size - 1
    pad_beg = pad_total // 2
    pad_end = pad_total - pad_beg
    return tf.pad(inputs, [[0, 0], [pad_beg, pad_end], [pad_beg, pad_end], [0, 0]])


def conv2d_fixed_padding(tf, inputs, filters, kernel_size, strides):
    if strides > 1:
        inputs = fixed_padding(tf, inputs, kernel_size)
    return tf.layers.conv2d(
        inputs=inputs,
        filters=filters,
        kernel_size=kernel_size,
        strides=strides,
        padding=("SAME" if strides == 1 else "VALID"),
        use_bias=False,
        kernel_initializer=tf.variance_scaling_initializer(),
    )


def batch_norm(tf, inputs, training):
    return tf.layers.batch_normalization(
        inputs=inputs,
        axis=3,
        momentum=0.997,
        epsilon=1e-5,
        center=True,
        scale=True,
        training=training,
        fused=True,
    )


def building_block_v2(tf, inputs, filters, training, projection_shortcut, strides):
    shortcut = inputs
    inputs = batch_norm(tf, inputs, training)
    inputs = tf.nn.relu(inputs)
    if projection_shortcut is not None:
        shortcut = projection_shortcut(inputs)
    inputs = conv2d_fixed_padding(tf, inputs, filters, 3, strides)
    inputs = batch_norm(tf, inputs, training)
    inputs = tf.nn.relu(inputs)
    inputs = conv2d_fixed_padding(tf, inputs, filters, 3, 1)
    return inputs + shortcut


def block_layer(tf, inputs, filters, blocks, strides, training, name):
    def projection_shortcut(inputs):
        return conv2d_fixed_padding(tf, inputs, filters, 1, strides)

    inputs = building_block_v2(tf, inputs, filters, training, projection_shortcut, strides)
    for _ in range(1, blocks):
        inputs = building_block_v2(tf, inputs, filters, training, None, 1)
    return tf.identity(inputs, name)


def model(tf, inputs, training):
    with tf.variable_scope("resnet_model", reuse=tf.AUTO_REUSE):
        inputs = conv2d_fixed_padding(tf, inputs, 8, 3, 1)
        inputs = tf.identity(inputs, "initial_conv")
        for i, (filters, strides) in enumerate([(8, 1), (16, 2)]):
            inputs = block_layer(tf, inputs, filters, 1, strides, training, f"block_layer{i + 1}")
        inputs = batch_norm(tf, inputs, training)
        inputs = tf.nn.relu(inputs)
        inputs = tf.reduce_mean(inputs, [1, 2], keepdims=True)
        inputs = tf.identity(inputs, "final_reduce_mean")
        inputs = tf.squeeze(inputs, [1, 2])
        inputs = tf.layers.dense(inputs=inputs, units=10)
        return tf.identity(inputs, "final_dense")


def main(tf, steps=4):
    tf.reset_default_graph()
    rng = np.random.RandomState(60)
    images = rng.rand(32, 12, 12, 3).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) * 30).astype(np.int32) % 10

    x = tf.placeholder(tf.float32, [None, 12, 12, 3])
    y = tf.placeholder(tf.int32, [None])
    logits = model(tf, x, True)
    eval_logits = model(tf, x, False)
    cross_entropy = tf.losses.sparse_softmax_cross_entropy(logits=logits, labels=y)

    def exclude_batch_norm(name):
        return "batch_normalization" not in name

    l2_loss = 2e-4 * tf.add_n(
        [
            tf.nn.l2_loss(tf.cast(v, tf.float32))
            for v in tf.trainable_variables()
            if exclude_batch_norm(v.name)
        ]
    )
    loss = cross_entropy + l2_loss
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.piecewise_constant(tf.cast(global_step, tf.int32), [2, 3], [0.1, 0.05, 0.01])
    optimizer = tf.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.9)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step)
    predictions = tf.argmax(eval_logits, axis=1)
    accuracy, acc_update = tf.metrics.accuracy(labels=y, predictions=predictions)

    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for k, v in enumerate(tf.trainable_variables()):
            if exclude_batch_norm(v.name):
                v.load(fixed_init(v.shape.as_list(), 1700 + k, scale=0.2), sess)
        for i in range(steps):
            lo = (i * 16) % 32
            _, l = sess.run([train_op, loss], {x: images[lo : lo + 16], y: labels[lo : lo + 16]})
            losses.append(float(l))
        sess.run(acc_update, {x: images, y: labels})
        acc = float(sess.run(accuracy))
        moving = sorted(v.name for v in tf.global_variables() if "moving_mean" in v.name)
        moving_sum = float(
            sum(np.abs(sess.run(v)).sum() for v in tf.global_variables() if "moving_" in v.name)
        )
        eval_out = sess.run(eval_logits, {x: images[:4]})
    return {
        "losses": losses,
        "accuracy": acc,
        "moving_means": moving,
        "moving_abs_sum": moving_sum,
        "eval_logits": eval_out.tolist(),
        "update_ops": len(update_ops),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
