"""A TF1 sequence-to-sequence model with the loops written by hand, as pre-tf.contrib.seq2seq tutorials did: an
encoder through tf.nn.dynamic_rnn (GRUCell, sequence_length), a decoder trained with teacher forcing, and greedy
decoding in a tf.while_loop that writes a TensorArray and feeds back embedding_lookup(argmax); tf.cond picks
teacher forcing or not on an is_training placeholder; tf.map_fn and tf.scan post-process the decoded ids.

Every trainable variable is loaded from numpy after initialization, so losses and decodes are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 12
VOCAB = 12
GO = 1
EOS = 2


def make_batch(rng, batch):
    lengths = rng.randint(3, 7, size=batch)
    src = np.zeros((batch, 6), np.int32)
    tgt_in = np.zeros((batch, 7), np.int32)
    tgt_out = np.zeros((batch, 7), np.int32)
    mask = np.zeros((batch, 7), np.float32)
    for i, n in enumerate(lengths):
        seq = rng.randint(3, VOCAB, size=n)
        src[i, :n] = seq
        rev = seq[::-1]
        tgt_in[i, 0] = GO
        tgt_in[i, 1 : n + 1] = rev
        tgt_out[i, :n] = rev
        tgt_out[i, n] = EOS
        mask[i, : n + 1] = 1.0
    return src, lengths.astype(np.int32), tgt_in, tgt_out, mask


def main(tf, steps=12):
    tf.reset_default_graph()
    rng = np.random.RandomState(13)
    hidden, emb_dim, max_decode = 16, 8, 7

    encoder_inputs = tf.placeholder(tf.int32, [None, None], name="encoder_inputs")
    encoder_lengths = tf.placeholder(tf.int32, [None], name="encoder_lengths")
    decoder_inputs = tf.placeholder(tf.int32, [None, None], name="decoder_inputs")
    decoder_targets = tf.placeholder(tf.int32, [None, None], name="decoder_targets")
    target_mask = tf.placeholder(tf.float32, [None, None], name="target_mask")
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    batch_size = tf.shape(encoder_inputs)[0]

    embeddings = tf.get_variable("embeddings", [VOCAB, emb_dim])
    with tf.variable_scope("encoder"):
        enc_cell = tf.nn.rnn_cell.GRUCell(hidden)
        _, enc_state = tf.nn.dynamic_rnn(
            enc_cell,
            tf.nn.embedding_lookup(embeddings, encoder_inputs),
            sequence_length=encoder_lengths,
            dtype=tf.float32,
        )
    with tf.variable_scope("decoder") as dec_scope:
        dec_cell = tf.nn.rnn_cell.GRUCell(hidden)
        projection = tf.layers.Dense(VOCAB, name="projection")
        dec_outputs, _ = tf.nn.dynamic_rnn(
            dec_cell, tf.nn.embedding_lookup(embeddings, decoder_inputs), initial_state=enc_state
        )
        train_logits = projection(dec_outputs)

    crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=decoder_targets, logits=train_logits)
    loss = tf.reduce_sum(crossent * target_mask) / tf.cast(batch_size, tf.float32)
    params = tf.trainable_variables()
    gradients = tf.gradients(loss, params)
    clipped, global_norm = tf.clip_by_global_norm(gradients, 5.0)
    train_op = tf.train.AdamOptimizer(0.01).apply_gradients(zip(clipped, params))

    # Greedy decoding: feed back the argmax, stop at EOS or max_decode.
    with tf.variable_scope(dec_scope, reuse=True):

        def cond(t, state, prev_ids, finished, ta):
            return tf.logical_and(t < max_decode, tf.logical_not(tf.reduce_all(finished)))

        def body(t, state, prev_ids, finished, ta):
            inp = tf.nn.embedding_lookup(embeddings, prev_ids)
            with tf.variable_scope("rnn"):
                out, new_state = dec_cell(inp, state)
            logits = projection(out)
            ids = tf.argmax(logits, axis=1, output_type=tf.int32)
            ids = tf.where(finished, tf.fill(tf.shape(ids), EOS), ids)
            ta = ta.write(t, ids)
            return t + 1, new_state, ids, tf.logical_or(finished, tf.equal(ids, EOS)), ta

        ta0 = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        _, _, _, _, ta_final = tf.while_loop(
            cond,
            body,
            [tf.constant(0), enc_state, tf.fill([batch_size], GO), tf.zeros([batch_size], tf.bool), ta0],
        )
        decoded = tf.transpose(ta_final.stack())

    # Teacher forcing while training, the greedy decode otherwise (both [batch, time] ids).
    train_ids = tf.argmax(train_logits, axis=2, output_type=tf.int32)
    chosen = tf.cond(is_training, lambda: train_ids, lambda: decoded)
    lengths_out = tf.map_fn(lambda row: tf.reduce_sum(tf.cast(tf.not_equal(row, EOS), tf.int32)), decoded)
    running = tf.scan(lambda acc, x: acc + x, tf.cast(lengths_out, tf.float32), initializer=0.0)

    src, src_len, tgt_in, tgt_out, mask = make_batch(rng, 16)
    feed = {
        encoder_inputs: src,
        encoder_lengths: src_len,
        decoder_inputs: tgt_in,
        decoder_targets: tgt_out,
        target_mask: mask,
    }
    losses, norms = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k, v in enumerate(params):
            v.load(fixed_init(v.shape.as_list(), 600 + k, scale=0.3), sess)
        for _ in range(steps):
            _, l, g = sess.run([train_op, loss, global_norm], feed)
            losses.append(float(l))
            norms.append(float(g))
        dec, ch_train, lens, run = sess.run(
            [decoded, chosen, lengths_out, running], {**feed, is_training: True}
        )
        ch_eval = sess.run(chosen, {**feed, is_training: False})
    return {
        "losses": losses,
        "grad_norms": norms,
        "decoded": dec.tolist(),
        "chosen_train_shape": list(ch_train.shape),
        "chosen_eval_equals_decoded": bool(np.array_equal(ch_eval, dec)),
        "decoded_lengths": lens.tolist(),
        "running": run.tolist(),
        "trainable": [v.name for v in params],
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
