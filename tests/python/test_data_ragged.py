"""RaggedTensor elements through tf.data against TensorFlow 2.21 (tests/fixtures/data_ragged/expected.json, made
by tools/make_ragged_data_fixtures.py from the pipelines in tests/fixtures/data_ragged/ragged_pipelines.py).

Batching adds a ragged dimension, unbatch and from_tensor_slices cut one, from_tensors keeps the value whole;
map/filter functions receive RaggedTensors; dense_to_ragged_batch / Dataset.ragged_batch batch dense elements
of different shapes; padded_batch refuses ragged elements with TensorFlow's error. Each pipeline is compared on
its element_spec, its output_types/shapes/classes and every element (flat values, row splits and their dtypes);
a parse_example_dataset -> unbatch -> batch pipeline feeds a training step whose losses and weights match.
"""

import json
import os
import re
import sys

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.data import _structure

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "data_ragged")
sys.path.insert(0, HERE)
import ragged_pipelines  # noqa: E402

with open(os.path.join(HERE, "expected.json")) as fh:
    EXPECTED = json.load(fh)


def _close(got, want, path):
    """Equal structures, floats within 1e-6 relative."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{path}: {got} vs {want}"
        for k in want:
            _close(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6), f"{path}: {got} vs {want}"
    else:
        assert got == want, f"{path}: {got!r} vs {want!r}"


@pytest.mark.parametrize("name", sorted(EXPECTED["pipelines"]))
def test_pipeline_matches_tensorflow(name):
    want = EXPECTED["pipelines"][name]
    got = ragged_pipelines.run(tf, ragged_pipelines.pipelines(tf)[name])
    _close(got["element_spec"], want["element_spec"], "element_spec")
    _close(got["legacy"], want["legacy"], "legacy")
    # The error class where TensorFlow's run fails (the messages differ: TF's names its variant-decoding node).
    assert (got.get("error") or [None])[0] == (want.get("error") or [None])[0]
    if "error" in want and "flat_values must have compatible shapes" in want["error"][1]:
        # TensorFlow's words up to its advice about map_fn.
        assert want["error"][1].split(".  If")[0].replace("  ", " ").lower() in got["error"][1].lower()
    _close(got["elements"], want["elements"], "elements")


@pytest.mark.parametrize("name", sorted(EXPECTED["failing"]))
def test_building_fails_as_in_tensorflow(name):
    cls, message = EXPECTED["failing"][name]
    with tf.Graph().as_default():
        with pytest.raises(Exception) as info:
            ragged_pipelines.failing(tf)[name]()
    assert type(info.value).__name__ == cls
    # TensorFlow's message up to the spec it prints (whose repr differs).
    assert str(info.value).startswith(re.split(r"`\w+Spec\(", message)[0]), str(info.value)


def test_training_on_parsed_ragged_ids_matches_tensorflow():
    want = EXPECTED["train"]
    got = ragged_pipelines.train(tf)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["emb"], want["emb"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-5, atol=1e-6)


def test_map_function_receives_ragged_tensors():
    with tf.Graph().as_default():
        seen = []

        def fn(r):
            seen.append(r)
            return r.flat_values

        tf.data.Dataset.from_tensor_slices(ragged_pipelines.rank2(tf)).batch(2).map(fn)
        assert isinstance(seen[0], tf.RaggedTensor)
        assert seen[0].ragged_rank == 2


def test_initializable_iterator_over_batched_ragged_elements():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int64, [])
        ds = tf.data.Dataset.from_tensor_slices(ragged_pipelines.rank1(tf)).take(n).batch(2)
        it = ds.make_initializable_iterator()
        nxt = it.get_next()
        assert isinstance(nxt, tf.RaggedTensor)
        with tf.Session() as s:
            for count, lists in [(3, [[[1, 2], []], [[3, 4, 5]]]), (1, [[[1, 2]]])]:
                s.run(it.initializer, {n: count})
                got = []
                while True:
                    try:
                        got.append(s.run(nxt).to_list())
                    except tf.errors.OutOfRangeError:
                        break
                assert got == lists


def test_bad_row_splits_are_invalid_argument_naming_the_component():
    # A map that returns splits not ending at the number of values: batching must not read past them.
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(2).map(
            lambda v: tf.RaggedTensor.from_row_splits(tf.range(v), tf.constant([0, 5], tf.int64), validate=False))
        nxt = tf.data.make_one_shot_iterator(ds.batch(2)).get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="component 0"):
                s.run(nxt)


def test_layout_attrs_name_the_ragged_components():
    spec = {
        "d": tf.TensorSpec([None], tf.float32),
        "r": tf.RaggedTensorSpec([None, None, None], tf.int64, 2, tf.int32),
        "s": tf.SparseTensorSpec([None, 4], tf.float32),
        "z": tf.RaggedTensorSpec([None], tf.int64, 0),
    }
    i32, i64 = tf.int32.as_datatype_enum, tf.int64.as_datatype_enum
    assert _structure.layout_attrs(spec, cut=False) == {"_sparse": [4], "_ragged": [1, 2, i32, 7, 0, i64]}
    assert _structure.layout_attrs(spec, cut=True) == {"_sparse": [4], "_ragged": [1, 2, i32]}


def test_fetched_ragged_values_slice_and_batch_like_graph_ones():
    from ferroflow.ops.ragged import RaggedTensorValue

    value = RaggedTensorValue(np.arange(1, 8, dtype=np.int64), np.array([0, 2, 2, 5, 7], np.int64))
    for name, build in [("slices_rank1", lambda: tf.data.Dataset.from_tensor_slices(value)),
                        ("slices_rank1_batch", lambda: tf.data.Dataset.from_tensor_slices(value).batch(3))]:
        got = ragged_pipelines.run(tf, build)
        want = EXPECTED["pipelines"][name]
        _close(got["element_spec"], want["element_spec"], "element_spec")
        _close(got["elements"], want["elements"], "elements")
