"""A tf.contrib-free linear-chain CRF tagger, as TF1 NER/POS tutorials wrote it when tf.contrib.crf was
not at hand: a BiLSTM-free emission layer (embedding_lookup + dense), a transition matrix variable, the
log-partition function by the forward algorithm in tf.scan (tf.reduce_logsumexp over expanded previous
alphas plus transitions, masked by tf.sequence_mask so padded steps carry the previous alphas through
tf.where), the gold path score from tf.gather_nd of emissions and transitions, the negative log-likelihood
minimized by Adam, and Viterbi decoding by a second tf.scan keeping argmax backpointers (tf.argmax over
axis 1, tf.reduce_max) followed by a backtrack with tf.scan(reverse=True) over the backpointers.

Weights start from numpy values: losses and decoded tags are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 8
NUM_TAGS = 4


def main(tf, steps=8):
    tf.reset_default_graph()
    rng = np.random.RandomState(130)
    batch, max_len, vocab = 6, 7, 20
    lengths = np.array([7, 5, 3, 6, 7, 4], np.int32)
    words = rng.randint(1, vocab, size=(batch, max_len)).astype(np.int32)
    tags = (words % NUM_TAGS).astype(np.int32)
    for i, n in enumerate(lengths):
        words[i, n:] = 0
        tags[i, n:] = 0

    word_ids = tf.placeholder(tf.int32, [None, None], name="word_ids")
    labels = tf.placeholder(tf.int32, [None, None], name="labels")
    seq_len = tf.placeholder(tf.int32, [None], name="sequence_lengths")
    emb = tf.get_variable("embeddings", initializer=fixed_init([vocab, 8], 1300, 0.5))
    x = tf.nn.embedding_lookup(emb, word_ids)
    unary = tf.layers.dense(x, NUM_TAGS, kernel_initializer=tf.constant_initializer(fixed_init([8, NUM_TAGS], 1301, 0.5)))
    transitions = tf.get_variable("transitions", initializer=fixed_init([NUM_TAGS, NUM_TAGS], 1302, 0.3))
    mask = tf.sequence_mask(seq_len, tf.shape(word_ids)[1])

    # Forward algorithm over time (time-major for tf.scan).
    unary_t = tf.transpose(unary, [1, 0, 2])
    mask_t = tf.transpose(mask, [1, 0])

    def forward_step(alpha, inputs):
        u, m = inputs
        scores = tf.expand_dims(alpha, 2) + tf.expand_dims(transitions, 0)
        new_alpha = tf.reduce_logsumexp(scores, axis=1) + u
        return tf.where(m, new_alpha, alpha)

    alphas = tf.scan(forward_step, (unary_t[1:], mask_t[1:]), initializer=unary_t[0])
    log_norm = tf.reduce_logsumexp(alphas[-1], axis=1)

    # Gold path score.
    b_idx = tf.tile(tf.expand_dims(tf.range(tf.shape(word_ids)[0]), 1), [1, tf.shape(word_ids)[1]])
    t_idx = tf.tile(tf.expand_dims(tf.range(tf.shape(word_ids)[1]), 0), [tf.shape(word_ids)[0], 1])
    unary_scores = tf.reduce_sum(
        tf.gather_nd(unary, tf.stack([b_idx, t_idx, labels], axis=2)) * tf.cast(mask, tf.float32), axis=1)
    pair = tf.stack([labels[:, :-1], labels[:, 1:]], axis=2)
    binary_scores = tf.reduce_sum(
        tf.gather_nd(transitions, pair) * tf.cast(mask[:, 1:], tf.float32), axis=1)
    log_likelihood = unary_scores + binary_scores - log_norm
    loss = tf.reduce_mean(-log_likelihood)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)

    # Viterbi.
    def viterbi_step(state, inputs):
        score, _ = state
        u, m = inputs
        cand = tf.expand_dims(score, 2) + tf.expand_dims(transitions, 0)
        best_prev = tf.argmax(cand, axis=1, output_type=tf.int32)
        new_score = tf.reduce_max(cand, axis=1) + u
        keep = tf.tile(tf.expand_dims(tf.range(NUM_TAGS), 0), [tf.shape(score)[0], 1])
        return tf.where(m, new_score, score), tf.where(m, best_prev, keep)

    init_bp = tf.zeros_like(tf.cast(unary_t[0], tf.int32))
    scores, backpointers = tf.scan(viterbi_step, (unary_t[1:], mask_t[1:]), initializer=(unary_t[0], init_bp))
    last_tag = tf.argmax(scores[-1], axis=1, output_type=tf.int32)
    best_score = tf.reduce_max(scores[-1], axis=1)

    def back_step(tag, bp):
        return tf.reduce_sum(bp * tf.one_hot(tag, NUM_TAGS, dtype=tf.int32), axis=1)

    earlier = tf.scan(back_step, backpointers, initializer=last_tag, reverse=True)
    path = tf.transpose(tf.concat([earlier, tf.expand_dims(last_tag, 0)], axis=0)[1:], [1, 0])
    path = tf.concat([tf.transpose(earlier[:1], [1, 0]), path], axis=1)

    feed = {word_ids: words, labels: tags, seq_len: lengths}
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first_norm = sess.run(log_norm, feed)
        for _ in range(steps):
            _, l = sess.run([train_op, loss], feed)
            losses.append(float(l))
        decoded, best = sess.run([path, best_score], feed)
    accuracy = float(np.mean([(decoded[i, :n] == tags[i, :n]).mean() for i, n in enumerate(lengths)]))
    return {
        "losses": losses,
        "first_log_norm": first_norm.tolist(),
        "decoded": decoded.tolist(),
        "best_scores": best.tolist(),
        "accuracy": accuracy,
        "scan_name": alphas.name,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
