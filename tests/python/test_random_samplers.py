"""The stateful samplers (categorical/multinomial, gamma with its alpha gradient, poisson, random_index_shuffle) and
the candidate samplers: distributions checked by moments and Kolmogorov-Smirnov distances with fixed seeds,
TensorFlow's shapes, dtypes and op types, and the deterministic pieces exactly."""

import math

import numpy as np
import pytest

import ferroflow as tf


def run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed)


def ks_distance(sample, cdf):
    x = np.sort(np.asarray(sample, np.float64))
    n = len(x)
    c = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


def gamma_cdf(a):
    from math import gamma as G

    def cdf(x):
        # Regularized lower incomplete gamma by series (fine for the moderate x used here).
        out = np.empty_like(x)
        for i, v in enumerate(x):
            if v <= 0:
                out[i] = 0.0
                continue
            term = total = 1.0 / a
            k = 1
            while term > 1e-15 * total and k < 2000:
                term *= v / (a + k)
                total += term
                k += 1
            out[i] = total * math.exp(-v + a * math.log(v)) / G(a)
        return out

    return cdf


def test_categorical_frequencies_and_op_types():
    with tf.Graph().as_default():
        logits = tf.constant([[0.0, np.log(2.0), np.log(7.0)], [5.0, -np.inf, 5.0]])
        c = tf.random.categorical(logits, 20000, seed=7)
        m = tf.multinomial(logits, 5, seed=1, output_dtype=tf.int32)
        assert c.op.type == "Multinomial" and c.dtype == tf.int64 and c.shape.as_list() == [2, 20000]
        assert m.dtype == tf.int32
        v, mv = run([c, m])
    freq = np.bincount(v[0], minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)
    assert not (v[1] == 1).any()
    assert abs((v[1] == 0).mean() - 0.5) < 0.02
    assert mv.shape == (2, 5)


def test_gamma_moments_ks_and_shape():
    with tf.Graph().as_default():
        g = tf.random.gamma([4000], alpha=[0.5, 1.0, 3.0], beta=[1.0, 2.0, 0.5], seed=3)
        assert g.shape.as_list() == [4000, 3]
        assert tf.random_gamma is not None
        v = run(g)
    for k, (a, b) in enumerate([(0.5, 1.0), (1.0, 2.0), (3.0, 0.5)]):
        col = v[:, k] * b
        assert abs(col.mean() - a) < 0.08 * max(a, 1), (a, col.mean())
        assert ks_distance(col, gamma_cdf(a)) < 0.03
    assert (v > 0).all()


def test_gamma_alpha_gradient():
    # d E[x] / d alpha = 1 / beta: the reparameterized gradient of the mean.
    with tf.Graph().as_default():
        alpha = tf.constant([0.7, 2.5])
        x = tf.random.gamma([20000], alpha, seed=11)
        (grad,) = tf.gradients(tf.reduce_mean(x, axis=0), [alpha])
        gs = tf.random.stateless_gamma([20000, 2], seed=[1, 2], alpha=alpha)
        (sgrad,) = tf.gradients(tf.reduce_mean(gs, axis=0), [alpha])
        gv, sv = run([grad, sgrad])
    np.testing.assert_allclose(gv, [1.0, 1.0], atol=0.05)
    np.testing.assert_allclose(sv, [1.0, 1.0], atol=0.05)


def test_random_gamma_grad_matches_finite_differences():
    from ferroflow.ops._op_util import make

    # x(alpha) at a fixed CDF level u: dx/dalpha = -dP/dalpha / dP/dx.
    a, x = 2.0, 1.3
    with tf.Graph().as_default():
        got = run(make("RandomGammaGrad", [tf.constant([a], tf.float64), tf.constant([x], tf.float64)], {}))
    cdf = gamma_cdf
    eps = 1e-5
    dp_da = (cdf(a + eps)(np.array([x])) - cdf(a - eps)(np.array([x]))) / (2 * eps)
    dp_dx = math.exp(-x + (a - 1) * math.log(x)) / math.gamma(a)
    np.testing.assert_allclose(got, -dp_da / dp_dx, rtol=1e-5)


def test_poisson_moments_and_dtypes():
    with tf.Graph().as_default():
        p = tf.random.poisson([2.5, 40.0], [5000], seed=5)
        q = tf.random_poisson(3.0, [7], dtype=tf.int64, seed=2)
        assert p.op.type == "RandomPoissonV2" and p.shape.as_list() == [5000, 2] and p.dtype == tf.float32
        assert q.dtype == tf.int64
        v, _ = run([p, q])
    for k, lam in enumerate([2.5, 40.0]):
        assert abs(v[:, k].mean() - lam) < 0.05 * lam
        assert abs(v[:, k].var() - lam) < 0.1 * lam
    assert (v == np.floor(v)).all()


def test_stateful_ops_draw_fresh_values_each_run():
    with tf.Graph().as_default():
        c = tf.random.categorical([[0.0, 0.0, 0.0, 0.0]], 50, seed=1)
        g = tf.random.gamma([50], 2.0, seed=1)
        with tf.Session() as s:
            a1, b1 = s.run([c, g])
            a2, b2 = s.run([c, g])
    assert not np.array_equal(a1, a2) and not np.array_equal(b1, b2)


def test_random_index_shuffle_is_a_permutation():
    with tf.Graph().as_default():
        idx = tf.range(1000, dtype=tf.int64)
        p = tf.random_index_shuffle(idx, [1, 2, 3], tf.constant(999, tf.int64))
        q = tf.random_index_shuffle(tf.constant(5), tf.constant([4, 5, 6]), 9)
        assert p.op.type == "RandomIndexShuffle"
        v, w = run([p, q])
    assert sorted(v.tolist()) == list(range(1000))
    assert not np.array_equal(v, np.arange(1000))
    assert 0 <= w <= 9


def test_all_candidate_sampler_and_accidental_hits():
    with tf.Graph().as_default():
        true = tf.constant([[1, 3], [0, 4]], tf.int64)
        s, te, se = tf.nn.all_candidate_sampler(true, 2, 5, True)
        idx, ids, w = tf.nn.compute_accidental_hits(true, tf.constant([4, 1, 9, 1], tf.int64), num_true=2)
        r = run([s, te, se, idx, ids, w])
    np.testing.assert_array_equal(r[0], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(r[1], np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(r[2], np.ones(5, np.float32))
    # TensorFlow maps each candidate value to its last position.
    np.testing.assert_array_equal(r[3], [0, 1])
    np.testing.assert_array_equal(r[4], [3, 0])
    np.testing.assert_array_equal(r[5], [-np.finfo(np.float32).max] * 2)


def test_fixed_unigram_sampler(tmp_path):
    unigrams = [1.0, 2.0, 3.0, 4.0]
    with tf.Graph().as_default():
        true = tf.constant([[2]], tf.int64)
        s, te, se = tf.nn.fixed_unigram_candidate_sampler(true, 1, 4000, False, 4, unigrams=unigrams, seed=3)
        s2, te2, _ = tf.nn.fixed_unigram_candidate_sampler(true, 1, 4000, False, 4, unigrams=unigrams, distortion=0.0,
                                                           seed=3)
        # Reserved ids are never drawn; the vocabulary file's last column is the count.
        path = tmp_path / "vocab.csv"
        path.write_text("a,5\nb,1\nc,5\n")
        s3, _, _ = tf.nn.fixed_unigram_candidate_sampler(true, 1, 3, True, 4, vocab_file=str(path),
                                                         num_reserved_ids=1, seed=4)
        v, tv, sv, v2, tv2, v3 = run([s, te, se, s2, te2, s3])
    np.testing.assert_allclose(np.bincount(v, minlength=4) / 4000, [0.1, 0.2, 0.3, 0.4], atol=0.025)
    np.testing.assert_allclose(tv, [[0.3 * 4000]], rtol=1e-5)
    np.testing.assert_allclose(sv, np.array(unigrams)[v] / 10 * 4000, rtol=1e-5)
    np.testing.assert_allclose(tv2, [[1000.0]], rtol=1e-5)
    assert abs(np.bincount(v2, minlength=4) / 4000 - 0.25).max() < 0.03
    assert sorted(v3.tolist()) == [1, 2, 3]


def test_learned_unigram_sampler_learns():
    with tf.Graph().as_default():
        true = tf.constant([[7]], tf.int64)
        s, te, _ = tf.nn.learned_unigram_candidate_sampler(true, 1, 1, False, 10, seed=1)
        with tf.Session() as sess:
            first = sess.run(te)
            for _ in range(200):
                sess.run(s)
            last = sess.run(te)
            draws = [sess.run(s)[0] for _ in range(200)]
    np.testing.assert_allclose(first, [[0.1]], rtol=1e-5)
    assert last[0, 0] > 0.9
    assert np.mean(np.array(draws) == 7) > 0.9


def test_sampler_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_true"):
            tf.nn.all_candidate_sampler(tf.constant([[1, 2]], tf.int64), 3, 4, True)
        s = tf.nn.fixed_unigram_candidate_sampler(tf.constant([[1]], tf.int64), 1, 2, False, 5, unigrams=[1.0, 2.0])
        # TF's message: range_max (5) against the weights this shard has (2).
        with pytest.raises(tf.errors.InvalidArgumentError, match="range is 5 must be equal to weights size 2"):
            run(s)
        logits = tf.placeholder(tf.float32, None)
        c = tf.random.categorical(logits, 2, seed=1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="logits should be a matrix"):
            run(c, {logits: [1.0, 2.0]})
