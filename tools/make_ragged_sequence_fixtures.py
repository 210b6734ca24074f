"""Writes tests/fixtures/parsing/ragged_sequence_feature.json: what TensorFlow 2.21's
``tf.io.parse_sequence_example`` and ``parse_single_sequence_example`` (TF1 graph mode) give for
``tf.io.RaggedFeature`` in ``context_features`` and ``sequence_features``, and what
``tf.data.experimental.parse_example_dataset`` with RaggedFeatures yields through a one-shot iterator (under
the ``"dataset"`` key), for tests/python/test_ragged_sequence_feature.py.

    /work/tfvenv/bin/python tools/make_ragged_sequence_fixtures.py

Each case holds the serialized SequenceExamples (hex), the context and sequence features in the plain form
of tools/make_ragged_feature_fixtures.py (plus ``{"fixedseq": [shape, dtype, allow_missing]}``), whether
one record is parsed with ``parse_single_sequence_example``, and what TensorFlow returned per output dict
(a ragged tensor's nested list, ragged rank and dtypes; a tensor's list and shape; a sparse tensor's parts),
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

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "parsing"
       / "ragged_sequence_feature.json")


def feature(v):
    if not v:
        return tf.train.Feature()  # no value list at all: an empty step of any dtype
    if isinstance(v[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=v))
    if isinstance(v[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=v))


def seq_example(context=None, lists=None):
    ctx = tf.train.Features(feature={k: feature(v) for k, v in (context or {}).items()})
    fl = tf.train.FeatureLists(feature_list={
        k: tf.train.FeatureList(feature=[feature(step) for step in steps]) for k, steps in (lists or {}).items()})
    return tf.train.SequenceExample(context=ctx, feature_lists=fl).SerializeToString()


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
    if "fixedseq" in spec:
        shape, dtype, allow_missing = spec["fixedseq"]
        return tf.io.FixedLenSequenceFeature(shape, tf.as_dtype(dtype), allow_missing=allow_missing)
    return tf.io.VarLenFeature(tf.as_dtype(spec["varlen"]))


def plain(v):
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, list):
        return [plain(x) for x in v]
    if hasattr(v, "tolist"):
        return plain(v.tolist())
    return v


def describe(got, out):
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


def run_case(records, context, sequence, single):
    ctx_f = {k: make_feature(s) for k, s in context.items()} or None
    seq_f = {k: make_feature(s) for k, s in sequence.items()} or None
    with tf.Graph().as_default():
        if single:
            out = tf.io.parse_single_sequence_example(records[0], ctx_f, seq_f)
        else:
            out = tf.io.parse_sequence_example(records, ctx_f, seq_f)
        with tf.Session() as s:
            try:
                got = s.run(out)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__}
    names = ["context", "sequence", "lengths"]
    return {names[i]: describe(g, o) for i, (g, o) in enumerate(zip(got, out))}


RECORDS = [
    seq_example(
        context={"c": [1, 2, 3], "cs": [0, 1, 3], "cf": [0.5, 1.5], "n": [7]},
        lists={"v": [[1, 2], [], [3]], "f": [[0.5], [1.5, 2.5]], "s": [[b"a", b"bb"], [b"c"]],
               "splits": [[0, 1, 2], [0], [0, 0, 1]], "lengths": [[1, 1], [], [0, 1]],
               "starts": [[0, 1], [], [0, 0]], "limits": [[1, 2], [], [0, 1]], "rowids": [[0, 1], [], [1]],
               "u": [[1, 2, 3, 4], [5, 6]], "outer": [[1, 1], [], [2]], "d": [[1], [2], [3]]}),
    seq_example(
        context={"c": [4], "cs": [0, 1], "n": [8]},
        lists={"v": [[5]], "f": [], "s": [[b"d"], [], [b"e", b"f"]],
               "splits": [[0, 0, 1]], "lengths": [[0, 1]], "starts": [[0, 0]], "limits": [[0, 1]],
               "rowids": [[1]], "u": [[7, 8]], "outer": [[1, 1]], "d": [[4]]}),
    seq_example(context={"n": [9]}, lists={"d": []}),  # every ragged feature list and context feature missing
    seq_example(
        context={"c": [5, 6], "cs": [0, 2], "n": [10]},
        lists={"v": [[], [6, 7, 8], [9]], "splits": [[0], [0, 2, 3], [0, 1]], "lengths": [[], [2, 1], [1]],
               "starts": [[], [0, 2], [0]], "limits": [[], [2, 3], [1]], "rowids": [[], [0, 0, 1], [0]],
               "u": [[9, 10]], "outer": [[], [1, 1], [1]], "d": [[5], [6]]}),
]


def ragged(dtype="int64", value_key="v", partitions=(), **kw):
    return {"ragged": dtype, "value_key": value_key, "partitions": [list(p) for p in partitions], **kw}


EACH = {
    "plain": ragged(),
    "own_key": {"ragged": "int64"},
    "floats": ragged("float32", value_key="f"),
    "strings": ragged("string", value_key="s", row_splits_dtype="int64"),
    "splits": ragged(partitions=[("RowSplits", "splits")]),
    "lengths": ragged(partitions=[("RowLengths", "lengths")]),
    "starts": ragged(partitions=[("RowStarts", "starts")]),
    "limits": ragged(partitions=[("RowLimits", "limits")]),
    "rowids": ragged(partitions=[("ValueRowIds", "rowids")]),
}
EACH["v"] = EACH.pop("own_key")

CASES = {
    "context_only": (RECORDS, {"c": ragged(value_key="c"), "cf": ragged("float32", value_key="cf"),
                               "split_c": ragged(value_key="c", partitions=[("RowSplits", "cs")])}, {}),
    "each_partition": (RECORDS, {}, EACH),
    "nested": (RECORDS, {}, {
        "lengths_then_splits": ragged(partitions=[("RowLengths", "outer"), ("RowSplits", "splits")]),
        "starts_then_rowids": ragged(partitions=[("RowStarts", "starts"), ("ValueRowIds", "rowids")])}),
    "nested_int64": (RECORDS, {"c": ragged(value_key="c", partitions=[("RowSplits", "cs")],
                                           row_splits_dtype="int64")}, {
        "limits_then_rowids": ragged(partitions=[("RowLimits", "limits"), ("ValueRowIds", "rowids")],
                                     row_splits_dtype="int64")}),
    "uniform": (RECORDS[:2], {}, {
        "inner_uniform": ragged(value_key="u", partitions=[("UniformRowLength", 2)]),
        "uniform_over_lengths": ragged(partitions=[("UniformRowLength", 1), ("RowLengths", "lengths")])}),
    "mixed": (RECORDS, {"n": {"fixed": [[], "int64", None]}, "c": ragged(value_key="c"),
                        "cv": {"varlen": "int64"}},
              {"d": {"fixedseq": [[], "int64", True]}, "v": ragged(), "sv": {"varlen": "string"},
               "s": ragged("string", value_key="s")}),
    "bad_type": (RECORDS[:1], {}, {"r": ragged("float32")}),
    "bad_context_type": (RECORDS[:1], {"r": ragged("string", value_key="c")}, {}),
    "validate_good": (RECORDS, {}, {"r": ragged(partitions=[("RowLengths", "lengths")], validate=True)}),
    "validate_misaligned": (RECORDS[:1], {}, {"r": ragged(partitions=[("RowLengths", "u")], validate=True)}),
}

SINGLE = {
    "context_only_single": (RECORDS[:1], CASES["context_only"][1], {}),
    "each_partition_single": (RECORDS[:1], {}, EACH),
    "each_partition_single_2": (RECORDS[3:4], {}, EACH),
    "missing_single": (RECORDS[2:3], CASES["context_only"][1], EACH),
    "nested_single": (RECORDS[:1], {}, CASES["nested"][2]),
    "nested_int64_single": (RECORDS[:1], CASES["nested_int64"][1], CASES["nested_int64"][2]),
    "uniform_single": (RECORDS[:1], {}, CASES["uniform"][2]),
    "mixed_single": (RECORDS[:1], CASES["mixed"][1], CASES["mixed"][2]),
}


EXAMPLES = [
    tf.train.Example(features=tf.train.Features(feature={k: feature(v) for k, v in f.items()})).SerializeToString()
    for f in ({"v": [1, 2, 3], "len": [2, 1], "x": [1.5]}, {"v": [4], "len": [0, 1], "x": [2.5]},
              {"len": [], "x": [3.5]}, {"v": [5, 6], "len": [2], "x": [4.5]}, {"v": [7], "len": [1], "x": [5.5]})
]
DATASET_FEATURES = {"r": ragged(partitions=[("RowLengths", "len")], row_splits_dtype="int64"), "v": ragged(row_splits_dtype="int64"),
                    "x": {"fixed": [[], "float32", None]}}


def run_dataset():
    """Batches of 2 parsed by parse_example_dataset, then ``take(2)`` and ``repeat(2)``: every element."""
    feats = {k: make_feature(s) for k, s in DATASET_FEATURES.items()}
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(EXAMPLES).batch(2)
        ds = ds.apply(tf.data.experimental.parse_example_dataset(feats)).take(2).repeat(2)
        classes = tf.data.get_output_classes(ds)
        shapes = tf.data.get_output_shapes(ds)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        elements = []
        with tf.Session() as s:
            while True:
                try:
                    got = s.run(nxt)
                except tf.errors.OutOfRangeError:
                    break
                elements.append(describe(got, nxt))
    return {"examples": [e.hex() for e in EXAMPLES], "features": DATASET_FEATURES, "elements": elements,
            "output_shapes": {k: v.as_list() for k, v in shapes.items()},
            "output_classes": {k: type(v).__name__ for k, v in classes.items()}}


def main():
    fixtures = {"dataset": run_dataset()}
    for single, table in ((False, CASES), (True, SINGLE)):
        for name, (records, context, sequence) in table.items():
            fixtures[name] = {"records": [r.hex() for r in records], "context": context, "sequence": sequence,
                              "single": single, "expected": run_case(records, context, sequence, single)}
    OUT.write_text(json.dumps(fixtures, indent=1, sort_keys=True) + "\n")
    for name, f in fixtures.items():
        print(name, json.dumps(f.get("expected", f))[:400])


if __name__ == "__main__":
    main()
