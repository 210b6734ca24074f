"""tf.distributions (Normal, Uniform, Bernoulli, Categorical, Gamma, Exponential, Beta, Laplace, StudentT,
Dirichlet, Multinomial, kl_divergence) against TensorFlow 2.21's tf.compat.v1.distributions (fixture from
tools/make_distributions_fixtures.py, calls in _distributions_cases.py).
"""

import json

import numpy as np
import pytest

import ferroflow as tf
from _distributions_cases import cases


@pytest.fixture
def expected(fixtures):
    return json.loads((fixtures / "distributions.json").read_text())


def test_against_tensorflow(expected):
    built = cases(tf)
    assert sorted(built) == sorted(expected)
    tensors = {k: v for k, v in built.items() if isinstance(v, tf.Tensor)}
    with tf.Session() as sess:
        values = sess.run(tensors)
    for name, want in expected.items():
        got = values.get(name, built[name])
        if isinstance(want, (str, bool)) or (isinstance(want, list) and want and isinstance(want[0], str)):
            assert got == want, name
        else:
            np.testing.assert_allclose(
                np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2e-6, atol=1e-6, err_msg=name
            )


def test_samples_follow_the_parameters():
    tf.set_random_seed(1)
    n = tf.distributions.Normal(loc=[0.0, 10.0], scale=[1.0, 0.1])
    b = tf.distributions.Bernoulli(probs=[0.2, 0.9])
    c = tf.distributions.Categorical(probs=[[0.7, 0.2, 0.1]])
    u = tf.distributions.Uniform(low=-2.0, high=-1.0)
    with tf.Session() as sess:
        ns, bs, cs, us = sess.run([n.sample(4000), b.sample(4000), c.sample(4000), u.sample([40, 50])])
    np.testing.assert_allclose(ns.mean(0), [0.0, 10.0], atol=0.06)
    np.testing.assert_allclose(ns.std(0), [1.0, 0.1], rtol=0.06)
    assert bs.dtype == np.int32 and set(np.unique(bs)) <= {0, 1}
    np.testing.assert_allclose(bs.mean(0), [0.2, 0.9], atol=0.03)
    assert cs.shape == (4000, 1)
    np.testing.assert_allclose(np.bincount(cs[:, 0], minlength=3) / 4000, [0.7, 0.2, 0.1], atol=0.03)
    assert us.shape == (40, 50) and us.min() >= -2.0 and us.max() < -1.0


def test_normal_sample_is_reparameterized():
    loc = tf.Variable(1.0)
    scale = tf.Variable(2.0)
    z = tf.distributions.Normal(loc, scale).sample(10, seed=5)
    g_loc, g_scale = tf.gradients(tf.reduce_sum(z), [loc, scale])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        zv, gl, gs = sess.run([z, g_loc, g_scale])
    assert gl == pytest.approx(10.0)
    assert gs == pytest.approx(((zv - 1.0) / 2.0).sum(), rel=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="probs or logits"):
        tf.distributions.Bernoulli()
    with pytest.raises(ValueError, match="probs or logits"):
        tf.distributions.Categorical(logits=[1.0], probs=[1.0])
    with pytest.raises(NotImplementedError, match="No KL.*Uniform.*Normal"):
        tf.distributions.kl_divergence(tf.distributions.Uniform(), tf.distributions.Normal(0.0, 1.0))
    with pytest.raises(ValueError, match="must be of the same type"):
        tf.distributions.Normal(loc=np.float64(0.0), scale=np.float32(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="x > 0"):
        tf.distributions.Normal(0.0, -1.0, validate_args=True)
    scale = tf.placeholder(tf.float32)
    lp = tf.distributions.Normal(0.0, scale, validate_args=True).log_prob(0.0)
    with tf.Session() as sess:
        assert sess.run(lp, {scale: 1.0}) == pytest.approx(-0.5 * np.log(2 * np.pi))
        with pytest.raises(tf.errors.InvalidArgumentError, match="x > 0"):
            sess.run(lp, {scale: -1.0})


def test_register_kl_for_a_subclass():
    class MyNormal(tf.distributions.Normal):
        pass

    a, b = MyNormal(0.0, 1.0), tf.distributions.Normal(1.0, 1.0)
    with tf.Session() as sess:
        assert sess.run(tf.distributions.kl_divergence(a, b)) == pytest.approx(0.5)

    @tf.distributions.RegisterKL(MyNormal, tf.distributions.Normal)
    def _kl(x, y, name=None):
        return tf.constant(7.0)

    with tf.Session() as sess:
        assert sess.run(tf.distributions.kl_divergence(a, b)) == 7.0
    with pytest.raises(ValueError, match="already been registered"):
        tf.distributions.RegisterKL(MyNormal, tf.distributions.Normal)(_kl)
