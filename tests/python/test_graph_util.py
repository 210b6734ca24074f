"""tf.compat.v1.graph_util: freezing, extracting and pruning GraphDefs, checked against real TensorFlow.

The TensorFlow side comes from ``tools/make_graph_util_fixtures.py`` (fixtures in
``tests/fixtures/graph_util``): a fixed graph made by TensorFlow and the nodes TensorFlow's
``extract_sub_graph``, ``remove_training_nodes`` and ``convert_variables_to_constants`` return for it.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.framework import graph_pb2, node_def_pb2

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "graph_util"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


def _graph(name):
    return graph_pb2.GraphDef.FromString((FIXTURES / name).read_bytes())


def _rows(graph_def):
    """The fields the fixture records for each node (as ``make_graph_util_fixtures.node_rows`` does)."""
    rows = []
    for n in graph_def.node:
        row = {"name": n.name, "op": n.op, "input": list(n.input)}
        if n.op == "Const":
            row["dtype"] = int(n.attr["dtype"].type)
            row["value"] = tf.make_ndarray(n.attr["value"].tensor).tolist()
        if n.op == "Identity":
            row["T"] = int(n.attr["T"].type)
        rows.append(row)
    return rows


class _ReplaySession:
    """Answers ``run(list of tensor names)`` with the values TensorFlow's session gave for them."""

    def __init__(self):
        with np.load(FIXTURES / "variables.npz") as data:
            self.values = dict(data)
        self.fetched = []

    def run(self, fetches):
        self.fetched.append(list(fetches))
        return [self.values[name] for name in fetches]


# -- against TensorFlow's fixture ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case, dest", [("extract_out", ["out"]), ("extract_out_unused", ["unused_out", "out"])])
def test_extract_sub_graph_matches_tensorflow(case, dest):
    gd = _graph("ref_graph.pb")
    out = tf.graph_util.extract_sub_graph(gd, dest)
    assert _rows(out) == EXPECTED[case]
    assert out.versions == gd.versions
    assert isinstance(out, graph_pb2.GraphDef)


@pytest.mark.parametrize("case, protected", [("remove_training", None),
                                             ("remove_training_protected", ["ident", "check"])])
def test_remove_training_nodes_matches_tensorflow(case, protected):
    gd = _graph("ref_graph.pb")
    before = gd.SerializeToString()
    out = tf.graph_util.remove_training_nodes(gd, protected_nodes=protected)
    assert _rows(out) == EXPECTED[case]
    assert gd.SerializeToString() == before  # the input is left alone


@pytest.mark.parametrize("case, outputs, kwargs", [
    ("convert_out", ["out"], {}),
    ("convert_out_unused", ["out", "unused_out"], {}),
    ("convert_whitelist", ["out", "unused_out"], {"variable_names_whitelist": ["w", "unused"]}),
    ("convert_blacklist", ["out", "unused_out"], {"variable_names_blacklist": ["w"]}),
])
def test_convert_variables_to_constants_matches_tensorflow(case, outputs, kwargs):
    gd = _graph("ref_graph.pb")
    before = gd.SerializeToString()
    sess = _ReplaySession()
    out = tf.graph_util.convert_variables_to_constants(sess, gd, outputs, **kwargs)
    assert _rows(out) == EXPECTED[case]
    assert gd.SerializeToString() == before
    assert all(name.endswith(":0") for name in sess.fetched[0])


def test_convert_resource_variables_matches_tensorflow():
    """VarHandleOp -> Const (value fetched through <name>/Read/ReadVariableOp), ReadVariableOp -> Identity."""
    sess = _ReplaySession()
    out = tf.graph_util.convert_variables_to_constants(sess, _graph("resource_graph.pb"), ["out"])
    assert sess.fetched == [["rw/Read/ReadVariableOp:0", "rb/Read/ReadVariableOp:0"]]
    assert _rows(out) == EXPECTED["convert_resource"]
    reads = [n for n in out.node if n.name.endswith("ReadVariableOp")]
    assert reads and all(set(n.attr) <= {"T", "_class"} for n in reads)


def test_tensorflow_frozen_mlp_imports_and_runs():
    gd = _graph("frozen_mlp.pb")
    assert [{"name": n.name, "op": n.op, "input": list(n.input)} for n in gd.node] == EXPECTED["frozen_mlp"]
    with np.load(FIXTURES / "mlp.npz") as data:
        x, want = data["x"], data["probs"]
    g = tf.Graph()
    with g.as_default():
        (probs,) = tf.import_graph_def(gd, return_elements=["probs:0"], name="")
    with tf.Session(graph=g) as sess:
        got = sess.run(probs, {"x:0": x})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# -- freezing a ferroflow model --------------------------------------------------------------------------------------

def _trained_mlp():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        labels = tf.placeholder(tf.int32, [None], name="labels")
        with tf.variable_scope("hidden"):
            w1 = tf.get_variable("kernel", [4, 8])
            b1 = tf.get_variable("bias", [8], initializer=tf.zeros_initializer())
        with tf.variable_scope("logits"):
            w2 = tf.get_variable("kernel", [8, 3])
            b2 = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        logits = tf.add(tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2), b2, name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        step = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        rng = np.random.RandomState(0)
        data = rng.randn(32, 4).astype(np.float32)
        targets = (data[:, 0] > 0).astype(np.int32) + (data[:, 1] > 0).astype(np.int32)
        for _ in range(20):
            sess.run(step, {x: data, labels: targets})
    return g, sess, x, probs, data


def test_freeze_trained_model_and_reimport_bit_for_bit():
    g, sess, x, probs, data = _trained_mlp()
    with sess:
        want = sess.run(probs, {x: data})
        frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["probs"])
        kernel = sess.run(g.get_tensor_by_name("hidden/kernel:0"))
    assert isinstance(frozen, tf.GraphDef)
    ops_by_name = {n.name: n for n in frozen.node}
    assert not [n.name for n in frozen.node if "Variable" in n.op or n.op in ("Assign", "VarHandleOp")]
    assert not [n for n in frozen.node if "GradientDescent" in n.name or "gradients" in n.name]
    for name in ("hidden/kernel", "hidden/bias", "logits/kernel", "logits/bias"):
        assert ops_by_name[name].op == "Const"
        assert ops_by_name[name].attr["dtype"].type == tf.float32.as_datatype_enum
        assert ops_by_name[name + "/read"].op == "Identity"
        assert list(ops_by_name[name + "/read"].input) == [name]
    assert np.array_equal(tf.make_ndarray(ops_by_name["hidden/kernel"].attr["value"].tensor), kernel)

    # What a converter reads: the serialized bytes, parsed again.
    reparsed = graph_pb2.GraphDef.FromString(frozen.SerializeToString())
    fresh = tf.Graph()
    with fresh.as_default():
        (out,) = tf.import_graph_def(reparsed, return_elements=["probs:0"])
        assert out.name == "import/probs:0"
        assert not tf.global_variables()
    with tf.Session(graph=fresh) as s:
        got = s.run(out, {"import/x:0": data})
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_freeze_whitelist_and_blacklist_keep_the_others_as_variables():
    g, sess, _, _, _ = _trained_mlp()
    with sess:
        gd = g.as_graph_def()
        white = tf.graph_util.convert_variables_to_constants(sess, gd, ["probs"],
                                                             variable_names_whitelist=["hidden/kernel"])
        black = tf.graph_util.convert_variables_to_constants(sess, gd, ["probs"],
                                                             variable_names_blacklist=["hidden/kernel"])
    ops_white = {n.name: n.op for n in white.node}
    ops_black = {n.name: n.op for n in black.node}
    assert ops_white["hidden/kernel"] == "Const" and ops_white["logits/kernel"] == "VariableV2"
    assert ops_black["hidden/kernel"] == "VariableV2" and ops_black["logits/kernel"] == "Const"


def test_extract_sub_graph_errors():
    gd = _graph("ref_graph.pb")
    with pytest.raises(TypeError, match="graph_def must be a graph_pb2.GraphDef proto"):
        tf.graph_util.extract_sub_graph(gd.SerializeToString(), ["out"])
    with pytest.raises(TypeError, match="dest_nodes must be an iterable of strings"):
        tf.graph_util.extract_sub_graph(gd, "out")
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["out", "nope"])
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.convert_variables_to_constants(_ReplaySession(), gd, ["nope"])


def test_extract_sub_graph_follows_colocation():
    gd = graph_pb2.GraphDef()
    a = gd.node.add(name="a", op="NoOp")
    gd.node.add(name="b", op="NoOp")
    a.attr["_class"].list.s.append(b"loc:@b")
    assert [n.name for n in tf.graph_util.extract_sub_graph(gd, ["a"]).node] == ["a", "b"]


def test_remove_training_nodes_keeps_colocated_identity():
    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    gd.node.add(name="id", op="Identity", input=["x"])
    user = gd.node.add(name="y", op="Relu", input=["id"])
    user.attr["_class"].list.s.append(b"loc:@id")
    assert [list(n.input) for n in tf.graph_util.remove_training_nodes(gd).node] == [[], ["x"], ["id"]]
    del user.attr["_class"]
    assert [list(n.input) for n in tf.graph_util.remove_training_nodes(gd).node] == [[], ["x"]]


def test_must_run_on_cpu():
    def node(op, **types):
        n = node_def_pb2.NodeDef(name="n", op=op)
        for key, dtype in types.items():
            n.attr[key].type = dtype.as_datatype_enum
        return n

    mrc = tf.graph_util.must_run_on_cpu
    assert mrc(node("Const", dtype=tf.string)) and mrc(node("Const", dtype=tf.int32))
    assert not mrc(node("Const", dtype=tf.float32))
    assert mrc(node("DynamicStitch", T=tf.int32)) and not mrc(node("DynamicStitch", T=tf.float32))
    assert mrc(node("Cast", SrcT=tf.int32)) and not mrc(node("Cast", SrcT=tf.float32))
    assert not mrc(node("VariableV2", dtype=tf.float32))
    assert mrc(node("VariableV2", dtype=tf.float32), pin_variables_on_cpu=True)
    with tf.Graph().as_default():
        assert mrc(tf.constant(1).op) and not mrc(tf.constant(1.0).op)
        assert mrc(tf.cast(tf.constant(1), tf.float32).op)
        v = tf.Variable(1.0)
        assert mrc(v.op, pin_variables_on_cpu=True) and not mrc(v.op)


def test_tensor_shape_from_node_def_name():
    g = tf.Graph()
    with g.as_default():
        tf.placeholder(tf.float32, [None, 5], name="x")
        tf.split(tf.zeros([4, 6]), 2, axis=1, name="parts")
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "x").as_list() == [None, 5]
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "parts:1").as_list() == [4, 3]


def test_graph_util_names_and_arguments_match_tensorflow():
    import inspect

    import ferroflow.compat.v1 as v1

    assert v1.graph_util is tf.graph_util
    want = {
        "convert_variables_to_constants": ["sess", "input_graph_def", "output_node_names",
                                           "variable_names_whitelist", "variable_names_blacklist"],
        "extract_sub_graph": ["graph_def", "dest_nodes"],
        "import_graph_def": ["graph_def", "input_map", "return_elements", "name", "op_dict", "producer_op_list"],
        "must_run_on_cpu": ["node", "pin_variables_on_cpu"],
        "remove_training_nodes": ["input_graph", "protected_nodes"],
        "tensor_shape_from_node_def_name": ["graph", "input_name"],
    }
    for name, args in want.items():
        assert list(inspect.signature(getattr(tf.graph_util, name)).parameters) == args, name
