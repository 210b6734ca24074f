"""``tf.function`` and ``tf.compat.v1.wrap_function`` uses in a TF1 graph, written once against
either framework, for ``tools/make_compat_v1_last_fixtures.py`` (real TensorFlow with v2
behaviour disabled) and ``test_function.py`` (ferroflow). ``describe(tf)`` returns what a
TF1 program sees: how often each Python function was traced after each call, the op types of
the calls, the values and gradients a session computes, variable names, and the errors raised
(by class name).
"""

from __future__ import annotations

import numpy as np


def _run(tf, fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _tolist(values):
    return [np.asarray(v).tolist() for v in values]


def _error(fn):
    try:
        fn()
    except Exception as e:  # the class is what is compared
        return type(e).__name__
    return None


def retracing(tf):
    out = {}
    with tf.Graph().as_default():
        traces = []

        @tf.function
        def f(x, y=2.0):
            traces.append(1)
            return x * y + 1.0

        x = tf.placeholder(tf.float32, [None], name="x")
        calls = [
            lambda: f(tf.constant(3.0)),
            lambda: f(tf.constant(4.0)),
            lambda: f(tf.constant([4.0, 5.0])),
            lambda: f(tf.constant(4.0), 3.0),
            lambda: f(x),
            lambda: f(tf.constant([7.0, 8.0])),  # served by the [None] trace? (TF: a new exact trace)
            lambda: f(1.0),
            lambda: f(np.float32(1.5)),
            lambda: f(tf.constant([1.0, 2.0]), y=tf.constant(0.5)),
        ]
        results, counts = [], []
        for call in calls:
            results.append(call())
            counts.append(len(traces))
        out["trace_counts"] = counts
        out["op_types"] = sorted({r.op.type for r in results})
        grad = tf.gradients(results[4], x)[0]
        values = _run(tf, results + [grad], {x: [1.0, 2.0, 3.0]})
        out["values"] = _tolist(values)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def k(v):
            traces.append(2)
            return v * 2.0

        k(tf.constant([1.0, 2.0]))
        k(tf.constant([1.0]))
        out["signature_traces"] = traces.count(2)
        out["signature_errors"] = [
            _error(lambda: k(tf.constant([[1.0]]))),
            _error(lambda: k(tf.constant([1, 2]))),
            _error(lambda: k(tf.constant([1.0]), tf.constant([1.0]))),
        ]

        @tf.function(reduce_retracing=True)
        def r(v):
            traces.append(3)
            return tf.reduce_sum(v)

        relaxed = [r(tf.ones([n])) for n in (2, 3, 4, 5)]
        out["relaxed_traces"] = traces.count(3)
        out["relaxed_values"] = _tolist(_run(tf, relaxed))
    return out


def variables_and_nesting(tf):
    out = {}
    with tf.Graph().as_default():

        class Scale(tf.Module):
            def __init__(self):
                super().__init__()
                self.w = None

            @tf.function
            def __call__(self, x):
                if self.w is None:
                    self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
                return tf.matmul(x, self.w)

        m = Scale()
        x = tf.constant([[1.0, -1.0]])
        y1 = m(x)
        y2 = m(x * 2.0)
        out["module_variables"] = [v.name for v in m.trainable_variables]
        loss = tf.reduce_sum(y1 * y2)
        gw, gx = tf.gradients(loss, [m.w, x])

        @tf.function
        def inner(v):
            return v * v

        @tf.function
        def outer(v):
            return tf.cond(v > 0.0, lambda: inner(v), lambda: -inner(v)) + inner(2.0 * v)

        v = tf.placeholder(tf.float32, [], name="v")
        o = outer(v)
        (dv,) = tf.gradients(o, v)

        @tf.function
        def makes_variables(v):
            return tf.Variable(1.0) * v

        out["every_call_error"] = _error(lambda: makes_variables(tf.constant(1.0)))

        @tf.function
        def branchy(v):
            if v > 0.0:
                return v
            return -v

        out["python_if_error"] = _error(lambda: branchy(tf.constant(1.0)))
        no_autograph = tf.function(branchy.python_function, autograph=False)
        out["python_if_error_without_autograph"] = _error(lambda: no_autograph(tf.constant(1.0)))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([y1, y2, gw, gx])
            values += sess.run([o, dv], {v: 1.5}) + sess.run([o, dv], {v: -0.5})
        out["values"] = _tolist(values)
    return out


def wrapped(tf):
    out = {}
    with tf.Graph().as_default():

        def model(x):
            with tf.variable_scope("model"):
                w = tf.get_variable("w", [3], initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
            return {"y": tf.reduce_sum(x * w), "sq": tf.square(x, name="sq")}

        fn = tf.compat.v1.wrap_function(model, [tf.TensorSpec([3], tf.float32)])
        out["variables"] = [v.name for v in fn.variables]
        out["global_variables"] = [v.name for v in tf.global_variables()]
        x = tf.placeholder(tf.float32, [3], name="x")
        result = fn(x)
        out["structure"] = sorted(result)
        (gx,) = tf.gradients(result["y"], x)
        (gw,) = tf.gradients(result["y"], fn.variables[0])
        squares = fn.prune(feeds=fn.inputs[0], fetches=fn.graph.get_tensor_by_name("sq:0"))
        pruned = squares(tf.constant([1.0, 2.0, 3.0]))

        def with_placeholder():
            p = tf.compat.v1.placeholder(tf.float32, [2], name="p")
            return p * 10.0

        fp = tf.compat.v1.wrap_function(with_placeholder, [])
        feeds_p = fp.prune(feeds=[fp.graph.get_tensor_by_name("p:0")], fetches=fp.outputs[0])
        from_p = feeds_p(tf.constant([1.0, 2.0]))
        out["call_errors"] = [_error(lambda: fn(tf.constant([1, 2, 3]))), _error(lambda: fn(tf.ones([4])))]
        values = _run(tf, [result["y"], result["sq"], gx, gw, pruned, from_p], {x: [1.0, 2.0, 3.0]})
        out["values"] = _tolist(values)
    return out


def describe(tf):
    return {"retracing": retracing(tf), "variables_and_nesting": variables_and_nesting(tf), "wrapped": wrapped(tf)}
