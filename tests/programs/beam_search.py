"""Beam-search decoding written by hand in a TF1 graph (before tf.contrib.seq2seq.BeamSearchDecoder, as
NMT/captioning repositories did it): a small GRU language model whose step function is shared through
tf.variable_scope(reuse=tf.AUTO_REUSE), a tf.while_loop over (time, beams, scores, finished, state) with
shape_invariants for the growing beam history, log-probabilities by tf.nn.log_softmax, candidates flattened to
[batch, beam * vocab] and chosen with tf.nn.top_k, parents and tokens recovered by floordiv/floormod,
histories re-ordered by tf.batch_gather-style tf.gather_nd, finished beams frozen with tf.where and
length-normalized scores; plus greedy decoding through the same step and tf.nn.ctc_greedy_decoder /
tf.nn.ctc_beam_search_decoder on the logits sequence of the best beam, and tf.edit_distance between them.

Weights start from numpy values: the decoded ids and scores are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 4
VOCAB = 7
EOS = 1
BEAM = 3
MAX_LEN = 6


def main(tf, steps=4):
    tf.reset_default_graph()
    batch = 2
    hidden = 8
    start = tf.placeholder(tf.int32, [None], name="start")

    def step_fn(tokens, state):
        with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE):
            emb = tf.get_variable("embedding", initializer=fixed_init([VOCAB, hidden], 900, 0.5))
            # A TF1 custom initializer (shape, dtype, partition_info) for the gates' and candidate kernels.
            def kernel_init(shape, dtype=None, partition_info=None):
                return tf.constant(fixed_init(list(shape), 901 + int(shape[1]), 0.4), dtype=dtype)

            cell = tf.nn.rnn_cell.GRUCell(hidden, kernel_initializer=kernel_init,
                                          bias_initializer=tf.zeros_initializer(), name="gru")
            out, new_state = cell(tf.nn.embedding_lookup(emb, tokens), state)
            proj = tf.get_variable("proj", initializer=fixed_init([hidden, VOCAB], 902, 0.8))
            return tf.matmul(out, proj), new_state

    # --- beam search
    init_state = tf.zeros([batch * BEAM, hidden])
    init_tokens = tf.reshape(tf.tile(tf.expand_dims(start, 1), [1, BEAM]), [-1])
    init_scores = tf.tile(tf.constant([[0.0] + [-1e9] * (BEAM - 1)]), [batch, 1])
    init_hist = tf.reshape(init_tokens, [batch, BEAM, 1])
    init_finished = tf.zeros([batch, BEAM], tf.bool)

    def cond(t, tokens, hist, scores, finished, state):
        return tf.logical_and(t < MAX_LEN, tf.logical_not(tf.reduce_all(finished)))

    def body(t, tokens, hist, scores, finished, state):
        logits, new_state = step_fn(tokens, state)
        logp = tf.reshape(tf.nn.log_softmax(logits), [batch, BEAM, VOCAB])
        # A finished beam only extends with EOS at no cost.
        eos_only = tf.one_hot(tf.fill([batch, BEAM], EOS), VOCAB, on_value=0.0, off_value=-1e9)
        logp = tf.where(tf.reshape(tf.tile(tf.expand_dims(finished, 2), [1, 1, VOCAB]), [batch, BEAM, VOCAB]),
                        eos_only, logp)
        total = tf.expand_dims(scores, 2) + logp
        flat = tf.reshape(total, [batch, BEAM * VOCAB])
        top_scores, top_idx = tf.nn.top_k(flat, k=BEAM)
        parents = top_idx // VOCAB
        words = top_idx % VOCAB
        batch_idx = tf.tile(tf.expand_dims(tf.range(batch), 1), [1, BEAM])
        gather_idx = tf.stack([batch_idx, parents], axis=2)
        hist = tf.concat([tf.gather_nd(hist, gather_idx), tf.expand_dims(words, 2)], axis=2)
        finished = tf.logical_or(tf.gather_nd(finished, gather_idx), tf.equal(words, EOS))
        flat_parents = tf.reshape(parents + batch_idx * BEAM, [-1])
        new_state = tf.gather(new_state, flat_parents)
        return t + 1, tf.reshape(words, [-1]), hist, top_scores, finished, new_state

    loop_vars = (tf.constant(0), init_tokens, init_hist, init_scores, init_finished, init_state)
    invariants = (
        tf.TensorShape([]), tf.TensorShape([None]), tf.TensorShape([batch, BEAM, None]),
        tf.TensorShape([batch, BEAM]), tf.TensorShape([batch, BEAM]), tf.TensorShape([None, hidden]),
    )
    t_final, _, hist, scores, finished, _ = tf.while_loop(cond, body, loop_vars, shape_invariants=invariants)
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(hist[:, :, 1:], EOS), tf.float32), axis=2) + 1.0
    normalized = scores / lengths
    best = tf.argmax(normalized, axis=1, output_type=tf.int32)
    best_hist = tf.gather_nd(hist, tf.stack([tf.range(batch), best], axis=1))

    # --- greedy decoding through the same step, collecting logits in a TensorArray
    def g_body(t, tokens, state, ta):
        logits, state = step_fn(tokens, state)
        return t + 1, tf.argmax(logits, axis=1, output_type=tf.int32), state, ta.write(t, logits)

    _, _, _, ta = tf.while_loop(
        lambda t, *_: t < MAX_LEN, g_body,
        (tf.constant(0), start, tf.zeros([batch, hidden]), tf.TensorArray(tf.float32, size=MAX_LEN)))
    seq_logits = ta.stack()  # [time, batch, vocab]
    greedy_ids = tf.transpose(tf.argmax(seq_logits, axis=2, output_type=tf.int32))
    seq_len = tf.fill([batch], MAX_LEN)
    (ctc_greedy,), greedy_lp = tf.nn.ctc_greedy_decoder(seq_logits, seq_len)
    ctc_beams, beam_lp = tf.nn.ctc_beam_search_decoder(seq_logits, seq_len, beam_width=4, top_paths=2)
    distance = tf.edit_distance(tf.cast(ctc_greedy, tf.int32), tf.cast(ctc_beams[0], tf.int32))

    out = {"hist_shape": str(hist.shape)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        runs = []
        for s in range(steps):
            feed = {start: [(2 + s) % VOCAB, (5 + s) % VOCAB]}
            r = sess.run({"t": t_final, "hist": hist, "scores": scores, "finished": finished,
                          "normalized": normalized, "best": best_hist, "greedy": greedy_ids}, feed)
            runs.append({k: np.asarray(v).tolist() for k, v in r.items()})
        out["runs"] = runs
        feed = {start: [3, 4]}
        g, glp, beams, blp, dist = sess.run([ctc_greedy, greedy_lp, ctc_beams, beam_lp, distance], feed)
        out["ctc_greedy"] = {"indices": g.indices.tolist(), "values": g.values.tolist(),
                             "dense_shape": g.dense_shape.tolist(), "log_prob": glp.ravel().tolist()}
        out["ctc_beams"] = [{"indices": p.indices.tolist(), "values": p.values.tolist()} for p in beams]
        out["ctc_beam_log_probs"] = blp.ravel().tolist()
        out["edit_distance"] = dist.tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
