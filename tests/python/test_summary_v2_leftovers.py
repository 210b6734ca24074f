"""tf.summary.get_summary_description and all_v2_summary_ops (values observed with TF 2.21)."""

import pytest

import ferroflow.compat.v1 as tf


def test_get_summary_description_parses_the_json_attr():
    nd = tf.NodeDef(op="TensorSummary")
    nd.attr["description"].s = b'{"typeHint": "image"}'
    assert tf.summary.get_summary_description(nd).type_hint == "image"
    with pytest.raises(ValueError, match="Can't get_summary_description on Add"):
        tf.summary.get_summary_description(tf.NodeDef(op="Add"))


def test_all_v2_summary_ops_is_the_v2_collection():
    with tf.Graph().as_default():
        tf.summary.scalar("loss", tf.constant(1.0))  # a TF1 summary is not a v2 one
        assert tf.summary.all_v2_summary_ops() == []
        op = tf.no_op()
        tf.add_to_collection("_SUMMARY_V2", op)
        assert tf.summary.all_v2_summary_ops() == [op]
