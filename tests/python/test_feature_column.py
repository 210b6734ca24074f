"""``tf.feature_column`` against TensorFlow 2.21's ``tf.compat.v1.feature_column`` on a batch parsed from
``tf.train.Example``s: every column kind's ids (hashes and crosses bit for bit), input_layer and linear_model
values, variable names, shapes and collections, the sequence columns, a wide-and-deep model trained five
steps from TensorFlow's initial weights, and restoring TensorFlow's checkpoint of it.

Fixtures: tests/fixtures/feature_column, written by tools/make_feature_column_fixtures.py from the cases in
_feature_column_cases.py.
"""

from __future__ import annotations

import base64
import json
import pathlib
import types

import numpy as np
import pytest

import _feature_column_cases as cases
import ferroflow as tf
from ferroflow import feature_column as fc
from ferroflow.feature_column._base import _LazyBuilder

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "feature_column"
META = json.loads((FIX / "meta.json").read_text())
with np.load(FIX / "values.npz") as _d:
    VALUES = {k: _d[k] for k in _d.files}
SERIALIZED = [base64.b64decode(s) for s in json.loads((FIX / "examples.json").read_text())]
VOCAB = str(FIX / "vocab.txt")
PRIV = types.SimpleNamespace(
    LazyBuilder=_LazyBuilder, make_parse_example_spec=fc.make_parse_example_spec,
    sequence_dense=lambda column, features, builder: column._get_sequence_dense_tensor(builder))


def _run(fetches, after_init=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        if after_init:
            after_init(sess)
        return sess.run(fetches)


def _vars(collection=None):
    items = tf.global_variables() if collection is None else tf.get_collection(collection)
    return [v.name for v in items]


def test_all_names_exported():
    import ferroflow.compat.v1 as v1

    assert v1.feature_column is fc
    for name in fc.__all__:
        assert callable(getattr(tf.feature_column, name))
    assert tf.initializers.tables_initializer is tf.tables_initializer


def test_ids_match_tensorflow_bit_for_bit():
    got = _run(cases.ids_fetches(tf, fc, PRIV, SERIALIZED, VOCAB))
    prefixes = {k.split("/")[0] for k in got}
    assert "cross_big" in prefixes and "kw_big" in prefixes
    for key, value in got.items():
        np.testing.assert_array_equal(value, VALUES[f"ids/{key}"], err_msg=key)


def test_input_layer_values_names_and_collections():
    fetches, meta = cases.input_layer_case(tf, fc, SERIALIZED, VOCAB)
    want = META["input_layer"]
    assert [[n, s] for n, s in ((v.name, v.get_shape().as_list()) for v in tf.global_variables())] == want["global"]
    assert [v.name for v in tf.trainable_variables()] == want["trainable"]
    assert _vars(tf.GraphKeys.MODEL_VARIABLES) == want["model"]
    assert _vars("my_weights") == want["my_weights"]
    assert meta["cols_to_vars"] == want["cols_to_vars"]
    assert meta["cols_to_output_width"] == want["cols_to_output_width"]
    out = _run(fetches)["output"]
    np.testing.assert_allclose(out, VALUES["input_layer/output"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_linear_model_values_and_names(combiner):
    fetches, meta = cases.linear_model_case(tf, fc, SERIALIZED, VOCAB, combiner)
    want = META["linear_model"][combiner]
    assert [[v.name, v.get_shape().as_list()] for v in tf.global_variables()] == want["global"]
    assert _vars(tf.GraphKeys.MODEL_VARIABLES) == want["model"]
    assert meta["cols_to_vars"] == want["cols_to_vars"]
    out = _run(fetches, after_init=lambda s: cases.assign_all(tf, s))["output"]
    np.testing.assert_allclose(out, VALUES[f"linear_model/{combiner}"], rtol=1e-5, atol=1e-5)


def test_scopes_partitioners_and_repeated_calls_name_variables_as_tensorflow():
    got = cases.scope_names_case(tf, fc, VOCAB)
    want = META["scope_names"]
    assert [[n, s] for n, s in got["global"]] == want["global"]
    assert got["trainable"] == want["trainable"]
    assert got["model"] == want["model"]


def test_sequence_columns_specs_and_dense_tensors():
    assert cases.sequence_spec(tf, fc, PRIV) == META["sequence_spec"]
    got = _run(cases.sequence_case(tf, fc, PRIV, SERIALIZED))
    for key, value in got.items():
        np.testing.assert_allclose(value, VALUES[f"sequence/{key}"], rtol=1e-6, atol=1e-6, err_msg=key)


def test_sequence_input_layer_concatenates_the_columns():
    from ferroflow.feature_column._sequence import sequence_input_layer

    cols = cases.sequence_columns(tf, fc)
    spec = fc.make_parse_example_spec([cols["seq_emb"], cols["seq_ind"]])
    features = tf.parse_example(tf.constant(SERIALIZED), features=spec)
    out, length = sequence_input_layer(features, [cols["seq_emb"], cols["seq_ind"]])
    assert [v.name for v in tf.global_variables()] == [
        "sequence_input_layer/seq_tok_embedding/embedding_weights:0"]
    got_out, got_len = _run([out, length])
    want = np.concatenate([VALUES["sequence/seq_emb/dense"], VALUES["sequence/seq_ind/dense"]], axis=-1)
    np.testing.assert_allclose(got_out, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got_len, VALUES["sequence/seq_emb/length"])


def _wide_deep():
    ser = tf.placeholder(tf.string, [None])
    logits, loss, train = cases.wide_deep_model(tf, fc, ser, VOCAB)
    return ser, logits, loss, train


def test_wide_deep_training_gives_tensorflows_losses():
    ser, logits, loss, train = _wide_deep()
    assert [[v.name, v.get_shape().as_list()] for v in tf.global_variables()] == META["wide_deep"]["global"]
    init = {k[len("wide_deep/init/"):]: v for k, v in VALUES.items() if k.startswith("wide_deep/init/")}
    by_name = {v.op.name: v for v in tf.global_variables()}
    assert set(init) <= set(by_name)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for name, value in init.items():
            by_name[name].load(value, sess)
        losses = [sess.run([loss, train], {ser: SERIALIZED})[0] for _ in range(len(VALUES["wide_deep/losses"]))]
        final = sess.run(logits, {ser: SERIALIZED})
    np.testing.assert_allclose(losses, VALUES["wide_deep/losses"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final, VALUES["wide_deep/logits"], rtol=1e-4, atol=1e-5)


def test_tensorflow_checkpoint_of_a_feature_column_model_restores():
    ser, logits, _, _ = _wide_deep()
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        tf.train.Saver().restore(sess, str(FIX / "wide_deep" / "model.ckpt"))
        got = sess.run(logits, {ser: SERIALIZED})
    np.testing.assert_allclose(got, VALUES["wide_deep/logits"], rtol=1e-5, atol=1e-6)


def test_embedding_from_checkpoint_initializes_the_table(tmp_path):
    table = cases.init_array((6, 3), 21)
    v = tf.Variable(table, name="src/table")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver([v]).save(sess, str(tmp_path / "src.ckpt"))
    tf.reset_default_graph()
    c = cases.columns(tf, fc, VOCAB)
    col = fc.embedding_column(c["color"], 3, combiner="sum", ckpt_to_load_from=path, tensor_name_in_ckpt="src/table")
    features = {"color": tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["blue", "red", "teal"], [2, 2])}
    out = fc.input_layer(features, [col])
    got = _run(out)
    oov = 3 + tf.Session().run(tf.strings.to_hash_bucket_fast(["teal"], 3))[0]
    np.testing.assert_allclose(got, [table[2], table[0] + table[oov]], rtol=1e-6)


# --- errors, as TensorFlow raises them ----------------------------------------------------------------------------


def test_missing_vocabulary_file_is_not_found_at_initialization():
    col = fc.categorical_column_with_vocabulary_file("word", "/nonexistent/vocab.txt", vocabulary_size=3)
    features = {"word": tf.SparseTensor([[0, 0]], ["a"], [1, 1])}
    out = fc.input_layer(features, [fc.indicator_column(col)])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="/nonexistent/vocab.txt"):
            sess.run(tf.tables_initializer())
            sess.run(out)
    with pytest.raises(ValueError, match="vocabulary_file in word does not exist"):
        fc.categorical_column_with_vocabulary_file("word", "/nonexistent/vocab.txt")


def test_argument_errors():
    with pytest.raises(ValueError, match="hash_bucket_size must be at least 1. hash_bucket_size: 0, key: kw"):
        fc.categorical_column_with_hash_bucket("kw", 0)
    with pytest.raises(ValueError, match="hash_bucket_size must be > 1"):
        fc.crossed_column(["a", "b"], 0)
    with pytest.raises(ValueError, match="categorical_column_with_hash_bucket is not supported for crossing"):
        fc.crossed_column([fc.categorical_column_with_hash_bucket("a", 3), "b"], 10)
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(fc.numeric_column("x"), [2.0, 1.0])
    with pytest.raises(ValueError, match="Invalid dimension 0"):
        fc.embedding_column(fc.categorical_column_with_identity("x", 3), 0)
    with pytest.raises(ValueError, match="Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt`"):
        fc.embedding_column(fc.categorical_column_with_identity("x", 3), 2, ckpt_to_load_from="x")
    with pytest.raises(ValueError, match="default_value 5 not in range"):
        fc.categorical_column_with_identity("x", 3, default_value=5)
    with pytest.raises(ValueError, match="Duplicate keys in vocabulary_list"):
        fc.categorical_column_with_vocabulary_list("x", ["a", "a"])
    with pytest.raises(TypeError, match="default_value must be compatible with dtype"):
        fc.numeric_column("x", default_value="a")
    with pytest.raises(ValueError, match="To use shared_embedding_column, all categorical_columns must have the same"):
        fc.shared_embedding_columns([fc.categorical_column_with_identity("a", 3),
                                     fc.categorical_column_with_identity("b", 4)], 2)


def test_feature_missing_from_features_names_it():
    features = {"price": tf.constant([[1.0]])}
    with pytest.raises(ValueError, match="Feature kw is not in features dictionary."):
        fc.input_layer(features, [fc.numeric_column("price"),
                                  fc.indicator_column(fc.categorical_column_with_hash_bucket("kw", 5))])
    with pytest.raises(ValueError, match="Items of feature_columns must be a _DenseColumn"):
        fc.input_layer(features, [fc.categorical_column_with_hash_bucket("kw", 5)])
    with pytest.raises(ValueError, match="Duplicate feature column name"):
        fc.linear_model(features, [fc.numeric_column("price"), fc.numeric_column("price", shape=2)])


def test_bucketize_op():
    x = tf.constant([[-1.0, 0.0, 5.0], [10.0, 99.0, 1e9]])
    y = fc._categorical.bucketize(x, [0.0, 10.0, 100.0])
    assert y.dtype == tf.int32 and y.get_shape().as_list() == [2, 3]
    got = _run(y)
    np.testing.assert_array_equal(got, [[0, 1, 1], [2, 2, 3]])
    bad = fc._categorical.bucketize(tf.constant([1.0]), [2.0, 1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected sorted boundaries"):
        _run(bad)
    # No gradient flows into the int32 buckets: d/dx (float(bucket(x)) * x) is float(bucket(x)).
    buckets = tf.cast(fc._categorical.bucketize(x, [0.0]), tf.float32)
    (grad,) = tf.gradients(buckets * x, x)
    got_grad, want = _run([grad, buckets])
    np.testing.assert_array_equal(got_grad, want)
