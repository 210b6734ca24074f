"""A classic TF1 sparse click-through-rate model (the wide part of wide & deep, as hand-written before
feature columns): hashed feature ids fed through tf.sparse_placeholder as tf.SparseTensorValue, a wide linear
term by tf.nn.embedding_lookup_sparse(combiner="sum") over a [hash_buckets, 1] weight, an embedding part with
combiner="mean"/"sqrtn" and sparse weights, tf.sparse_tensor_dense_matmul of a dense weight, sigmoid
cross-entropy, FtrlOptimizer with l1/l2 regularization (the CTR classic) and Adagrad for the embeddings in one
group, tf.sparse_reduce_sum / tf.sparse_tensor_to_dense / tf.sparse_to_indicator for feature statistics,
and AUC from tf.metrics.auc with local variables.

Weights start from numpy or zeros, so everything is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6

BUCKETS = 50
FIELDS = 4


def make_batch(rng, n):
    """n examples of FIELDS hashed categorical features with 1-3 ids each and a label that depends on ids."""
    indices, ids, vals, labels = [], [], [], []
    for i in range(n):
        col = 0
        score = 0.0
        for f in range(FIELDS):
            for _ in range(rng.randint(1, 4)):
                h = int(rng.randint(f * 12, f * 12 + 12))
                indices.append([i, col])
                ids.append(h)
                vals.append(float(rng.randint(1, 4)))
                score += 1.0 if h % 3 == 0 else -0.5
                col += 1
        labels.append([1.0 if score > 0 else 0.0])
    width = max(i[1] for i in indices) + 1
    return (np.asarray(indices, np.int64), np.asarray(ids, np.int64), np.asarray(vals, np.float32),
            [n, width], np.asarray(labels, np.float32))


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(15)
    sp_ids = tf.sparse_placeholder(tf.int64, name="ids")
    sp_vals = tf.sparse_placeholder(tf.float32, name="vals")
    y = tf.placeholder(tf.float32, [None, 1], name="y")

    with tf.variable_scope("wide"):
        wide_w = tf.get_variable("w", [BUCKETS, 1], initializer=tf.zeros_initializer())
        wide_b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        wide = tf.nn.embedding_lookup_sparse(wide_w, sp_ids, sp_vals, combiner="sum") + wide_b
    with tf.variable_scope("deep"):
        emb = tf.get_variable("emb", initializer=tf.constant(fixed_init([BUCKETS, 6], 1501)))
        mean_emb = tf.nn.embedding_lookup_sparse(emb, sp_ids, None, combiner="mean")
        sqrtn_emb = tf.nn.embedding_lookup_sparse(emb, sp_ids, sp_vals, combiner="sqrtn")
        dense_w = tf.get_variable("dense_w", initializer=tf.constant(fixed_init([12, 1], 1502)))
        deep = tf.matmul(tf.concat([mean_emb, sqrtn_emb], 1), dense_w)
    # A one-hot-by-id sparse matrix times a dense weight.
    one_hot = tf.SparseTensor(
        indices=tf.stack([sp_ids.indices[:, 0], sp_ids.values], 1), values=sp_vals.values,
        dense_shape=tf.stack([sp_ids.dense_shape[0], tf.constant(BUCKETS, tf.int64)]),
    )
    cross_w = tf.get_variable("cross_w", initializer=tf.constant(fixed_init([BUCKETS, 1], 1503, 0.01)))
    cross = tf.sparse_tensor_dense_matmul(tf.sparse_reorder(one_hot), cross_w)

    logits = wide + deep + cross
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    wide_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "wide") + [cross_w]
    deep_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "deep")
    grads = tf.gradients(loss, wide_vars + deep_vars)
    ftrl = tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01, l2_regularization_strength=0.01)
    adagrad = tf.train.AdagradOptimizer(0.1)
    # Every gradient is computed before either optimizer writes: without this gate TensorFlow's executor may
    # apply Adagrad to deep/dense_w (a ref variable, updated in place) before the backward matmul that reads it
    # for emb's gradient (GATE_OP only orders each op's own gradients), which it did here, deterministically.
    with tf.control_dependencies([g.values if isinstance(g, tf.IndexedSlices) else g for g in grads]):
        train = tf.group(
            ftrl.apply_gradients(zip(grads[: len(wide_vars)], wide_vars)),
            adagrad.apply_gradients(zip(grads[len(wide_vars) :], deep_vars)),
        )
    prob = tf.sigmoid(logits)
    auc, auc_update = tf.metrics.auc(y, prob, num_thresholds=50)

    nnz_per_row = tf.sparse_reduce_sum(tf.SparseTensor(sp_ids.indices, tf.ones_like(sp_vals.values),
                                                       sp_ids.dense_shape), axis=1)
    dense_ids = tf.sparse_tensor_to_dense(sp_ids, default_value=-1)
    indicator = tf.sparse_to_indicator(sp_ids, BUCKETS)

    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for _ in range(steps):
            ind, ids, vals, shape, labels = make_batch(rng, 16)
            feed = {sp_ids: tf.SparseTensorValue(ind, ids, shape), sp_vals: tf.SparseTensorValue(ind, vals, shape),
                    y: labels}
            _, l, _ = sess.run([train, loss, auc_update], feed)
            losses.append(float(l))
        ind, ids, vals, shape, labels = make_batch(np.random.RandomState(77), 8)
        feed = {sp_ids: tf.SparseTensorValue(ind, ids, shape), sp_vals: tf.SparseTensorValue(ind, vals, shape),
                y: labels}
        nnz, dense, ind_m, p = sess.run([nnz_per_row, dense_ids, indicator, prob], feed)
        out = {
            "losses": losses,
            "auc": float(sess.run(auc)),
            "nnz": nnz.tolist(),
            "dense_ids_shape": list(dense.shape),
            "dense_pad": int((dense == -1).sum()),
            "indicator_counts": ind_m.sum(1).tolist(),
            "test_prob": p.ravel().tolist(),
            "wide_zeros": int(np.sum(sess.run(wide_w) == 0.0)),
            "slots": sorted(v.op.name for v in tf.global_variables() if "Ftrl" in v.op.name or "Adagrad" in v.op.name),
            "local": sorted(v.op.name for v in tf.local_variables()),
            "sparse_ph": [sp_ids.dtype.name, str(sp_ids.get_shape()) if hasattr(sp_ids, "get_shape") else None],
        }
    return out


if __name__ == "__main__":
    run_as_script(main, 6)
