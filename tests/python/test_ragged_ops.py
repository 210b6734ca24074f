"""TensorFlow functions on RaggedTensors against TensorFlow 2.21 (tests/fixtures/ragged_ops/expected.json, made by
tools/make_ragged_ops_fixtures.py from tests/fixtures/ragged_ops/ragged_ops_cases.py).

Broadcasting a RaggedTensor against scalars and dense tensors in the operators and tf.math's elementwise
functions (a [B, 1] column against [B, None] rows, vectors against uniform inner dimensions, dense tensors of a
higher rank adding leading dimensions, TensorFlow's run-time errors for sizes that do not line up), tf.where,
tf.concat/tf.stack, tf.gather (ragged params and/or indices), reductions over every axis, tf.cast/zeros_like/
ones_like, to_tensor (padding and truncation to a shape) and from_tensor. Values are compared bit for bit with the
row splits and dtypes; static facts with ferroflow allowed to leave a dimension unknown where TensorFlow knows it.
Gradients through broadcasting, to_tensor, gather, reductions and where are compared with tf.gradients' values.
"""

import os

import pytest

import ferroflow as tf
from _ragged_fixtures import load, same_static

HERE, cases, EXPECTED = load("ragged_ops")

GRAPH = cases.graph_cases(tf)
BUILD_ERRORS = cases.build_errors(tf)
RUN_ERRORS = cases.run_errors(tf)

# Build errors whose message ferroflow words as TensorFlow does: a phrase both must contain (None: class only).
BUILD_MESSAGES = {
    "inner_vector_mismatch": "Dimensions must be equal",
    "dtype_mismatch": "Input 'y' of 'AddV2' Op has type int32 that does not match type float32",
    "to_tensor_shape_rank": "rt_input.rank = 2 but shape.rank = 3",
    "from_tensor_both": "Specify argument `lengths` or `padding`, but not both.",
    "gather_float_indices": None,
    "concat_splits_dtypes": "Input RaggedTensors have mismatched row_splits dtypes",
    "add_splits_dtypes": "Input RaggedTensors have mismatched row_splits dtypes",
    "boolean_mask_ragged": None,
    "where_v1_scalars": "Input shapes do not match.",
    "where_v1_dense_y": "Input shapes do not match.",
}
RUN_MESSAGES = {
    "ragged_dim_vs_vector": "Condition x == y did not hold",
    "rows_vs_column": "Condition x == y did not hold",
    "ragged_dim_vs_matrix": "Condition x == y did not hold",
    "fed_column_wrong_rows": "Condition x == y did not hold",
    "ragged_partitions_differ": "Condition x == y did not hold",
    "gather_out_of_range": "indices[1] = 4 is not in [0, 4)",
    "gather_negative": "indices[0] = -1 is not in [0, 4)",
    "squeeze_long_rows": "the given axis (axis = 1) is not squeezable!",
    "gather_axis1_short_row": None,
    "ragged_rows_of_one": "Condition x == y did not hold",
    "ragged_one_row": "Condition x == y did not hold",
    "uniform_inner_vs_ragged_inner": "Condition x == y did not hold",
}


def test_cases_cover_the_fixture():
    assert sorted(GRAPH) == sorted(EXPECTED["graph"])
    assert sorted(BUILD_ERRORS) == sorted(EXPECTED["build_errors"]) == sorted(BUILD_MESSAGES)
    assert sorted(RUN_ERRORS) == sorted(EXPECTED["run_errors"]) == sorted(RUN_MESSAGES)


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_graph_case(name):
    want = EXPECTED["graph"][name]
    with tf.Graph().as_default(), tf.Session() as sess:
        fetch = GRAPH[name]()
        same_static(cases.static_info(tf, fetch), want["static"], name, tf_may_forget=True)
        assert cases.describe(sess.run(fetch)) == want["value"]


@pytest.mark.parametrize("name", sorted(BUILD_ERRORS))
def test_build_error(name):
    cls, message = EXPECTED["build_errors"][name]
    with tf.Graph().as_default():
        with pytest.raises(getattr(tf.errors, cls, None) or __builtins__[cls]) as info:
            BUILD_ERRORS[name]()
    phrase = BUILD_MESSAGES[name]
    if phrase is not None:
        assert phrase in message and phrase in str(info.value)


@pytest.mark.parametrize("name", sorted(RUN_ERRORS))
def test_run_error(name):
    cls, message = EXPECTED["run_errors"][name]
    phrase = RUN_MESSAGES[name]  # None: the class only (ferroflow checks more than TensorFlow there)
    assert phrase is None or phrase in message
    with tf.Graph().as_default(), tf.Session() as sess:
        fetch = RUN_ERRORS[name]()
        with pytest.raises(getattr(tf.errors, cls)) as info:
            sess.run(fetch)
    assert phrase is None or phrase in str(info.value)


@pytest.mark.parametrize("name", sorted(EXPECTED["gradients"]))
def test_gradients(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        ys, xs = cases.gradient_cases(tf)[name]()
        grads = tf.gradients(ys, xs)
        got = [None if g is None else cases.describe(sess.run(tf.convert_to_tensor(g))) for g in grads]
    assert got == EXPECTED["gradients"][name]


@pytest.mark.parametrize("name", sorted(EXPECTED["op_types"]))
def test_tensorflow_ops_in_the_graph(name):
    """to_tensor and gather build TensorFlow's own ops, so GraphDefs exchanged with TensorFlow hold the same."""
    build, types = cases.op_types(tf)[name]
    g = tf.Graph()
    with g.as_default():
        build()
    assert EXPECTED["op_types"][name] == sorted(types)
    assert sorted({o.type for o in g.get_operations()} & set(types)) == sorted(types)


def test_graph_def_written_by_tensorflow_runs():
    """A GraphDef TensorFlow wrote with RaggedTensorToTensor (VALUE_ROWIDS partitions, truncation at ragged rank
    2), RaggedGather and the RaggedTensorToTensor gradient imports and runs to TensorFlow's values."""
    from ferroflow.core.framework import graph_pb2

    with open(os.path.join(HERE, "tf_graph.pb"), "rb") as fh:
        gd = graph_pb2.GraphDef.FromString(fh.read())
    want = EXPECTED["imported"]
    with tf.Graph().as_default() as g, tf.Session() as sess:
        tf.import_graph_def(gd, name="")
        got = sess.run([g.get_tensor_by_name(f + ":0") for f in sorted(want)])
    assert [cases.describe(v) for v in got] == [want[f] for f in sorted(want)]
