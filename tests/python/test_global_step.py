"""The global step (tf.train.create_global_step / get_global_step / get_or_create_global_step /
assert_global_step / global_step) with TF1 semantics, checked against TensorFlow 2.21's tf.compat.v1."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

API = Path(__file__).resolve().parents[1] / "fixtures" / "api" / "tf_compat_v1_api.json"
NAMES = ["create_global_step", "get_global_step", "get_or_create_global_step", "assert_global_step", "global_step"]


def test_api_arguments_and_defaults_match_tensorflow():
    entries = json.loads(API.read_text())["modules"]["train"]
    for name in NAMES:
        params = inspect.signature(getattr(tf.train, name)).parameters
        assert list(params) == entries[name]["args"], name
        defaults = {k: repr(p.default) for k, p in params.items() if p.default is not inspect.Parameter.empty}
        assert defaults == entries[name]["defaults"], name
        assert getattr(tf.compat.v1.train, name) is getattr(tf.train, name)


def test_create_global_step():
    assert tf.train.get_global_step() is None
    gs = tf.train.create_global_step()
    assert isinstance(gs, tf.Variable)
    assert gs.op.name == "global_step" and gs.name == "global_step:0"
    assert gs.dtype.base_dtype == tf.int64
    assert gs.shape.as_list() == []
    assert not gs.trainable
    assert gs in tf.global_variables()
    assert gs not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(gs) == 0
        sess.run(tf.assign_add(gs, 3))
        value = tf.train.global_step(sess, gs)
        assert value == 3 and type(value) is int


def test_create_twice_is_an_error():
    tf.train.create_global_step()
    with pytest.raises(ValueError, match='"global_step" already exists.'):
        tf.train.create_global_step()


def test_get_or_create_is_idempotent_and_ignores_name_scopes():
    with tf.name_scope("tower"):
        gs = tf.train.get_or_create_global_step()
    assert gs.op.name == "global_step"
    assert tf.train.get_or_create_global_step() is gs
    assert tf.train.get_global_step() is gs


def test_variable_scope_still_prefixes_the_name():
    # TensorFlow creates it with get_variable, so only the name scope is reset (TF 2.21: "foo/global_step").
    with tf.variable_scope("foo"):
        gs = tf.train.create_global_step()
    assert gs.op.name == "foo/global_step"
    assert tf.train.get_global_step() is gs


def test_other_graph():
    g = tf.Graph()
    gs = tf.train.get_or_create_global_step(g)
    assert gs.graph is g
    assert tf.train.get_global_step() is None
    assert tf.train.get_global_step(g) is gs
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step(g)


def test_found_by_name_when_not_in_collection():
    v = tf.Variable(np.int64(5), name="global_step")
    found = tf.train.get_global_step()
    assert isinstance(found, tf.Tensor) and found.name == "global_step:0"
    assert found.op is v.op
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert tf.train.global_step(sess, found) == 5


def test_float_global_step_is_a_type_error():
    tf.Variable(1.5, name="global_step")
    with pytest.raises(TypeError, match='does not have integer type'):
        tf.train.get_global_step()
    with pytest.raises(TypeError, match='does not have integer type'):
        tf.train.get_or_create_global_step()


def test_several_in_collection_gives_none():
    for i in range(2):
        v = tf.Variable(np.int64(i), name=f"step{i}")
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, v)
    assert tf.train.get_global_step() is None


def test_assert_global_step():
    with pytest.raises(TypeError, match='must be a Variable or Tensor: 3.'):
        tf.train.assert_global_step(3)
    with pytest.raises(TypeError, match="does not have integer type"):
        tf.train.assert_global_step(tf.constant(1.0))
    with pytest.raises(TypeError, match=r"is not scalar: \(2,\)"):
        tf.train.assert_global_step(tf.placeholder(tf.int64, [2]))
    # integer scalars pass, and so does a tensor whose shape is not fully known
    tf.train.assert_global_step(tf.placeholder(tf.int64, [None]))
    tf.train.assert_global_step(tf.constant(1, tf.int32))
    tf.train.assert_global_step(tf.Variable(np.int64(0)))
