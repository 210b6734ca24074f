"""Dataset.window followed by flat_map / interleave / reduce (windows of dense, SparseTensor and RaggedTensor
elements), tf.data.experimental.group_by_reducer, tf.gather with batch_dims and tf.map_fn over RaggedTensors,
element for element against TensorFlow 2.21 (fixture: tools/make_data_gaps_fixtures.py over
_data_gaps_cases.py)."""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _data_gaps_cases import datasets, tensors

FIXTURE = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "data_gaps.json").read_text())


def _plain(v):
    if isinstance(v, tf.SparseTensorValue):
        return {"sparse": [_plain(v.indices), _plain(v.values), _plain(v.dense_shape)]}
    if hasattr(v, "to_list") and hasattr(v, "nested_row_splits"):
        return {"ragged": [_plain(v.flat_values)] + [_plain(s) for s in v.nested_row_splits]}
    if isinstance(v, dict):
        return {k: _plain(v[k]) for k in sorted(v)}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    a = np.asarray(v)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.ravel().tolist()}


@pytest.fixture(scope="module")
def dataset_results():
    out = {}
    with tf.Graph().as_default():
        nexts = {k: tf.data.make_one_shot_iterator(d).get_next() for k, d in datasets(tf).items()}
        with tf.Session() as sess:
            for name, nxt in nexts.items():
                elements = []
                while True:
                    try:
                        elements.append(_plain(sess.run(nxt)))
                    except tf.errors.OutOfRangeError:
                        break
                out[name] = elements
    return out


@pytest.fixture(scope="module")
def tensor_results():
    with tf.Graph().as_default():
        made = tensors(tf)
        with tf.Session() as sess:
            return {k: _plain(v) for k, v in sess.run(made).items()}


@pytest.mark.parametrize("name", sorted(FIXTURE["datasets"]))
def test_datasets_as_tensorflow(dataset_results, name):
    assert dataset_results[name] == FIXTURE["datasets"][name]


@pytest.mark.parametrize("name", sorted(FIXTURE["tensors"]))
def test_tensors_as_tensorflow(tensor_results, name):
    assert tensor_results[name] == FIXTURE["tensors"][name]


def test_group_by_reducer_checks_key_func():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(4)
        reducer = tf.data.experimental.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s)
        with pytest.raises(ValueError, match="Invalid `key_func`"):
            ds.apply(tf.data.experimental.group_by_reducer(lambda x: tf.cast(x, tf.int32), reducer))
        bad = tf.data.experimental.Reducer(lambda k: np.int64(0), lambda s, x: tf.cast(s, tf.float32), lambda s: s)
        with pytest.raises(TypeError, match="types for the new state must match"):
            ds.apply(tf.data.experimental.group_by_reducer(lambda x: x, bad))


def test_map_fn_ragged_static_shapes():
    with tf.Graph().as_default():
        rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
        assert tf.map_fn(tf.reduce_sum, rt, dtype=tf.int32).shape.as_list() == [3]
        with pytest.raises(TypeError, match="ragged_rank 0"):
            tf.map_fn(lambda r: r, tf.ragged.constant([[[1]], [[2, 3]]]),
                      fn_output_signature=tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1))


def test_batching_windows_asks_for_flat_map():
    # TensorFlow builds window().batch() but cannot read its elements back as datasets.
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="flat_map"):
            tf.data.Dataset.range(7).window(3).batch(2)
