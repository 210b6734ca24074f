"""TensorFlow's per-variable update ops (ApplyAdam, SparseApplyMomentum, ...) in graphs TensorFlow wrote.

The fixtures (tests/fixtures/tf_apply/, from tools/gen_tf_apply_fixtures.py)
are meta graphs TensorFlow 1 exported with a training op for each
optimizer, for a dense variable and for an embedding table (sparse
gradients: Unique, UnsortedSegmentSum and the SparseApply* ops), and the
variable after each of three steps in TensorFlow. The tests import each
graph, train it here, and compare.
"""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "tf_apply"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


@pytest.mark.parametrize("case", sorted(EXPECTED["cases"]))
def test_tensorflow_training_graph_imports_and_trains_the_same(case):
    want = EXPECTED["cases"][case]
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(str(FIXTURES / f"{case}.meta"))
        update_ops = sorted({op.type for op in g.get_operations() if op.type.startswith(("Apply", "SparseApply"))})
        assert update_ops == want["update_ops"]
        train = g.get_operation_by_name("train")
        var = g.get_tensor_by_name(want["var"] + ":0")
        step = tf.train.get_global_step(g)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(var), np.float32(want["start"]))
            for i, expected in enumerate(want["after"]):
                sess.run(train)
                np.testing.assert_allclose(sess.run(var), np.float32(expected), rtol=1e-6, atol=1e-7,
                                           err_msg=f"{case}, step {i + 1}")
            assert sess.run(step) == len(want["after"])


def test_update_op_outputs_the_variable_and_checks_shapes():
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(str(FIXTURES / "momentum.meta"))
        (update,) = [op for op in g.get_operations() if op.type == "ApplyMomentum"]
        assert [t.name for t in update.inputs][:2] == ["w:0", "w/Momentum:0"]
        assert update.outputs[0].dtype.base_dtype == tf.float32
        assert update.outputs[0].shape.as_list() == [3, 2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run("w:0")
            after = sess.run(update.outputs[0])
            assert not np.array_equal(before, after)
            np.testing.assert_array_equal(after, sess.run("w:0"))


def test_unsupported_update_attrs_fail_with_unimplemented():
    from ferroflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString((FIXTURES / "adam.meta").read_bytes())
    (node,) = [n for n in meta.graph_def.node if n.op == "ApplyAdam"]
    node.attr["use_nesterov"].b = True
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.UnimplementedError, match="ApplyAdam: use_nesterov=True"):
                sess.run(g.get_operation_by_name("train"))


def test_an_update_op_with_missing_inputs_is_refused_on_import():
    from ferroflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString((FIXTURES / "momentum.meta").read_bytes())
    (node,) = [n for n in meta.graph_def.node if n.op == "ApplyMomentum"]
    del node.input[4]  # momentum
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"ApplyMomentum\) expects 5 inputs \(var, accum, lr, grad, momentum\), got 4"):
            tf.train.import_meta_graph(meta)


def test_any_imported_node_with_the_wrong_number_of_inputs_is_refused():
    from ferroflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString((FIXTURES / "momentum.meta").read_bytes())
    (node,) = [n for n in meta.graph_def.node if n.name == "loss"]
    assert node.op == "Sum"
    del node.input[1]  # reduction_indices
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"'loss' \(Sum\) expects 2 inputs \(input, reduction_indices\), got 1"):
            tf.train.import_meta_graph(meta)


def _sparse_adagrad_meta():
    from ferroflow.core.protobuf import meta_graph_pb2

    meta = meta_graph_pb2.MetaGraphDef.FromString((FIXTURES / "sparse_adagrad.meta").read_bytes())
    (node,) = [n for n in meta.graph_def.node if n.op == "SparseApplyAdagrad"]
    return meta, node


def test_sparse_update_sums_duplicate_indices_fed_directly():
    # Skip TensorFlow's Unique/UnsortedSegmentSum: feed the gathered rows
    # and the repeated ids straight to SparseApplyAdagrad. Summing the
    # duplicates first gives what TensorFlow's deduplicated graph gives.
    meta, node = _sparse_adagrad_meta()
    node.input[3] = "gradients/embedding_lookup_grad/Reshape"
    node.input[4] = "gradients/embedding_lookup_grad/Reshape_1"
    want = EXPECTED["cases"]["sparse_adagrad"]
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        update = g.get_operation_by_name(node.name)
        assert [t.op.type for t in update.inputs][3:] == ["Reshape", "Reshape"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for expected in want["after"]:
                sess.run("train")
                np.testing.assert_allclose(sess.run("emb:0"), np.float32(expected), rtol=1e-6, atol=1e-7)


def test_sparse_update_checks_indices_and_row_shapes():
    meta, node = _sparse_adagrad_meta()
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        update = g.get_operation_by_name(node.name)
        assert [t.name for t in update.inputs][:2] == ["emb:0", "emb/Adagrad:0"]
        assert update.outputs[0].shape.as_list() == [6, 2]
        unique_ids = g.get_tensor_by_name("train/update_emb/Unique:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Index 9 at offset 1 in indices is out of range"):
                sess.run("train", {unique_ids: [0, 9, 5]})
            # Nothing was updated by the failed step.
            np.testing.assert_array_equal(sess.run("emb:0"), np.float32(EXPECTED["emb0"]))
    # Gradient rows that do not fit the table are refused on import.
    meta, node = _sparse_adagrad_meta()
    node.input[3] = "Const_1"  # shape [2]: not rows of a [6, 2] table
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"var and grad do not have the same shape \(6, 2\) \(2,\)"):
            tf.train.import_meta_graph(meta)
    meta, node = _sparse_adagrad_meta()
    node.input[4] = "Const_1"  # float indices
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="indices"):
            tf.train.import_meta_graph(meta)
