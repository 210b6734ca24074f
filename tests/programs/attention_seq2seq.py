"""A tf.contrib-free attention sequence-to-sequence model as TF1 tutorials wrote it by hand: a bidirectional
GRU encoder (tf.nn.bidirectional_dynamic_rnn with sequence_length), Bahdanau-style additive attention
computed per decoder step (tf.tile/expand_dims of the query, tanh(W1 h + W2 s), a masked softmax with
tf.sequence_mask, tf.reduce_sum of the weighted encoder outputs), a decoder LSTMCell stepped in a Python
loop under variable_scope reuse with teacher forcing, the per-step logits stacked with tf.stack, a loss
masked by target lengths through tf.contrib-free sequence_loss (sparse_softmax_cross_entropy * weights),
gradient clipping with clip_by_global_norm, and greedy decoding by tf.while_loop with a TensorArray.

The task is reversing short digit sequences. tf.set_random_seed makes the initial weights TF's bits, so
the losses are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 4

VOCAB = 12  # 0 = pad, 1 = GO, 2 = EOS, 3..11 digits
GO, EOS = 1, 2


def batch(rng, n, max_len):
    lens = rng.randint(2, max_len + 1, size=n)
    src = np.zeros((n, max_len), np.int32)
    tgt_in = np.zeros((n, max_len + 1), np.int32)
    tgt_out = np.zeros((n, max_len + 1), np.int32)
    for i, n_i in enumerate(lens):
        seq = rng.randint(3, VOCAB, size=n_i)
        src[i, :n_i] = seq
        rev = seq[::-1]
        tgt_in[i, 0] = GO
        tgt_in[i, 1 : n_i + 1] = rev
        tgt_out[i, :n_i] = rev
        tgt_out[i, n_i] = EOS
    return src, lens.astype(np.int32), tgt_in, tgt_out, (lens + 1).astype(np.int32)


def main(tf, steps=4):
    tf.reset_default_graph()
    tf.set_random_seed(14)
    rng = np.random.RandomState(14)
    max_len, emb_dim, units, bsz = 5, 8, 12, 6
    T = max_len + 1

    src = tf.placeholder(tf.int32, [None, max_len], name="src")
    src_len = tf.placeholder(tf.int32, [None], name="src_len")
    tgt_in = tf.placeholder(tf.int32, [None, T], name="tgt_in")
    tgt_out = tf.placeholder(tf.int32, [None, T], name="tgt_out")
    tgt_len = tf.placeholder(tf.int32, [None], name="tgt_len")

    embeddings = tf.get_variable("embeddings", [VOCAB, emb_dim])
    with tf.variable_scope("encoder"):
        fw, bw = tf.nn.rnn_cell.GRUCell(units), tf.nn.rnn_cell.GRUCell(units)
        (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
            fw, bw, tf.nn.embedding_lookup(embeddings, src), sequence_length=src_len, dtype=tf.float32
        )
        memory = tf.concat([out_fw, out_bw], axis=2)  # [B, S, 2u]
        enc_state = tf.layers.dense(tf.concat([st_fw, st_bw], 1), units, activation=tf.tanh, name="bridge")

    mask = tf.sequence_mask(src_len, max_len, dtype=tf.float32)
    with tf.variable_scope("attention"):
        W1 = tf.get_variable("W1", [2 * units, units])
        W2 = tf.get_variable("W2", [units, units])
        v = tf.get_variable("v", [units])
        keys = tf.tensordot(memory, W1, axes=[[2], [0]])  # [B, S, u]

    def attend(query):
        q = tf.expand_dims(tf.matmul(query, W2), 1)  # [B, 1, u]
        score = tf.reduce_sum(v * tf.tanh(keys + q), axis=2)  # [B, S]
        score = score * mask + (1.0 - mask) * -1e9
        alpha = tf.nn.softmax(score)
        context = tf.reduce_sum(tf.expand_dims(alpha, 2) * memory, axis=1)
        return context, alpha

    cell = tf.nn.rnn_cell.LSTMCell(units)
    out_layer = tf.layers.Dense(VOCAB, name="output_projection")

    def decode_step(x_t, state, reuse):
        with tf.variable_scope("decoder", reuse=reuse):
            context, alpha = attend(state.h)
            out, state = cell(tf.concat([x_t, context], 1), state)
            return out_layer(tf.concat([out, context], 1)), state, alpha

    batch_size = tf.shape(src)[0]
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.zeros([batch_size, units]), enc_state)
    dec_inputs = tf.unstack(tf.nn.embedding_lookup(embeddings, tgt_in), axis=1)
    logits, alphas = [], []
    for t, x_t in enumerate(dec_inputs):
        lo, state, alpha = decode_step(x_t, state, reuse=t > 0)
        logits.append(lo)
        alphas.append(alpha)
    logits = tf.stack(logits, axis=1)
    weights = tf.sequence_mask(tgt_len, T, dtype=tf.float32)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tgt_out, logits=logits)
    loss = tf.reduce_sum(xent * weights) / tf.reduce_sum(weights)
    params = tf.trainable_variables()
    grads, norm = tf.clip_by_global_norm(tf.gradients(loss, params), 1.0)
    train = tf.train.AdamOptimizer(0.01).apply_gradients(zip(grads, params))

    # Greedy decoding with tf.while_loop + TensorArray.
    def cond(t, *_):
        return t < T

    def body(t, prev, c, h, ta):
        lo, st, _ = decode_step(tf.nn.embedding_lookup(embeddings, prev), tf.nn.rnn_cell.LSTMStateTuple(c, h), True)
        nxt = tf.argmax(lo, axis=1, output_type=tf.int32)
        return t + 1, nxt, st.c, st.h, ta.write(t, nxt)

    ta = tf.TensorArray(tf.int32, size=T)
    _, _, _, _, ta = tf.while_loop(
        cond, body, [tf.constant(0), tf.fill([batch_size], GO), tf.zeros([batch_size, units]), enc_state, ta]
    )
    greedy = tf.transpose(ta.stack())

    losses, norms = [], []
    test = batch(np.random.RandomState(99), 4, max_len)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            s, sl, ti, to, tl = batch(rng, bsz, max_len)
            feed = {src: s, src_len: sl, tgt_in: ti, tgt_out: to, tgt_len: tl}
            _, l, n = sess.run([train, loss, norm], feed)
            losses.append(float(l))
            norms.append(float(n))
        g, a = sess.run([greedy, alphas[0]], {src: test[0], src_len: test[1]})
    return {
        "losses": losses,
        "global_norms": norms,
        "greedy_shape": list(g.shape),
        "greedy_in_vocab": bool(g.min() >= 0 and g.max() < VOCAB),
        "attention_rows_sum_to_one": bool(np.allclose(a.sum(1), 1.0, atol=1e-5)),
        "attention_masked": bool(np.all(a[np.arange(max_len)[None, :] >= test[1][:, None]] < 1e-6)),
        "variables": [p.name for p in params],
    }


if __name__ == "__main__":
    run_as_script(main, 4)
