"""Candidate samplers, nce_loss and sampled_softmax_loss."""

import numpy as np
import pytest

import ferroflow as tf


def _sigmoid_xent(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def test_log_uniform_sampler_shapes_uniqueness_and_counts():
    labels = tf.placeholder(tf.int64, [4, 2])
    s, t, e = tf.nn.log_uniform_candidate_sampler(labels, num_true=2, num_sampled=10, unique=True, range_max=30, seed=3)
    assert s.dtype == tf.int64 and s.shape.as_list() == [10]
    assert t.shape.as_list() == [4, 2] and e.shape.as_list() == [10]
    lab = np.array([[0, 1], [2, 3], [4, 5], [29, 6]])
    with tf.Session() as sess:
        a = sess.run([s, t, e], {labels: lab})
        b = sess.run([s, t, e], {labels: lab})
    assert len(set(a[0])) == 10 and a[0].min() >= 0 and a[0].max() < 30
    assert not np.array_equal(a[0], b[0])  # fresh samples each run
    # Unique sampling takes some number of tries >= num_sampled; every
    # expected count is TF's -expm1(tries * log1p(-p)) for that one number.
    p_true = np.log((lab + 2.0) / (lab + 1.0)) / np.log(31.0)
    p_samp = np.log((a[0] + 2.0) / (a[0] + 1.0)) / np.log(31.0)
    tries = np.concatenate([np.log1p(-a[1].ravel()) / np.log1p(-p_true.ravel()), np.log1p(-a[2]) / np.log1p(-p_samp)])
    assert tries.min() >= 10 - 1e-3
    np.testing.assert_allclose(tries, np.round(tries[0]), rtol=1e-3)
    # Frequent (small) classes dominate a log-uniform sample.
    with tf.Session() as sess:
        draws = np.concatenate([sess.run(s, {labels: lab}) for _ in range(200)])
    assert np.mean(draws < 5) > np.mean(draws >= 25) * 3


def test_sampler_is_deterministic_with_seeds():
    def sample():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            s, _, _ = tf.nn.uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 6, False, 100)
            with tf.Session() as sess:
                return sess.run(s)

    a, b = sample(), sample()
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 100


def test_sampled_softmax_and_nce_match_numpy_with_given_samples():
    rng = np.random.default_rng(0)
    V, D, B, S = 12, 4, 3, 4
    W = rng.standard_normal((V, D)).astype(np.float32)
    b = rng.standard_normal(V).astype(np.float32)
    X = rng.standard_normal((B, D)).astype(np.float32)
    labels = np.array([[1], [5], [7]])
    sampled = np.array([0, 5, 9, 11])
    true_exp = np.full((B, 1), 0.5, np.float32)
    samp_exp = np.array([0.9, 0.3, 0.2, 0.1], np.float32)
    sv = (tf.constant(sampled, tf.int64), tf.constant(true_exp), tf.constant(samp_exp))
    nce = tf.nn.nce_loss(W, b, labels, X, S, V, sampled_values=sv)
    ssl = tf.nn.sampled_softmax_loss(W, b, labels, X, S, V, sampled_values=sv)
    with tf.Session() as sess:
        got_nce, got_ssl = sess.run([nce, ssl])
    true_logits = np.einsum("bd,bd->b", X, W[labels[:, 0]])[:, None] + b[labels] - np.log(true_exp)
    samp_logits = X @ W[sampled].T + b[sampled] - np.log(samp_exp)
    logits = np.concatenate([true_logits, samp_logits], 1)
    targets = np.concatenate([np.ones((B, 1)), np.zeros((B, S))], 1)
    np.testing.assert_allclose(got_nce, _sigmoid_xent(targets, logits).sum(1), rtol=1e-5)
    # sampled_softmax removes accidental hits: sample 5 is row 1's label.
    hit = samp_logits.copy()
    hit[1, 1] += -np.finfo(np.float32).max
    logits = np.concatenate([true_logits, hit], 1)
    m = logits.max(1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
    np.testing.assert_allclose(got_ssl, lse - logits[:, 0], rtol=1e-5)


def test_sampled_losses_give_sparse_gradients_and_train():
    V, D, B = 40, 6, 16
    tf.set_random_seed(1)
    rng = np.random.default_rng(1)
    emb = tf.Variable(rng.standard_normal((V, D)).astype(np.float32) * 0.1)
    w = tf.Variable(np.zeros((V, D), np.float32))
    bias = tf.Variable(np.zeros(V, np.float32))
    ids = tf.constant(rng.integers(0, V, B).astype(np.int32))
    lab = tf.constant(((rng.integers(0, V, B) * 7) % V).reshape(B, 1).astype(np.int64))
    x = tf.nn.embedding_lookup(emb, ids)
    loss = tf.reduce_mean(tf.nn.nce_loss(w, bias, lab, x, num_sampled=5, num_classes=V))
    gw, gb, ge = tf.gradients(loss, [w, bias, emb])
    assert all(isinstance(g, tf.IndexedSlices) for g in (gw, gb, ge))
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(200):
            sess.run(train)
        last = np.mean([sess.run(loss) for _ in range(5)])
    assert last < first * 0.5, (first, last)


def test_sampler_errors():
    with pytest.raises(ValueError, match="range is too small"):
        tf.nn.log_uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 10, True, 5)
    with pytest.raises(ValueError, match="num_true"):
        tf.nn.log_uniform_candidate_sampler(tf.constant([[1, 2]], tf.int64), 1, 3, False, 5)
