"""tf.variable_creator_scope (TF1's variable_creator_scope_v1)."""

import numpy as np

import ferroflow.compat.v1 as tf


def test_creators_see_every_argument_and_nest_innermost_first():
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"]))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(("inner", kwargs["name"]))
        assert {"initial_value", "trainable", "collections", "dtype", "validate_shape"} <= set(kwargs)
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    with tf.Graph().as_default(), tf.Session() as s:
        with tf.variable_creator_scope(outer), tf.variable_creator_scope(inner):
            v = tf.Variable([1.0, 2.0], name="v")
            w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
        u = tf.Variable(3.0, name="u")  # outside: no creator runs
        assert calls == [("inner", "v"), ("outer", "v"), ("inner", "w"), ("outer", "w")]
        assert tf.trainable_variables() == [u]
        s.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(s.run(v), [1.0, 2.0])
        assert s.run(w).shape == (3,)


def test_a_creator_may_replace_the_variable():
    made = []

    def reuse_first(next_creator, **kwargs):
        if made:
            return made[0]
        made.append(next_creator(**kwargs))
        return made[0]

    with tf.Graph().as_default():
        with tf.variable_creator_scope(reuse_first):
            a = tf.Variable(1.0)
            b = tf.Variable(2.0)
        assert a is b and len(tf.global_variables()) == 1
