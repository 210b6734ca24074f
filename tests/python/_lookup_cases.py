"""Lookup-table cases shared by the fixture generator (``tools/make_lookup_fixtures.py``, run under real
TensorFlow 2.21 as ``tensorflow.compat.v1`` with v2 behavior disabled) and the golden test
(``test_lookup_golden.py``, run under ferroflow).

No TensorFlow or ferroflow import here: every ``case_<name>(tf, d)`` takes the TF1-style module and the
directory of the vocabulary files (``tests/fixtures/lookup``), builds its graph in the current default graph
and returns a list of steps, each a dict of fetches run with one ``Session.run`` in order (after
``tables_initializer()`` unless the case says ``NO_INIT``). A step's fetches named ``export*`` are
``(keys, values)`` pairs compared as sets of rows (sorted by key), since a hash table's export order is
its own; others are compared exactly. A case whose run fails records the error's class and message
(with ``d`` replaced by ``{dir}``) instead.

Fixtures: ``tests/fixtures/lookup/cases.npz``: ``<case>/<step>/<fetch>`` arrays, or ``<case>/error``
holding ``"ErrorClass: message"``.
"""

from __future__ import annotations

import os

import numpy as np

NO_INIT = "no_init"


def _p(d, name):
    return os.path.join(d, name)


def case_static_string_to_int64(tf, d):
    init = tf.lookup.KeyValueTensorInitializer(["brain", "salad", "surgery"], np.array([0, 1, 2], np.int64))
    table = tf.lookup.StaticHashTable(init, -1)
    return [{"ids": table.lookup(tf.constant([["brain", "tarkus"], ["surgery", "salad"]])),
             "size": table.size(), "export": table.export()}]


def case_static_int64_to_string(tf, d):
    init = tf.lookup.KeyValueTensorInitializer(np.array([7, -3, 100], np.int64), ["seven", "minus three", "hundred"])
    table = tf.lookup.StaticHashTable(init, "UNK")
    return [{"words": table.lookup(tf.constant([100, 5, -3, 7], tf.int64))}]


def case_static_int32_to_float(tf, d):
    init = tf.lookup.KeyValueTensorInitializer(np.array([1, 2], np.int32), np.array([0.5, -2.25], np.float32))
    table = tf.lookup.StaticHashTable(init, np.float32(9.0))
    return [{"values": table.lookup(tf.constant([[2], [3], [1]], tf.int32))}]


def case_static_string_to_double_and_bool(tf, d):
    t1 = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "y"], np.array([1.5, 2.5])), -1.0)
    t2 = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "y"], [True, False]), False)
    return [{"double": t1.lookup(tf.constant(["y", "z"])), "bool": t2.lookup(tf.constant(["x", "y", "z"]))}]


def case_sparse_keys(tf, d):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b"], np.array([10, 20], np.int64)), -1)
    sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=["b", "q"], dense_shape=[2, 3])
    out = table.lookup(sp)
    return [{"indices": out.indices, "values": out.values, "dense_shape": out.dense_shape}]


def case_index_table_from_tensor(tf, d):
    table = tf.contrib_lookup.index_table_from_tensor(["emerson", "lake", "palmer"], default_value=-7)
    ints = tf.contrib_lookup.index_table_from_tensor(np.array([42, 7], np.int64), dtype=tf.int64)
    return [{"ids": table.lookup(tf.constant(["emerson", "lake", "and", "palmer"])),
             "int_ids": ints.lookup(tf.constant([7, 8, 42], tf.int64)), "size": table.size()}]


def case_index_to_string_table_from_tensor(tf, d):
    table = tf.contrib_lookup.index_to_string_table_from_tensor(["emerson", "lake", "palmer"])
    return [{"words": table.lookup(tf.constant([2, 0, 3, -1], tf.int64))}]


def case_index_table_from_file(tf, d):
    full = tf.contrib_lookup.index_table_from_file(_p(d, "vocab.txt"))
    part = tf.contrib_lookup.index_table_from_file(_p(d, "vocab.txt"), vocab_size=2, default_value=-5)
    cols = tf.contrib_lookup.index_table_from_file(_p(d, "cols.tsv"), key_column_index=1, value_column_index=0,
                                                  key_dtype=tf.string)
    keys = tf.constant(["salad", "brain", "surgery", "karn", ""])
    return [{"full": full.lookup(keys), "part": part.lookup(keys),
             "cols": cols.lookup(tf.constant(["b", "a", "c", "zz"])), "size": full.size()}]


def case_index_to_string_table_from_file(tf, d):
    table = tf.contrib_lookup.index_to_string_table_from_file(_p(d, "vocab.txt"), default_value="?")
    return [{"words": table.lookup(tf.constant([[0, 3], [1, 9]], tf.int64))}]


def case_text_file_initializer_columns(tf, d):
    # int64 keys from column 1, float values from column 2, comma-separated.
    init = tf.lookup.TextFileInitializer(_p(d, "numbers.csv"), tf.int64, 1, tf.float32, 2, delimiter=",")
    floats = tf.lookup.StaticHashTable(init, -1.0)
    # Whole line -> line number with an offset; int32 values get the offset too.
    lines = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(_p(d, "vocab.txt"), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                      tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, value_index_offset=10), -1)
    ints = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(_p(d, "numbers.csv"), tf.string, 0, tf.int32, 1, delimiter=",",
                                      value_index_offset=100), -1)
    return [{"floats": floats.lookup(tf.constant([11, 12, 13, 99], tf.int64)),
             "lines": lines.lookup(tf.constant(["brain", "karn", "evil"])),
             "ints": ints.lookup(tf.constant(["one", "two", "three", "four"])),
             "export": floats.export()}]


def case_text_file_crlf_and_no_final_newline(tf, d):
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(_p(d, "crlf.txt"), tf.string, -2, tf.int64, -1), -1)
    return [{"ids": table.lookup(tf.constant(["one", "two", "three", "one\r"])), "size": table.size()}]


def case_mutable_hash_table(tf, d):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    keys = tf.constant(["a", "b", "c"])
    return [
        {"insert": table.insert(keys, tf.constant([1, 2, 3], tf.int64))},
        {"ids": table.lookup(tf.constant(["c", "a", "q"])), "size": table.size()},
        {"over": table.insert(tf.constant(["a"]), tf.constant([10], tf.int64)),
         "remove": table.remove(tf.constant(["b", "zz"]))},
        {"ids": table.lookup(tf.constant([["a", "b"], ["c", "d"]])), "size": table.size(),
         "export": table.export()},
    ]


def case_mutable_hash_table_of_tensors(tf, d):
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, np.array([-1.0, -2.0], np.float32))
    return [
        {"insert": table.insert(tf.constant([5, 6], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]]))},
        {"values": table.lookup(tf.constant([6, 7], tf.int64)),
         "dynamic": table.lookup(tf.constant([6, 7], tf.int64),
                                 dynamic_default_values=tf.constant([[0.5, 0.5], [9.0, 9.0]])),
         "export": table.export()},
    ]


def case_dense_hash_table(tf, d):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                                  deleted_key=-1, initial_num_buckets=8)
    keys = tf.constant([1, 2, 3, 4, 5, 6, 7], tf.int64)
    return [
        {"insert": table.insert(keys, keys * 10)},
        {"ids": table.lookup(tf.constant([3, 9, 7], tf.int64)), "size": table.size(),
         "layout": table.export()},
        {"remove": table.remove(tf.constant([2, 4], tf.int64))},
        {"ids": table.lookup(tf.constant([2, 3, 4], tf.int64)), "size": table.size()},
    ]


def case_tables_initializer_collection(tf, d):
    table = tf.contrib_lookup.index_table_from_file(_p(d, "vocab.txt"))
    inits = tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    assets = tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)
    return [{"n_initializers": tf.constant(len(inits), tf.int64), "n_assets": tf.constant(len(assets), tf.int64),
             "asset": assets[0],
             "ids": table.lookup(tf.constant(["surgery"]))}]


# ---- errors -------------------------------------------------------------------------------------------


def case_error_duplicate_key(tf, d):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b", "a"], np.array([1, 2, 3], np.int64)), -1)
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_duplicate_vocabulary(tf, d):
    table = tf.contrib_lookup.index_table_from_tensor(["x", "y", "x"])
    return [{"ids": table.lookup(tf.constant(["x"]))}]


def case_error_not_initialized(tf, d):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], np.array([1], np.int64)), -1)
    return NO_INIT, [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_missing_file(tf, d):
    table = tf.contrib_lookup.index_table_from_file(_p(d, "no_such_vocab.txt"))
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_empty_line(tf, d):
    table = tf.contrib_lookup.index_table_from_file(_p(d, "empty_line.txt"))
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_bad_number(tf, d):
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(_p(d, "bad_number.csv"), tf.string, 0, tf.int64, 1, delimiter=","), -1)
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_too_few_columns(tf, d):
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(_p(d, "numbers.csv"), tf.string, 0, tf.int64, 3, delimiter=","), -1)
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_vocab_size_too_large(tf, d):
    table = tf.contrib_lookup.index_table_from_file(_p(d, "vocab.txt"), vocab_size=10)
    return [{"ids": table.lookup(tf.constant(["a"]))}]


def case_error_dense_empty_key(tf, d):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                                  deleted_key=-1, initial_num_buckets=8)
    return [{"insert": table.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))}]


def case_error_mutable_value_shape(tf, d):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, np.array([0.0, 0.0], np.float32))
    return [{"insert": table.insert(tf.constant(["a"]), tf.constant([[1.0, 2.0, 3.0]]))}]


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}

VOCAB_FILES = {
    "vocab.txt": "brain\nsalad\nsurgery\nkarn\nevil\n",
    "cols.tsv": "10\ta\n20\tb\n30\tc\n",
    "numbers.csv": "one,11,0.5\ntwo,12,-1.25\nthree,13,1e3\n",
    "crlf.txt": "one\r\ntwo\r\nthree",
    "empty_line.txt": "a\n\nb\n",
    "bad_number.csv": "a,1\nb,x2\n",
}


def steps_of(result):
    """``(init, steps)`` from a case's return value."""
    if isinstance(result, tuple) and result and result[0] == NO_INIT:
        return False, result[1]
    return True, result


def normalize(name, value):
    """A fetched value as a dict of NumPy arrays (``export*`` pairs sorted by key, ops dropped)."""
    if value is None:
        return {}
    if name.startswith("export"):
        keys, values = (np.asarray(v) for v in value)
        order = np.argsort(keys, kind="stable")
        return {f"{name}.keys": keys[order], f"{name}.values": values[order]}
    if name.startswith("layout"):
        keys, values = (np.asarray(v) for v in value)
        return {f"{name}.keys": keys, f"{name}.values": values}
    if isinstance(value, (bytes, str)):
        value = np.array(value, dtype=object)
    return {name: np.asarray(value)}


def error_text(err, d):
    """``"ErrorClass: message"`` of a failed run, the message being TensorFlow's own line."""
    lines = [ln for ln in str(getattr(err, "message", err)).split("\n") if ln.strip()]
    marks = [i for i, ln in enumerate(lines) if ln.strip().startswith("[[")]
    msg = lines[marks[0] - 1] if marks else lines[0]
    return f"{type(err).__name__}: {msg.strip().replace(d, '{dir}')}"
