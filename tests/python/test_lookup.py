"""Lookup tables in graphs: initialization by Scaffold/MonitoredTrainingSession and Supervisor, meta-graph
export/import of a text-file table (its asset in ASSET_FILEPATHS), checkpoints of mutable tables, sharing,
large parallel lookups, TF1 GraphDefs with the ref-typed op names, and TF's names and signatures."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops import lookup_ops


def _vocab(tmp_path, words=("brain", "salad", "surgery")):
    path = tmp_path / "vocab.txt"
    path.write_text("".join(w + "\n" for w in words))
    return str(path)


def test_monitored_training_session_initializes_tables(tmp_path):
    with tf.Graph().as_default():
        table = lookup_ops.index_table_from_file(_vocab(tmp_path))
        ids = table.lookup(tf.constant(["surgery", "brain", "x"]))
        tf.train.get_or_create_global_step()
        with tf.train.MonitoredTrainingSession() as sess:
            assert sess.run(ids).tolist() == [2, 0, -1]


def test_scaffold_default_local_init_op_runs_table_initializers():
    with tf.Graph().as_default():
        table = lookup_ops.index_table_from_tensor(["a", "b"])
        init = tf.train.Scaffold.default_local_init_op()
        with tf.Session() as sess:
            sess.run(init)
            assert sess.run(table.lookup(tf.constant(["b"]))).tolist() == [1]


def test_tables_initializer_without_tables_is_a_no_op():
    with tf.Graph().as_default():
        op = tf.tables_initializer()
        assert op.type == "NoOp" and op.name == "init_all_tables"
        assert tf.initialize_all_tables(name="x").name == "x"
        with tf.Session() as sess:
            sess.run(op)


def test_meta_graph_round_trip_keeps_asset_and_lookups(tmp_path):
    vocab = _vocab(tmp_path)
    meta = str(tmp_path / "model.meta")
    with tf.Graph().as_default():
        table = lookup_ops.index_table_from_file(vocab, default_value=-3)
        ids = table.lookup(tf.placeholder(tf.string, [None], name="words"), name="ids")
        assert ids.shape.as_list() == [None]
        tf.train.export_meta_graph(meta)
        fetch = ids.name
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assets = tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)
        assert len(assets) == 1
        inits = tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
        assert [op.type for op in inits] == ["InitializeTableFromTextFileV2"]
        with tf.Session() as sess:
            assert sess.run(assets[0]) == vocab.encode()
            sess.run(tf.tables_initializer())
            out = sess.run(g.get_tensor_by_name(fetch), {"words:0": ["salad", "karn"]})
            assert out.tolist() == [1, -3]


def test_mutable_hash_table_saves_and_restores(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab_counts")
        insert = table.insert(tf.constant(["x", "y"]), tf.constant([7, 8], tf.int64))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(insert)
            saver.save(sess, prefix)
    names = dict(tf.train.list_variables(prefix))
    assert sorted(names) == ["vocab_counts-keys", "vocab_counts-values"]
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab_counts")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            assert sess.run(table.lookup(tf.constant(["y", "x", "z"]))).tolist() == [8, 7, -1]
            assert sess.run(table.size()) == 2


def test_tables_from_the_same_file_share_one_resource(tmp_path):
    vocab = _vocab(tmp_path)
    with tf.Graph().as_default():
        a = lookup_ops.index_table_from_file(vocab)
        b = lookup_ops.index_table_from_file(vocab)
        assert a.resource_handle.op.get_attr("shared_name") == b.resource_handle.op.get_attr("shared_name")
        with tf.Session() as sess:
            sess.run(a.initializer)  # b's initializer not run: the resource is shared
            assert sess.run(b.lookup(tf.constant(["salad"]))).tolist() == [1]


def test_large_lookup_matches_python_dict():
    rng = np.random.RandomState(0)
    vocab = np.array([f"w{i:06d}" for i in range(50_000)], dtype=object)
    queries = np.array([f"w{i:06d}" for i in rng.randint(0, 80_000, size=300_000)], dtype=object)
    with tf.Graph().as_default():
        table = lookup_ops.index_table_from_tensor(tf.constant(vocab), default_value=-1)
        q = tf.placeholder(tf.string, [None])
        ids = table.lookup(q)
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            got = sess.run(ids, {q: queries})
    index = {w: i for i, w in enumerate(vocab)}
    assert got.tolist() == [index.get(w, -1) for w in queries]


def _tf1_graph_def_with_ref_ops():
    """A GraphDef as TF1 (before the V2 ops) wrote it: HashTable, InitializeTable, LookupTableFind."""
    gd = tf.GraphDef()

    def node(name, op, inputs=(), **attrs):
        n = gd.node.add(name=name, op=op)
        n.input.extend(inputs)
        for k, v in attrs.items():
            n.attr[k].CopyFrom(v)
        return n

    def const(name, values, dtype):
        return node(name, "Const", value=tf.AttrValue(tensor=tf.make_tensor_proto(values, dtype)),
                    dtype=tf.AttrValue(type=dtype.as_datatype_enum))

    s, i64 = tf.string, tf.int64
    node("table", "HashTable", key_dtype=tf.AttrValue(type=s.as_datatype_enum),
         value_dtype=tf.AttrValue(type=i64.as_datatype_enum), shared_name=tf.AttrValue(s=b""),
         container=tf.AttrValue(s=b""), use_node_name_sharing=tf.AttrValue(b=False))
    const("keys", ["a", "b"], s)
    const("values", [3, 4], i64)
    node("init", "InitializeTable", ["table", "keys", "values"], Tkey=tf.AttrValue(type=s.as_datatype_enum),
         Tval=tf.AttrValue(type=i64.as_datatype_enum))
    const("query", ["b", "c"], s)
    const("default", -1, i64)
    node("find", "LookupTableFind", ["table", "query", "default"], Tin=tf.AttrValue(type=s.as_datatype_enum),
         Tout=tf.AttrValue(type=i64.as_datatype_enum))
    node("size", "LookupTableSize", ["table"])
    return gd


def test_tf1_ref_typed_table_ops_import_and_run():
    with tf.Graph().as_default() as g:
        meta = tf.MetaGraphDef()
        meta.graph_def.CopyFrom(_tf1_graph_def_with_ref_ops())
        tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            sess.run(g.get_operation_by_name("init"))
            assert sess.run("find:0").tolist() == [4, -1]
            assert sess.run("size:0") == 2


TF_SIGNATURES = {
    "KeyValueTensorInitializer": ["keys", "values", "key_dtype", "value_dtype", "name"],
    "StaticHashTable": ["initializer", "default_value", "name", "experimental_is_anonymous"],
    "StaticVocabularyTable": ["initializer", "num_oov_buckets", "lookup_key_dtype", "name",
                              "experimental_is_anonymous"],
    "TextFileInitializer": ["filename", "key_dtype", "key_index", "value_dtype", "value_index", "vocab_size",
                            "delimiter", "name", "value_index_offset"],
    "experimental.DenseHashTable": ["key_dtype", "value_dtype", "default_value", "empty_key", "deleted_key",
                                    "initial_num_buckets", "name", "checkpoint", "experimental_is_anonymous"],
    "experimental.MutableHashTable": ["key_dtype", "value_dtype", "default_value", "name", "checkpoint",
                                      "experimental_is_anonymous"],
}


@pytest.mark.parametrize("name", sorted(TF_SIGNATURES))
def test_tf_lookup_names_and_arguments(name):
    import ferroflow.compat.v1 as v1

    obj = v1.lookup
    for part in name.split("."):
        obj = getattr(obj, part)
    params = [p for p in inspect.signature(obj.__init__).parameters if p != "self"]
    assert params == TF_SIGNATURES[name]
    assert tf.lookup.TextFileIndex.WHOLE_LINE == -2 and tf.lookup.TextFileIndex.LINE_NUMBER == -1
    assert tf.GraphKeys.TABLE_INITIALIZERS == "table_initializer"


def test_oov_bucket_arguments_are_checked():
    # OOV hash-bucket values are compared with TensorFlow's in test_strings.py (the lookup_* cases).
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_oov_buckets"):
            lookup_ops.index_table_from_tensor(["a"], num_oov_buckets=-1)
        with pytest.raises(ValueError, match="num_oov_buckets"):
            tf.lookup.StaticVocabularyTable(None, 0)
