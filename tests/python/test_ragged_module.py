"""tf.ragged (tf.compat.v1.ragged) against TensorFlow 2.21 (tests/fixtures/ragged_module/expected.json, made by
tools/make_ragged_module_fixtures.py from tests/fixtures/ragged_module/ragged_module_cases.py).

Every graph case is built by ferroflow from the same source and compared on what was built (class, dtype,
static shape, ragged rank, row-splits dtype) and on the fetched value (flat values bit for bit, nested row
splits and their dtype): constant, range (the RaggedRange op), cross and cross_hashed (RaggedCross, hashes
equal to TensorFlow's), segment ids and row splits, map_flat_values, boolean_mask, stack,
stack_dynamic_partitions, ragged placeholders fed with RaggedTensorValues, RaggedTensor's factories,
to_tensor/to_sparse/bounding_shape, indexing, operators, and tf.stack converting Python numbers to the first
tensor's dtype. Error cases compare the exception class (and message where ferroflow words it as TensorFlow);
gradient cases compare tf.gradients through to_tensor, and the missing gradient of RaggedRange.
"""


import numpy as np
import pytest

import ferroflow as tf
from _ragged_fixtures import load, same_static

_, cases, EXPECTED = load("ragged_module")

GRAPH = cases.graph_cases(tf)
BUILD_ERRORS = cases.build_errors(tf)
RUN_ERRORS = cases.run_errors(tf)

# Where ferroflow's message says what TensorFlow's does: a phrase both must contain.
BUILD_MESSAGES = {
    "range_shape_mismatch_static": None,
    "range_matrix_static": None,
    "cross_batch_mismatch_static": "inputs must all have the same batch dimension size",
    "stack_int64_float": None,  # the whole message, below
}
RUN_MESSAGES = {
    "range_zero_delta": "Requires delta != 0",
    "range_shape_mismatch": "starts, limits, and deltas must have the same shape",
    "range_matrix": "starts must be a scalar or vector",
    "cross_batch_mismatch": "inputs must all have the same batch dimension size.",
    "partitions_too_big": "partitions must be less than num_partitions",
    "partitions_negative": "partitions must be non-negative",
    "getitem_row_out_of_range": "slice index 5 of dimension 0 out of bounds.",
    "op_mismatched_splits": "Condition x == y did not hold",
}


def _split(built):
    return built if isinstance(built, tuple) else (built, None)


def test_cases_cover_the_fixture():
    assert sorted(GRAPH) == sorted(EXPECTED["graph"])
    assert sorted(BUILD_ERRORS) == sorted(EXPECTED["build_errors"])
    assert sorted(RUN_ERRORS) == sorted(EXPECTED["run_errors"])


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_graph_case(name):
    want = EXPECTED["graph"][name]
    with tf.Graph().as_default(), tf.Session() as sess:
        fetch, feed = _split(GRAPH[name]())
        same_static(cases.static_info(tf, fetch), want["static"], name)
        assert cases.describe(sess.run(fetch, feed)) == want["value"]


@pytest.mark.parametrize("name", sorted(BUILD_ERRORS))
def test_build_error(name):
    cls, message = EXPECTED["build_errors"][name]
    with tf.Graph().as_default():
        with pytest.raises(getattr(tf.errors, cls, None) or __builtins__[cls]) as info:
            BUILD_ERRORS[name]()
    if name in BUILD_MESSAGES:
        phrase = BUILD_MESSAGES[name]
        if phrase is not None:
            assert phrase in message and phrase in str(info.value)
    else:
        assert str(info.value) == message


@pytest.mark.parametrize("name", sorted(RUN_ERRORS))
def test_run_error(name):
    cls, message = EXPECTED["run_errors"][name]
    phrase = RUN_MESSAGES[name]
    assert phrase in message
    with tf.Graph().as_default(), tf.Session() as sess:
        fetch = RUN_ERRORS[name]()
        with pytest.raises(getattr(tf.errors, cls)) as info:
            sess.run(fetch)
    assert phrase in str(info.value)


@pytest.mark.parametrize("name", sorted(EXPECTED["values"]))
def test_constant_value(name):
    got = cases.value_cases(tf)[name]()
    assert cases.describe(got) == EXPECTED["values"][name]
    if EXPECTED["values"][name]["kind"] == "ragged":
        assert isinstance(got, tf.ragged.RaggedTensorValue)
    else:
        assert isinstance(got, np.ndarray)


@pytest.mark.parametrize("name", sorted(EXPECTED["gradients"]))
def test_gradients(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        ys, xs = cases.gradient_cases(tf)[name]()
        grads = tf.gradients(ys, xs)
        got = [None if g is None else cases.describe(sess.run(tf.convert_to_tensor(g))) for g in grads]
    assert got == EXPECTED["gradients"][name]


def test_public_names_and_arguments():
    import inspect

    names = sorted(n for n in dir(tf.compat.v1.ragged) if not n.startswith("_"))
    assert names == sorted(EXPECTED["signatures"])
    for name, params in EXPECTED["signatures"].items():
        obj = getattr(tf.ragged, name)
        if params is not None:
            assert list(inspect.signature(obj).parameters) == params, name
    assert not hasattr(tf.compat.v1, "RaggedTensorValue")  # as in TF 2.21's compat.v1


def test_session_run_returns_ragged_tensor_value():
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.ragged.constant([[1, 2], [3]]))
    assert isinstance(got, tf.ragged.RaggedTensorValue)
    assert got.to_list() == [[1, 2], [3]]


def test_placeholder_feed_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        p = tf.ragged.placeholder(tf.float32, 1)
        with pytest.raises(TypeError):
            sess.run(p.flat_values, {p: [[1.0]]})
        with pytest.raises(ValueError):
            sess.run(p.flat_values, {p: tf.ragged.constant_value([[[1.0]]])})
