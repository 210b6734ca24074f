"""A classic TF1 word-level language model: tf.nn.embedding_lookup into tf.nn.rnn_cell.GRUCell layers stacked
by MultiRNNCell, tf.nn.dynamic_rnn with an initial state from cell.zero_state carried across batches through
feed_dict (the final state fetched and fed back, as the PTB model does), a softmax layer trained with
tf.nn.sampled_softmax_loss (weights [vocab, hidden], num_sampled, num_classes) and evaluated with the full
softmax (sparse_softmax_cross_entropy_with_logits), perplexity from the mean loss, gradients clipped by
tf.clip_by_global_norm, AdamOptimizer, and greedy generation one word at a time.

tf.set_random_seed makes the initial weights and the sampled candidates (log-uniform sampler) TF's bits,
so the losses are deterministic (the candidate samplers are TF-exact since d95b961).
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    tf.set_random_seed(13)
    vocab_size, hidden, num_layers = 30, 16, 2
    batch_size, num_steps, num_sampled = 4, 6, 8
    rng = np.random.RandomState(13)
    # A corpus with structure: word k is often followed by k + 1.
    corpus = [int(rng.randint(vocab_size))]
    for _ in range(600):
        corpus.append((corpus[-1] + 1) % vocab_size if rng.rand() < 0.7 else int(rng.randint(vocab_size)))
    data = np.asarray(corpus, np.int32)

    inputs = tf.placeholder(tf.int32, [batch_size, num_steps], name="inputs")
    targets = tf.placeholder(tf.int32, [batch_size, num_steps], name="targets")
    embedding = tf.get_variable("embedding", [vocab_size, hidden])
    emb = tf.nn.embedding_lookup(embedding, inputs)

    cells = [tf.nn.rnn_cell.GRUCell(hidden) for _ in range(num_layers)]
    cell = tf.nn.rnn_cell.MultiRNNCell(cells)
    initial_state = cell.zero_state(batch_size, tf.float32)
    outputs, final_state = tf.nn.dynamic_rnn(cell, emb, initial_state=initial_state)
    output = tf.reshape(outputs, [-1, hidden])

    softmax_w = tf.get_variable("softmax_w", [vocab_size, hidden])
    softmax_b = tf.get_variable("softmax_b", [vocab_size], initializer=tf.zeros_initializer())
    labels = tf.reshape(targets, [-1, 1])
    sampled = tf.nn.sampled_softmax_loss(
        weights=softmax_w, biases=softmax_b, labels=labels, inputs=output,
        num_sampled=num_sampled, num_classes=vocab_size,
    )
    train_loss = tf.reduce_mean(sampled)
    logits = tf.matmul(output, softmax_w, transpose_b=True) + softmax_b
    full_loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(targets, [-1]), logits=logits)
    )

    tvars = tf.trainable_variables()
    grads, global_norm = tf.clip_by_global_norm(tf.gradients(train_loss, tvars), 5.0)
    train_op = tf.train.AdamOptimizer(0.01).apply_gradients(zip(grads, tvars))

    # Generation: one word in, the next word out, state carried.
    gen_in = tf.placeholder(tf.int32, [1, 1])
    gen_state = cell.zero_state(1, tf.float32)
    gen_out, gen_final = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, gen_in), initial_state=gen_state)
    gen_logits = tf.matmul(tf.reshape(gen_out, [-1, hidden]), softmax_w, transpose_b=True) + softmax_b
    next_word = tf.argmax(gen_logits, 1)

    losses, full_losses, norms = [], [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        state = sess.run(initial_state)
        epoch_size = (len(data) - 1) // (batch_size * num_steps)
        for step in range(steps):
            i = step % epoch_size
            x = np.stack([data[(b * epoch_size + i) * num_steps:][:num_steps] for b in range(batch_size)])
            y = np.stack([data[(b * epoch_size + i) * num_steps + 1:][:num_steps] for b in range(batch_size)])
            feed = {inputs: x, targets: y}
            for j, s in enumerate(initial_state):
                feed[s] = state[j]
            # The full-softmax loss is evaluated before the step: fetched with train_op, TF may read softmax_w
            # (a ref variable) after apply_gradients updated it, since the update does not wait for it.
            fl = sess.run(full_loss, feed)
            l, n, state, _ = sess.run([train_loss, global_norm, final_state, train_op], feed)
            losses.append(float(l))
            full_losses.append(float(fl))
            norms.append(float(n))
        word, words = 3, []
        st = sess.run(gen_state)
        for _ in range(5):
            feed = {gen_in: [[word]]}
            for j, s in enumerate(gen_state):
                feed[s] = st[j]
            w, st = sess.run([next_word, gen_final], feed)
            word = int(w[0])
            words.append(word)
    return {
        "losses": losses,
        "full_losses": full_losses,
        "perplexity": float(np.exp(np.mean(full_losses))),
        "global_norms": norms,
        "generated": words,
        "state_structure": [type(final_state).__name__, len(final_state), final_state[0].get_shape().as_list()],
        "variables": [v.name for v in tvars],
    }


if __name__ == "__main__":
    run_as_script(main, 5)
