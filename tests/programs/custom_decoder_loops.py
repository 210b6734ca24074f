"""Custom decoding loops in TF1 graphs, as seq2seq code wrote them before tf.contrib.seq2seq (and after it left):
a greedy decoder by tf.nn.raw_rnn whose loop_fn feeds back the embedding of the argmax (emit_structure,
loop_state carrying a TensorArray of chosen ids, elements_finished on an EOS id or the max length), the same
decoder by a hand-written tf.while_loop with TensorArrays and a finished mask (tf.logical_or, tf.where
to freeze finished rows), teacher forcing by tf.nn.dynamic_rnn over the shifted targets, and the training loss
with tf.contrib-free sequence_loss (tf.sequence_mask weights over sparse_softmax_cross_entropy_with_logits).

Deterministic: weights from numpy (the GRU's loaded after initialization), no sampling.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    vocab, emb_dim, units, batch, max_len, go, eos = 12, 6, 10, 3, 7, 1, 2
    rng = np.random.RandomState(191)
    targets = rng.randint(3, vocab, size=(batch, max_len))
    lengths = np.array([7, 4, 5], np.int32)
    for i, n in enumerate(lengths):
        targets[i, n - 1] = eos
        targets[i, n:] = 0
    out = {}
    tf.reset_default_graph()
    embedding = tf.Variable(fixed_init([vocab, emb_dim], 1900, 0.5), name="embedding")
    proj_w = tf.Variable(fixed_init([units, vocab], 1901, 0.5), name="proj_w")
    proj_b = tf.Variable(np.zeros(vocab, np.float32), name="proj_b")
    init_state = tf.constant(fixed_init([batch, units], 1902, 0.5))
    cell = tf.nn.rnn_cell.GRUCell(units)

    def project(h):
        return tf.matmul(h, proj_w) + proj_b

    go_emb = tf.nn.embedding_lookup(embedding, tf.fill([batch], go))

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            ids_ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
            return (tf.zeros([batch], tf.bool), go_emb, init_state, tf.zeros([vocab]), ids_ta)
        logits = project(cell_output)
        ids = tf.argmax(logits, axis=1, output_type=tf.int32)
        loop_state = loop_state.write(time - 1, ids)
        finished = tf.logical_or(tf.equal(ids, eos), time >= max_len)
        return (finished, tf.nn.embedding_lookup(embedding, ids), cell_state, logits, loop_state)

    with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE):
        outputs_ta, final_state, ids_ta = tf.nn.raw_rnn(cell, loop_fn)
    raw_logits = tf.transpose(outputs_ta.stack(), [1, 0, 2])
    raw_ids = tf.transpose(ids_ta.stack())

    # The same greedy decoder as a while_loop with a finished mask.
    def cond(t, state, inp, finished, ta):
        return tf.logical_and(t < max_len, tf.logical_not(tf.reduce_all(finished)))

    def body(t, state, inp, finished, ta):
        with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE):
            h, new_state = cell(inp, state)
        ids = tf.argmax(project(h), axis=1, output_type=tf.int32)
        ids = tf.where(finished, tf.zeros_like(ids), ids)
        new_state = tf.where(finished, state, new_state)
        return (t + 1, new_state, tf.nn.embedding_lookup(embedding, ids),
                tf.logical_or(finished, tf.equal(ids, eos)), ta.write(t, ids))

    _, loop_state, _, loop_finished, loop_ta = tf.while_loop(
        cond, body, [tf.constant(0), init_state, go_emb, tf.zeros([batch], tf.bool),
                     tf.TensorArray(tf.int32, size=max_len)])
    loop_ids = tf.transpose(loop_ta.stack())

    # Teacher forcing and a masked sequence loss.
    dec_in = tf.concat([tf.fill([batch, 1], go), tf.constant(targets[:, :-1].astype(np.int32))], 1)
    with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE):
        tf_out, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, dec_in), initial_state=init_state,
                                      sequence_length=tf.constant(lengths))
    logits = tf.tensordot(tf_out, proj_w, axes=1) + proj_b
    weights = tf.sequence_mask(lengths, max_len, dtype=tf.float32)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(targets.astype(np.int32)), logits=logits)
    loss = tf.reduce_sum(xent * weights) / tf.reduce_sum(weights)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i, v in enumerate(sorted(tf.trainable_variables(), key=lambda v: v.op.name)):
            if v.op.name.startswith("decoder/"):
                v.load(fixed_init(v.shape.as_list(), 1910 + i, 0.3), sess)
        r = sess.run({"raw_ids": raw_ids, "raw_logits_sum": tf.reduce_sum(raw_logits), "final": final_state,
                      "loop_ids": loop_ids, "loop_state": loop_state, "loop_finished": loop_finished})
        out["losses"] = [float(sess.run([train, loss])[1]) for _ in range(steps)]
        out["after_ids"] = sess.run(loop_ids).tolist()
    out["raw_ids"] = r["raw_ids"].tolist()
    out["raw_logits_sum"] = float(r["raw_logits_sum"])
    out["raw_final"] = r["final"].ravel().tolist()
    out["loop_ids"] = r["loop_ids"].tolist()
    out["loop_state"] = r["loop_state"].ravel().tolist()
    out["loop_finished"] = r["loop_finished"].tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
