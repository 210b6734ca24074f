"""Exported GraphDefs carry every attr TensorFlow's op registry requires, so real TensorFlow imports them.

The signatures come from TensorFlow 2.21's registry (``op_defs`` in
``crates/records/src/graph_def/tf_op_registry.json``, written by
``tools/gen_op_attr_defaults.py``); the tests never import TensorFlow.
``tools/tf_meta_graph_check.py`` imports the same kinds of graphs into real
TensorFlow, restores, trains and compares the numbers.
"""

import json

import numpy as np
import pytest

import _meta_graph_model as model
import ferroflow as tf
from ferroflow.core.framework import types_pb2
from ferroflow.core.protobuf import meta_graph_pb2
from ferroflow.framework import op_attr_defaults, op_signatures

FERROFLOW_ONLY = set()  # the fused updates are written as TensorFlow's ops (test_fused_update_export.py)
_LIST_FIELDS = {"s": "string", "i": "int", "f": "float", "b": "bool", "type": "type", "shape": "shape",
                "tensor": "tensor", "func": "func"}


def _kind(value):
    """The ``OpDef`` attr type an ``AttrValue`` holds (``"list(*)"`` for an empty list)."""
    which = value.WhichOneof("value")
    if which != "list":
        return _LIST_FIELDS[which] if which != "s" else "string"
    for field, name in _LIST_FIELDS.items():
        if len(getattr(value.list, field)):
            return f"list({name})"
    return "list(*)"


def check_importable(graph_def):
    """Every node is a TensorFlow op (or ferroflow's fused update) with exactly the attrs TF accepts and needs."""
    checked = 0
    for node in graph_def.node:
        if node.op in FERROFLOW_ONLY:
            continue
        signature = op_signatures.op_signature(node.op)
        assert signature is not None, f"{node.name}: TensorFlow has no op {node.op}"
        required = op_signatures.required_attrs(node.op)
        for name in required:
            assert name in node.attr, f"{node.name} ({node.op}) lacks attr {name}"
        for name, value in node.attr.items():
            if name.startswith("_"):
                continue
            assert name in signature["attrs"], f"{node.name} ({node.op}) has attr {name} TensorFlow does not know"
            kind, want = _kind(value), signature["attrs"][name]
            assert kind == want or (kind == "list(*)" and want.startswith("list(")), (node.name, name, kind, want)
        checked += 1
    return checked


def _mlp_with_saver_and_summaries():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", [4, 3])
        b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
    logits = tf.nn.relu(tf.matmul(x, w) + b)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("logits", logits)
    tf.summary.image("img", tf.reshape(x, [-1, 2, 2, 1]))
    tf.summary.merge_all()
    gs = tf.train.get_or_create_global_step()
    tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
    tf.train.Saver()
    tf.global_variables_initializer()
    return loss


def _conv_with_gradients():
    x, labels, logits, loss = model.build(tf)
    tf.gradients(loss, tf.trainable_variables())
    tf.train.Saver(sharded=True)
    return loss


def _assorted_ops():
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    idx = tf.placeholder(tf.int64, [None], name="idx")
    w = tf.Variable(np.ones([6, 4], np.float32), name="w")
    h = tf.tanh(tf.matmul(x, w))
    parts = tf.split(h, 2, axis=1)
    joined = tf.concat([parts[1], parts[0], h], axis=tf.constant(1, tf.int64))
    stacked = tf.stack(tf.unstack(joined[:, :3], axis=1))
    picked = tf.gather(tf.transpose(stacked), idx, axis=1)
    r = tf.reduce_sum(tf.tile(tf.expand_dims(h, 0), [2, 1, 1]), axis=[0, -1])
    r64 = tf.reduce_max(h, axis=tf.constant([1], tf.int64))
    loss = tf.add_n([tf.reduce_mean(picked), tf.reduce_sum(r), tf.reduce_prod(r64),
                     tf.cast(tf.argmax(h, 1, output_type=tf.int64)[0], tf.float32),
                     tf.cast(tf.shape(x, out_type=tf.int64)[0], tf.float32)], name="loss")
    tf.gradients(loss, [w])
    return loss


GRAPHS = {"mlp_saver_summaries_adam": _mlp_with_saver_and_summaries, "conv_gradients": _conv_with_gradients,
          "assorted_ops": _assorted_ops}


@pytest.mark.parametrize("build", GRAPHS.values(), ids=GRAPHS.keys())
def test_every_exported_node_has_the_attrs_tensorflow_requires(build, tmp_path):
    build()
    g = tf.get_default_graph()
    assert check_importable(g.as_graph_def()) > 20
    meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    check_importable(meta.graph_def)
    check_importable(tf.train.export_meta_graph(strip_default_attrs=True).graph_def)
    path = tf.io.write_graph(g, str(tmp_path), "g.pbtxt")
    from google.protobuf import text_format

    from ferroflow.core.framework import graph_pb2

    check_importable(text_format.Parse(open(path).read(), graph_pb2.GraphDef()))
    assert "ReducedShape" not in {n.op for n in meta.graph_def.node}


def test_every_exported_op_is_a_tensorflow_op():
    _mlp_with_saver_and_summaries()
    table = op_attr_defaults._document()
    assert set(table["op_defs"]) == set(table["attr_defaults"])
    ops = {n.op for n in tf.get_default_graph().as_graph_def().node}
    # ApplyFused is written as TensorFlow's ApplyAdam, SparseApplyFused as
    # Unique, UnsortedSegmentSum and SparseApplyAdagrad (test_fused_update_export.py).
    assert ops - set(table["op_defs"]) == set()
    assert "ApplyAdam" in ops
    with tf.Graph().as_default() as g:
        emb = tf.Variable(np.ones([5, 2], np.float32))
        loss = tf.reduce_sum(tf.gather(emb, [1, 3, 1]))
        tf.train.AdagradOptimizer(0.1).minimize(loss)
        ops = {n.op for n in g.as_graph_def().node}
    assert ops - set(table["op_defs"]) == set()
    assert {"Unique", "UnsortedSegmentSum", "SparseApplyAdagrad"} <= ops


def _nodes(graph_def):
    return {n.name: n for n in graph_def.node}


def test_type_attrs_follow_the_actual_dtypes():
    x = tf.placeholder(tf.float64, [None, 3], name="x")
    tf.cast(x, tf.int32, name="cast")
    tf.concat([x, x, x], tf.constant(1, tf.int64), name="concat")
    tf.reduce_sum(x, tf.constant([1], tf.int64), name="sum64")
    tf.reduce_sum(x, 1, name="sum32")
    tf.shape(x, out_type=tf.int64, name="shape")
    tf.argmax(x, 1, name="argmax")
    tf.gather(x, tf.constant([0, 1], tf.int64), axis=0, name="gather")
    tf.add_n([x, x], name="addn")
    v = tf.Variable(tf.zeros([2], tf.int32), name="v")
    tf.train.Saver([v])
    nodes = _nodes(tf.get_default_graph().as_graph_def())
    DT = types_pb2
    cast = nodes["cast"].attr
    assert (cast["SrcT"].type, cast["DstT"].type) == (DT.DT_DOUBLE, DT.DT_INT32)
    assert nodes["concat"].attr["N"].i == 3 and nodes["concat"].attr["Tidx"].type == DT.DT_INT64
    assert nodes["concat"].attr["T"].type == DT.DT_DOUBLE
    assert nodes["sum64"].attr["Tidx"].type == DT.DT_INT64 and nodes["sum32"].attr["Tidx"].type == DT.DT_INT32
    assert nodes["shape"].attr["out_type"].type == DT.DT_INT64 and nodes["shape"].attr["T"].type == DT.DT_DOUBLE
    assert nodes["argmax"].attr["output_type"].type == DT.DT_INT64
    assert nodes["argmax"].attr["Tidx"].type == DT.DT_INT32
    gather = nodes["gather"].attr
    axis = tf.get_default_graph().get_operation_by_name("gather").inputs[2]
    assert (gather["Tparams"].type, gather["Tindices"].type, gather["Taxis"].type) == (
        DT.DT_DOUBLE, DT.DT_INT64, axis.dtype.as_datatype_enum)
    assert nodes["addn"].attr["N"].i == 2
    # Reference inputs give their base type.
    assert nodes["v/Assign"].attr["T"].type == DT.DT_INT32
    assert list(nodes["save/SaveV2"].attr["dtypes"].list.type) == [DT.DT_INT32]
    assert list(nodes["save/RestoreV2"].attr["dtypes"].list.type) == [DT.DT_INT32]


def test_strip_default_attrs_drops_type_attrs_only_at_their_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.reduce_sum(x, tf.constant([1], tf.int64), name="sum64")
    tf.reduce_sum(x, 1, name="sum32")
    nodes = _nodes(tf.train.export_meta_graph(strip_default_attrs=True).graph_def)
    assert "Tidx" not in nodes["sum32"].attr  # int32 is the registered default
    assert nodes["sum64"].attr["Tidx"].type == types_pb2.DT_INT64
    assert nodes["sum32"].attr["T"].type == types_pb2.DT_FLOAT  # no default: always kept


def test_attr_names_match_tensorflows_export_of_the_same_model(fixtures):
    """Against the attrs TensorFlow 2.21 wrote for the same model (tests/fixtures/meta_graph)."""
    expected = json.loads((fixtures / "meta_graph" / "expected.json").read_text())["full_attrs"]
    model.build(tf)
    nodes = _nodes(tf.train.Saver().export_meta_graph().graph_def)
    common = [name for name in expected if name in nodes]
    assert len(common) >= 30
    for name in common:
        ours = {a for a in nodes[name].attr if not a.startswith("_")}
        theirs = {a for a in expected[name]["attrs"] if not a.startswith("_")}
        defaults = op_attr_defaults.attr_defaults(nodes[name].op)
        assert ours <= theirs, name
        assert theirs - ours <= set(defaults), name  # what we leave out has a registered default


def test_from_version_exports_only_new_nodes_with_their_attrs():
    x = tf.placeholder(tf.float32, [2], name="x")
    g = tf.get_default_graph()
    version = g.version
    tf.square(x, name="sq")
    graph_def = g.as_graph_def(from_version=version)
    assert [n.name for n in graph_def.node] == ["sq"]
    assert graph_def.node[0].attr["T"].type == types_pb2.DT_FLOAT


def _reduction_grads(axes, keepdims=False):
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    w = tf.Variable(np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4), name="w")
    y = x * w
    loss = tf.reduce_sum(tf.square(tf.reduce_mean(y, axes, keepdims=keepdims) - 1.0), name="loss")
    return tf.gradients(loss, [x, w], name="grads")


@pytest.mark.parametrize("axes", [1, -1, [0, 2], [-3, 1], [2, 0, -2]], ids=str)
@pytest.mark.parametrize("int64", [False, True], ids=["int32", "int64"])
def test_reduced_shape_is_exported_as_tensorflow_ops_computing_the_same(tmp_path, axes, int64):
    feed = np.random.default_rng(0).normal(size=[2, 3, 4]).astype(np.float32)
    axes_t = tf.constant(axes, tf.int64 if int64 else tf.int32)
    grads = _reduction_grads(axes_t)
    assert "ReducedShape" in {op.type for op in tf.get_default_graph().get_operations()}
    tf.add_to_collection("grads", grads[0])
    tf.add_to_collection("grads", grads[1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(grads, {"x:0": feed})
    meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    ops = [n.op for n in meta.graph_def.node]
    assert "ReducedShape" not in ops and "SelectV2" in ops
    check_importable(meta.graph_def)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.meta"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(tf.get_collection("grads"), {"x:0": feed})
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_reduced_shape_expansion_keeps_device_control_inputs_and_shapes():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with tf.device("/cpu:0"):
        tf.gradients(tf.reduce_sum(x, 1, name="s"), [x])
    g = tf.get_default_graph()
    reduced = [op for op in g.get_operations() if op.type == "ReducedShape"]
    assert len(reduced) == 1
    name = reduced[0].name
    nodes = _nodes(g.as_graph_def(add_shapes=True))
    final = nodes[name]
    assert final.op == "SelectV2"
    helpers = [n for n in nodes.values() if n.name.startswith(name + "/")]
    assert len(helpers) >= 8
    assert all(n.device == final.device for n in helpers)
    assert all("_output_shapes" in n.attr for n in helpers + [final])
    assert [d.size for d in final.attr["_output_shapes"].list.shape[0].dim] == [2]
    # The debug info traces the helpers to the op they stand for.
    meta = tf.train.export_meta_graph()
    assert isinstance(meta, meta_graph_pb2.MetaGraphDef)
