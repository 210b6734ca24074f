"""``tf.strings``, TF1's top-level string ops and the minimal ``tf.RaggedTensor``, against TensorFlow 2.21.

``tests/fixtures/strings/cases.json`` holds each case's expression and what TensorFlow returned for it
(``tools/make_strings_fixtures.py`` built every expression with ``tf.compat.v1`` in a graph and fetched it with
``Session.run``). Here the same expression is built with ferroflow and fetched the same way; values must be equal
(hashes and fingerprints bit for bit), errors of the same class and naming the same thing.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops import lookup_ops
from ferroflow.ops.ragged import RaggedTensorValue

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "strings" / "cases.json"
CASES = json.loads(FIX.read_text())["cases"]
ENV = {"tf": tf, "np": np, "lookup_ops": lookup_ops}


def _decode_array(e):
    if e["dtype"] == "string":
        flat = [bytes.fromhex(x) for x in e["data"]]
        return np.array(flat, dtype=object).reshape(e["shape"])
    data = e["data"]
    if "repr" in e:
        data = [float(r) for r in e["repr"]]
    return np.array(data, dtype=e["dtype"]).reshape(e["shape"])


def _check(got, exp, where):
    kind = exp["kind"]
    if kind == "array":
        want = _decode_array(exp)
        got = np.asarray(got)
        assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
        if exp["dtype"] == "string":
            # Arrays of strings come back as object arrays of bytes, a scalar as bytes (as TensorFlow).
            assert got.dtype == object or got.dtype.kind == "S", f"{where}: dtype {got.dtype}"
            flat = [bytes(x) for x in got.reshape(-1).tolist()]
            assert flat == want.reshape(-1).tolist(), f"{where}: {got!r} != {want!r}"
        else:
            assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=where)
            else:
                np.testing.assert_array_equal(got, want, err_msg=where)
    elif kind == "sparse":
        assert isinstance(got, tf.SparseTensorValue), f"{where}: got {type(got).__name__}"
        for i, part in enumerate(exp["parts"]):
            _check(got[i], part, f"{where}[{('indices', 'values', 'dense_shape')[i]}]")
    elif kind == "ragged":
        assert isinstance(got, RaggedTensorValue), f"{where}: got {type(got).__name__}"
        want_splits = exp["nested_row_splits"]
        assert len(got.nested_row_splits) == len(want_splits), f"{where}: ragged rank"
        for i, (g, w) in enumerate(zip(got.nested_row_splits, want_splits)):
            _check(g, w, f"{where}.nested_row_splits[{i}]")
        _check(got.flat_values, exp["flat_values"], f"{where}.flat_values")
    elif kind == "tuple":
        assert len(got) == len(exp["items"]), where
        for i, (g, w) in enumerate(zip(got, exp["items"])):
            _check(g, w, f"{where}[{i}]")
    else:
        raise AssertionError(f"{where}: unknown kind {kind}")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_against_tensorflow(case):
    exp = case["expected"]
    g = tf.Graph()
    with g.as_default():
        if exp["kind"] == "error":
            cls = getattr(tf.errors, exp["class"], None) or {"ValueError": ValueError,
                                                             "TypeError": TypeError}[exp["class"]]
            with pytest.raises(cls) as info:
                out = eval(case["expr"], ENV)  # noqa: S307 - expressions from our fixture script
                with tf.Session() as s:
                    s.run(out)
            assert exp["fragment"] in str(info.value), f"{exp['fragment']!r} not in {str(info.value)!r}"
            return
        out = eval(case["expr"], ENV)  # noqa: S307
        with tf.Session() as s:
            s.run(tf.tables_initializer())
            got = s.run(out)
    _check(got, exp, case["name"])


def test_every_tf_strings_name_exists():
    names = ["as_string", "bytes_split", "format", "join", "length", "lower", "ngrams", "reduce_join",
             "regex_full_match", "regex_replace", "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast",
             "to_hash_bucket_strong", "to_number", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
             "unicode_script", "unicode_split", "unicode_split_with_offsets", "unicode_transcode",
             "unsorted_segment_join", "upper"]
    assert [n for n in names if not hasattr(tf.strings, n)] == []
    top = ["string_split", "string_join", "string_strip", "string_to_number", "string_to_hash_bucket",
           "string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "substr", "as_string", "reduce_join",
           "regex_replace", "fingerprint", "RaggedTensor"]
    assert [n for n in top if not hasattr(tf, n)] == []
    # The string names must not shadow the tensor ops of the same short name.
    assert tf.split is not tf.strings.split


def test_static_shapes():
    x = tf.placeholder(tf.string, [3, 4])
    assert tf.strings.length(x).shape.as_list() == [3, 4]
    assert tf.strings.reduce_join(x, axis=1).shape.as_list() == [3]
    assert tf.strings.reduce_join(x, axis=0, keep_dims=True).shape.as_list() == [1, 4]
    assert tf.strings.substr(x, [0, 1, 2, 3], [1, 1, 1, 1]).shape.as_list() == [3, 4]
    assert tf.fingerprint(x).shape.as_list() == [3, 8]
    assert tf.strings.unsorted_segment_join(x, [0, 1, 0], 2).shape.as_list() == [2, 4]
    sp = tf.strings.split(tf.placeholder(tf.string, [None]))
    assert sp.indices.shape.as_list() == [None, 2]
    assert tf.strings.to_number(x, tf.int64).dtype == tf.int64


def test_ragged_fetch_and_to_list():
    rt = tf.strings.split(["a b", "", "c d e"], result_type="RaggedTensor")
    assert isinstance(rt, tf.RaggedTensor)
    assert rt.ragged_rank == 1 and rt.dtype == tf.string and rt.row_splits.dtype == tf.int64
    with tf.Session() as s:
        v = s.run(rt)
        assert v.to_list() == [[b"a", b"b"], [], [b"c", b"d", b"e"]]
        assert rt.to_list() == [[b"a", b"b"], [], [b"c", b"d", b"e"]]
        nested = tf.strings.unicode_decode([["ab", "é"], ["", "日"]], "UTF-8")
        assert nested.ragged_rank == 2
        assert s.run(nested).to_list() == [[[97, 98], [233]], [[], [26085]]]
        # A ragged tensor inside a fetch structure comes back inside the same structure.
        got = s.run({"r": rt, "n": tf.constant(3)})
        assert got["n"] == 3 and got["r"].to_list()[2] == [b"c", b"d", b"e"]


def test_fed_strings_and_errors_name_the_op():
    x = tf.placeholder(tf.string, [None])
    n = tf.strings.to_number(x)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(n, {x: ["1", "2.5"]}), [1.0, 2.5])
        with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert string: x"):
            s.run(n, {x: ["x"]})


def test_string_ops_have_no_gradient():
    x = tf.constant([1.0, 2.0])
    s = tf.as_string(x)
    y = tf.strings.to_number(s)
    assert tf.gradients(y, x) == [None]


def test_hash_buckets_agree_with_fingerprint():
    # to_hash_bucket_fast is Fingerprint64 % n; tf.fingerprint's bytes are Fingerprint64 little-endian.
    words = ["", "a", "hello world", "x" * 100]
    with tf.Session() as s:
        fp, buckets = s.run([tf.fingerprint(tf.constant(words)), tf.strings.to_hash_bucket_fast(words, 2**62)])
    as_int = [int.from_bytes(bytes(row), "little") for row in fp]
    assert [v % 2**62 for v in as_int] == buckets.tolist()
