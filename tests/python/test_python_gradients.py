"""Python gradients: tf.RegisterGradient with gradient_override_map, tf.NotDifferentiable; tf.make_template."""

import numpy as np
import pytest

import ferroflow as tf


def run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_gradient_override_map_with_a_python_gradient():
    @tf.RegisterGradient("TestReverseGrad")
    def _reverse(op, grad):
        return -3.0 * grad

    g = tf.get_default_graph()
    x = tf.constant([1.0, 2.0])
    with g.gradient_override_map({"Identity": "TestReverseGrad"}):
        y = tf.identity(x)
    assert y.op.get_attr("_gradient_op_type") in (b"TestReverseGrad", "TestReverseGrad")
    z = tf.reduce_sum(y * y)
    (dx,) = tf.gradients(z, x)
    np.testing.assert_allclose(run(dx), -3.0 * 2 * np.array([1.0, 2.0]))
    # names: the gradient's ops live under <scope>/<op>_grad
    assert "gradients/Identity_grad/" in dx.name or dx.op.name.startswith("gradients/Identity_grad")


def test_override_to_a_builtin_gradient_straight_through():
    x = tf.constant([0.2, 1.7, -0.6])
    with tf.get_default_graph().gradient_override_map({"Round": "Identity"}):
        y = tf.round(x)
    (dx,) = tf.gradients(tf.reduce_sum(y * 2.0), x)
    np.testing.assert_allclose(run(dx), [2.0, 2.0, 2.0])


def test_registered_gradient_for_a_py_func():
    @tf.RegisterGradient("TestSquarePyFuncGrad")
    def _grad(op, grad):
        return grad * 2.0 * op.inputs[0]

    x = tf.constant([1.0, 3.0])
    with tf.get_default_graph().gradient_override_map({"PyFunc": "TestSquarePyFuncGrad"}):
        y = tf.py_func(lambda v: v * v, [x], tf.float32)
    (dx,) = tf.gradients(y, x)
    np.testing.assert_allclose(run(dx), [2.0, 6.0])


def test_python_gradient_gets_zeros_for_unused_outputs_and_must_match_inputs():
    received = []

    @tf.RegisterGradient("TestTwoOutputsGrad")
    def _grad(op, g0, g1):
        received.append((g0, g1))
        return tf.stack([g0, g1])

    x = tf.constant([1.0, 2.0])
    with tf.get_default_graph().gradient_override_map({"Unpack": "TestTwoOutputsGrad"}):
        a, b = tf.unstack(tf.reshape(x, [2, 1]))
    (dx,) = tf.gradients(a * 5.0, x)
    assert received and received[0][1] is not None  # zeros, not None, for the output nothing used
    np.testing.assert_allclose(run(dx), [5.0, 0.0])

    @tf.RegisterGradient("TestBadCountGrad")
    def _bad(op, grad):
        return [grad, grad]

    with tf.get_default_graph().gradient_override_map({"Identity": "TestBadCountGrad"}):
        y = tf.identity(x)
    with pytest.raises(ValueError, match="Num gradients 2 generated for op"):
        tf.gradients(y, x)


def test_registration_errors():
    with pytest.raises(KeyError, match="Registering two gradient with name 'MatMul'"):
        tf.RegisterGradient("MatMul")(lambda op, g: g)
    tf.RegisterGradient("TestOnce")(lambda op, g: g)
    with pytest.raises(KeyError, match="Registering two gradient with name 'TestOnce'"):
        tf.RegisterGradient("TestOnce")(lambda op, g: g)
    with pytest.raises(TypeError):
        tf.RegisterGradient(3)
    with pytest.raises(TypeError, match="op_type_map must be a dictionary mapping strings to strings"):
        with tf.get_default_graph().gradient_override_map({"Identity": 3}):
            pass


def test_not_differentiable_override_stops_gradient():
    tf.NotDifferentiable("TestNoGradName")
    x = tf.constant([1.0, 2.0])
    with tf.get_default_graph().gradient_override_map({"Identity": "TestNoGradName"}):
        y = tf.identity(x)
    assert tf.gradients(y * 2.0, x) == [None]
    assert tf.no_gradient is tf.NotDifferentiable and tf.NoGradient is tf.NotDifferentiable


def test_unregistered_override_name_is_a_lookup_error():
    x = tf.constant([1.0])
    with tf.get_default_graph().gradient_override_map({"Identity": "NoSuchGradientAnywhere"}):
        y = tf.identity(x)
    with pytest.raises(LookupError, match="NoSuchGradientAnywhere"):
        tf.gradients(y, x)


def test_make_template_shares_variables():
    def scale(x, factor=1.0):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
        return x * w * factor

    t = tf.make_template("scaler", scale, factor=10.0)
    a = t(tf.constant(1.0))
    b = t(tf.constant(3.0))
    assert [v.name for v in tf.global_variables()] == ["scaler/w:0"]
    assert [v.name for v in t.variables] == ["scaler/w:0"] and t.variable_scope_name == "scaler"
    assert run([a, b], init=True) == [20.0, 60.0]
    t2 = tf.make_template("scaler", scale)
    t2(tf.constant(1.0))
    assert sorted(v.name for v in tf.global_variables()) == ["scaler/w:0", "scaler_1/w:0"]


def test_make_template_refuses_new_trainable_variables_later():
    def bad(x):
        return x * tf.Variable(1.0)

    t = tf.make_template("bad", bad)
    t(tf.constant(1.0))
    with pytest.raises(ValueError, match="Trainable variable created when calling a template after the first time"):
        t(tf.constant(1.0))


def test_make_template_create_scope_now():
    t = tf.make_template("early", lambda: tf.get_variable("v", [1]), create_scope_now_=True)
    assert t.variable_scope_name == "early"
    t()
    t()
    assert [v.name for v in tf.global_variables()] == ["early/v:0"]


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield



def test_override_to_stop_gradient_and_away_from_it():
    # TensorFlow registers StopGradient as not differentiable and looks gradients up by the override name:
    # an op overridden to "StopGradient" passes nothing back (it raised LookupError here), and a
    # StopGradient op overridden to "Identity" passes its gradient through.
    x = tf.constant([1.0, 2.0])
    g = tf.get_default_graph()
    with g.gradient_override_map({"Square": "StopGradient"}):
        y = tf.square(x)
    assert tf.gradients(tf.reduce_sum(y), x) == [None]
    with g.gradient_override_map({"StopGradient": "Identity"}):
        z = tf.stop_gradient(x * 3.0)
    (gz,) = tf.gradients(tf.reduce_sum(z * z), x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(gz), [18.0, 36.0])
    assert tf.gradients(tf.reduce_sum(tf.stop_gradient(x) * x), x)[0] is not None
