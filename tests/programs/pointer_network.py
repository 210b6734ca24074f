"""A tf.contrib-free pointer network (Vinyals et al.) learning to sort numbers, the way TF1 re-implementations
wrote it: an LSTM encoder by tf.nn.dynamic_rnn over the inputs, a decoder LSTMCell unrolled in Python whose
attention scores over the encoder states (v^T tanh(W1 e + W2 d), tf.einsum-free: tf.tensordot and
tf.expand_dims) are the output distribution itself, already-chosen positions masked by tf.one_hot sums and a
large negative constant, the next decoder input gathered from the encoder inputs by tf.batch_gather's TF1
form (tf.gather_nd with tf.stack of batch indices), teacher forcing during training with the targets from
tf.nn.top_k, tf.nn.sparse_softmax_cross_entropy_with_logits per step stacked by tf.stack, and greedy
decoding by tf.argmax at evaluation.

Weights start from numpy values (a custom initializer for the cells): every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5
SEQ = 5
HIDDEN = 8


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(210)
    data = rng.rand(16, SEQ, 1).astype(np.float32)

    def init(shape, dtype=None, partition_info=None):
        return tf.constant(fixed_init(list(shape), 2100 + int(np.prod(shape)), 0.3), dtype=dtype)

    inputs = tf.placeholder(tf.float32, [None, SEQ, 1], name="inputs")
    batch = tf.shape(inputs)[0]
    # Targets: the positions of the values in ascending order.
    _, descending = tf.nn.top_k(-tf.squeeze(inputs, 2), k=SEQ)
    targets = descending
    with tf.variable_scope("encoder", initializer=init):
        enc_cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
        enc_out, enc_state = tf.nn.dynamic_rnn(enc_cell, inputs, dtype=tf.float32)
    with tf.variable_scope("pointer", initializer=init):
        W1 = tf.get_variable("W1", [HIDDEN, HIDDEN])
        W2 = tf.get_variable("W2", [HIDDEN, HIDDEN])
        v = tf.get_variable("v", [HIDDEN])
        go = tf.get_variable("go", [1, 1])
    enc_proj = tf.tensordot(enc_out, W1, axes=1)  # [batch, SEQ, HIDDEN]
    batch_idx = tf.range(batch)

    def decode(teacher_forcing):
        with tf.variable_scope("decoder", initializer=init, reuse=tf.AUTO_REUSE):
            dec_cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
            state = enc_state
            dec_in = tf.tile(go, [batch, 1])
            mask = tf.zeros([batch, SEQ])
            logits_all, chosen = [], []
            for t in range(SEQ):
                out, state = dec_cell(dec_in, state)
                scores = tf.reduce_sum(v * tf.tanh(enc_proj + tf.expand_dims(tf.matmul(out, W2), 1)), axis=2)
                scores = scores - 1e6 * mask
                logits_all.append(scores)
                pick = targets[:, t] if teacher_forcing else tf.argmax(scores, axis=1, output_type=tf.int32)
                chosen.append(pick)
                mask = mask + tf.one_hot(pick, SEQ)
                dec_in = tf.gather_nd(inputs, tf.stack([batch_idx, pick], axis=1))
            return tf.stack(logits_all, axis=1), tf.stack(chosen, axis=1)

    train_logits, _ = decode(True)
    _, greedy = decode(False)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=train_logits))
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    exact = tf.reduce_mean(tf.cast(tf.reduce_all(tf.equal(greedy, targets), axis=1), tf.float32))
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l = sess.run([train_op, loss], {inputs: data})
            losses.append(float(l))
        g, t, e = sess.run([greedy, targets, exact], {inputs: data[:4]})
    return {
        "losses": losses,
        "greedy": g.tolist(),
        "targets": t.tolist(),
        "exact": float(e),
        "variables": sorted(v.op.name for v in tf.trainable_variables()),
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
