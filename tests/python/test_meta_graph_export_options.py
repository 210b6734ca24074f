"""export_meta_graph / Saver.save options: strip_default_attrs and save_debug_info.

TensorFlow's side comes from tests/fixtures/meta_graph/, written by real
TensorFlow 2.21.0 with tools/gen_meta_graph_fixtures.py from the same model
(tests/python/_meta_graph_model.py); nothing here imports TensorFlow.
"""

import inspect
import json
import os

import numpy as np
import pytest
from google.protobuf import text_format

import _meta_graph_model as model
import ferroflow as tf
from ferroflow import _native
from ferroflow.core.framework import graph_debug_info_pb2
from ferroflow.core.protobuf import meta_graph_pb2
from ferroflow.framework import op_attr_defaults


@pytest.fixture
def expected(fixtures):
    return json.loads((fixtures / "meta_graph" / "expected.json").read_text())


def _nodes(meta):
    return {n.name: n for n in meta.graph_def.node}


def test_table_covers_every_op_type_ferroflow_registers(fixtures):
    table = json.loads(_native.tf_op_registry())
    assert set(_native.registered_ops()) == set(table["attr_defaults"]) | set(table["not_in_tensorflow"])
    list_ops = {
        "ListAddN", "ListConcat", "ListFromTensor", "ListGather", "ListGetItem", "ListOneHot", "ListReserve",
        "ListScatter", "ListSetItem", "ListSize", "ListSplit", "ListStack", "ListZerosLike",
    }
    # tf.data's own: a one-shot iterator over a dataset the graph builds (TF rebuilds it in a factory function)
    # and a dataset calling a Python generator (TF's uses py_func).
    data_ops = {"OneShotIteratorFromDataset", "PyGeneratorDataset"}
    # The stand-in of a TF1 control-flow train op the importer could not rebuild (fails with UnimplementedError).
    import_ops = {"Unimplemented"}
    assert set(table["not_in_tensorflow"]) == (
        {"ApplyFused", "SparseApplyFused", "ReducedShape", "WhileGrad", "IfGrad", "CaseGrad"}
        | list_ops | data_ops | import_ops
    )
    conv = op_attr_defaults.attr_defaults("Conv2D")
    assert conv["data_format"].s == b"NHWC" and list(conv["dilations"].list.i) == [1, 1, 1, 1]
    assert "strides" not in conv  # no default: always kept
    assert op_attr_defaults.attr_defaults("ApplyFused") is None


def test_strip_default_attrs_removes_exactly_the_default_valued_attrs(tmp_path):
    model.build(tf)
    saver = tf.train.Saver()
    full = saver.export_meta_graph()
    stripped = saver.export_meta_graph(str(tmp_path / "m.meta"), strip_default_attrs=True)
    assert meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "m.meta").read_bytes()) == stripped
    assert stripped.meta_info_def.stripped_default_attrs
    assert not full.meta_info_def.stripped_default_attrs
    full_nodes, stripped_nodes = _nodes(full), _nodes(stripped)
    assert full_nodes.keys() == stripped_nodes.keys()
    removed = 0
    for name, node in full_nodes.items():
        defaults = op_attr_defaults.attr_defaults(node.op) or {}
        for key, value in node.attr.items():
            if key in defaults and value == defaults[key]:
                assert key not in stripped_nodes[name].attr, (name, key)
                removed += 1
            else:
                assert stripped_nodes[name].attr[key] == value, (name, key)
    assert removed > 10
    matmul, conv = stripped_nodes["dense/matmul"], stripped_nodes["conv/conv"]
    assert "transpose_a" not in matmul.attr and matmul.attr["transpose_b"].b is True
    assert set(conv.attr) == {"T", "padding", "strides", "_output_shapes"}  # T has no default
    assert set(stripped_nodes["conv/filter"].attr) == {"dtype", "shape", "_output_shapes"}


def test_stripped_attrs_match_tensorflow(expected):
    """Every attr ferroflow writes is stripped exactly when TensorFlow strips it from the same node."""
    model.build(tf)
    saver = tf.train.Saver()
    full = _nodes(saver.export_meta_graph())
    stripped = _nodes(saver.export_meta_graph(strip_default_attrs=True))
    assert expected["stripped_default_attrs"] is True
    common = [n for n in full if n in expected["stripped_attrs"] and n in expected["full_attrs"]]
    assert len(common) >= 20
    compared = 0
    for name in common:
        assert full[name].op == expected["stripped_attrs"][name]["op"]
        for key in full[name].attr:
            if key in expected["full_attrs"][name]["attrs"]:
                assert (key in stripped[name].attr) == (key in expected["stripped_attrs"][name]["attrs"]), (
                    name,
                    key,
                )
                compared += 1
    assert compared >= 40


def _train_model():
    x, labels, logits, loss = model.build(tf)
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)
    tf.add_to_collection("train_op", train)
    return x, labels, loss, train


def test_stripped_meta_graph_imports_restores_and_continues_training(tmp_path):
    batches = [model.batch(i) for i in range(5)]
    x, labels, loss, train = _train_model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for bx, bl in batches[:3]:
            sess.run(train, {x: bx, labels: bl})
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3, strip_default_attrs=True)
        for bx, bl in batches[3:]:
            sess.run(train, {x: bx, labels: bl})
        want = {v.op.name: sess.run(v) for v in tf.global_variables()}
        want_loss = sess.run(loss, {x: batches[0][0], labels: batches[0][1]})
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    assert meta.meta_info_def.stripped_default_attrs
    assert "transpose_a" not in _nodes(meta)["dense/matmul"].attr

    with tf.Graph().as_default() as g:
        imported = tf.train.import_meta_graph(path + ".meta")
        # The defaults are back on the rebuilt nodes.
        matmul = g.get_operation_by_name("dense/matmul")
        assert matmul.get_attr("transpose_a") is False and matmul.get_attr("transpose_b") is True
        assert g.get_operation_by_name("conv/conv").get_attr("data_format") == b"NHWC"
        train_op = tf.get_collection("train_op")[0]
        with tf.Session() as sess:
            imported.restore(sess, path)
            for bx, bl in batches[3:]:
                sess.run(train_op, {"x:0": bx, "labels:0": bl})
            got = {v.op.name: sess.run(v) for v in tf.global_variables()}
            got_loss = sess.run("loss:0", {"x:0": batches[0][0], "labels:0": batches[0][1]})
    assert got.keys() == want.keys()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    assert got_loss == want_loss


def test_imports_tensorflows_stripped_meta_graph_and_checkpoint(fixtures, expected):
    """TensorFlow's stripped meta graph imports (defaults filled back in), restores and computes TF's numbers."""
    prefix = str(fixtures / "meta_graph" / "model.ckpt")
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert g.get_operation_by_name("conv/conv").get_attr("data_format") == b"NHWC"
        assert g.get_operation_by_name("conv/filter/Assign").get_attr("validate_shape") is True
        bx, bl = model.batch()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            logits, loss = sess.run(["dense/logits:0", "loss:0"], {"x:0": bx, "labels:0": bl})
    np.testing.assert_allclose(logits, np.array(expected["logits"], np.float32), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss, expected["loss"], rtol=1e-5)


def _check_debug_info_layout(info, node_names):
    """The invariants of TensorFlow 2.x's GraphDebugInfo layout (also checked against TF's own file)."""
    assert set(info.name_to_trace_id) == {n + "@" for n in node_names}
    assert not info.traces  # the older per-name layout is not used
    assert sorted(info.traces_by_id) == list(range(len(info.traces_by_id)))
    assert sorted(info.frames_by_id) == list(range(len(info.frames_by_id)))
    assert set(info.name_to_trace_id.values()) == set(info.traces_by_id)
    for trace in info.traces_by_id.values():
        assert not trace.file_line_cols
        assert all(f in info.frames_by_id for f in trace.frame_id)
    for frame in info.frames_by_id.values():
        assert 0 <= frame.file_index < len(info.files) and frame.line > 0 and frame.func
    assert len(set(info.files)) == len(info.files)


def _frames(info, node):
    assert node + "@" in info.name_to_trace_id, node  # (indexing a missing map key would add it)
    trace = info.traces_by_id[info.name_to_trace_id[node + "@"]]
    return [
        (info.files[info.frames_by_id[i].file_index], info.frames_by_id[i].line, info.frames_by_id[i].func)
        for i in trace.frame_id
    ]


def test_tensorflows_debug_info_has_the_layout_we_write(fixtures):
    info = graph_debug_info_pb2.GraphDebugInfo.FromString(
        (fixtures / "meta_graph" / "model.ckpt.debug").read_bytes()
    )
    meta = meta_graph_pb2.MetaGraphDef.FromString((fixtures / "meta_graph" / "model.ckpt.meta").read_bytes())
    _check_debug_info_layout(info, [n.name for n in meta.graph_def.node])
    # TF's traces run from the outermost frame to (just past) the model's line in _meta_graph_model.py.
    assert any(
        f.endswith("_meta_graph_model.py") and fn == "build" for f, _, fn in _frames(info, "conv/conv")
    )


def _build_here():
    line = inspect.currentframe().f_lineno
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(tf.ones([2, 2]), name="w")
    y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(y, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {
        "x": line + 1,
        "w": line + 2,
        "w/Assign": line + 2,
        "y": line + 3,
        "loss": line + 4,
        "gradients/y_grad/MatMul": line + 5,
    }, train


def test_save_debug_info_writes_creation_traces_next_to_the_meta_graph(tmp_path):
    lines, _ = _build_here()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7, save_debug_info=True)
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model.ckpt-7.data-00000-of-00001",
        "model.ckpt-7.debug",
        "model.ckpt-7.index",
        "model.ckpt-7.meta",
    ]
    info = graph_debug_info_pb2.GraphDebugInfo.FromString((tmp_path / "model.ckpt-7.debug").read_bytes())
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    _check_debug_info_layout(info, [n.name for n in meta.graph_def.node])
    for node, line in lines.items():
        frames = _frames(info, node)
        # Innermost frame: the line in _build_here that created the op; then its caller, this test.
        assert frames[-1] == (__file__, line, "_build_here"), node
        assert frames[-2][0] == __file__ and frames[-2][2] == inspect.currentframe().f_code.co_name
        assert len(frames) <= 10
        assert not any(os.sep + "ferroflow" + os.sep in f for f, _, _ in frames if f != __file__)
    # Ops the Saver built are traced to the Saver() line of this test.
    saver_frames = _frames(info, "save/SaveV2")
    assert (
        saver_frames[-1][0] == __file__
        and saver_frames[-1][2] == "test_save_debug_info_writes_creation_traces_next_to_the_meta_graph"
    )
    # The same trace is stored once.
    assert info.name_to_trace_id["w@"] == info.name_to_trace_id["w/Assign@"]
    # Operation.traceback shows the same frames.
    tb = tf.get_default_graph().get_operation_by_name("y").traceback
    assert (tb[-1].filename, tb[-1].lineno, tb[-1].name) == (__file__, lines["y"], "_build_here")
    assert "tf.matmul" in tb[-1].line


def test_export_meta_graph_debug_file_names_and_text_format(tmp_path):
    lines, _ = _build_here()
    tf.train.export_meta_graph(str(tmp_path / "graph.pbtxt"), as_text=True, save_debug_info=True)
    info = text_format.Parse((tmp_path / "graph.debug").read_text(), graph_debug_info_pb2.GraphDebugInfo())
    assert _frames(info, "y")[-1] == (__file__, lines["y"], "_build_here")
    # No extension: ".debug" is appended; without a filename nothing is written.
    tf.train.Saver().export_meta_graph(str(tmp_path / "noext"), save_debug_info=True)
    assert (tmp_path / "noext.debug").exists()
    tf.train.export_meta_graph(save_debug_info=True)
    assert sorted(os.listdir(tmp_path)) == ["graph.debug", "graph.pbtxt", "noext", "noext.debug"]
    # Without save_debug_info no .debug file.
    tf.train.export_meta_graph(str(tmp_path / "plain.meta"))
    assert not (tmp_path / "plain.debug").exists()


def test_debug_info_with_export_scope_names_the_exported_nodes(tmp_path):
    with tf.name_scope("tower"):
        lines, _ = _build_here()
    tf.train.export_meta_graph(str(tmp_path / "t.meta"), export_scope="tower", save_debug_info=True)
    info = graph_debug_info_pb2.GraphDebugInfo.FromString((tmp_path / "t.debug").read_bytes())
    assert "y@" in info.name_to_trace_id and "tower/y@" not in info.name_to_trace_id
    assert _frames(info, "y")[-1] == (__file__, lines["y"], "_build_here")
