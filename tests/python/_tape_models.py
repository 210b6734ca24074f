"""``tf.GradientTape`` uses in a TF1 graph, written once against either framework, for
``tools/make_compat_v1_last_fixtures.py`` (real TensorFlow with v2 behaviour disabled; the
variables are resource variables, which TensorFlow's tape needs) and ``test_gradient_tape.py``
(ferroflow). ``describe(tf)`` returns, per case, which gradients are None, their values from a
session, the watched variables' names and the errors raised (by class name).
"""

from __future__ import annotations

import numpy as np


def _error(fn):
    try:
        fn()
    except Exception as e:  # the class is what is compared
        return type(e).__name__
    return None


def describe(tf):
    cases = {}
    errors = {}
    watched = {}
    with tf.Graph().as_default():
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w", use_resource=True)
        b = tf.Variable([1.0, -1.0], name="b", trainable=False, use_resource=True)
        u = tf.Variable(0.5, name="u", use_resource=True)
        x = tf.constant([[1.0, -1.0], [0.5, 2.0]])
        c = tf.constant(3.0)
        before = tf.reduce_sum(w * 5.0)  # made before any tape: a constant to every tape

        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.matmul(x, w) * c + b)
        watched["basic"] = [v.name for v in tape.watched_variables()]
        cases["basic"] = tape.gradient(y, [w, b, c, u])
        errors["used_twice"] = _error(lambda: tape.gradient(y, w))

        with tf.GradientTape(persistent=True) as tape:
            tape.watch(c)
            z = c * c * tf.reduce_sum(tf.tanh(w)) + before * u
            with tape.stop_recording():
                hidden = c * 10.0
            z2 = z + hidden * c
        watched["persistent"] = [v.name for v in tape.watched_variables()]
        cases["watched_tensor"] = [tape.gradient(z, c), tape.gradient(z2, c)]
        nested = tape.gradient(z, {"a": c, "b": [w, u]})
        cases["structure"] = [nested["a"], nested["b"][0], nested["b"][1]]
        cases["unconnected"] = [tape.gradient(z, x), tape.gradient(z, x, unconnected_gradients="zero")]
        cases["output_gradients"] = [tape.gradient([z, z2], c, output_gradients=[tf.constant(2.0), tf.constant(0.5)])]
        cases["from_outside"] = [tape.gradient(before, w), tape.gradient(z, w)]

        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(u)
            q = tf.reduce_sum(w) * u * u
        watched["explicit"] = [v.name for v in tape.watched_variables()]
        cases["explicit"] = tape.gradient(q, [w, u])

        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                cube = u * u * u
            d1 = inner.gradient(cube, u)
        cases["second_order"] = [d1, outer.gradient(d1, u)]

        @tf.function
        def f(v):
            return tf.reduce_sum(tf.square(v)) * u

        with tf.GradientTape() as tape:
            tape.watch(x)
            r = f(x) + tf.cond(c > 0.0, lambda: tf.reduce_sum(x) * u, lambda: tf.constant(0.0))
        cases["through_calls"] = tape.gradient(r, [x, u])

        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            yy = tf.matmul(x, w)
            per_row = tf.tanh(x) * 2.0
        cases["jacobian"] = [tape.jacobian(yy, w), tape.jacobian(yy, [x, b])[0], tape.batch_jacobian(per_row, x)]
        cases["jacobian_unconnected"] = [tape.jacobian(yy, [b])[0]]

        with tf.GradientTape() as tape:
            dropped = w * 100.0
            tape.reset()
            kept = tf.reduce_sum(w * 2.0)
        cases["reset"] = tape.gradient(kept + tf.reduce_sum(dropped), [w])
        errors["reenter"] = _error(lambda: tape.__enter__().__enter__())
        errors["watch_non_tensor"] = _error(lambda: tf.GradientTape().watch("x"))
        errors["none_target"] = _error(lambda: tf.GradientTape().gradient(None, [w]))

        fetch = {k: [g for g in v if g is not None] for k, v in cases.items()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(fetch)
    nones = {k: [g is None for g in v] for k, v in cases.items()}
    out_values = {k: [np.asarray(a).tolist() for a in v] for k, v in values.items()}
    return {"nones": nones, "values": out_values, "watched": watched, "errors": errors,
            "train_step": train_step(tf)}


def train_step(tf):
    """TF 2's training step inside ``tf.function``: tape, gradient, apply_gradients; three runs."""
    with tf.Graph().as_default():
        w = tf.Variable([[1.0], [2.0]], name="w", use_resource=True)
        b = tf.Variable([0.5], name="b", use_resource=True)
        opt = tf.train.GradientDescentOptimizer(0.1)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            grads = tape.gradient(loss, [w, b])
            update = opt.apply_gradients(zip(grads, [w, b]))
            with tf.control_dependencies([update]):
                return tf.identity(loss), grads

        out = step(tf.constant([[1.0, 2.0], [3.0, -1.0]]), tf.constant([[1.0], [0.0]]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            runs = [sess.run(out) for _ in range(3)]
            final = sess.run([w, b])
    return {"losses": [float(r[0]) for r in runs], "grads": [[np.asarray(g).tolist() for g in r[1]] for r in runs],
            "final": [np.asarray(v).tolist() for v in final]}
