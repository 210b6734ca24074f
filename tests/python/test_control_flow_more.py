"""Control flow, second round, beyond the TensorFlow fixtures of test_control_flow_more_golden.py:
the graph ``tf.switch_case`` builds (one Case / StatelessCase op over a list of functions, as
TensorFlow builds it) and its GraphDef round trip, its errors, and TensorArray.grad's limits."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf


def _switch_graph(stateful):
    g = tf.Graph()
    with g.as_default():
        i = tf.placeholder(tf.int32, [], name="i")
        x = tf.placeholder(tf.float32, [2], name="x")
        v = tf.Variable(0.0, name="v")
        if stateful:
            branches = [lambda: x + tf.assign_add(v, 1.0), lambda: x * 2.0]
        else:
            branches = [lambda: x + 1.0, lambda: x * 2.0, lambda: tf.sin(x)]
        y = tf.switch_case(i, branches)
    return g, i, x, v, y


@pytest.mark.parametrize("stateful", [False, True])
def test_switch_case_builds_one_case_op(stateful):
    g, _, _, _, y = _switch_graph(stateful)
    case = g.get_operation_by_name("switch_case/indexed_case")
    assert case.type == ("Case" if stateful else "StatelessCase")
    assert y.op.type == "Identity" and y.op.name == "switch_case/indexed_case/Identity"
    assert y.op.inputs[0].op is case
    assert not any(op.type == "If" for op in g.get_operations())
    gd = g.as_graph_def()
    node = next(n for n in gd.node if n.name == "switch_case/indexed_case")
    branches = [f.name for f in node.attr["branches"].list.func]
    assert len(branches) == (2 if stateful else 3)
    assert all(name.startswith("switch_case_indexed_case_branch") for name in branches)
    assert set(branches) <= {f.signature.name for f in gd.library.function}
    assert list(node.attr["Tout"].list.type) == [tf.float32.as_datatype_enum]


def test_switch_case_graph_def_round_trip_runs():
    from ferroflow.framework.meta_graph import import_graph_def_nodes

    g, _, _, _, _ = _switch_graph(False)
    gd = g.as_graph_def()
    with tf.Graph().as_default() as g2:
        import_graph_def_nodes(gd)
        y = g2.get_tensor_by_name("switch_case/indexed_case/Identity:0")
        with tf.Session() as sess:
            x = np.array([0.5, -1.0], np.float32)
            for k, want in [(0, x + 1), (1, x * 2), (2, np.sin(x)), (7, np.sin(x)), (-3, np.sin(x))]:
                got = sess.run(y, {"i:0": k, "x:0": x})
                np.testing.assert_allclose(got, want, rtol=1e-6)


def test_switch_case_gradient_graph_has_a_case_gradient():
    g, i, x, _, y = _switch_graph(False)
    with g.as_default():
        (gx,) = tf.gradients(tf.reduce_sum(y * y), [x])
        with tf.Session() as sess:
            xv = np.array([0.5, -1.0], np.float32)
            for k, want in [(0, 2 * (xv + 1)), (1, 8 * xv), (5, 2 * np.sin(xv) * np.cos(xv))]:
                np.testing.assert_allclose(sess.run(gx, {i: k, x: xv}), want, rtol=1e-5)
    assert any(op.type == "CaseGrad" for op in g.get_operations())


def test_switch_case_runs_only_the_taken_side_effect():
    g, i, x, v, y = _switch_graph(True)
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, {i: 1, x: [0.0, 0.0]})
        assert sess.run(v) == 0.0
        np.testing.assert_allclose(sess.run(y, {i: 0, x: [1.0, 2.0]}), [2.0, 3.0])
        assert sess.run(v) == 1.0


def test_switch_case_index_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Input 'branch_index' of 'StatelessCase' Op has type int64"):
            tf.switch_case(tf.constant(1, tf.int64), [lambda: tf.constant(1.0), lambda: tf.constant(2.0)])
        with pytest.raises(TypeError, match="must have the same number, type, and overall structure"):
            tf.switch_case(tf.constant(1), [lambda: tf.constant(1.0), lambda: tf.constant(2)])
        p = tf.placeholder(tf.int32, None, name="p")
        y = tf.switch_case(p, [lambda: tf.constant(1.0), lambda: tf.constant(2.0)])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"branch_index must be a scalar, but it has shape \[2\]"):
                sess.run(y, {p: [1, 2]})


def test_tensor_array_grad_is_reached_through_its_flow_only():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, 3).unstack([1.0, 2.0, 3.0])
        g = ta.grad("src").write(0, 4.0)
        assert ta.grad("src", g.flow) is not None
        other = ta.grad("other")  # another source: another array
        with pytest.raises(NotImplementedError, match="a gradient array for source 'src' was already made"):
            ta.grad("src")
        with tf.Session() as sess:
            size, r = sess.run([other.size(), ta.grad("src", g.flow).read(0)])
        assert size == 3 and r == 4.0


def test_read_twice_error_names_the_read():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, 2, name="arr").unstack([1.0, 2.0])
        a = ta.read(1)
        with tf.control_dependencies([a]):
            b = ta.read(1, name="second")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(b)
    assert "second" in str(info.value)
    assert "TensorArray arr: Could not read index 1 twice" in str(info.value)


def test_tensor_array_op_takes_the_scope_name():
    # TensorFlow 2.21 (TF1 control flow): arr, arr_1, TensorArray, TensorArray_1.
    with tf.Graph().as_default():
        names = [tf.TensorArray(tf.float32, 2, name="arr").flow.op.name,
                 tf.TensorArray(tf.float32, 2, name="arr").flow.op.name,
                 tf.TensorArray(tf.float32, 2).flow.op.name,
                 tf.TensorArray(tf.float32, 2, tensor_array_name="foo").flow.op.name]
    assert names == ["arr", "arr_1", "TensorArray", "TensorArray_1"]


@pytest.mark.parametrize("clear_after_read", [True, False])
def test_tensor_array_refuses_a_write_to_an_element_already_read(clear_after_read):
    # TensorFlow 2.21 (TF1 control flow), either way: "TensorArray arr_0: Could not write to TensorArray
    # index 0 because it has already been read."
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, 2, name="arr", clear_after_read=clear_after_read).write(0, 1.0)
        r = ta.read(0)
        with tf.control_dependencies([r]):
            again = ta.write(0, 3.0)
        fine = ta.write(1, 2.0).read(1)
        with tf.Session() as sess:
            assert sess.run(fine) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="TensorArray arr: Could not write to TensorArray index 0 because it has "
                                     "already been read"):
                sess.run(again.flow)


def test_tensor_array_second_write_names_the_array():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, 2, name="arr").write(0, 1.0).write(0, 2.0)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="TensorArray arr: Could not write to TensorArray index 0 because it has "
                                     "already been written to"):
                sess.run(ta.flow)


def test_tensor_array_split_checks_lengths_as_tensorflow():
    # TensorFlow 2.21 (TF1 control flow) on a 3-vector: lengths [2, 2] fail the sum check; [1, 2] fail the
    # inferred element shape at index 1; with infer_shape=False, [1, 2] splits.
    with tf.Graph().as_default():
        value = tf.placeholder(tf.float32, [None])
        lengths = tf.placeholder(tf.int64, [None])
        inferred = tf.TensorArray(tf.float32, 2, name="arr").split(value, lengths)
        free = tf.TensorArray(tf.float32, 2, infer_shape=False).split(value, lengths)
        feed = {value: np.arange(3.0, dtype=np.float32)}
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Expected sum of lengths to be equal to values.shape\[0\], but sum of "
                                     r"lengths is 4 and value's shape is: \[3\]"):
                sess.run(inferred.read(0), {**feed, lengths: [2, 2]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"index 1 because the value shape is \[2\] which is incompatible with the "
                                     r"TensorArray's inferred element shape: \[1\]"):
                sess.run(inferred.read(0), {**feed, lengths: [1, 2]})
            np.testing.assert_array_equal(sess.run(free.read(1), {**feed, lengths: [1, 2]}), [1.0, 2.0])
