"""Géron's TF1 "Capsule Networks (CapsNets)" notebook, shrunk: primary capsules from two tf.layers.conv2d
layers reshaped to [batch, caps, dims], the squash function with a safe norm (tf.reduce_sum of squares,
keepdims, epsilon inside tf.sqrt), the prediction vectors u_hat by tiling the weights with tf.tile and
batched tf.matmul of [batch, caps1, caps2, 16, 8] x [.., 8, 1], two rounds of routing by agreement
(raw weights from tf.zeros, tf.nn.softmax over the output capsules (axis=2), weighted sums by
tf.reduce_sum(keepdims=True), agreement by tf.matmul(transpose_a=True) and tf.add), the class estimate by
the safe norm and tf.argmax, the margin loss with tf.one_hot, tf.square(tf.maximum(0., m_plus - ||v||))
and the reconstruction mask with tf.cond between the labels and the predictions, Adam.

Weights start from numpy values: every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 3


def squash(tf, s, axis=-1, epsilon=1e-7, name=None):
    with tf.name_scope(name, default_name="squash"):
        squared_norm = tf.reduce_sum(tf.square(s), axis=axis, keepdims=True)
        safe_norm = tf.sqrt(squared_norm + epsilon)
        squash_factor = squared_norm / (1.0 + squared_norm)
        unit_vector = s / safe_norm
        return squash_factor * unit_vector


def safe_norm(tf, s, axis=-1, epsilon=1e-7, keep_dims=False, name=None):
    with tf.name_scope(name, default_name="safe_norm"):
        squared_norm = tf.reduce_sum(tf.square(s), axis=axis, keepdims=keep_dims)
        return tf.sqrt(squared_norm + epsilon)


def main(tf, steps=3):
    tf.reset_default_graph()
    rng = np.random.RandomState(190)
    images = rng.rand(4, 12, 12, 1).astype(np.float32)
    labels = np.array([0, 1, 2, 1], np.int64)
    n_classes = 3
    X = tf.placeholder(shape=[None, 12, 12, 1], dtype=tf.float32, name="X")
    y = tf.placeholder(shape=[None], dtype=tf.int64, name="y")
    caps1_n_maps, caps1_n_dims = 4, 8
    conv1 = tf.layers.conv2d(X, 8, 5, padding="valid", activation=tf.nn.relu, name="conv1",
                             kernel_initializer=tf.constant_initializer(fixed_init([5, 5, 1, 8], 1900, 0.3)))
    conv2 = tf.layers.conv2d(conv1, caps1_n_maps * caps1_n_dims, 3, strides=2, padding="valid",
                             activation=tf.nn.relu, name="conv2",
                             kernel_initializer=tf.constant_initializer(fixed_init([3, 3, 8, 32], 1901, 0.2)))
    caps1_n_caps = caps1_n_maps * 3 * 3
    caps1_raw = tf.reshape(conv2, [-1, caps1_n_caps, caps1_n_dims], name="caps1_raw")
    caps1_output = squash(tf, caps1_raw, name="caps1_output")

    caps2_n_caps, caps2_n_dims = n_classes, 6
    W_init = fixed_init([1, caps1_n_caps, caps2_n_caps, caps2_n_dims, caps1_n_dims], 1902, 0.1)
    W = tf.Variable(W_init, name="W")
    batch_size = tf.shape(X)[0]
    W_tiled = tf.tile(W, [batch_size, 1, 1, 1, 1], name="W_tiled")
    caps1_output_expanded = tf.expand_dims(caps1_output, -1, name="caps1_output_expanded")
    caps1_output_tile = tf.expand_dims(caps1_output_expanded, 2, name="caps1_output_tile")
    caps1_output_tiled = tf.tile(caps1_output_tile, [1, 1, caps2_n_caps, 1, 1], name="caps1_output_tiled")
    caps2_predicted = tf.matmul(W_tiled, caps1_output_tiled, name="caps2_predicted")

    raw_weights = tf.zeros([batch_size, caps1_n_caps, caps2_n_caps, 1, 1], dtype=np.float32, name="raw_weights")
    routing_weights = tf.nn.softmax(raw_weights, axis=2, name="routing_weights")
    weighted_predictions = tf.multiply(routing_weights, caps2_predicted, name="weighted_predictions")
    weighted_sum = tf.reduce_sum(weighted_predictions, axis=1, keepdims=True, name="weighted_sum")
    caps2_output_round_1 = squash(tf, weighted_sum, axis=-2, name="caps2_output_round_1")
    caps2_output_round_1_tiled = tf.tile(caps2_output_round_1, [1, caps1_n_caps, 1, 1, 1])
    agreement = tf.matmul(caps2_predicted, caps2_output_round_1_tiled, transpose_a=True, name="agreement")
    raw_weights_round_2 = tf.add(raw_weights, agreement, name="raw_weights_round_2")
    routing_weights_round_2 = tf.nn.softmax(raw_weights_round_2, axis=2, name="routing_weights_round_2")
    weighted_predictions_round_2 = tf.multiply(routing_weights_round_2, caps2_predicted)
    weighted_sum_round_2 = tf.reduce_sum(weighted_predictions_round_2, axis=1, keepdims=True)
    caps2_output = squash(tf, weighted_sum_round_2, axis=-2, name="caps2_output_round_2")

    y_proba = safe_norm(tf, caps2_output, axis=-2, name="y_proba")
    y_proba_argmax = tf.argmax(y_proba, axis=2, name="y_proba")
    y_pred = tf.squeeze(y_proba_argmax, axis=[1, 2], name="y_pred")

    m_plus, m_minus, lambda_ = 0.9, 0.1, 0.5
    T = tf.one_hot(y, depth=caps2_n_caps, name="T")
    caps2_output_norm = safe_norm(tf, caps2_output, axis=-2, keep_dims=True, name="caps2_output_norm")
    present_error = tf.reshape(tf.square(tf.maximum(0.0, m_plus - caps2_output_norm)), shape=(-1, n_classes))
    absent_error = tf.reshape(tf.square(tf.maximum(0.0, caps2_output_norm - m_minus)), shape=(-1, n_classes))
    L = tf.add(T * present_error, lambda_ * (1.0 - T) * absent_error, name="L")
    margin_loss = tf.reduce_mean(tf.reduce_sum(L, axis=1), name="margin_loss")

    mask_with_labels = tf.placeholder_with_default(False, shape=(), name="mask_with_labels")
    reconstruction_targets = tf.cond(mask_with_labels, lambda: y, lambda: y_pred, name="reconstruction_targets")
    reconstruction_mask = tf.one_hot(reconstruction_targets, depth=caps2_n_caps, name="reconstruction_mask")
    reconstruction_mask_reshaped = tf.reshape(reconstruction_mask, [-1, 1, caps2_n_caps, 1, 1])
    caps2_output_masked = tf.multiply(caps2_output, reconstruction_mask_reshaped, name="caps2_output_masked")
    decoder_input = tf.reshape(caps2_output_masked, [-1, caps2_n_caps * caps2_n_dims])
    decoded = tf.layers.dense(decoder_input, 144, activation=tf.nn.sigmoid, name="decoder",
                              kernel_initializer=tf.constant_initializer(fixed_init([18, 144], 1903, 0.2)))
    reconstruction_loss = tf.reduce_mean(tf.square(tf.reshape(X, [-1, 144]) - decoded))
    loss = tf.add(margin_loss, 0.0005 * reconstruction_loss, name="loss")
    correct = tf.equal(y, y_pred, name="correct")
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
    training_op = tf.train.AdamOptimizer(0.01).minimize(loss, name="training_op")

    losses = []
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        for _ in range(steps):
            _, l = sess.run([training_op, loss], feed_dict={X: images, y: labels, mask_with_labels: True})
            losses.append(float(l))
        proba, pred, acc, dec = sess.run([y_proba, y_pred, accuracy, decoded], feed_dict={X: images, y: labels})
    return {
        "losses": losses,
        "y_proba": proba.ravel().tolist(),
        "y_pred": pred.tolist(),
        "accuracy": float(acc),
        "decoded_head": dec[0, :10].tolist(),
        "shapes": [str(caps2_predicted.shape), str(agreement.shape), str(caps2_output.shape)],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
