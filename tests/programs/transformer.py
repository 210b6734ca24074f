"""A small Transformer encoder-decoder the way TF1 re-implementations (Kyubyong/transformer, the "Attention is
all you need" tutorials) wrote it: sinusoidal positional encodings, embedding scaled by sqrt(d), multi-head
attention with tf.layers.dense on 3-D inputs, tf.split/tf.concat over heads, matmul(transpose_b=True) scores,
key padding and causal masks built with tf.sequence_mask / tf.linalg.band_part and tf.where, layer
normalization from tf.nn.moments, residuals, a position-wise feed-forward, label-smoothed
softmax_cross_entropy, Adam with the Noam warmup schedule written with tf.minimum and tf.rsqrt.

Weights are loaded from numpy after initialization, so losses are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 8
VOCAB, D, HEADS, T = 16, 16, 4, 7


def positional_encoding(tf, length, d):
    pos = np.arange(length)[:, None]
    i = np.arange(d)[None, :]
    angle = pos / np.power(10000, (2 * (i // 2)) / d)
    pe = np.where(i % 2 == 0, np.sin(angle), np.cos(angle)).astype(np.float32)
    return tf.constant(pe)


def ln(tf, inputs, epsilon=1e-8, scope="ln"):
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        params_shape = inputs.get_shape()[-1:]
        mean, variance = tf.nn.moments(inputs, [-1], keep_dims=True)
        beta = tf.get_variable("beta", params_shape, initializer=tf.zeros_initializer())
        gamma = tf.get_variable("gamma", params_shape, initializer=tf.ones_initializer())
        normalized = (inputs - mean) / ((variance + epsilon) ** 0.5)
        return gamma * normalized + beta


def multihead_attention(tf, queries, keys, key_lengths, causal, training, scope):
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        Q = tf.layers.dense(queries, D, use_bias=True)
        K = tf.layers.dense(keys, D, use_bias=True)
        V = tf.layers.dense(keys, D, use_bias=True)
        Q_ = tf.concat(tf.split(Q, HEADS, axis=2), axis=0)
        K_ = tf.concat(tf.split(K, HEADS, axis=2), axis=0)
        V_ = tf.concat(tf.split(V, HEADS, axis=2), axis=0)
        outputs = tf.matmul(Q_, K_, transpose_b=True) / (D // HEADS) ** 0.5
        key_masks = tf.tile(tf.sequence_mask(key_lengths, tf.shape(keys)[1]), [HEADS, 1])
        key_masks = tf.tile(tf.expand_dims(key_masks, 1), [1, tf.shape(queries)[1], 1])
        paddings = tf.ones_like(outputs) * (-(2**32) + 1)
        outputs = tf.where(key_masks, outputs, paddings)
        if causal:
            diag_vals = tf.ones_like(outputs[0, :, :])
            tril = tf.linalg.band_part(diag_vals, -1, 0)
            masks = tf.tile(tf.expand_dims(tril, 0), [tf.shape(outputs)[0], 1, 1])
            outputs = tf.where(tf.equal(masks, 0), paddings, outputs)
        outputs = tf.nn.softmax(outputs)
        outputs = tf.layers.dropout(outputs, rate=0.0, training=training)
        outputs = tf.matmul(outputs, V_)
        outputs = tf.concat(tf.split(outputs, HEADS, axis=0), axis=2)
        outputs += queries
        return ln(tf, outputs)


def ff(tf, inputs, scope):
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        outputs = tf.layers.dense(inputs, 2 * D, activation=tf.nn.relu)
        outputs = tf.layers.dense(outputs, D)
        outputs += inputs
        return ln(tf, outputs)


def main(tf, steps=8):
    tf.reset_default_graph()
    rng = np.random.RandomState(50)
    lengths = rng.randint(3, T + 1, size=8).astype(np.int32)
    src = np.zeros((8, T), np.int32)
    for i, n in enumerate(lengths):
        src[i, :n] = rng.randint(2, VOCAB, size=n)
    tgt_in = np.concatenate([np.ones((8, 1), np.int32), src[:, :-1]], 1)

    x = tf.placeholder(tf.int32, [None, T])
    x_len = tf.placeholder(tf.int32, [None])
    y_in = tf.placeholder(tf.int32, [None, T])
    y = tf.placeholder(tf.int32, [None, T])
    training = tf.placeholder_with_default(True, [])
    embeddings = tf.get_variable("shared_weight_matrix", [VOCAB, D])
    pe = positional_encoding(tf, T, D)

    with tf.variable_scope("encoder"):
        enc = tf.nn.embedding_lookup(embeddings, x) * D**0.5 + pe
        enc = multihead_attention(tf, enc, enc, x_len, False, training, "self_attention")
        memory = ff(tf, enc, "ff")
    with tf.variable_scope("decoder"):
        dec = tf.nn.embedding_lookup(embeddings, y_in) * D**0.5 + pe
        dec = multihead_attention(
            tf, dec, dec, tf.fill([tf.shape(y_in)[0]], T), True, training, "self_attention"
        )
        dec = multihead_attention(tf, dec, memory, x_len, False, training, "vanilla_attention")
        dec = ff(tf, dec, "ff")
    logits = tf.einsum("ntd,kd->ntk", dec, embeddings)
    y_hat = tf.to_int32(tf.argmax(logits, axis=-1))
    nonpadding = tf.to_float(tf.not_equal(y, 0))
    y_ = tf.one_hot(y, VOCAB)
    ce = tf.losses.softmax_cross_entropy(
        tf.reshape(y_, [-1, VOCAB]),
        tf.reshape(logits, [-1, VOCAB]),
        label_smoothing=0.1,
        reduction=tf.losses.Reduction.NONE,
    )
    loss = tf.reduce_sum(tf.reshape(ce, tf.shape(y)) * nonpadding) / (tf.reduce_sum(nonpadding) + 1e-7)
    global_step = tf.train.get_or_create_global_step()
    step = tf.cast(global_step + 1, tf.float32)
    lr = 0.5 * D**-0.5 * tf.minimum(step * 4.0**-1.5, tf.rsqrt(step))
    train_op = tf.train.AdamOptimizer(lr, beta1=0.9, beta2=0.98, epsilon=1e-9).minimize(
        loss, global_step=global_step
    )
    acc = tf.reduce_sum(tf.to_float(tf.equal(y_hat, y)) * nonpadding) / tf.reduce_sum(nonpadding)

    feed = {x: src, x_len: lengths, y_in: tgt_in, y: src}
    losses, lrs = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k, v in enumerate(tf.trainable_variables()):
            if "gamma" not in v.name and "beta" not in v.name:
                v.load(fixed_init(v.shape.as_list(), 1600 + k, scale=0.2), sess)
        for _ in range(steps):
            _, l, r = sess.run([train_op, loss, lr], feed)
            losses.append(float(l))
            lrs.append(float(r))
        final_acc = float(sess.run(acc, {**feed, training: False}))
    return {
        "losses": losses,
        "learning_rates": lrs,
        "accuracy": final_acc,
        "trainable_count": len(tf.trainable_variables()),
        "trainable": [v.name for v in tf.trainable_variables()],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
