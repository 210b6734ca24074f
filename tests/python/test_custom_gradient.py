"""tf.custom_gradient and tf.grad_pass_through (graph mode, TF's IdentityN + gradient_override_map design)."""

import numpy as np
import pytest

import ferroflow as tf


def run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_custom_gradient_log1pexp():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))

        return tf.log(1 + e), grad

    x = tf.constant([0.0, 2.0, 100.0])
    y = log1pexp(x)
    (dx,) = tf.gradients(y, x)
    v, d = run([y, dx])
    np.testing.assert_allclose(v[:2], np.log1p(np.exp([0.0, 2.0])), rtol=1e-6)
    np.testing.assert_allclose(d, 1 / (1 + np.exp(-np.array([0.0, 2.0, 100.0]))), rtol=1e-6)
    assert not np.isnan(d).any()


def test_custom_gradient_several_inputs_and_outputs():
    @tf.custom_gradient
    def f(a, b):
        def grad(da, db):
            return da * 10.0 + db, da + db * 100.0

        return (a * b, a + b), grad

    a, b = tf.constant(2.0), tf.constant(3.0)
    p, s = f(a, b)
    ga, gb = tf.gradients(p + s, [a, b])
    assert run([p, s]) == [6.0, 5.0]
    assert run([ga, gb]) == [11.0, 101.0]
    (ga_only,) = tf.gradients(p, [a])  # s unused: its gradient arrives as zeros
    assert run(ga_only) == 10.0


def test_custom_gradient_with_variables():
    @tf.custom_gradient
    def scaled(x):
        w = tf.get_variable("w_custom", initializer=3.0)

        def grad(dy, variables=None):
            assert variables is not None and len(variables) == 1
            return dy * 7.0, [dy * 5.0]

        return x * w, grad

    x = tf.constant(2.0)
    y = scaled(x)
    w = [v for v in tf.global_variables() if v.op.name == "w_custom"][0]
    gx, gw = tf.gradients(y, [x, w])
    assert run([y, gx, gw], init=True) == [6.0, 7.0, 5.0]


def test_custom_gradient_variables_need_the_keyword():
    @tf.custom_gradient
    def f(x):
        w = tf.get_variable("w_needs_kw", initializer=1.0)
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="grad_fn must accept a keyword argument 'variables'"):
        f(tf.constant(1.0))


def test_grad_pass_through():
    x = tf.constant([0.3, 1.6])
    y = tf.grad_pass_through(tf.round)(x)
    (dx,) = tf.gradients(tf.reduce_sum(y * 4.0), x)
    np.testing.assert_allclose(run(y), [0.0, 2.0])
    np.testing.assert_allclose(run(dx), [4.0, 4.0])


def test_custom_gradient_trains():
    # clip the gradient's norm inside the model, the docs' example
    @tf.custom_gradient
    def clip_gradient_by_norm(x, norm):
        def grad(dy):
            return tf.clip_by_norm(dy, norm), None

        return tf.identity(x), grad

    w = tf.Variable([10.0, -10.0])
    loss = tf.reduce_sum(tf.square(clip_gradient_by_norm(w, 1.0)))
    (g,) = tf.gradients(loss, [w])
    value = run(g, init=True)
    np.testing.assert_allclose(np.linalg.norm(value), 1.0, rtol=1e-6)


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield



def test_recompute_grad_matches_plain_gradients():
    def block(x):
        w = tf.get_variable("w_block", initializer=[[0.5, -1.0], [2.0, 0.25]])
        return tf.tanh(tf.matmul(x, w))

    x = tf.constant([[1.0, 2.0], [3.0, -1.0]])
    with tf.variable_scope("plain"):
        plain = tf.reduce_sum(tf.square(block(x)))
    with tf.variable_scope("recomputed"):
        recomputed = tf.reduce_sum(tf.square(tf.recompute_grad(block)(x)))
    w_plain, w_re = (v for v in tf.global_variables())
    g_plain = tf.gradients(plain, [x, w_plain])
    g_re = tf.gradients(recomputed, [x, w_re])
    assert len(tf.global_variables()) == 2  # the recomputation reused the variable
    a, b = run([g_plain, g_re], init=True)
    for p, r in zip(a, b):
        np.testing.assert_allclose(r, p, rtol=1e-6)
