"""tf.io.RaggedFeature in parse_sequence_example / parse_single_sequence_example and in tf.data's
parse_example_dataset against TensorFlow 2.21 (tests/fixtures/parsing/ragged_sequence_feature.json, made by
tools/make_ragged_sequence_fixtures.py): ragged context features and feature lists, every partition kind,
nested and uniform partitions, missing features, int32 and int64 row splits, mixed with the other feature
kinds, the errors; RaggedTensor dataset elements through take, repeat, map and an iterator."""

import json
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

CASES = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "parsing" / "ragged_sequence_feature.json").read_text())
DATASET = CASES.pop("dataset")

KINDS = {name: getattr(tf.io.RaggedFeature, name) for name in
         ("RowSplits", "RowLengths", "RowStarts", "RowLimits", "ValueRowIds", "UniformRowLength")}


def _feature(spec):
    if "ragged" in spec:
        return tf.io.RaggedFeature(
            dtype=tf.as_dtype(spec["ragged"]), value_key=spec.get("value_key"),
            partitions=[KINDS[k](a) for k, a in spec.get("partitions", [])],
            row_splits_dtype=tf.as_dtype(spec.get("row_splits_dtype", "int32")),
            validate=spec.get("validate", False))
    if "fixed" in spec:
        shape, dtype, default = spec["fixed"]
        return tf.io.FixedLenFeature(shape, tf.as_dtype(dtype), default)
    if "fixedseq" in spec:
        shape, dtype, allow_missing = spec["fixedseq"]
        return tf.io.FixedLenSequenceFeature(shape, tf.as_dtype(dtype), allow_missing=allow_missing)
    return tf.io.VarLenFeature(tf.as_dtype(spec["varlen"]))


def _plain(v):
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):
        return _plain(v.tolist())
    return v


def _run(case):
    records = [bytes.fromhex(r) for r in case["records"]]
    context = {k: _feature(s) for k, s in case["context"].items()} or None
    sequence = {k: _feature(s) for k, s in case["sequence"].items()} or None
    with tf.Graph().as_default():
        if case["single"]:
            out = tf.io.parse_single_sequence_example(records[0], context, sequence)
        else:
            out = tf.io.parse_sequence_example(records, context, sequence)
        with tf.Session() as s:
            try:
                got = s.run(out)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__}, out
    return got, out


def _check(got, out, want, where):
    assert sorted(got) == sorted(want), where
    for key, w in want.items():
        g, o = got[key], out[key]
        if "ragged" in w:
            assert isinstance(o, tf.RaggedTensor), (where, key)
            assert _plain(g.to_list()) == w["ragged"], (where, key)
            assert g.ragged_rank == w["ragged_rank"], (where, key)
            assert o.dtype.name == w["dtype"], (where, key)
            assert o.row_splits.dtype.name == w["row_splits_dtype"], (where, key)
            assert list(np.shape(g.flat_values)) == w["flat_values_shape"], (where, key)
        elif "sparse" in w:
            assert [_plain(g.indices), _plain(g.values), _plain(g.dense_shape)] == w["sparse"], (where, key)
        else:
            assert not isinstance(o, tf.RaggedTensor), (where, key)
            assert _plain(g) == w["tensor"], (where, key)
            assert list(np.shape(g)) == w["shape"], (where, key)
            assert o.dtype.name == w["dtype"], (where, key)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    case = CASES[name]
    got, out = _run(case)
    want = case["expected"]
    if "error" in want:
        assert got == want
        return
    assert isinstance(got, tuple)
    for i, where in enumerate(("context", "sequence", "lengths")[:len(got)]):
        _check(got[i], out[i], want[where], where)


def test_ragged_feature_list_graph_shapes():
    """The static shapes TensorFlow gives: a batch of known size has ``batch + 1`` outer row splits."""
    case = CASES["each_partition"]
    records = [bytes.fromhex(r) for r in case["records"]]
    with tf.Graph().as_default():
        _, seq, _ = tf.io.parse_sequence_example(records, sequence_features={"v": tf.io.RaggedFeature(tf.int64)})
        assert seq["v"].row_splits.shape.as_list() == [len(records) + 1]
        assert seq["v"].shape.as_list() == [len(records), None, None]


def _dataset(features=None):
    examples = [bytes.fromhex(e) for e in DATASET["examples"]]
    features = features or {k: _feature(s) for k, s in DATASET["features"].items()}
    ds = tf.data.Dataset.from_tensor_slices(examples).batch(2)
    return ds.apply(tf.data.experimental.parse_example_dataset(features))


def test_parse_example_dataset_yields_ragged_elements():
    with tf.Graph().as_default():
        ds = _dataset().take(2).repeat(2)
        assert {k: v.as_list() for k, v in ds.output_shapes.items()} == DATASET["output_shapes"]
        classes = ds.output_classes
        assert {k: type(v).__name__ for k, v in classes.items()} == DATASET["output_classes"]
        assert classes["r"].ragged_rank == 2 and classes["r"].row_splits_dtype == tf.int64
        nxt = ds.make_one_shot_iterator().get_next()
        got = []
        with tf.Session() as s:
            while True:
                try:
                    got.append(s.run(nxt))
                except tf.errors.OutOfRangeError:
                    break
    assert len(got) == len(DATASET["elements"])
    for g, want in zip(got, DATASET["elements"]):
        _check(g, nxt, want, "element")


def test_ragged_elements_through_map_and_a_structured_iterator():
    with tf.Graph().as_default():
        ds = _dataset().map(lambda d: (d["v"], d["v"].to_tensor()))
        it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                             output_classes=ds.output_classes)
        rt, dense = it.get_next()
        assert isinstance(rt, tf.RaggedTensor) and rt.row_splits.dtype == tf.int64
        with tf.Session() as s:
            s.run(it.make_initializer(ds))
            first_rt, first_dense = s.run((rt, dense))
    assert first_rt.to_list() == DATASET["elements"][0]["v"]["ragged"]
    np.testing.assert_array_equal(first_dense, [[1, 2, 3], [4, 0, 0]])


def test_padded_batch_of_ragged_elements_is_refused_as_tensorflow_refuses_it():
    # batch and unbatch of these elements: tests/python/test_data_ragged.py.
    with tf.Graph().as_default():
        ds = _dataset({"v": tf.io.RaggedFeature(tf.int64)})
        with pytest.raises(TypeError, match="`padded_batch` is only supported for datasets that produce tensor"):
            ds.padded_batch(2)
