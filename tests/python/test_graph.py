"""Graphs: naming, scopes, control dependencies, devices, collections, lookup."""

import numpy as np
import pytest

import ferroflow as tf


def test_unique_names_follow_tensorflow():
    a = tf.constant(1.0, name="c")
    b = tf.constant(1.0, name="c")
    c = tf.constant(1.0, name="c_1")
    assert [a.op.name, b.op.name, c.op.name] == ["c", "c_1", "c_1_1"]
    assert a.name == "c:0"
    g = tf.get_default_graph()
    assert g.unique_name("Adam") == "Adam"
    assert g.unique_name("Adam") == "Adam_1"
    assert g.unique_name("foo", mark_as_used=False) == "foo"
    assert g.unique_name("foo", mark_as_used=False) == "foo"


def test_name_scopes_nest_and_uniquify():
    with tf.name_scope("layer") as scope:
        assert scope == "layer/"
        x = tf.constant(1.0, name="x")
        with tf.name_scope("inner"):
            y = tf.add(x, x)
    with tf.name_scope("layer") as scope2:
        z = tf.constant(2.0, name="x")
    with tf.name_scope("layer/"):
        w = tf.constant(3.0, name="abs")
    with tf.name_scope(None):
        top = tf.constant(0.0, name="top")
    assert x.op.name == "layer/x"
    assert y.op.name == "layer/inner/Add"
    assert scope2 == "layer_1/"
    assert z.op.name == "layer_1/x"
    assert w.op.name == "layer/abs"
    assert top.op.name == "top"
    with tf.name_scope(None, "default", [x]) as s:
        assert s == "default/"
    with pytest.raises(ValueError, match="not a valid scope name"):
        with tf.name_scope("bad name!"):
            pass


def test_operator_names_match_tensorflow():
    a = tf.constant(1.0)
    assert (a + a).op.name == "add"
    assert (a * a).op.name == "mul"
    assert (a - a).op.name == "sub"
    assert (a / a).op.name == "truediv"
    assert tf.reduce_sum(a).op.name == "Sum"


def test_control_dependencies_order_and_clear():
    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0)
    with tf.control_dependencies([inc]):
        read = tf.identity(v)
        with tf.control_dependencies(None):
            free = tf.identity(v)
    assert free.op.control_inputs == []
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(read) == 1.0
        assert sess.run(read) == 2.0
        assert sess.run(free) == 2.0


def test_control_dependencies_skip_ops_already_inside_the_block():
    c = tf.constant(1.0)
    with tf.control_dependencies([c]):
        a = tf.identity(c)
        b = tf.identity(a)
    assert a.op.control_inputs == [] or c.op in a.op.control_inputs
    assert b.op.control_inputs == []


def test_group_and_tuple():
    v = tf.Variable(0)
    w = tf.Variable(10)
    g = tf.group(tf.assign_add(v, 1), tf.assign_sub(w, 1), name="step")
    assert g.name == "step" and g.type == "NoOp"
    t1, t2 = tf.tuple([tf.constant(1), tf.constant(2)], control_inputs=[g])
    assert all(t.op.type == "Identity" and len(t.op.control_inputs) == 1 for t in (t1, t2))
    with tf.Session() as sess:
        sess.run([v.initializer, w.initializer])
        sess.run(g)
        assert sess.run([v, w]) == [1, 9]
        assert sess.run([t1, t2]) == [1, 2]
        assert sess.run([v, w]) == [2, 8]
    with pytest.raises(ValueError, match="Unknown keyword"):
        tf.group(g, bogus=1)


def test_devices_are_recorded_and_merged():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0)
        with tf.device("/cpu:0"):
            b = tf.constant(2.0)
        with tf.device(None):
            c = tf.constant(3.0)
    with tf.device(lambda op: "/device:CPU:1" if op.type == "Const" else ""):
        d = tf.constant(4.0)
    assert a.device == "/job:ps/task:0"
    assert b.device == "/job:ps/task:0/device:CPU:0"
    assert c.device == ""
    assert d.device == "/device:CPU:1"


def test_collections():
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "more"], 2)
    assert tf.get_collection("things") == [1, 2]
    ref = tf.get_collection_ref("things")
    ref.append(3)
    assert tf.get_collection("things") == [1, 2, 3]
    copy = tf.get_collection("things")
    copy.append(4)
    assert tf.get_collection("things") == [1, 2, 3]
    with tf.variable_scope("a"):
        va = tf.get_variable("w", [1])
    with tf.variable_scope("b"):
        tf.get_variable("w", [1])
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="a") == [va]
    assert set(tf.get_default_graph().get_all_collection_keys()) >= {"things", "more", "variables"}


def test_lookup_by_name():
    x = tf.constant([1, 2], name="x")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("x:0") is x
    assert g.get_operation_by_name("x") is x.op
    with pytest.raises(ValueError, match="refers to an Operation, not a Tensor"):
        g.get_tensor_by_name("x")
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("y:0")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("x:3")
    assert g.as_graph_element("x") is x.op


def test_default_graph_stack_and_reset():
    g = tf.Graph()
    outer = tf.get_default_graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is outer
    tf.reset_default_graph()
    assert tf.get_default_graph() is not outer


def test_finalize_blocks_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_mixing_graphs_is_an_error():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
    b = tf.constant(2.0)
    with pytest.raises(ValueError, match="same graph"):
        tf.add(a, b)


def test_tensor_basics():
    x = tf.placeholder(tf.float32, [None, 3], name="in")
    assert x.shape.as_list() == [None, 3]
    assert x.get_shape()[1].value == 3
    assert int(x.shape[1]) == 3
    assert x.shape.ndims == 2 and x.ndim == 2
    assert str(x) == 'Tensor("in:0", shape=(?, 3), dtype=float32)'
    x.set_shape([4, 3])
    assert x.shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="not compatible"):
        x.set_shape([5, 3])
    with pytest.raises(TypeError, match="as a Python `bool`"):
        bool(x)
    with pytest.raises(TypeError):
        len(x)
    parts = list(x)
    assert len(parts) == 4 and parts[0].shape.as_list() == [3]
    y = tf.identity(x)
    assert y.op.inputs[0] is x
    assert y.op in [op for op in x.consumers()]
    assert {x: 1}[x] == 1


def test_construction_errors_name_op_and_shapes():
    a = tf.constant(np.zeros((2, 3), np.float32))
    b = tf.constant(np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError) as info:
        tf.matmul(a, b, name="mm")
    msg = str(info.value)
    assert "mm" in msg and "[2,3]" in msg and "[4,5]" in msg
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)|\[2,3\].*\[4,5\]"):
        tf.add(a, b)
    with pytest.raises(TypeError, match="float64"):
        tf.add(a, tf.constant(np.zeros((2, 3), np.float64)))
    with pytest.raises(TypeError, match="Expected int32"):
        tf.constant(1, dtype=tf.int32) + 1.5


def test_get_attr_and_node_def():
    x = tf.placeholder(tf.float16, [2], name="p")
    assert x.op.get_attr("dtype") == tf.float16
    assert x.op.get_attr("shape").as_list() == [2]
    y = tf.identity(x, name="id")
    assert y.op.node_def.input == ["p"]
    assert y.op.node_def.op == "Identity"
    with pytest.raises(ValueError, match="no attr"):
        x.op.get_attr("nope")


def test_static_values_fold_through_shape_ops():
    x = tf.placeholder(tf.float32, [None, 7])
    r = tf.reshape(x, tf.stack([tf.shape(x)[0], 7, 1]))
    assert r.shape.as_list() == [None, 7, 1]
    assert tf.get_static_value(tf.placeholder(tf.float32)) is None
    np.testing.assert_array_equal(tf.get_static_value(tf.shape(tf.zeros([2, 5]))), [2, 5])


def test_convert_to_tensor_rules():
    assert tf.convert_to_tensor(1.0).dtype == tf.float32
    assert tf.convert_to_tensor(1).dtype == tf.int32
    assert tf.convert_to_tensor(2**40).dtype == tf.int64
    assert tf.convert_to_tensor(np.float64(1.0)).dtype == tf.float64
    assert tf.convert_to_tensor([True, False]).dtype == tf.bool
    assert tf.convert_to_tensor("s").dtype == tf.string
    t = tf.constant(1.0)
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(t, dtype=tf.int32)
    n = tf.placeholder(tf.int32, [])
    packed = tf.convert_to_tensor([n, 3])
    assert packed.op.type == "Pack" and packed.shape.as_list() == [2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(packed, {n: 5}), [5, 3])
