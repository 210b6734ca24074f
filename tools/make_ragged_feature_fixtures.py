"""Writes tests/fixtures/parsing/ragged_feature.json: what TensorFlow 2.21's ``tf.io.parse_example`` and
``parse_single_example`` (TF1 graph mode) give for ``tf.io.RaggedFeature`` configurations, for
tests/python/test_ragged_feature.py.

    /work/tfvenv/bin/python tools/make_ragged_feature_fixtures.py

Each case holds the serialized examples (hex), the features in a plain form (``{"ragged": dtype,
"value_key": ..., "partitions": [[kind, key or length], ...], "row_splits_dtype": ..., "validate": ...}``,
``{"fixed": [shape, dtype, default]}``, ``{"varlen": dtype}``), and per feature key what TensorFlow returned
(a ragged tensor's nested list, ragged rank, dtypes; a tensor's list and shape; a sparse tensor's parts),
or the error class when the run fails.
"""

from __future__ import annotations

import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "parsing" / "ragged_feature.json"


def example(**features):
    f = {}
    for k, v in features.items():
        if v and isinstance(v[0], float):
            f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif v and isinstance(v[0], bytes):
            f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        else:
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


KINDS = {
    "RowSplits": tf.io.RaggedFeature.RowSplits,
    "RowLengths": tf.io.RaggedFeature.RowLengths,
    "RowStarts": tf.io.RaggedFeature.RowStarts,
    "RowLimits": tf.io.RaggedFeature.RowLimits,
    "ValueRowIds": tf.io.RaggedFeature.ValueRowIds,
    "UniformRowLength": tf.io.RaggedFeature.UniformRowLength,
}


def make_feature(spec):
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


def plain(v):
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, list):
        return [plain(x) for x in v]
    if hasattr(v, "tolist"):
        return plain(v.tolist())
    return v


def run_case(examples, features, single):
    feats = {k: make_feature(s) for k, s in features.items()}
    with tf.Graph().as_default():
        if single:
            out = tf.io.parse_single_example(examples[0], feats)
        else:
            out = tf.io.parse_example(examples, feats)
        with tf.Session() as s:
            try:
                got = s.run(out)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__}
    result = {}
    for k, v in got.items():
        if isinstance(v, tf.ragged.RaggedTensorValue):
            result[k] = {"ragged": plain(v.to_list()), "ragged_rank": v.ragged_rank,
                         "dtype": out[k].dtype.name, "row_splits_dtype": out[k].row_splits.dtype.name,
                         "flat_values_shape": list(v.flat_values.shape)}
        elif isinstance(v, tf.SparseTensorValue):
            result[k] = {"sparse": [plain(v.indices), plain(v.values), plain(v.dense_shape)]}
        else:
            result[k] = {"tensor": plain(v), "shape": list(v.shape), "dtype": out[k].dtype.name}
    return result


DOC = [  # TensorFlow's RaggedFeature docstring examples
    example(v=[3, 1, 4, 1, 5, 9], s1=[0, 2, 3, 3, 6], s2=[0, 2, 3, 4]),
    example(v=[2, 7, 1, 8, 2, 8, 1], s1=[0, 3, 4, 5, 7], s2=[0, 1, 1, 4]),
]
PARTS = [  # each example: values and every kind of partition describing the same rows
    example(v=[1.5, 2.5, 3.5, 4.5, 5.5], splits=[0, 2, 2, 5], lengths=[2, 0, 3], starts=[0, 2, 2],
            limits=[2, 2, 5], rowids=[0, 0, 2, 2, 2], s=[b"a", b"bb", b"", b"d", b"e"],
            outer=[2, 1], ostarts=[0, 2], olimits=[1, 3], u=[1, 2, 3, 4, 5, 6]),
    example(v=[6.5], splits=[0, 0, 1], lengths=[0, 1], starts=[0, 0], limits=[0, 1], rowids=[1],
            s=[b"f"], outer=[1, 1], ostarts=[0, 1], olimits=[2], u=[7, 8]),
    example(splits=[0], u=[]),  # values missing, empty partitions
    example(v=[7.5, 8.5], splits=[0, 2], lengths=[2], starts=[0], limits=[2], rowids=[0, 0],
            s=[b"g", b"h"], outer=[1, 0], ostarts=[0], olimits=[1], u=[9, 10, 11, 12]),
]


def ragged(dtype="float32", value_key="v", partitions=(), **kw):
    return {"ragged": dtype, "value_key": value_key, "partitions": [list(p) for p in partitions], **kw}


CASES = {
    "doc": (DOC, {
        "f1": ragged("int64"),
        "f2": ragged("int64", partitions=[("RowSplits", "s1")]),
        "f3": ragged("int64", partitions=[("RowSplits", "s2"), ("RowSplits", "s1")]),
    }),
    "each_partition": (PARTS, {
        "no_parts": ragged(),
        "splits": ragged(partitions=[("RowSplits", "splits")]),
        "lengths": ragged(partitions=[("RowLengths", "lengths")]),
        "starts": ragged(partitions=[("RowStarts", "starts")]),
        "limits": ragged(partitions=[("RowLimits", "limits")]),
        "rowids": ragged(partitions=[("ValueRowIds", "rowids")]),
        "strings": ragged("string", value_key="s", partitions=[("RowLengths", "lengths")]),
    }),
    "nested": (PARTS, {
        "lengths_then_splits": ragged(partitions=[("RowLengths", "outer"), ("RowSplits", "splits")]),
        "starts_then_lengths": ragged(partitions=[("RowStarts", "ostarts"), ("RowLengths", "lengths")]),
    }),
    "nested_int64": (PARTS, {
        "limits_then_rowids": ragged(partitions=[("RowLimits", "olimits"), ("ValueRowIds", "rowids")],
                                     row_splits_dtype="int64"),
    }),
    "uniform": (PARTS, {
        "inner_uniform": ragged("int64", value_key="u", partitions=[("UniformRowLength", 2)]),
        "two_uniform": ragged("int64", value_key="u", partitions=[("UniformRowLength", 1),
                                                                  ("UniformRowLength", 2)]),
    }),
    "uniform_outer": (DOC, {
        "uniform_over_splits": ragged("int64", partitions=[("UniformRowLength", 2), ("RowSplits", "s1")]),
    }),
    "mixed": (PARTS, {
        "r": ragged(value_key="v", partitions=[("RowLengths", "lengths")]),
        "u": {"varlen": "int64"},
        "outer": {"fixed": [[2], "int64", [-1, -2]]},
        "own_key": {"ragged": "string", "partitions": []},
        "s": ragged("string", value_key="s"),
    }),
    "bad_type": (PARTS, {"r": ragged("int64")}),
    "validate_bad_splits": ([example(v=[1.0, 2.0], p=[0, 3])], {
        "r": ragged(partitions=[("RowSplits", "p")], validate=True)}),
    "validate_good": (PARTS[:2], {"r": ragged(partitions=[("RowSplits", "splits")], validate=True)}),
}

SINGLE = {
    "doc_single": (DOC[:1], CASES["doc"][1]),
    "each_partition_single": (PARTS[:1], CASES["each_partition"][1]),
    "missing_single": (PARTS[2:3], {"v": ragged(), "splits": ragged(partitions=[("RowSplits", "splits")])}),
    "nested_single": (PARTS[:1], CASES["nested"][1]),
    "nested_int64_single": (PARTS[:1], CASES["nested_int64"][1]),
    "uniform_single": (PARTS[:1], CASES["uniform"][1]),
    "uniform_outer_single": (DOC[:1], CASES["uniform_outer"][1]),
}


def main():
    fixtures = {}
    for name, (examples, features) in CASES.items():
        fixtures[name] = {"examples": [e.hex() for e in examples], "features": features, "single": False,
                          "expected": run_case(examples, features, False)}
    for name, (examples, features) in SINGLE.items():
        fixtures[name] = {"examples": [e.hex() for e in examples], "features": features, "single": True,
                          "expected": run_case(examples, features, True)}
    OUT.write_text(json.dumps(fixtures, indent=1, sort_keys=True) + "\n")
    for name, f in fixtures.items():
        print(name, json.dumps(f["expected"])[:300])


if __name__ == "__main__":
    main()
