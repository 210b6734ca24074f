"""The classic TF1 speech-recognition recipe (e.g. the many "CTC with TensorFlow" tutorials): features
[batch, time, dims] through a bidirectional LSTM (tf.nn.bidirectional_dynamic_rnn with seq_len), a
time-distributed projection done with reshape/matmul/reshape, time-major logits by tf.transpose, targets as a
tf.sparse_placeholder fed from a sparse_tuple_from helper, tf.nn.ctc_loss(targets, logits, seq_len),
MomentumOptimizer, tf.nn.ctc_greedy_decoder and tf.nn.ctc_beam_search_decoder, and the label error rate by
tf.reduce_mean(tf.edit_distance(tf.cast(decoded[0], tf.int32), targets)).

tf.set_random_seed makes the initial weights TF's bits, so the losses are deterministic.
"""

import numpy as np
from _common import run_as_script

TF_STEPS = 4

NUM_CLASSES = 6  # 5 labels + blank


def sparse_tuple_from(sequences, dtype=np.int32):
    indices, values = [], []
    for n, seq in enumerate(sequences):
        indices.extend(zip([n] * len(seq), range(len(seq))))
        values.extend(seq)
    indices = np.asarray(indices, dtype=np.int64)
    values = np.asarray(values, dtype=dtype)
    shape = np.asarray([len(sequences), np.asarray(indices).max(0)[1] + 1], dtype=np.int64)
    return indices, values, shape


def make_batch(rng, n, max_t=12, dims=5):
    feats = np.zeros((n, max_t, dims), np.float32)
    lens, labels = [], []
    for i in range(n):
        lab = list(rng.randint(0, NUM_CLASSES - 1, size=rng.randint(1, 4)))
        t = 0
        for c in lab:  # each label shows up as 2-3 frames with a bump in feature c
            for _ in range(rng.randint(2, 4)):
                feats[i, t] = rng.randn(dims) * 0.1
                feats[i, t, c] += 1.0
                t += 1
            t += 1
        lens.append(t)
        labels.append(lab)
    return feats, np.asarray(lens, np.int32), labels


def main(tf, steps=4):
    tf.reset_default_graph()
    tf.set_random_seed(17)
    rng = np.random.RandomState(17)
    num_hidden, dims = 8, 5

    inputs = tf.placeholder(tf.float32, [None, None, dims])
    targets = tf.sparse_placeholder(tf.int32)
    seq_len = tf.placeholder(tf.int32, [None])

    cell_fw = tf.nn.rnn_cell.LSTMCell(num_hidden, state_is_tuple=True)
    cell_bw = tf.nn.rnn_cell.LSTMCell(num_hidden, state_is_tuple=True)
    (ofw, obw), _ = tf.nn.bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, seq_len, dtype=tf.float32)
    outputs = tf.concat([ofw, obw], 2)
    shape = tf.shape(inputs)
    batch_s, max_timesteps = shape[0], shape[1]  # noqa: F841 (as the tutorials)
    outputs = tf.reshape(outputs, [-1, 2 * num_hidden])
    W = tf.Variable(tf.truncated_normal([2 * num_hidden, NUM_CLASSES], stddev=0.1))
    b = tf.Variable(tf.constant(0.0, shape=[NUM_CLASSES]))
    logits = tf.matmul(outputs, W) + b
    logits = tf.reshape(logits, [batch_s, -1, NUM_CLASSES])
    logits = tf.transpose(logits, (1, 0, 2))

    loss = tf.nn.ctc_loss(targets, logits, seq_len)
    cost = tf.reduce_mean(loss)
    optimizer = tf.train.MomentumOptimizer(0.05, 0.9).minimize(cost)

    decoded, log_prob = tf.nn.ctc_greedy_decoder(logits, seq_len)
    beam, beam_log_prob = tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=4, top_paths=2)
    ler = tf.reduce_mean(tf.edit_distance(tf.cast(decoded[0], tf.int32), targets))

    costs, lers = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            feats, lens, labels = make_batch(rng, 4)
            feed = {inputs: feats, targets: sparse_tuple_from(labels), seq_len: lens}
            c, _, e = sess.run([cost, optimizer, ler], feed)
            costs.append(float(c))
            lers.append(float(e))
        feats, lens, labels = make_batch(np.random.RandomState(5), 3)
        feed = {inputs: feats, targets: sparse_tuple_from(labels), seq_len: lens}
        d, lp, bm, blp, per_example = sess.run([decoded[0], log_prob, beam, beam_log_prob, loss], feed)
    return {
        "losses": costs,
        "label_error_rates": lers,
        "per_example_loss": per_example.tolist(),
        "greedy": [d.indices.tolist(), d.values.tolist(), d.dense_shape.tolist()],
        "greedy_log_prob": lp.ravel().tolist(),
        "beam_paths": len(bm),
        "beam_dense_shapes": [p.dense_shape.tolist() for p in bm],
        "beam_log_prob": blp.tolist(),
        "logits_shape": logits.get_shape().as_list(),
    }


if __name__ == "__main__":
    run_as_script(main, 4)
