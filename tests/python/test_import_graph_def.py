"""tf.import_graph_def: name prefixes, input_map rewiring, return_elements and TensorFlow's errors.

The error messages are compared with what real TensorFlow raised for the same calls
(``tools/make_graph_util_fixtures.py``, ``tests/fixtures/graph_util/expected.json``).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.framework import graph_pb2, op_def_pb2

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "graph_util"
TF_ERRORS = json.loads((FIXTURES / "expected.json").read_text())["import_errors"]


def _source():
    """x, y placeholders -> s = x + y -> r = relu(s) (after ^check) -> out = r * 2."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 2], name="y")
        s = tf.add(x, y, name="s")
        check = tf.no_op(name="check")
        with tf.control_dependencies([check]):
            r = tf.nn.relu(s, name="r")
        tf.multiply(r, 2.0, name="out")
    return g.as_graph_def()


def _names(graph):
    return [op.name for op in graph.get_operations()]


def test_default_prefix_is_import_and_unique():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        assert tf.import_graph_def(gd) is None
        tf.import_graph_def(gd)
        with tf.name_scope("outer"):
            (out,) = tf.import_graph_def(gd, return_elements=["out:0"])
        (named,) = tf.import_graph_def(gd, return_elements=["out"], name="net")
    assert _names(g)[:7] == ["import/x", "import/y", "import/s", "import/check", "import/r", "import/out/y",
                             "import/out"]
    assert "import_1/out" in _names(g)
    assert out.name == "outer/import/out:0"
    assert named.name == "net/out" and isinstance(named, tf.Operation)
    r = g.get_operation_by_name("import/r")
    assert [op.name for op in r.control_inputs] == ["import/check"]
    assert [t.name for t in r.inputs] == ["import/s:0"]


def test_empty_name_keeps_names_and_uniquifies_clashes():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="s")
        first = tf.import_graph_def(gd, return_elements=["out:0", "s:0"], name="")
        second = tf.import_graph_def(gd, return_elements=["out:0", "s"], name="")
    assert [t.name for t in first] == ["out:0", "s_1:0"]
    assert [e.name for e in second] == ["out_1:0", "s_2"]
    assert [t.name for t in g.get_operation_by_name("r").inputs] == ["s_1:0"]
    assert [t.name for t in g.get_operation_by_name("r_1").inputs] == ["s_2:0"]


def test_input_map_rewires_data_inputs_and_runs():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        b = tf.constant([[10.0, -20.0]], name="b")
        out, s, x = tf.import_graph_def(gd, input_map={"x:0": a, "y": b}, return_elements=["out:0", "s", "x:0"])
    assert [t.name for t in s.inputs] == ["a:0", "b:0"]
    assert x is a  # a mapped tensor is returned as what it maps to
    assert "import/x" in _names(g) and "import/y" in _names(g)  # the mapped nodes are still imported
    with tf.Session(graph=g) as sess:
        got = sess.run(out, {a: [[1.0, 2.0], [3.0, 30.0]]})
    np.testing.assert_array_equal(got, [[22.0, 0.0], [26.0, 20.0]])


def test_input_map_rewires_control_inputs():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        gate = tf.constant(0.0, name="gate")
        (r,) = tf.import_graph_def(gd, input_map={"^check": gate}, return_elements=["r"])
        (r2,) = tf.import_graph_def(gd, input_map={"^check": gate.op}, return_elements=["r"], name="op_value")
    assert [op.name for op in r.control_inputs] == ["gate"]
    assert [op.name for op in r2.control_inputs] == ["gate"]


def test_input_map_input_need_not_exist_when_mapped():
    gd = graph_pb2.GraphDef()
    node = gd.node.add(name="neg", op="Neg", input=["outside:0"])
    node.attr["T"].type = tf.float32.as_datatype_enum
    g = tf.Graph()
    with g.as_default():
        v = tf.constant([1.5, -2.0])
        (neg,) = tf.import_graph_def(gd, input_map={"outside:0": v}, return_elements=["neg:0"])
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(neg), [-1.5, 2.0])


def test_input_map_converts_non_tensor_values():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        (out,) = tf.import_graph_def(gd, input_map={"x:0": [[1.0, -5.0]], "y:0": np.float32([[1.0, 1.0]])},
                                     return_elements=["out:0"])
        assert [t.op.name for t in g.get_operation_by_name("import/s").inputs] == ["import/_inputs/Const",
                                                                                  "import/_inputs/Const_1"]
        with pytest.raises(ValueError, match="requires a non-empty `name` if `input_map` contains non-Tensor"):
            tf.import_graph_def(gd, input_map={"x:0": [[1.0, 2.0]]}, name="")
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(out), [[4.0, 0.0]])


@pytest.mark.parametrize("case, kwargs", [
    ("input_map_missing", lambda: {"input_map": {"nope:0": tf.constant(1.0)}}),
    ("input_map_missing_no_index", lambda: {"input_map": {"nope": tf.constant(1.0)}}),
    ("input_map_bad_index", lambda: {"input_map": {"x:3": tf.constant(1.0)}}),
    ("input_map_missing_control", lambda: {"input_map": {"^nope": tf.constant(1.0)}}),
    ("return_op_missing", lambda: {"return_elements": ["nope"]}),
    ("return_tensor_missing", lambda: {"return_elements": ["nope:0"]}),
    ("return_tensor_bad_index", lambda: {"return_elements": ["x:5"]}),
])
def test_errors_match_tensorflow(case, kwargs):
    gd = graph_pb2.GraphDef.FromString((FIXTURES / "frozen_mlp.pb").read_bytes())
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            tf.import_graph_def(gd, **kwargs())
    assert str(info.value) == TF_ERRORS[case]


def test_missing_names_leave_the_graph_unchanged():
    gd = _source()
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match=r"\[nope:0\]"):
            tf.import_graph_def(gd, input_map={"nope:0": tf.constant(1.0, name="c")})
        with pytest.raises(ValueError, match="Requested return node 'nope'"):
            tf.import_graph_def(gd, return_elements=["out", "nope"])
    assert _names(g) == ["c"]


def test_argument_type_errors():
    gd = _source()
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="must be a GraphDef proto"):
            tf.import_graph_def("not a graph")
        with pytest.raises(TypeError, match="`input_map` must be a dictionary"):
            tf.import_graph_def(gd, input_map=[("x:0", tf.constant(1.0))])
        with pytest.raises(TypeError, match="All keys for argument `input_map` must be strings"):
            tf.import_graph_def(gd, input_map={0: tf.constant(1.0)})
        with pytest.raises(TypeError, match="`return_elements` must be a list of strings"):
            tf.import_graph_def(gd, return_elements=["out", 3])
        with pytest.raises(ValueError, match="Cannot convert 'a:b:c' to a tensor name"):
            tf.import_graph_def(gd, return_elements=["a:b:c"])


def test_malformed_graph_def_is_a_value_error():
    gd = graph_pb2.GraphDef()
    gd.node.add(name="n", op="Identity", input=["ghost"])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="ghost"):
            tf.import_graph_def(gd)


def test_producer_op_list_drops_unknown_default_attrs():
    gd = _source()
    relu = next(n for n in gd.node if n.name == "r")
    relu.attr["future_attr"].i = 7
    producer = op_def_pb2.OpList()
    op = producer.op.add(name="Relu")
    attr = op.attr.add(name="future_attr", type="int")
    attr.default_value.i = 7
    with tf.Graph().as_default():
        (kept,) = tf.import_graph_def(gd, return_elements=["r"])
        (dropped,) = tf.import_graph_def(gd, return_elements=["r"], producer_op_list=producer)
    assert "future_attr" in kept.node_def.attr
    assert "future_attr" not in dropped.node_def.attr
    assert "future_attr" in relu.attr  # the caller's GraphDef is not changed


def test_public_names():
    import ferroflow.compat.v1 as v1

    assert tf.import_graph_def is v1.import_graph_def is tf.graph_util.import_graph_def
    assert v1.graph_util.import_graph_def is tf.import_graph_def
