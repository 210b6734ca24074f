"""``Variable(variable_def=...)``, ``Variable.to_proto`` / ``from_proto`` and
``SaveSliceInfo`` from its proto, as TF1's ``RefVariable`` has them."""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.framework import variable_pb2


def test_a_variable_rebuilt_from_its_proto_wraps_the_same_ops():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="w", trainable=False)
        d = v.to_proto()
        assert isinstance(d, variable_pb2.VariableDef)
        assert (d.variable_name, d.initializer_name, d.snapshot_name) == ("w:0", "w/Assign", "w/read:0")
        assert d.initial_value_name == "w/initial_value:0"
        again = tf.Variable(variable_def=d)
        assert again.name == v.name and again.op is v.op
        assert again.initializer is v.initializer and again.value() is v.value()
        assert again.initial_value is v.initial_value
        assert not again.trainable
        same = tf.Variable.from_proto(d)
        assert same.to_proto() == d
        with tf.Session() as sess:
            sess.run(again.initializer)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
            sess.run(again.assign_add([1.0, 1.0]))
            np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])


def test_import_scope_and_export_scope():
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            v = tf.Variable(3.0, name="v")
        d = v.to_proto(export_scope="outer")
        assert d.variable_name == "v:0"
        assert v.to_proto(export_scope="elsewhere") is None
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta, import_scope="copy")
        w = tf.Variable.from_proto(d, import_scope="copy/outer")
        assert w.name == "copy/outer/v:0"
        with tf.Session() as sess:
            sess.run(w.initializer)
            assert sess.run(w) == 3.0


def test_partition_slice_info_round_trips():
    with tf.Graph().as_default():
        parts = tf.get_variable(
            "emb", [10, 4], partitioner=tf.fixed_size_partitioner(2), initializer=tf.zeros_initializer()
        )
        part = list(parts)[1]
        d = part.to_proto()
        assert d.save_slice_info_def.full_name == "emb"
        assert list(d.save_slice_info_def.var_offset) == [5, 0]
        rebuilt = tf.Variable(variable_def=d)
        info = rebuilt._get_save_slice_info()
        assert info.spec == part._get_save_slice_info().spec == "10 4 5,5:0,4"
        scoped = tf.Variable.SaveSliceInfo(save_slice_info_def=d.save_slice_info_def, import_scope="s")
        assert scoped.full_name == "s/emb"


def test_bad_arguments():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        with pytest.raises(ValueError, match="mutually exclusive"):
            tf.Variable(1.0, variable_def=v.to_proto())
        with pytest.raises(TypeError, match="VariableDef"):
            tf.Variable(variable_def={"variable_name": "Variable:0"})
