"""omoindrot/tensorflow-triplet-loss (model/triplet_loss.py), the TF1 batch-all and batch-hard triplet
losses: _pairwise_distances from tf.matmul(embeddings, tf.transpose(embeddings)), tf.diag_part, the
squared/euclidean forms with the zero-distance mask trick (tf.to_float(tf.equal(distances, 0.0)) * 1e-16
before tf.sqrt), the anchor-positive and anchor-negative masks built from tf.eye, tf.logical_not,
tf.logical_and and tf.equal of expanded labels, the 3-D triplet mask, tf.maximum(triplet_loss, 0.0),
the fraction of positive triplets by tf.greater and tf.reduce_sum, the hardest positive by tf.reduce_max and the
hardest negative by tf.reduce_min after adding the max distance; an embedding network trained on each loss
with a tf.train.AdamOptimizer, plus a Siamese contrastive loss on pairs with weights shared through
tf.variable_scope(..., reuse=True).

Weights start from numpy values: every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def _pairwise_distances(tf, embeddings, squared=False):
    dot_product = tf.matmul(embeddings, tf.transpose(embeddings))
    square_norm = tf.diag_part(dot_product)
    distances = tf.expand_dims(square_norm, 0) - 2.0 * dot_product + tf.expand_dims(square_norm, 1)
    distances = tf.maximum(distances, 0.0)
    if not squared:
        mask = tf.to_float(tf.equal(distances, 0.0))
        distances = distances + mask * 1e-16
        distances = tf.sqrt(distances)
        distances = distances * (1.0 - mask)
    return distances


def _get_anchor_positive_triplet_mask(tf, labels):
    indices_equal = tf.cast(tf.eye(tf.shape(labels)[0]), tf.bool)
    indices_not_equal = tf.logical_not(indices_equal)
    labels_equal = tf.equal(tf.expand_dims(labels, 0), tf.expand_dims(labels, 1))
    return tf.logical_and(indices_not_equal, labels_equal)


def _get_anchor_negative_triplet_mask(tf, labels):
    labels_equal = tf.equal(tf.expand_dims(labels, 0), tf.expand_dims(labels, 1))
    return tf.logical_not(labels_equal)


def _get_triplet_mask(tf, labels):
    indices_equal = tf.cast(tf.eye(tf.shape(labels)[0]), tf.bool)
    indices_not_equal = tf.logical_not(indices_equal)
    i_not_equal_j = tf.expand_dims(indices_not_equal, 2)
    i_not_equal_k = tf.expand_dims(indices_not_equal, 1)
    j_not_equal_k = tf.expand_dims(indices_not_equal, 0)
    distinct_indices = tf.logical_and(tf.logical_and(i_not_equal_j, i_not_equal_k), j_not_equal_k)
    label_equal = tf.equal(tf.expand_dims(labels, 0), tf.expand_dims(labels, 1))
    i_equal_j = tf.expand_dims(label_equal, 2)
    i_equal_k = tf.expand_dims(label_equal, 1)
    valid_labels = tf.logical_and(i_equal_j, tf.logical_not(i_equal_k))
    return tf.logical_and(distinct_indices, valid_labels)


def batch_all_triplet_loss(tf, labels, embeddings, margin, squared=False):
    pairwise_dist = _pairwise_distances(tf, embeddings, squared=squared)
    anchor_positive_dist = tf.expand_dims(pairwise_dist, 2)
    anchor_negative_dist = tf.expand_dims(pairwise_dist, 1)
    triplet_loss = anchor_positive_dist - anchor_negative_dist + margin
    mask = tf.to_float(_get_triplet_mask(tf, labels))
    triplet_loss = tf.multiply(mask, triplet_loss)
    triplet_loss = tf.maximum(triplet_loss, 0.0)
    valid_triplets = tf.to_float(tf.greater(triplet_loss, 1e-16))
    num_positive_triplets = tf.reduce_sum(valid_triplets)
    num_valid_triplets = tf.reduce_sum(mask)
    fraction_positive_triplets = num_positive_triplets / (num_valid_triplets + 1e-16)
    triplet_loss = tf.reduce_sum(triplet_loss) / (num_positive_triplets + 1e-16)
    return triplet_loss, fraction_positive_triplets


def batch_hard_triplet_loss(tf, labels, embeddings, margin, squared=False):
    pairwise_dist = _pairwise_distances(tf, embeddings, squared=squared)
    mask_anchor_positive = tf.to_float(_get_anchor_positive_triplet_mask(tf, labels))
    anchor_positive_dist = tf.multiply(mask_anchor_positive, pairwise_dist)
    hardest_positive_dist = tf.reduce_max(anchor_positive_dist, axis=1, keepdims=True)
    tf.summary.scalar("hardest_positive_dist", tf.reduce_mean(hardest_positive_dist))
    mask_anchor_negative = tf.to_float(_get_anchor_negative_triplet_mask(tf, labels))
    max_anchor_negative_dist = tf.reduce_max(pairwise_dist, axis=1, keepdims=True)
    anchor_negative_dist = pairwise_dist + max_anchor_negative_dist * (1.0 - mask_anchor_negative)
    hardest_negative_dist = tf.reduce_min(anchor_negative_dist, axis=1, keepdims=True)
    tf.summary.scalar("hardest_negative_dist", tf.reduce_mean(hardest_negative_dist))
    triplet_loss = tf.maximum(hardest_positive_dist - hardest_negative_dist + margin, 0.0)
    return tf.reduce_mean(triplet_loss)


def embed(tf, x, reuse=False):
    with tf.variable_scope("embedding", reuse=reuse):
        w1 = tf.get_variable("w1", initializer=fixed_init([6, 12], 1200, 0.4))
        b1 = tf.get_variable("b1", [12], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", initializer=fixed_init([12, 4], 1201, 0.4))
        return tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)


def main(tf, steps=6):
    rng = np.random.RandomState(120)
    labels_np = np.repeat(np.arange(4), 4).astype(np.int64)
    centers = rng.randn(4, 6).astype(np.float32)
    X = (centers[labels_np] + 0.8 * rng.randn(16, 6)).astype(np.float32)
    out = {}
    for kind in ("batch_all", "batch_hard", "batch_all_squared"):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [None, 6])
        labels = tf.placeholder(tf.int64, [None])
        emb = embed(tf, x)
        if kind == "batch_hard":
            loss = batch_hard_triplet_loss(tf, labels, emb, margin=0.5)
            fraction = tf.constant(0.0)
        else:
            loss, fraction = batch_all_triplet_loss(tf, labels, emb, margin=0.5, squared=kind.endswith("squared"))
        train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
        merged = tf.summary.merge_all()
        losses, fractions = [], []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                _, l, f = sess.run([train_op, loss, fraction], {x: X, labels: labels_np})
                losses.append(float(l))
                fractions.append(float(f))
            dist = sess.run(_pairwise_distances(tf, emb), {x: X[:5], labels: labels_np[:5]})
            if merged is not None:
                out[kind + "_summary_bytes"] = len(sess.run(merged, {x: X, labels: labels_np})) > 0
        out[kind] = {"losses": losses, "fractions": fractions, "distances": dist.ravel().tolist()}

    # Siamese pairs with a contrastive loss; the second tower reuses the first one's variables.
    tf.reset_default_graph()
    left = tf.placeholder(tf.float32, [None, 6])
    right = tf.placeholder(tf.float32, [None, 6])
    same = tf.placeholder(tf.float32, [None])
    o1 = embed(tf, left)
    o2 = embed(tf, right, reuse=True)
    d = tf.sqrt(tf.reduce_sum(tf.pow(tf.subtract(o1, o2), 2), 1, keepdims=True) + 1e-6)
    d = tf.squeeze(d, 1)
    margin = 1.0
    contrastive = tf.reduce_mean(same * tf.square(d) + (1.0 - same) * tf.square(tf.maximum(margin - d, 0.0))) / 2
    train_op = tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True).minimize(contrastive)
    pairs_l = X[np.arange(16)]
    pairs_r = X[(np.arange(16) + 1) % 16]
    same_np = (labels_np == labels_np[(np.arange(16) + 1) % 16]).astype(np.float32)
    siamese = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            _, l = sess.run([train_op, contrastive], {left: pairs_l, right: pairs_r, same: same_np})
            siamese.append(float(l))
    out["siamese_losses"] = siamese
    out["siamese_variables"] = [v.op.name for v in tf.trainable_variables()]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
