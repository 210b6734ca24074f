"""Bucketing variable-length sequences in a TF1 tf.data pipeline: tf.data.experimental.bucket_by_sequence_length
(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
pad_to_bucket_boundary, no_padding) over a from_generator dataset with output_types/output_shapes, then
tf.data.experimental.group_by_window with a custom window, Dataset.padded_batch with drop_remainder,
tf.data.experimental.unbatch / rejection-free filter, Dataset.window + flat_map for sliding windows,
tf.data.experimental.scan for a running count, and a GRU classifier (dynamic_rnn with sequence_length)
trained on the bucketed batches.

Deterministic: no shuffling; the generator is fixed; weights from constant initializers.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def sequences():
    rng = np.random.RandomState(141)
    for i in range(24):
        n = int(rng.randint(1, 12))
        yield rng.randint(1, 30, size=n).astype(np.int64), i % 2


def drain(tf, ds, limit=50):
    nxt = ds.make_one_shot_iterator().get_next()
    got = []
    with tf.Session() as sess:
        try:
            for _ in range(limit):
                got.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
    return got


def main(tf, steps=5):
    out = {}
    tf.reset_default_graph()

    def make():
        return tf.data.Dataset.from_generator(sequences, output_types=(tf.int64, tf.int32),
                                              output_shapes=(tf.TensorShape([None]), tf.TensorShape([])))

    bucketed = make().apply(tf.data.experimental.bucket_by_sequence_length(
        element_length_func=lambda seq, label: tf.shape(seq)[0],
        bucket_boundaries=[4, 8], bucket_batch_sizes=[4, 3, 2],
        padded_shapes=([None], []), padding_values=(tf.constant(0, tf.int64), 0)))
    got = drain(tf, bucketed)
    out["bucketed"] = [[b[0].shape[0], b[0].shape[1], b[1].tolist(), int(b[0].sum())] for b in got]
    tf.reset_default_graph()
    boundary = make().apply(tf.data.experimental.bucket_by_sequence_length(
        lambda seq, label: tf.shape(seq)[0], [4, 13], [4, 3, 2], pad_to_bucket_boundary=True))
    out["to_boundary"] = [list(b[0].shape) for b in drain(tf, boundary)]
    tf.reset_default_graph()
    windows = make().apply(tf.data.experimental.group_by_window(
        key_func=lambda seq, label: tf.cast(label, tf.int64),
        reduce_func=lambda key, ds: ds.padded_batch(5, padded_shapes=([None], [])),
        window_size=5))
    out["windows"] = [[list(b[0].shape), b[1].tolist()] for b in drain(tf, windows)]
    tf.reset_default_graph()
    dropped = make().padded_batch(5, padded_shapes=([12], []), drop_remainder=True)
    out["dropped_shapes"] = [str(s) for s in dropped.output_shapes]
    out["dropped"] = [list(b[0].shape) for b in drain(tf, dropped)]
    tf.reset_default_graph()
    sliding = tf.data.Dataset.range(10).window(4, shift=2, drop_remainder=True).flat_map(lambda w: w.batch(4))
    out["sliding"] = [b.tolist() for b in drain(tf, sliding)]
    tf.reset_default_graph()
    running = tf.data.Dataset.range(6).apply(tf.data.experimental.scan(tf.constant(0, tf.int64),
                                                                       lambda s, x: (s + x, s * 10 + x)))
    out["scan"] = [int(v) for v in drain(tf, running)]
    tf.reset_default_graph()
    unb = tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(4, 3)).batch(3).apply(tf.data.experimental.unbatch())
    out["unbatch"] = [b.tolist() for b in drain(tf, unb)]

    # Train a GRU on the bucketed batches.
    tf.reset_default_graph()
    ds = make().apply(tf.data.experimental.bucket_by_sequence_length(
        lambda seq, label: tf.shape(seq)[0], [4, 8], [4, 4, 4])).repeat()
    seq, label = ds.make_one_shot_iterator().get_next()
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(seq, 0), tf.int32), 1)
    emb = tf.Variable(fixed_init([30, 6], 1400, 0.5))
    cell = tf.nn.rnn_cell.GRUCell(8, kernel_initializer=tf.constant_initializer(0.1))
    _, state = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(emb, seq), sequence_length=lengths, dtype=tf.float32)
    logits = tf.layers.dense(state, 2, kernel_initializer=tf.constant_initializer(fixed_init([8, 2], 1401, 0.3)))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label, logits=logits))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out["losses"] = [float(sess.run([train, loss])[1]) for _ in range(steps)]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
