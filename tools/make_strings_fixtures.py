"""Write tests/fixtures/strings/cases.json: TensorFlow 2.21's results for ``tf.strings`` and TF1's top-level string
ops, for tests/python/test_strings.py.

Each case is a Python expression over ``tf`` (``tf.compat.v1`` here, ``ferroflow`` in the test), ``np`` and
``lookup_ops`` (TensorFlow's / ferroflow's module of that name), built in a TF1 graph and fetched with
``Session.run`` after ``tables_initializer()``. The JSON keeps the expression and what TensorFlow returned: an array
(strings hex-encoded), a SparseTensorValue, a RaggedTensorValue (its nested row_splits and flat values), a tuple of
those, or the error (its class, and a fragment of the message the test also expects from ferroflow). Run from the
repository root with a Python that has TensorFlow 2.21:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_strings_fixtures.py
"""

import json
import pathlib

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import lookup_ops

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "strings" / "cases.json"

WORDS = ["hello world", "  a  b c ", "", "x,y,,z", "héllo wörld", "日本語 テキスト"]

# (name, expression, fragment of the error message when TensorFlow raises)
CASES = [
    # split / join
    ("split_default", "tf.strings.split(['hello world', 'a b c', ''])", None),
    ("split_sep", "tf.strings.split(['1<>2<><>3', '<>x'], sep='<>')", None),
    ("split_maxsplit", "tf.strings.split(['a b c d', '  x  y z '], maxsplit=1)", None),
    ("split_sep_maxsplit", "tf.strings.split(['a,b,c,d', 'e'], sep=',', maxsplit=2)", None),
    ("split_scalar", "tf.strings.split('a b  c')", None),
    ("split_ragged", f"tf.strings.split({WORDS!r}, result_type='RaggedTensor')", None),
    ("split_2d_sparse", "tf.strings.split([['a b', 'c'], ['d e f', '']])", None),
    ("split_2d_ragged", "tf.strings.split([['a b', 'c'], ['d e f', '']], result_type='RaggedTensor')", None),
    ("split_ragged_to_tensor",
     "tf.strings.split(['a b', 'c d e', ''], result_type='RaggedTensor').to_tensor()", None),
    ("split_ragged_to_tensor_default",
     "tf.strings.split(['a b', 'c d e', ''], result_type='RaggedTensor').to_tensor(default_value='<pad>')", None),
    ("split_ragged_to_sparse",
     "tf.strings.split(['a b', 'c d e'], result_type='RaggedTensor').to_sparse()", None),
    ("split_ragged_row_splits", "tf.strings.split(['a b', '', 'c d e'], result_type='RaggedTensor').row_splits",
     None),
    ("split_ragged_row_lengths",
     "tf.strings.split(['a b', '', 'c d e'], result_type='RaggedTensor').row_lengths()", None),
    ("split_ragged_values", "tf.strings.split(['a b', '', 'c d e'], result_type='RaggedTensor').values", None),
    ("string_split_default", "tf.string_split(['a b  c', '', 'd'])", None),
    ("string_split_delims", "tf.string_split(['a,b;;c'], delimiter=',;', skip_empty=False)", None),
    ("string_split_empty_delim", "tf.string_split(['abc', 'de'], delimiter='')", None),
    ("string_split_ragged", "tf.string_split(['a b', 'c'], result_type='RaggedTensor')", None),
    ("string_split_rank2_error", "tf.string_split([['a b']])", "must be rank 1"),
    ("join", "tf.strings.join([['a', 'b'], ['c', 'd']], separator='-')", None),
    ("join_scalar_broadcast", "tf.strings.join(['x', ['a', 'b'], 'y'])", None),
    ("string_join", "tf.string_join(['a', 'b', 'c'], separator=', ')", None),
    ("reduce_join_all", "tf.strings.reduce_join([['a', 'b'], ['c', 'd']])", None),
    ("reduce_join_axis0", "tf.strings.reduce_join([['a', 'b'], ['c', 'd']], axis=0, separator='+')", None),
    ("reduce_join_axis1_keep", "tf.strings.reduce_join([['a', 'b'], ['c', 'd']], axis=1, keep_dims=True)", None),
    ("reduce_join_neg", "tf.reduce_join([['a', 'b'], ['c', 'd']], axis=-1, separator=' ')", None),
    ("reduce_join_order", "tf.strings.reduce_join([['a', 'b'], ['c', 'd']], axis=[0, 1], separator='.')", None),
    ("reduce_join_3d", "tf.strings.reduce_join(np.array([str(i) for i in range(24)]).reshape(2, 3, 4), axis=1)",
     None),
    ("unsorted_segment_join",
     "tf.strings.unsorted_segment_join(['a', 'b', 'c', 'd', 'e'], [1, 0, 1, 2, 1], 4, separator=':')", None),
    ("unsorted_segment_join_negative", "tf.strings.unsorted_segment_join(['a', 'b'], [0, -1], 2)",
     "not allowed to exceed num_segments or to have negative values"),
    ("unsorted_segment_join_2d",
     "tf.strings.unsorted_segment_join([['a', 'b'], ['c', 'd'], ['e', 'f']], [0, 1, 0], 2)", None),
    ("unsorted_segment_join_oob",
     "tf.strings.unsorted_segment_join(['a', 'b'], [0, 5], 2)",
     "not allowed to exceed num_segments or to have negative values"),
    # element-wise
    ("length", "tf.strings.length(['', 'abc', 'héllo', '日本'])", None),
    ("length_utf8", "tf.strings.length(['', 'abc', 'héllo', '日本'], unit='UTF8_CHAR')", None),
    ("lower", "tf.strings.lower(['HeLLo', 'ÉCOLE'])", None),
    ("upper", "tf.strings.upper(['hello', 'école'])", None),
    ("upper_utf8", "tf.strings.upper(['hello', 'école', 'straße'], encoding='utf-8')", None),
    ("lower_utf8", "tf.strings.lower(['ÉCOLE', 'ΣΑΣ'], encoding='utf-8')", None),
    ("strip", "tf.strings.strip(['  a b  ', '\\t\\nx\\r\\n', '', '   '])", None),
    ("string_strip", "tf.string_strip([' q '])", None),
    ("substr", "tf.strings.substr(['hello', 'world'], 1, 3)", None),
    ("substr_neg", "tf.strings.substr(['hello', 'world'], -3, 2)", None),
    ("substr_vec", "tf.strings.substr(['hello', 'world'], [1, 0], [10, 2])", None),
    ("substr_broadcast", "tf.strings.substr([['hello', 'world'], ['ab', 'cd']], [1, 0], [2, 1])", None),
    ("substr_utf8", "tf.strings.substr(['héllo', '日本語です'], 1, 3, unit='UTF8_CHAR')", None),
    ("substr_top", "tf.substr(['abcdef'], 2, 2)", None),
    ("substr_oob", "tf.strings.substr(['ab'], 5, 1)", "out of range"),
    ("regex_full_match", "tf.strings.regex_full_match(['abc', 'abd', 'xabc', 'ab'], 'ab[c-d]')", None),
    ("regex_full_match_dyn",
     "tf.strings.regex_full_match(['abc', 'a1', ''], tf.constant('[a-z]+\\\\d*'))", None),
    ("regex_full_match_alt", "tf.strings.regex_full_match(['cat', 'dog', 'cow'], 'c(a|o)[tw]|dog')", None),
    ("regex_replace", "tf.strings.regex_replace(['aaa bb', 'xyz'], '(a+)|b', '<\\\\1>')", None),
    ("regex_replace_first", "tf.strings.regex_replace(['aaa'], 'a', 'b', replace_global=False)", None),
    ("regex_replace_dollar", "tf.strings.regex_replace(['a-b'], '-', '$')", None),
    ("regex_replace_dyn",
     "tf.strings.regex_replace(['hello  world'], tf.constant(' +'), tf.constant('_'))", None),
    ("regex_replace_top", "tf.regex_replace(['2024-01-02'], '(\\\\d+)-(\\\\d+)-(\\\\d+)', '\\\\3/\\\\2/\\\\1')", None),
    ("regex_replace_empty_match", "tf.strings.regex_replace(['abc'], 'x*', '-')", None),
    ("regex_bad_static", "tf.strings.regex_replace(['abc'], '(', 'x')", "Invalid pattern"),
    ("regex_bad_dynamic", "tf.strings.regex_full_match(['abc'], tf.constant('a[b'))", "Invalid pattern"),
    # numbers
    ("as_string_float", "tf.strings.as_string([1.5, -2.25, 1e10, 1e-5, 0.0])", None),
    ("as_string_shortest", "tf.strings.as_string([1.5, -2.25, 1e10, 1e-5, 123456789.0], shortest=True)", None),
    ("as_string_scientific", "tf.strings.as_string([1.5, -2.25, 1e10, 1e-5], scientific=True, precision=3)",
     None),
    ("as_string_precision", "tf.strings.as_string(tf.constant([3.14159265, -0.5], tf.float64), precision=2)",
     None),
    ("as_string_width_fill", "tf.strings.as_string([1.5, -2.25], width=12, fill='0')", None),
    ("as_string_int", "tf.as_string([1, -22, 333])", None),
    ("as_string_int_width", "tf.as_string(tf.constant([1, -22, 333], tf.int64), width=5)", None),
    ("as_string_int_left", "tf.as_string([7, -8], width=4, fill='-')", None),
    ("as_string_bool", "tf.strings.as_string([True, False])", None),
    ("as_string_special", "tf.strings.as_string([np.nan, np.inf, -np.inf])", None),
    ("as_string_float32_value", "tf.strings.as_string(tf.constant([0.1, 1.0 / 3.0], tf.float32), precision=10)",
     None),
    ("as_string_int_precision", "tf.as_string([1], precision=2)", "not supported"),
    ("to_number_float", "tf.strings.to_number(['1.5', ' 2', '1e3', '-0', '3 ', 'inf', '0x10'])", None),
    ("to_number_double", "tf.strings.to_number(['0.1', '1e-300'], out_type=tf.float64)", None),
    ("to_number_int32", "tf.strings.to_number(['12', '-7', ' 3', '2147483647'], out_type=tf.int32)", None),
    ("to_number_int64", "tf.string_to_number(['9223372036854775807', '-1'], out_type=tf.int64)", None),
    ("to_number_bad", "tf.strings.to_number(['1.5', 'abc'])",
     "StringToNumberOp could not correctly convert string: abc"),
    ("to_number_int_bad", "tf.strings.to_number(['1.5'], out_type=tf.int32)",
     "StringToNumberOp could not correctly convert string: 1.5"),
    ("to_number_int_overflow", "tf.strings.to_number(['99999999999'], out_type=tf.int32)",
     "StringToNumberOp could not correctly convert string: 99999999999"),
    # hashing
    ("hash_bucket", "tf.strings.to_hash_bucket(%r, 1000)" % (WORDS + ["a" * 7, "b" * 8, "c" * 9, "d" * 17]), None),
    ("hash_bucket_big", "tf.string_to_hash_bucket(['', 'a', 'hello world 12345'], 1000000007)", None),
    ("hash_bucket_fast",
     "tf.strings.to_hash_bucket_fast(%r, 2**62)" % (WORDS + ["x" * n for n in (3, 8, 15, 16, 17, 31, 33, 64, 65,
                                                                               100, 200)]), None),
    ("hash_bucket_fast_top", "tf.string_to_hash_bucket_fast([['a', 'b'], ['c', 'd']], 10)", None),
    ("hash_bucket_strong",
     "tf.strings.to_hash_bucket_strong(%r, 2**62, [1, 2])" % (WORDS + ["y" * n for n in (7, 8, 9, 16, 100)]),
     None),
    ("hash_bucket_strong_key",
     "tf.string_to_hash_bucket_strong(['a', 'b'], 1000, [2**62, 12345678901234])", None),
    ("fingerprint_strings", "tf.fingerprint(tf.constant(['a', 'b', '', 'hello world']))", None),
    ("fingerprint_strings_2d", "tf.fingerprint(tf.constant([['a', 'b'], ['c', 'd']]))", None),
    ("fingerprint_int32", "tf.fingerprint(tf.constant([[1, 2], [3, 4]]))", None),
    ("fingerprint_float", "tf.fingerprint(tf.constant([[1.5, 2.0, -3.0]], tf.float32))", None),
    ("fingerprint_int64_1d", "tf.fingerprint(tf.constant([1, 2, 3], tf.int64))", None),
    # format
    ("format_basic", "tf.strings.format('x={} y={}', [tf.constant([1, 2, 3, 4, 5]), tf.constant('hi')])", None),
    ("format_matrix", "tf.strings.format('{}', [tf.constant([[1.5, 2.0], [3.0, 4.0]])])", None),
    ("format_strings", "tf.strings.format('{}', tf.constant(['a', 'b']))", None),
    ("format_summarize", "tf.strings.format('{}', tf.constant(np.arange(24).reshape(2, 3, 4)), summarize=1)",
     None),
    ("format_long", "tf.strings.format('v: {}', tf.constant(np.arange(10)))", None),
    ("format_all", "tf.strings.format('{}', tf.constant(np.arange(10.0) / 3), summarize=-1)", None),
    ("format_float32", "tf.strings.format('{}', tf.constant([1e10, 1e-7, 0.1, 1.0 / 3.0], tf.float32))", None),
    ("format_bool_placeholder", "tf.strings.format('<%s>', tf.constant([True, False]), placeholder='%s')", None),
    ("format_mismatch", "tf.strings.format('{} {}', [tf.constant(1)])", "template expects 2 tensors"),
    # unicode
    ("unicode_decode", f"tf.strings.unicode_decode({WORDS!r}, 'UTF-8')", None),
    ("unicode_decode_scalar", "tf.strings.unicode_decode('héllo', 'UTF-8')", None),
    ("unicode_decode_2d", "tf.strings.unicode_decode([['ab', 'é'], ['', '日本']], 'UTF-8')", None),
    ("unicode_decode_bad_replace",
     "tf.strings.unicode_decode([b'a\\xffb\\xe2\\x82c\\xf0\\x9f\\x98\\x80'], 'UTF-8')", None),
    ("unicode_decode_bad_ignore",
     "tf.strings.unicode_decode([b'a\\xffb\\xe2\\x82c'], 'UTF-8', errors='ignore')", None),
    ("unicode_decode_bad_char",
     "tf.strings.unicode_decode([b'a\\xff'], 'UTF-8', replacement_char=63)", None),
    ("unicode_decode_control",
     "tf.strings.unicode_decode([b'a\\x01\\x1f\\x7f\\xc2\\x80b'], 'UTF-8', replace_control_characters=True)",
     None),
    ("unicode_decode_strict", "tf.strings.unicode_decode([b'a\\xff'], 'UTF-8', errors='strict')",
     "Invalid formatting on input string"),
    ("unicode_decode_utf16",
     "tf.strings.unicode_decode([b'\\x00a\\xd8\\x3d\\xde\\x00\\x00b'], 'UTF-16-BE')", None),
    ("unicode_decode_utf32", "tf.strings.unicode_decode([b'\\x00\\x00\\x00a\\x00\\x01\\xf6\\x00'], 'UTF-32-BE')",
     None),
    ("unicode_decode_offsets", f"tf.strings.unicode_decode_with_offsets({WORDS!r}, 'UTF-8')", None),
    ("unicode_decode_offsets_bad",
     "tf.strings.unicode_decode_with_offsets([b'a\\xff\\xe2\\x82b\\xf0\\x9f\\x98\\x80'], 'UTF-8')", None),
    ("unicode_split", "tf.strings.unicode_split(['héllo', '', '日本'], 'UTF-8')", None),
    ("unicode_split_scalar", "tf.strings.unicode_split('añb', 'UTF-8')", None),
    ("unicode_split_offsets", "tf.strings.unicode_split_with_offsets(['héllo', '日本'], 'UTF-8')", None),
    ("unicode_encode", "tf.strings.unicode_encode([[72, 233, 108], [26085, 26412, 0x1f600]], 'UTF-8')", None),
    ("unicode_encode_1d", "tf.strings.unicode_encode([104, 105], 'UTF-8')", None),
    ("unicode_encode_utf16", "tf.strings.unicode_encode([[72, 0x1f600]], 'UTF-16-BE')", None),
    ("unicode_encode_utf32", "tf.strings.unicode_encode([[72, 0x1f600]], 'UTF-32-BE')", None),
    ("unicode_encode_invalid", "tf.strings.unicode_encode([[72, 0xD800, 0x110000, -1]], 'UTF-8')", None),
    ("unicode_encode_invalid_ignore",
     "tf.strings.unicode_encode([[72, 0xD800, 73]], 'UTF-8', errors='ignore')", None),
    ("unicode_encode_strict", "tf.strings.unicode_encode([[72, 0xD800]], 'UTF-8', errors='strict')",
     "Code point is out of range for Unicode, or is a surrogate."),
    ("unicode_encode_ragged",
     "tf.strings.unicode_encode(tf.RaggedTensor.from_row_splits([104, 105, 233, 26085], [0, 2, 2, 4]), 'UTF-8')",
     None),
    ("unicode_roundtrip",
     f"tf.strings.unicode_encode(tf.strings.unicode_decode({WORDS!r}, 'UTF-8'), 'UTF-8')", None),
    ("unicode_transcode", "tf.strings.unicode_transcode(['héllo', 'ab'], 'UTF-8', 'UTF-16-BE')", None),
    ("unicode_transcode_bad", "tf.strings.unicode_transcode([b'a\\xffb'], 'UTF-8', 'UTF-32-BE')", None),
    ("unicode_transcode_back",
     "tf.strings.unicode_transcode([b'\\x00h\\x00\\xe9'], 'UTF-16-BE', 'UTF-8')", None),
    ("unicode_script",
     "tf.strings.unicode_script([72, 1041, 26085, 32, 0x0627, 0x05D0, 0x0E01, 0x1F600, 0x0301, -1, 0x110000])",
     None),
    ("bytes_split", "tf.strings.bytes_split(['hello', '', 'héllo'])", None),
    ("bytes_split_scalar", "tf.strings.bytes_split('abc')", None),
    ("bytes_split_2d", "tf.strings.bytes_split([['ab', 'c'], ['', 'de']])", None),
    # ngrams
    ("ngrams_1d", "tf.strings.ngrams(['A', 'B', 'C', 'D'], 2)", None),
    ("ngrams_2d", "tf.strings.ngrams([['A', 'B', 'C'], ['D', 'E', 'F']], 2, separator='_')", None),
    ("ngrams_widths", "tf.strings.ngrams(['a', 'b', 'c'], [1, 3])", None),
    ("ngrams_pad", "tf.strings.ngrams(['a', 'b', 'c'], 3, pad_values=('<s>', '</s>'))", None),
    ("ngrams_pad_width", "tf.strings.ngrams(['a', 'b'], 3, pad_values='#', padding_width=1)", None),
    ("ngrams_short", "tf.strings.ngrams(['a', 'b'], 4, preserve_short_sequences=True)", None),
    ("ngrams_short_pad",
     "tf.strings.ngrams(['a'], 5, pad_values='#', padding_width=1, preserve_short_sequences=True)", None),
    ("ngrams_ragged",
     "tf.strings.ngrams(tf.RaggedTensor.from_row_splits(['a', 'b', 'c', 'd', 'e'], [0, 3, 3, 5]), 2)", None),
    ("ngrams_ragged_pad",
     "tf.strings.ngrams(tf.RaggedTensor.from_row_splits(['a', 'b', 'c'], [0, 1, 3]), [2, 3], "
     "pad_values=('L', 'R'))", None),
    # ragged tensor basics
    ("ragged_from_value_rowids",
     "tf.RaggedTensor.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2], nrows=4)", None),
    ("ragged_from_row_lengths_to_tensor",
     "tf.RaggedTensor.from_row_lengths([1, 2, 3, 4, 5], [2, 0, 3]).to_tensor(default_value=-1)", None),
    ("ragged_nested_to_sparse",
     "tf.RaggedTensor.from_nested_row_splits([1, 2, 3, 4, 5], [[0, 2, 3], [0, 1, 3, 5]]).to_sparse()", None),
    ("ragged_nested_to_tensor",
     "tf.RaggedTensor.from_nested_row_splits([1, 2, 3, 4, 5], [[0, 2, 3], [0, 1, 3, 5]]).to_tensor()", None),
    ("ragged_from_tensor", "tf.RaggedTensor.from_tensor([[1, 2], [3, 4], [5, 6]])", None),
    ("ragged_value_rowids", "tf.RaggedTensor.from_row_splits([1, 2, 3, 4, 5], [0, 2, 2, 5]).value_rowids()", None),
    ("ragged_nrows", "tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 2, 3]).nrows()", None),
    # lookup tables with out-of-vocabulary hash buckets (ids of unknown keys: vocab_size + hash % buckets)
    ("lookup_static_vocabulary",
     "tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(['a', 'b', 'c'], "
     "tf.constant([0, 1, 2], tf.int64)), 5).lookup(tf.constant(['a', 'x', 'c', 'hello', '']))", None),
    ("lookup_static_vocabulary_size",
     "tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(['a', 'b'], "
     "tf.constant([0, 1], tf.int64)), 3).size()", None),
    ("lookup_index_table_oov",
     "lookup_ops.index_table_from_tensor(['emerson', 'lake', 'palmer'], num_oov_buckets=3)"
     ".lookup(tf.constant(['emerson', 'tarkus', 'palmer', 'x', 'lake']))", None),
    ("lookup_index_table_int_oov",
     "lookup_ops.index_table_from_tensor(tf.constant([10, 20], tf.int64), num_oov_buckets=4, dtype=tf.int64)"
     ".lookup(tf.constant([10, 30, 20, -5], tf.int64))", None),
    ("lookup_strong_hash",
     "lookup_ops.IdTableWithHashBuckets(None, 7, hasher_spec=lookup_ops.StrongHashSpec((1, 2)))"
     ".lookup(tf.constant(['a', 'b', 'hello']))", None),
    ("lookup_legacy_hash",
     "lookup_ops.IdTableWithHashBuckets(None, 7, hasher_spec=lookup_ops.HasherSpec('legacy', None))"
     ".lookup(tf.constant(['a', 'b', 'hello']))", None),
    ("lookup_sparse_oov",
     "lookup_ops.index_table_from_tensor(['a'], num_oov_buckets=2)"
     ".lookup(tf.SparseTensor([[0, 0], [1, 2]], ['a', 'zz'], [2, 3]))", None),
    ("ragged_from_sparse",
     "tf.RaggedTensor.from_sparse(tf.SparseTensor([[0, 0], [0, 1], [2, 0]], ['a', 'b', 'c'], [3, 2]))", None),
]


def encode(v):
    """A fetched value as JSON."""
    if hasattr(v, "nested_row_splits") and hasattr(v, "flat_values"):
        return {"kind": "ragged", "nested_row_splits": [encode(np.asarray(s)) for s in v.nested_row_splits],
                "flat_values": encode(np.asarray(v.flat_values))}
    if isinstance(v, tf1.SparseTensorValue):
        return {"kind": "sparse", "parts": [encode(np.asarray(p)) for p in v]}
    if isinstance(v, (tuple, list)):
        return {"kind": "tuple", "items": [encode(x) for x in v]}
    a = np.asarray(v)
    if a.dtype == object or a.dtype.kind == "S":
        flat = [bytes(x).hex() for x in a.reshape(-1)]
        return {"kind": "array", "dtype": "string", "shape": list(a.shape), "data": flat}
    data = [None if isinstance(x, float) and not np.isfinite(x) else x for x in a.reshape(-1).tolist()]
    special = [repr(x) for x in a.reshape(-1).tolist()] if a.dtype.kind == "f" else None
    out = {"kind": "array", "dtype": a.dtype.name, "shape": list(a.shape), "data": data}
    if special is not None and any(not np.isfinite(x) for x in a.reshape(-1)):
        out["repr"] = special
    return out


def run(expr):
    g = tf1.Graph()
    with g.as_default():
        try:
            out = eval(expr, {"tf": tf1, "np": np, "lookup_ops": lookup_ops})  # noqa: S307 - our case list
            with tf1.Session() as s:
                s.run(tf1.tables_initializer())
                return encode(s.run(out))
        except Exception as e:  # noqa: BLE001 - the error is the expected result
            # Graph-mode errors carry the construction traceback; keep the message lines only.
            lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.startswith((" ", "\t"))]
            return {"kind": "error", "class": type(e).__name__, "message": "\n".join(lines)[-400:]}


def main():
    cases = []
    for name, expr, fragment in CASES:
        res = run(expr)
        if res["kind"] == "error":
            if fragment is None:
                raise SystemExit(f"{name}: TensorFlow raised {res['class']}: {res['message']}")
            if fragment not in res["message"]:
                raise SystemExit(f"{name}: fragment {fragment!r} not in {res['message']!r}")
            res["fragment"] = fragment
        elif fragment is not None:
            raise SystemExit(f"{name}: expected an error, got {res}")
        cases.append({"name": name, "expr": expr, "expected": res})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"tensorflow_version": tf.__version__, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
