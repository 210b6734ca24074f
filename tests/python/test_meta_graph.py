"""export_meta_graph / import_meta_graph: MetaGraphDef contents and a train-save-import-restore-continue round trip."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.framework import variable_pb2
from ferroflow.core.protobuf import meta_graph_pb2


def _model(seed=0):
    rng = np.random.default_rng(seed)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    with tf.variable_scope("dense"):
        k = tf.get_variable("kernel", [4, 3], initializer=tf.constant_initializer(rng.normal(size=[4, 3])))
        b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
    with tf.variable_scope("dense_1"):
        k2 = tf.get_variable("kernel", [3, 2], initializer=tf.constant_initializer(rng.normal(size=[3, 2])))
    out = tf.matmul(tf.nn.relu(tf.matmul(x, k) + b), k2)
    loss = tf.reduce_mean(tf.square(out - y), name="loss")
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)
    return x, y, loss, train


def _batches(n):
    rng = np.random.default_rng(7)
    return [(rng.normal(size=[6, 4]).astype(np.float32), rng.normal(size=[6, 2]).astype(np.float32))
            for _ in range(n)]


def test_meta_graph_def_holds_graph_saver_and_collections(tmp_path):
    _model()
    saver = tf.train.Saver()
    meta = saver.export_meta_graph(str(tmp_path / "m.meta"))
    on_disk = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "m.meta").read_bytes())
    assert on_disk == meta
    assert meta.saver_def == saver.as_saver_def()
    assert meta.meta_info_def.tensorflow_version == tf.VERSION
    names = {n.name for n in meta.graph_def.node}
    assert {"x", "y", "loss", "dense/kernel", "save/SaveV2", "save/restore_all"} <= names
    assert meta.collection_def["train_op"].node_list.value == [tf.get_collection("train_op")[0].name]
    vdefs = [variable_pb2.VariableDef.FromString(b) for b in meta.collection_def["variables"].bytes_list.value]
    assert [d.variable_name for d in vdefs] == [v.name for v in tf.global_variables()]
    k = next(d for d in vdefs if d.variable_name == "dense/kernel:0")
    assert (k.initializer_name, k.snapshot_name, k.trainable) == ("dense/kernel/Assign", "dense/kernel/read:0", True)
    trainable = [variable_pb2.VariableDef.FromString(b).variable_name
                 for b in meta.collection_def["trainable_variables"].bytes_list.value]
    assert trainable == [v.name for v in tf.trainable_variables()]
    # Text format and clear_devices.
    text = tf.train.export_meta_graph(str(tmp_path / "t.pbtxt"), as_text=True, clear_devices=True)
    assert (tmp_path / "t.pbtxt").read_text().startswith("meta_info_def")
    assert all(n.device == "" for n in text.graph_def.node)


def _continue(sess, x, y, train, batches):
    for bx, by in batches:
        sess.run(train, {x: bx, y: by})


def test_import_restore_and_continue_matches_the_original(tmp_path):
    batches = _batches(5)
    x, y, loss, train = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _continue(sess, x, y, train, batches[:3])
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=tf.train.get_global_step())
        _continue(sess, x, y, train, batches[3:])
        expected = {v.op.name: sess.run(v) for v in tf.global_variables()}
        expected_loss = sess.run(loss, {x: batches[0][0], y: batches[0][1]})

    with tf.Graph().as_default() as g:
        imported = tf.train.import_meta_graph(path + ".meta")
        assert imported.as_saver_def().restore_op_name == "save/restore_all"
        assert sorted(v.op.name for v in tf.global_variables()) == sorted(expected)
        train = tf.get_collection("train_op")[0]
        x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("y:0")
        with tf.Session() as sess:
            imported.restore(sess, path)
            assert sess.run(tf.train.get_global_step()) == 3
            _continue(sess, x, y, train, batches[3:])
            for v in tf.global_variables():
                np.testing.assert_array_equal(sess.run(v), expected[v.op.name], err_msg=v.op.name)
            assert sess.run("loss:0", {x: batches[0][0], y: batches[0][1]}) == expected_loss


_FRESH_PROCESS = r"""
import sys
import numpy as np
import ferroflow as tf
path, out = sys.argv[1], sys.argv[2]
saver = tf.train.import_meta_graph(path + ".meta")
g = tf.get_default_graph()
rng = np.random.default_rng(7)
batches = [(rng.normal(size=[6, 4]).astype(np.float32), rng.normal(size=[6, 2]).astype(np.float32)) for _ in range(5)]
with tf.Session() as sess:
    saver.restore(sess, path)
    for bx, by in batches[3:]:
        sess.run(tf.get_collection("train_op")[0], {"x:0": bx, "y:0": by})
    np.savez(out, **{v.op.name.replace("/", "__"): sess.run(v) for v in tf.global_variables()})
"""


def test_fresh_process_continues_training(tmp_path):
    batches = _batches(5)
    x, y, _, train = _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _continue(sess, x, y, train, batches[:3])
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
        _continue(sess, x, y, train, batches[3:])
        expected = {v.op.name.replace("/", "__"): sess.run(v) for v in tf.global_variables()}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    out = str(tmp_path / "out.npz")
    run = subprocess.run([sys.executable, "-c", _FRESH_PROCESS, path, out], capture_output=True, text=True,
                         env=env, check=False)
    assert run.returncode == 0, run.stderr
    got = np.load(out)
    assert sorted(got.files) == sorted(expected)
    for k, v in expected.items():
        np.testing.assert_array_equal(got[k], v, err_msg=k)


def test_import_scope_and_errors(tmp_path):
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    del v
    with tf.Graph().as_default():
        s = tf.train.import_meta_graph(path + ".meta", import_scope="imported")
        assert s.as_saver_def().restore_op_name == "imported/save/restore_all"
        (w,) = tf.global_variables()
        assert w.name == "imported/v:0"
        with tf.Session() as sess:
            s.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), [0, 1, 2])
    with pytest.raises(OSError, match="nothing.meta"):
        tf.train.import_meta_graph(str(tmp_path / "nothing.meta"))
    (tmp_path / "junk.meta").write_bytes(b"\xff\xfe not a proto")
    with pytest.raises(tf.errors.DataLossError, match="junk.meta"):
        tf.train.import_meta_graph(str(tmp_path / "junk.meta"))
