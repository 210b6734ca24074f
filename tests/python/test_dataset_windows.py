"""tf.data's window, group_by_window, bucket_by_sequence_length, scan, reduce, take_while, unique,
choose_from_datasets, get_single_element and cardinality against TensorFlow 2.21 (graph mode): every element of
the pipelines in _dataset_window_cases.py and their cardinality() (fixture from
tools/make_dataset_window_fixtures.py); sample_from_datasets' choices by their distribution; the errors
TensorFlow raises (checked by hand with TF 2.21)."""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _dataset_window_cases import cardinalities, pipelines

FIXTURE = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "dataset_windows.json").read_text())


def _dtype(name):
    return "string" if name.startswith("|S") or name in ("object", "string") else name


def _plain(value):
    if isinstance(value, dict):
        return [_plain(value[k]) for k in sorted(value)]
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    a = np.asarray(value)
    flat = [v.decode() if isinstance(v, bytes) else v.item() for v in a.ravel()]
    return [_dtype(str(a.dtype)), list(a.shape), flat]


def _normalized(x):
    if isinstance(x, list) and len(x) == 3 and isinstance(x[0], str):
        return [_dtype(x[0]), x[1], x[2]]
    return [_normalized(v) for v in x]


def _read_all(sess, ds, limit=1000):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    for _ in range(limit):
        try:
            out.append(_plain(sess.run(nxt)))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the dataset did not end")


@pytest.fixture(scope="module")
def results():
    with tf.Graph().as_default():
        cases = pipelines(tf)
        cards = {k: d.cardinality() for k, d in cardinalities(tf).items()}
        with tf.Session() as sess:
            out = {}
            for name, ds in cases.items():
                if isinstance(ds, tf.data.Dataset):
                    out[name] = _read_all(sess, ds)
                else:
                    out[name] = [_plain(sess.run(ds))]
            return out, sess.run(cards)


@pytest.mark.parametrize("name", sorted(FIXTURE["elements"]))
def test_elements_as_tensorflow(results, name):
    assert results[0][name] == _normalized(FIXTURE["elements"][name])


@pytest.mark.parametrize("name", sorted(FIXTURE["cardinality"]))
def test_cardinality_as_tensorflow(results, name):
    assert int(results[1][name]) == FIXTURE["cardinality"][name]


def test_cardinality_constants_and_experimental_endpoint():
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)
    assert tf.data.experimental.INFINITE_CARDINALITY == -1 and tf.data.experimental.UNKNOWN_CARDINALITY == -2
    with tf.Graph().as_default():
        c = tf.data.experimental.cardinality(tf.data.Dataset.range(5).batch(2))
        with tf.Session() as sess:
            assert sess.run(c) == 3


def test_window_structure_is_datasets():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(({"a": np.zeros([4, 2], np.float32)}, np.arange(4))).window(2)
        spec = ds.element_spec
        assert isinstance(spec[0]["a"], tf.data.DatasetSpec) and isinstance(spec[1], tf.data.DatasetSpec)
        assert spec[0]["a"].element_spec.shape.as_list() == [2] and spec[1].element_spec.dtype == tf.int64


def _sampled(datasets, n, **kwargs):
    with tf.Graph().as_default():
        ds = tf.data.Dataset.sample_from_datasets(datasets(), **kwargs).take(n)
        with tf.Session() as sess:
            return np.array([e[2][0] for e in _read_all(sess, ds, n + 1)])


def test_sample_from_datasets_follows_the_weights():
    def datasets():
        return [tf.data.Dataset.from_tensors(np.int64(i)).repeat() for i in range(3)]

    picks = _sampled(datasets, 6000, weights=[0.5, 0.2, 0.3], seed=7)
    freq = np.bincount(picks, minlength=3) / len(picks)
    # Binomial standard deviations are below 0.007 for 6000 draws: 5 of them.
    np.testing.assert_allclose(freq, [0.5, 0.2, 0.3], atol=0.035)
    np.testing.assert_array_equal(picks, _sampled(datasets, 6000, weights=[0.5, 0.2, 0.3], seed=7))
    uniform = np.bincount(_sampled(datasets, 3000, seed=1), minlength=3) / 3000
    np.testing.assert_allclose(uniform, [1 / 3] * 3, atol=0.04)
    only_last = _sampled(datasets, 50, weights=[0.0, 0.0, 2.0], seed=3)
    assert set(only_last.tolist()) == {2}


def test_sample_from_datasets_runs_each_input_to_its_end():
    def datasets():
        return [tf.data.Dataset.range(0, 5), tf.data.Dataset.range(100, 130)]

    got = _sampled(datasets, 100, weights=[0.5, 0.5], seed=11)
    assert sorted(got.tolist()) == list(range(5)) + list(range(100, 130))
    assert [x for x in got if x < 100] == list(range(5))


def test_sample_from_datasets_weights_dataset():
    def datasets():
        return [tf.data.Dataset.from_tensors(np.int64(i)).repeat() for i in range(2)]

    with tf.Graph().as_default():
        w = tf.data.Dataset.from_tensor_slices(np.array([[1.0, 0.0]] * 5 + [[0.0, 1.0]] * 5, np.float32))
        ds = tf.data.experimental.sample_from_datasets(datasets(), weights=w, seed=2)
        with tf.Session() as sess:
            got = [e[2][0] for e in _read_all(sess, ds)]
    assert got == [0] * 5 + [1] * 5


def _run_error(make):
    with tf.Graph().as_default():
        t = make()
        with tf.Session() as sess:
            return sess.run(t)


def test_errors_as_tensorflow():
    D = tf.data.Dataset
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
        _run_error(lambda: D.range(0).get_single_element())
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        _run_error(lambda: D.range(2).get_single_element())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window size must be greater than zero."):
        _run_error(lambda: D.range(3).window(0).flat_map(lambda w: w).make_one_shot_iterator().get_next())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window size must be greater than zero, but got 0"):
        _run_error(lambda: D.range(3).group_by_window(
            lambda x: x, lambda k, w: w, window_size_func=lambda k: k * 0).make_one_shot_iterator().get_next())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window shift must be greater than zero."):
        _run_error(lambda: D.range(3).window(2, shift=0).flat_map(lambda w: w).make_one_shot_iterator().get_next())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window stride must be greater than zero."):
        _run_error(lambda: D.range(3).window(2, stride=0).flat_map(lambda w: w).make_one_shot_iterator().get_next())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Selector index out of range: 2 >= 2"):
        _run_error(lambda: D.choose_from_datasets([D.range(2), D.range(2)], D.from_tensors(np.int64(2)))
                   .make_one_shot_iterator().get_next())
    with pytest.raises(tf.errors.OpError, match="elements must have length < max"):
        _run_error(lambda: D.range(3, 5).map(lambda n: tf.fill(tf.reshape(n, [1]), n)).bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [2], [1, 1], pad_to_bucket_boundary=True).make_one_shot_iterator().get_next())
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Either the `window_size` argument or the `window_size_func`"):
            D.range(3).group_by_window(lambda x: x, lambda k, w: w)
        with pytest.raises(ValueError, match="Either the `window_size` argument"):
            D.range(3).group_by_window(lambda x: x, lambda k, w: w, 2, lambda k: k)
        with pytest.raises(ValueError, match="Invalid `key_func`"):
            D.range(3).group_by_window(lambda x: (x, x), lambda k, w: w, 2)
        with pytest.raises(TypeError, match="`tf.data.Dataset.unique` does not support type"):
            D.range(3).map(lambda x: tf.cast(x, tf.float32)).unique()
        with pytest.raises(ValueError, match="Invalid `predicate`"):
            D.range(3).take_while(lambda x: x)
        with pytest.raises(TypeError, match="should return a pair"):
            D.range(3).scan(np.int64(0), lambda s, x: s + x)
        with pytest.raises(TypeError, match="element types for the new state must match"):
            D.range(3).scan(np.int64(0), lambda s, x: (tf.cast(s, tf.int32), x))
        with pytest.raises(ValueError, match=r"`len\(bucket_batch_sizes\)` must equal `len\(bucket_boundaries\) \+ 1`"):
            D.range(3).bucket_by_sequence_length(lambda x: 1, [2, 3], [1, 1])
        with pytest.raises(ValueError, match="`datasets` should not be empty"):
            D.choose_from_datasets([], D.range(1))
        with pytest.raises(TypeError, match="Elements of `choice_dataset` must be scalar `tf.int64`"):
            D.choose_from_datasets([D.range(1)], D.range(1).map(lambda x: tf.cast(x, tf.int32)))
        with pytest.raises(ValueError, match="`weights` should have the same length as `datasets`"):
            D.sample_from_datasets([D.range(1), D.range(2)], weights=[1.0])
        with pytest.raises(TypeError, match="`weights` type must be either `tf.float32` or `tf.float64`"):
            D.sample_from_datasets([D.range(1), D.range(2)], weights=[1, 2])
        with pytest.raises(TypeError, match="compatible element specs"):
            D.choose_from_datasets([D.range(1), D.from_tensors("a")], D.range(1))
