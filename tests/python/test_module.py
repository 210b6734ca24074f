"""tf.Module in a TF1 graph: name scopes fixed at construction, variable and submodule walks,
``with_name_scope``; everything ``_module_models.describe`` sees equals what TensorFlow 2.21 saw
(``tests/fixtures/compat_v1_last/module.json``, from ``tools/make_compat_v1_last_fixtures.py``).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import _module_models
import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "compat_v1_last"


def test_describe_matches_tensorflow():
    expected = json.loads((FIXTURES / "module.json").read_text())
    got = _module_models.describe(tf)
    values = got.pop("values")
    want_values = expected.pop("values")
    assert got == expected
    for g, w in zip(values, want_values):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_module_variables_are_graph_variables_and_checkpoint(tmp_path):
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            with self.name_scope:
                self.k = tf.Variable(3.0, name="k")

    with tf.Graph().as_default():
        m = Scale()
        assert m.name == "scale" and m.name_scope.name == "scale/"
        assert tf.trainable_variables() == [m.k]
        ckpt = tf.train.Checkpoint(model=m)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(m.k * 2.0) == 6.0
            path = ckpt.save(str(tmp_path / "ckpt"), session=sess)
            sess.run(m.k.assign(5.0))
            ckpt.restore(path).run_restore_ops(sess)
            assert sess.run(m.k) == 3.0
        keys = [name for name, _ in tf.train.list_variables(path)]
        assert "model/k/.ATTRIBUTES/VARIABLE_VALUE" in keys


def test_names_and_walk_details():
    assert tf.Module.__init__.__code__.co_varnames[:2] == ("self", "name")
    with pytest.raises(ValueError, match="'a b' is not a valid module name"):
        tf.Module(name="a b")

    class HTTPServer2Layer(tf.Module):
        pass

    with tf.Graph().as_default():
        assert HTTPServer2Layer().name == "http_server2_layer"
        a, b, c = tf.Module(name="a"), tf.Module(name="b"), tf.Module(name="c")
        a.b = b
        b.c = c
        c.back = a  # a cycle: each module is still listed once
        assert a.submodules == (b, c)
        assert b.submodules == (c, a)
        v = tf.Variable(1.0, name="v")
        a.twice = [v, (v, {"x": v})]
        assert a.variables == (v,)
        paths = [p for p, _ in a._flatten(predicate=lambda x: x is v, with_path=True)]
        # TensorFlow 2.21 lists these six: the cycle back to ``a`` is walked once more, not recursed.
        inner = [("twice", 0), ("twice", 1, 0), ("twice", 1, 1, "x")]
        assert paths == inner + [("b", "c", "back") + p for p in inner]
        assert list(a._flatten(recursive=False, predicate=lambda x: isinstance(x, tf.Module))) == [b]
