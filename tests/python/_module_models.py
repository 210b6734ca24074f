"""``tf.Module`` uses written once against either framework, for
``tools/make_compat_v1_last_fixtures.py`` (real TensorFlow, graph mode) and ``test_module.py``
(ferroflow). ``describe(tf)`` builds in a new graph and returns what a TF1 program sees of the
modules: names, name scopes, the variables each property lists, op names of calls, and values.
"""

from __future__ import annotations

import numpy as np


def _classes(tf):
    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            with self.name_scope:
                w = np.arange(n_in * n_out, dtype=np.float32).reshape(n_in, n_out) / 10.0
                self.w = tf.Variable(w, name="w")
                self.b = tf.Variable(np.full([n_out], 0.5, np.float32), name="b")
                self.calls = tf.Variable(0, name="calls", trainable=False)

        @tf.Module.with_name_scope
        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

    class MLP(tf.Module):
        def __init__(self, sizes, name=None):
            super().__init__(name=name)
            self.layers = []
            with self.name_scope:
                for n_in, n_out in zip(sizes, sizes[1:]):
                    self.layers.append(Dense(n_in, n_out))
            self.extra = {"scale": tf.Variable(2.0, name="scale"), "alias": self.layers[0]}

        @tf.Module.with_name_scope
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x * self.extra["scale"]

    return Dense, MLP


def _names(xs):
    return [x.name for x in xs]


def describe(tf):
    Dense, MLP = _classes(tf)
    out = {}
    with tf.Graph().as_default():
        first = MLP([3, 4, 2])
        second = MLP([2, 2], name="head")
        with tf.name_scope("outer"):
            inner = Dense(2, 1)
        unnamed = tf.Module()
        for key, m in [("first", first), ("second", second), ("inner", inner), ("unnamed", unnamed)]:
            out[key] = {
                "name": m.name,
                "scope": m.name_scope.name,
                "variables": _names(m.variables),
                "trainable": _names(m.trainable_variables),
                "non_trainable": _names(m.non_trainable_variables),
                "submodules": [s.name_scope.name for s in m.submodules],
            }
        x = tf.constant(np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3))
        y1 = first(x)
        y2 = inner(second(first(x)))
        out["calls"] = [y1.name, y2.name]
        out["global_variables"] = _names(tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            v1, v2 = sess.run([y1, y2])
        out["values"] = [v1.tolist(), v2.tolist()]
    return out
