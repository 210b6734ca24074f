"""tf.io.RaggedFeature in parse_example / parse_single_example against TensorFlow 2.21
(tests/fixtures/parsing/ragged_feature.json, made by tools/make_ragged_feature_fixtures.py): every partition
kind, nested and uniform partitions, missing features, int32 and int64 row splits, mixed with other
features, and the errors."""

import json
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

CASES = json.loads((Path(__file__).parent.parent / "fixtures" / "parsing" / "ragged_feature.json").read_text())

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
    examples = [bytes.fromhex(e) for e in case["examples"]]
    features = {k: _feature(s) for k, s in case["features"].items()}
    with tf.Graph().as_default():
        if case["single"]:
            out = tf.io.parse_single_example(examples[0], features)
        else:
            out = tf.io.parse_example(examples, features)
        with tf.Session() as s:
            try:
                got = s.run(out)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__}, out
    return got, out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    case = CASES[name]
    got, out = _run(case)
    want = case["expected"]
    if "error" in want:
        assert got == want
        return
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        g = got[key]
        if "ragged" in w:
            assert isinstance(out[key], tf.RaggedTensor), key
            assert _plain(g.to_list()) == w["ragged"], key
            assert g.ragged_rank == w["ragged_rank"], key
            assert out[key].dtype.name == w["dtype"]
            assert out[key].row_splits.dtype.name == w["row_splits_dtype"], key
            assert list(np.shape(g.flat_values)) == w["flat_values_shape"], key
        elif "sparse" in w:
            assert [_plain(g.indices), _plain(g.values), _plain(g.dense_shape)] == w["sparse"], key
        else:
            assert not isinstance(out[key], tf.RaggedTensor), key
            assert _plain(g) == w["tensor"] and list(np.shape(g)) == w["shape"], key
            assert out[key].dtype.name == w["dtype"]


def test_op_inputs_are_tensorflows():
    # The value key, then each keyed partition, features sorted by key; int64 partition values.
    f = {"b": tf.io.RaggedFeature(tf.float32, value_key="v", partitions=[
             tf.io.RaggedFeature.RowSplits("s"), tf.io.RaggedFeature.UniformRowLength(2)],
             row_splits_dtype=tf.int64),
         "a": tf.io.RaggedFeature(tf.string)}
    with tf.Graph().as_default():
        out = tf.io.parse_example(tf.constant([b""]), f)
        op = next(o for o in tf.get_default_graph().get_operations() if o.type == "ParseExampleV2")
        with tf.Session() as s:
            keys = s.run(op.inputs[4])
        assert list(keys) == [b"a", b"v", b"s"]
        assert [tf.as_dtype(t) for t in op.get_attr("ragged_value_types")] == [tf.string, tf.float32, tf.int64]
        assert [tf.as_dtype(t) for t in op.get_attr("ragged_split_types")] == [tf.int32, tf.int64, tf.int64]
        assert out["b"].row_splits.dtype == tf.int64


def test_wrong_value_type_names_the_key():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))})).SerializeToString()
    with tf.Graph().as_default():
        out = tf.io.parse_example(tf.constant([ex, ex]), {"v": tf.io.RaggedFeature(tf.float32)},
                                  example_names=["first", "second"])
        with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Name: first, Key: v, Index: 0.  Data types don't match"):
            s.run(out["v"].values)


def test_validate_names_the_feature():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        "p": tf.train.Feature(int64_list=tf.train.Int64List(value=[0, 3]))})).SerializeToString()
    f = {"r": tf.io.RaggedFeature(tf.float32, value_key="v", partitions=[tf.io.RaggedFeature.RowSplits("p")],
                                  validate=True)}
    with tf.Graph().as_default():
        out = tf.io.parse_single_example(tf.constant(ex), f)
        with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="Feature r"):
            s.run(out["r"])


def test_configuration_errors():
    with pytest.raises(ValueError, match="dtype"):
        tf.io.RaggedFeature(tf.int32)
    with pytest.raises(ValueError, match="row_splits_dtype"):
        tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.float32)
    with pytest.raises(TypeError, match="partitions"):
        tf.io.RaggedFeature(tf.int64, partitions=["s"])
    with pytest.raises(TypeError, match="validate"):
        tf.io.RaggedFeature(tf.int64, validate=1)
    f = tf.io.RaggedFeature(tf.int64)
    assert f == (tf.int64, None, (), tf.int32, False) and f.count(None) == 1
    with tf.Graph().as_default():
        s = tf.constant([b""])
        with pytest.raises(ValueError, match="Sparse and ragged keys must not intersect"):
            tf.io.parse_example(s, {"a": tf.io.VarLenFeature(tf.int64), "x": tf.io.RaggedFeature(tf.int64, value_key="a")})
        with pytest.raises(ValueError, match="Conflicting"):
            tf.io.parse_example(s, {"a": f, "b": tf.io.RaggedFeature(tf.float32, value_key="a")})
        with pytest.raises(ValueError, match="statically-known rank"):
            tf.io.parse_example(tf.compat.v1.placeholder(tf.string), {"a": f})
