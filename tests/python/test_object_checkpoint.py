"""tf.train.Checkpoint (object-based) in graph mode, against TF's object_tf2 checkpoint."""

import json
import shutil

import numpy as np
import pytest
from google.protobuf import json_format

import ferroflow as tf
from ferroflow.core.protobuf import trackable_object_graph_pb2
from ferroflow.training.tracking import OBJECT_GRAPH_PROTO_KEY, _ObjectGraph


class Model:
    """A plain Python object holding variables (TF's golden used a tf.Module subclass)."""


def _manifest(fixtures):
    return json.loads((fixtures / "checkpoints" / "object_tf2" / "list_variables.json").read_text())


def _golden_structure(fixtures):
    """The Python structure of the golden checkpoint, built from its manifest."""
    m = _manifest(fixtures)
    model = Model()
    variables = []
    for pv in m["python_variables"]:
        root_attr, attr = pv["path_in_python"].split(".")
        assert root_attr == "model"
        v = tf.Variable(tf.zeros(pv["shape"], pv["dtype"]), name=pv["tf_name"].split(":")[0])
        setattr(model, attr, v)
        variables.append(v)
    opt = tf.train.AdamOptimizer(0.1)
    opt.apply_gradients([(tf.zeros_like(v), v) for v in variables])  # creates slots and beta powers
    return model, opt


def _by_key(ckpt):
    graph = _ObjectGraph(ckpt)
    return {graph.key(v): v for v in graph.variables()}


def test_restore_tensorflow_object_checkpoint(fixtures):
    m = _manifest(fixtures)
    model, opt = _golden_structure(fixtures)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(str(fixtures / "checkpoints" / "object_tf2" / m["checkpoint_prefix"]))
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    values = np.load(fixtures / "checkpoints" / "object_tf2" / "values.npz")
    objects = _by_key(ckpt)
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        for var in m["variables"]:
            if var["name"] == OBJECT_GRAPH_PROTO_KEY:
                continue
            got = sess.run(objects[var["name"]])
            np.testing.assert_array_equal(got, values[var["npz_key"]])
            assert got.dtype == np.dtype(var["dtype"])


def test_written_checkpoint_matches_tensorflow(fixtures, tmp_path):
    """Same objects and values: the same keys, the same object graph, and the same bytes as TF's write()."""
    m = _manifest(fixtures)
    model, opt = _golden_structure(fixtures)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(str(fixtures / "checkpoints" / "object_tf2" / m["checkpoint_prefix"]))
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        written = ckpt.write(str(tmp_path / "written"), sess)
    assert written == str(tmp_path / "written")
    assert tf.train.list_variables(written) == sorted((n, s) for n, s in m["written_list_variables"])
    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
        tf.train.load_variable(written, OBJECT_GRAPH_PROTO_KEY)
    )
    golden_graph = next(v for v in m["variables"] if v["name"] == OBJECT_GRAPH_PROTO_KEY)["parsed_object_graph"]
    assert json_format.MessageToDict(graph, preserving_proto_field_name=True) == golden_graph
    golden_prefix = fixtures / "checkpoints" / "object_tf2" / m["written_prefix"]
    for suffix in (".index", ".data-00000-of-00001"):
        assert (tmp_path / ("written" + suffix)).read_bytes() == golden_prefix.with_name(
            golden_prefix.name + suffix).read_bytes()
    assert not (tmp_path / "checkpoint").exists()  # write() keeps no state file


def test_save_numbers_checkpoints_and_updates_state(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    ckpt = tf.train.Checkpoint(w=w)
    bump = w.assign_add([1.0, 1.0])
    with tf.Session() as sess:
        sess.run(w.initializer)
        first = ckpt.save(str(tmp_path / "ckpt"), session=sess)
        sess.run(bump)
        second = ckpt.save(str(tmp_path / "ckpt"), session=sess)
        assert sess.run(ckpt.save_counter) == 2
    assert first == str(tmp_path / "ckpt-1") and second == str(tmp_path / "ckpt-2")
    assert (tmp_path / "checkpoint").read_text() == 'model_checkpoint_path: "ckpt-2"\nall_model_checkpoint_paths: "ckpt-2"\n'
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "w/.ATTRIBUTES/VARIABLE_VALUE"), [2.0, 3.0])
    np.testing.assert_array_equal(tf.train.load_variable(first, "w/.ATTRIBUTES/VARIABLE_VALUE"), [1.0, 2.0])
    assert tf.train.load_variable(first, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 1
    assert ckpt.save_counter.dtype == tf.int64


def test_round_trip_nested_objects_into_a_new_graph(tmp_path):
    class Layer:
        def __init__(self, n):
            self.kernel = tf.get_variable("kernel", [n, 2], initializer=tf.random_normal_initializer(seed=3))
            self.extras = [tf.Variable(float(n), name="e0")]
            self.table = {"a.b/c": tf.Variable([n, n], name="t")}

    def build():
        with tf.variable_scope("l1"):
            l1 = Layer(3)
        with tf.variable_scope("l2"):
            l2 = Layer(4)
        root = Model()
        root.layers = [l1, l2]
        root.step = tf.Variable(0, dtype=tf.int64, name="step")
        return root

    root = build()
    ckpt = tf.train.Checkpoint(net=root, inner=tf.train.Checkpoint(step=root.step))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(root.step.assign(41))
        path = ckpt.save(str(tmp_path / "c"), sess)
        before = sess.run([root.layers[0].kernel, root.layers[1].kernel, root.layers[1].table["a.b/c"]])
    keys = dict(tf.train.list_variables(path))
    # Lists are numbered, dict keys escaped ('.' -> '..', '/' -> '.S').
    assert "net/layers/0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "net/layers/1/extras/0/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "net/layers/1/table/a..b.Sc/.ATTRIBUTES/VARIABLE_VALUE" in keys
    # A variable reachable twice is saved once, under its first breadth-first path ("inner" < "net").
    assert "inner/step/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert not any(k.startswith("net/step") for k in keys)

    tf.reset_default_graph()
    root2 = build()
    ckpt2 = tf.train.Checkpoint(net=root2, inner=tf.train.Checkpoint(step=root2.step))
    status = ckpt2.restore(path)
    status.assert_consumed()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        after = sess.run([root2.layers[0].kernel, root2.layers[1].kernel, root2.layers[1].table["a.b/c"]])
        assert sess.run(root2.step) == 41
        assert sess.run(ckpt2.save_counter) == 1
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_partial_matches_and_assertions(tmp_path):
    a = tf.Variable([1.0], name="a")
    b = tf.Variable([2.0], name="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Checkpoint(a=a, b=b).save(str(tmp_path / "c"), sess)

    tf.reset_default_graph()
    a2 = tf.Variable([0.0], name="a")
    extra = tf.Variable([5.0], name="extra")
    status = tf.train.Checkpoint(a=a2, extra=extra).restore(path)
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint .*b/.ATTRIBUTES/VARIABLE_VALUE"):
        status.assert_consumed()
    with pytest.raises(AssertionError, match="Object not assigned a value from checkpoint .*extra"):
        status.assert_existing_objects_matched()
    assert status.expect_partial() is status
    with tf.Session() as sess:
        status.initialize_or_restore(sess)  # extra is initialized, a restored
        assert sess.run(a2)[0] == 1.0 and sess.run(extra)[0] == 5.0


def test_restore_none_only_initializes():
    v = tf.Variable([3.0], name="v")
    status = tf.train.Checkpoint(v=v).restore(None)
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        status.assert_consumed()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        assert sess.run(v)[0] == 3.0


def test_restore_errors(tmp_path):
    v = tf.Variable(np.zeros((2, 3), np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Checkpoint(v=v).save(str(tmp_path / "c"), sess)
    tf.reset_default_graph()
    wrong_shape = tf.Variable(np.zeros((3, 2), np.float32), name="v")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"v .*\(2, 3\).*\[2, 3\]|v .*\(3, 2\).*\[2, 3\]"):
        tf.train.Checkpoint(v=wrong_shape).restore(path)
    tf.reset_default_graph()
    wrong_dtype = tf.Variable(np.zeros((2, 3), np.float64), name="v")
    with pytest.raises(tf.errors.InvalidArgumentError, match="float64 but the checkpoint holds float32"):
        tf.train.Checkpoint(v=wrong_dtype).restore(path)
    with pytest.raises(tf.errors.NotFoundError, match="nowhere"):
        tf.train.Checkpoint(v=wrong_dtype).restore(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(x=3)
    with pytest.raises(ValueError, match="No session"):
        tf.train.Checkpoint(v=wrong_dtype).save(str(tmp_path / "d"))


def test_name_based_checkpoint_from_saver(fixtures, tmp_path):
    """A tf.compat.v1 Saver checkpoint (no object graph) restores by variable name."""
    m = json.loads((fixtures / "checkpoints" / "adam_model" / "list_variables.json").read_text())
    values = np.load(fixtures / "checkpoints" / "adam_model" / "values.npz")
    shutil.copytree(fixtures / "checkpoints" / "adam_model" / "ckpt", tmp_path / "ckpt")
    model = Model()
    model.vars = [tf.Variable(np.zeros(v["shape"], v["dtype"]), name=v["name"]) for v in m["variables"]]
    status = tf.train.Checkpoint(model=model).restore(str(tmp_path / "ckpt" / m["checkpoint_prefix"].split("/")[-1]))
    status.assert_consumed()
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        for var, spec in zip(model.vars, m["variables"]):
            np.testing.assert_array_equal(sess.run(var), values[spec["npz_key"]])


def test_save_counter_is_a_global_variable():
    """As in TF 2.21 graph mode: created by restore()/save(), in GLOBAL_VARIABLES, not trainable, on the CPU."""
    v = tf.Variable(1.0, name="v")
    ckpt = tf.train.Checkpoint(v=v)
    assert [x.op.name for x in tf.global_variables()] == ["v"]
    ckpt.restore(None)
    assert [x.op.name for x in tf.global_variables()] == ["v", "save_counter"]
    assert [x.op.name for x in tf.trainable_variables()] == ["v"]
    assert "CPU:0" in ckpt.save_counter.device.upper()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(ckpt.save_counter) == 0
