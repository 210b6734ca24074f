"""Partitioned variables in checkpoints, against TensorFlow's partitioned_adam fixture.

What TF 2.21 does (tools/gen_partitioned_adam_fixture.py wrote the fixture):

* ``tf.compat.v1.train.Saver`` saves the parts of ``emb`` and their Adam slots
  as slices of three keys, ``emb``, ``emb/Adam`` and ``emb/Adam_1``;
* ``tf.train.Checkpoint`` does not track a ``PartitionedVariable`` (passing one
  raises ValueError); tracking its parts (``parts=list(emb)``) saves each part
  and each part's slots unsliced under its own key, recording the partitioned
  variable's name (``emb``, ``emb/Adam``) as the value's ``full_name``.
"""

import json

import numpy as np
import pytest
from google.protobuf import json_format

import ferroflow as tf
from ferroflow.core.protobuf import trackable_object_graph_pb2
from ferroflow.training.tracking import OBJECT_GRAPH_PROTO_KEY, _ObjectGraph


def _case(fixtures):
    d = fixtures / "checkpoints" / "partitioned_adam"
    return d, json.loads((d / "manifest.json").read_text()), np.load(d / "values.npz")


def _build(m):
    """The fixture's model in ferroflow: emb in parts, bias, and Adam's slots (created by minimize)."""
    emb = tf.get_variable("emb", m["shape"], initializer=tf.zeros_initializer(),
                          partitioner=tf.fixed_size_partitioner(m["parts"]))
    bias = tf.get_variable("bias", [m["shape"][1]], initializer=tf.zeros_initializer())
    opt = tf.train.AdamOptimizer(m["learning_rate"])
    opt.minimize(tf.reduce_sum(tf.square(emb.as_tensor())) + tf.reduce_sum(tf.square(bias)))
    return emb, bias, opt


def _slices(full, part):
    info = part._get_save_slice_info()
    return full[tuple(slice(o, o + s) for o, s in zip(info.var_offset, info.var_shape))]


def _check_saver_values(sess, emb, bias, opt, values):
    for part in emb:
        np.testing.assert_array_equal(sess.run(part), _slices(values["saver:emb"], part))
        np.testing.assert_array_equal(sess.run(opt.get_slot(part, "m")), _slices(values["saver:emb/Adam"], part))
        np.testing.assert_array_equal(sess.run(opt.get_slot(part, "v")), _slices(values["saver:emb/Adam_1"], part))
    np.testing.assert_array_equal(sess.run(bias), values["saver:bias"])
    np.testing.assert_array_equal(sess.run(opt.get_slot(bias, "m")), values["saver:bias/Adam"])
    np.testing.assert_array_equal(sess.run(opt._get_non_slot_variable("beta1_power")), values["saver:beta1_power"])


def test_slots_of_parts_are_slices_of_one_slot(fixtures):
    _, m, _ = _case(fixtures)
    emb, _, opt = _build(m)
    for part in emb:
        info = part._get_save_slice_info()
        for slot_name, suffix in (("m", "Adam"), ("v", "Adam_1")):
            slot_info = opt.get_slot(part, slot_name)._get_save_slice_info()
            assert slot_info.full_name == f"emb/{suffix}"
            assert slot_info.spec == info.spec


def test_saver_restores_and_rewrites_tensorflow_partitioned_adam(fixtures, tmp_path):
    d, m, values = _case(fixtures)
    emb, bias, opt = _build(m)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, str(d / "saver"))
        _check_saver_values(sess, emb, bias, opt, values)
        saver.save(sess, str(tmp_path / "saver"), write_meta_graph=False, write_state=False)
    assert tf.train.list_variables(str(tmp_path / "saver")) == [(e["name"], e["shape"]) for e in m["files"]["saver"]]
    for suffix in (".index", ".data-00000-of-00001"):
        assert (tmp_path / ("saver" + suffix)).read_bytes() == (d / ("saver" + suffix)).read_bytes()


def test_checkpoint_of_parts_matches_tensorflow(fixtures, tmp_path):
    d, m, values = _case(fixtures)
    emb, bias, opt = _build(m)
    ckpt = tf.train.Checkpoint(parts=list(emb), bias=bias, optimizer=opt)
    status = ckpt.read(str(d / "obj"))
    status.assert_consumed()
    graph = _ObjectGraph(ckpt)
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        for v in graph.variables():
            np.testing.assert_array_equal(sess.run(v), values[f"obj:{graph.key(v)}"])
        _check_saver_values(sess, emb, bias, opt, values)  # the same state as the Saver's file
        ckpt.write(str(tmp_path / "obj"), sess)
    files = {e["name"]: e for e in m["files"]["obj"]}
    assert tf.train.list_variables(str(tmp_path / "obj")) == [(n, e["shape"]) for n, e in sorted(files.items())]
    written = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
        tf.train.load_variable(str(tmp_path / "obj"), OBJECT_GRAPH_PROTO_KEY))
    assert json_format.MessageToDict(written, preserving_proto_field_name=True) == (
        files[OBJECT_GRAPH_PROTO_KEY]["parsed_object_graph"])
    full_names = {a.full_name for n in written.nodes for a in n.attributes}
    assert {"emb", "emb/Adam", "emb/Adam_1"} <= full_names
    for suffix in (".index", ".data-00000-of-00001"):
        assert (tmp_path / ("obj" + suffix)).read_bytes() == (d / ("obj" + suffix)).read_bytes()


def test_checkpoint_restores_parts_from_a_name_based_saver_file(fixtures):
    """A Saver file has no object graph: parts and their slots take their slices of the full keys."""
    d, m, values = _case(fixtures)
    emb, bias, opt = _build(m)
    ckpt = tf.train.Checkpoint(parts=list(emb), bias=bias, optimizer=opt)
    status = ckpt.restore(str(d / "saver"))
    status.assert_consumed()
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        _check_saver_values(sess, emb, bias, opt, values)


def test_partitioned_variable_itself_is_not_trackable(fixtures):
    _, m, _ = _case(fixtures)
    emb, _, _ = _build(m)
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(emb=emb)


def test_parts_of_another_partitioning_take_their_slices(fixtures):
    """Re-partitioned (2 parts instead of 3): each part reads its slice out of the saved slices."""
    d, m, values = _case(fixtures)
    emb = tf.get_variable("emb", m["shape"], partitioner=tf.fixed_size_partitioner(2))
    status = tf.train.Checkpoint(parts=list(emb)).restore(str(d / "saver"))
    with tf.Session() as sess:
        status.run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(emb.as_tensor()), values["saver:emb"])


def test_part_of_a_variable_of_another_shape_names_it(fixtures):
    d, m, _ = _case(fixtures)
    emb = tf.get_variable("emb", [m["shape"][0] + 1, m["shape"][1]], partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"emb/part_0 \(a slice of emb, full shape \[8, 3\]\)"):
        tf.train.Checkpoint(parts=list(emb)).restore(str(d / "saver"))
