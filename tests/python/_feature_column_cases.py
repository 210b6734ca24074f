"""Feature-column cases shared by the fixture generator (``tools/make_feature_column_fixtures.py``, run under
real TensorFlow 2.21 as ``tensorflow.compat.v1`` with v2 behavior disabled) and the golden test
(``test_feature_column.py``, run under ferroflow).

No TensorFlow or ferroflow import here: each function takes the TF1-style module ``tf``, its
``feature_column`` module ``fc`` and ``priv`` (a namespace holding the library's private ``LazyBuilder``,
``make_parse_example_spec`` that takes sequence columns and ``sequence_dense(column, features, builder)``), builds its graph in the current default graph and returns fetches. The examples are
built as dicts here; the generator serializes them as ``tf.train.Example``s and stores the bytes, which the
test parses with ``make_parse_example_spec`` as TensorFlow did.
"""

from __future__ import annotations

import numpy as np

VOCAB_FILE_LINES = ["v0", "v1", "v2", "v3"]
COLORS = ["red", "green", "blue"]
SEQ_VOCAB = ["a", "b", "c"]

# Each example: feature -> (kind, values); kinds: f (float_list), i (int64_list), b (bytes_list).
EXAMPLES = [
    {"price": ("f", [3.5]), "dims": ("f", [0.25, -1.0]), "age": ("i", [17]), "kw": ("b", [b"cat", b"dog"]),
     "color": ("b", [b"red"]), "word": ("b", [b"v1", b"zz"]), "word2": ("b", [b"v3"]), "num_ids": ("i", [1, 3]),
     "wt": ("f", [0.5, 2.0]), "seq_tok": ("b", [b"a", b"b", b"q"]), "seq_val": ("f", [1.0, 2.0, 3.0, 4.0]),
     "label": ("f", [1.0])},
    {"price": ("f", [120.0]), "dims": ("f", [1.5, 2.0]), "age": ("i", [25]), "kw": ("b", [b"fish"]),
     "color": ("b", [b"green", b"pink"]), "word": ("b", [b"v0"]), "word2": ("b", []), "num_ids": ("i", [4]),
     "wt": ("f", [1.5]), "seq_tok": ("b", [b"c"]), "seq_val": ("f", [5.0, 6.0]), "label": ("f", [0.0])},
    {"dims": ("f", [-2.0, 0.5]), "age": ("i", [60]), "kw": ("b", []), "color": ("b", [b"blue", b"red"]),
     "word": ("b", [b"v2", b"v3", b"v9"]), "word2": ("b", [b"v0", b"v1"]), "num_ids": ("i", [0, 7, 2]),
     "wt": ("f", [1.0, 3.0, 0.25]), "seq_tok": ("b", []), "seq_val": ("f", []), "label": ("f", [1.0])},
    {"price": ("f", [0.0]), "dims": ("f", [3.0, 3.0]), "age": ("i", [35]), "kw": ("b", [b"cat", b"cat", b"emu"]),
     "color": ("b", []), "word": ("b", []), "word2": ("b", [b"v2"]), "num_ids": ("i", []), "wt": ("f", []),
     "seq_tok": ("b", [b"b", b"b"]), "seq_val": ("f", [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]), "label": ("f", [0.0])},
    {"price": ("f", [-4.0]), "dims": ("f", [0.0, 0.0]), "age": ("i", [49]), "kw": ("b", [b"owl"]),
     "color": ("b", [b"cyan"]), "word": ("b", [b"v1"]), "word2": ("b", [b"v1"]), "num_ids": ("i", [2]),
     "wt": ("f", [0.75]), "seq_tok": ("b", [b"a"]), "seq_val": ("f", [-1.0, -2.0]), "label": ("f", [1.0])},
    {"price": ("f", [99.5]), "dims": ("f", [10.0, -10.0]), "age": ("i", [18]), "kw": ("b", [b"dog"]),
     "color": ("b", [b"blue"]), "word": ("b", [b"v0", b"v3"]), "word2": ("b", [b"v3"]), "num_ids": ("i", [3]),
     "wt": ("f", [2.5]), "seq_tok": ("b", [b"c", b"a"]), "seq_val": ("f", [0.5, 0.5]), "label": ("f", [0.0])},
]

BIG = 2 ** 62  # bucket count keeping (almost) the whole 64-bit hash, to compare hashes bit for bit


def init_array(shape, seed):
    """Deterministic initial values for embedding tables and weights."""
    return np.random.RandomState(seed).uniform(-1.0, 1.0, size=shape).astype(np.float32)


def columns(tf, fc, vocab_file):
    """Every column kind, by a short name."""
    c = {}
    c["price"] = fc.numeric_column("price", default_value=-1.0)
    c["dims"] = fc.numeric_column("dims", shape=(2,), normalizer_fn=lambda x: x * 2.0 - 1.0)
    c["age"] = fc.numeric_column("age", dtype=tf.int64)
    c["age_b"] = fc.bucketized_column(c["age"], [18, 25, 35, 50])
    c["price_b"] = fc.bucketized_column(c["price"], [0.0, 10.0, 100.0])
    c["kw"] = fc.categorical_column_with_hash_bucket("kw", 1000)
    c["num_hash"] = fc.categorical_column_with_hash_bucket("num_ids", 100, dtype=tf.int64)
    c["color"] = fc.categorical_column_with_vocabulary_list("color", COLORS, num_oov_buckets=3)
    c["word"] = fc.categorical_column_with_vocabulary_file("word", vocab_file, vocabulary_size=4, num_oov_buckets=2)
    c["word_d"] = fc.categorical_column_with_vocabulary_file("word", vocab_file)
    c["word2"] = fc.categorical_column_with_vocabulary_file("word2", vocab_file, vocabulary_size=4,
                                                            num_oov_buckets=2)
    c["ident"] = fc.categorical_column_with_identity("num_ids", 5, default_value=0)
    c["weighted"] = fc.weighted_categorical_column(c["ident"], "wt")
    c["cross"] = fc.crossed_column(["kw", c["color"], c["age_b"]], 50)
    c["cross_key"] = fc.crossed_column(["kw", "color"], 40, hash_key=12345)
    c["cross_nested"] = fc.crossed_column([fc.crossed_column(["kw", "color"], 7), "word"], 30)
    return c


def parse(tf, fc, serialized, cols):
    spec = fc.make_parse_example_spec(cols)
    return tf.parse_example(tf.constant(serialized), features=spec)


# --- ids: the transformed sparse ids of the categorical columns, bit for bit --------------------------------------


def id_cases(tf, fc, vocab_file):
    """Categorical columns whose ids are compared; big bucket counts keep the hashes' bits."""
    c = columns(tf, fc, vocab_file)
    return {
        "kw_big": fc.categorical_column_with_hash_bucket("kw", BIG),
        "kw": c["kw"],
        "num_hash_big": fc.categorical_column_with_hash_bucket("num_ids", BIG, dtype=tf.int64),
        "color": c["color"],
        "color_default": fc.categorical_column_with_vocabulary_list("color", COLORS, default_value=7),
        "word": c["word"],
        "word_d": c["word_d"],
        "ident": c["ident"],
        "weighted": c["weighted"],
        "age_b": c["age_b"],
        "cross_big": fc.crossed_column(["kw", c["color"], c["age_b"]], BIG),
        "cross_key_big": fc.crossed_column(["kw", "color"], BIG, hash_key=12345),
        "cross_nested": c["cross_nested"],
        "cross_ints": fc.crossed_column([c["ident"], c["word"]], BIG),
    }


def ids_fetches(tf, fc, priv, serialized, vocab_file):
    """For each id case (one graph holding them all): its ``_get_sparse_tensors`` ids' parts (and weights)."""
    fetches = {}
    for name, col in id_cases(tf, fc, vocab_file).items():
        features = parse(tf, fc, serialized, [col])
        pair = col._get_sparse_tensors(priv.LazyBuilder(features))
        out = pair.id_tensor
        if pair.weight_tensor is not None:
            fetches[f"{name}/weights"] = pair.weight_tensor.values
        fetches[f"{name}/indices"] = out.indices
        fetches[f"{name}/values"] = out.values
        fetches[f"{name}/dense_shape"] = out.dense_shape
    return fetches


# --- input_layer --------------------------------------------------------------------------------------------------


def dense_columns(tf, fc, vocab_file):
    c = columns(tf, fc, vocab_file)
    shared = fc.shared_embedding_columns(
        [c["word"], c["word2"]], 3, combiner="sqrtn",
        initializer=tf.constant_initializer(init_array((6, 3), 7)))
    return [
        c["price"], c["dims"], c["age"], c["age_b"], c["price_b"],
        fc.indicator_column(c["kw"]), fc.indicator_column(c["color"]),
        fc.indicator_column(c["word"]), fc.indicator_column(c["ident"]), fc.indicator_column(c["weighted"]),
        fc.indicator_column(c["cross"]), fc.indicator_column(c["cross_nested"]),
        fc.embedding_column(c["color"], 3, initializer=tf.constant_initializer(init_array((6, 3), 1))),
        fc.embedding_column(c["kw"], 4, combiner="sqrtn", max_norm=0.5,
                            initializer=tf.constant_initializer(init_array((1000, 4), 2))),
        fc.embedding_column(c["weighted"], 2, combiner="sum",
                            initializer=tf.constant_initializer(init_array((5, 2), 3))),
        fc.embedding_column(c["cross_key"], 2, combiner="mean", trainable=False,
                            initializer=tf.constant_initializer(init_array((40, 2), 4))),
    ] + shared


def input_layer_case(tf, fc, serialized, vocab_file):
    cols = dense_columns(tf, fc, vocab_file)
    features = parse(tf, fc, serialized, cols)
    cols_to_vars, cols_to_out = {}, {}
    out = fc.input_layer(features, cols, weight_collections=["my_weights"], cols_to_vars=cols_to_vars,
                         cols_to_output_tensors=cols_to_out)
    meta = {
        "cols_to_vars": {col.name: [v.name for v in vs] for col, vs in cols_to_vars.items()},
        "cols_to_output_width": {col.name: int(t.get_shape()[1]) for col, t in cols_to_out.items()},
    }
    return {"output": out}, meta


# --- linear_model -------------------------------------------------------------------------------------------------


def linear_columns(tf, fc, vocab_file):
    c = columns(tf, fc, vocab_file)
    return [c["price"], c["dims"], c["age_b"], c["kw"], c["color"], c["word"], c["weighted"], c["cross"],
            c["ident"], fc.embedding_column(c["kw"], 2, initializer=tf.constant_initializer(init_array((1000, 2), 5)))]


def linear_model_case(tf, fc, serialized, vocab_file, combiner):
    cols = linear_columns(tf, fc, vocab_file)
    features = parse(tf, fc, serialized, cols)
    cols_to_vars = {}
    out = fc.linear_model(features, cols, units=3, sparse_combiner=combiner, cols_to_vars=cols_to_vars)
    meta = {"cols_to_vars": {(k if isinstance(k, str) else k.name): [v.name for v in vs]
                             for k, vs in cols_to_vars.items()}}
    return {"output": out}, meta


def assign_all(tf, sess, seed=11):
    """Sets every global variable (in name order) to deterministic values."""
    for i, v in enumerate(sorted(tf.global_variables(), key=lambda v: v.name)):
        shape = v.get_shape().as_list()
        sess.run(v.assign(init_array(shape, seed + i)))


def scope_names_case(tf, fc, vocab_file):
    """Variable names of linear_model called twice and inside an outer scope, and of input_layer twice."""
    c = columns(tf, fc, vocab_file)
    features = {"price": tf.placeholder(tf.float32, [None, 1]),
                "kw": tf.sparse_placeholder(tf.string, shape=[None, None])}
    fc.linear_model(features, [c["price"], c["kw"]])
    fc.linear_model(features, [c["price"], c["kw"]])
    with tf.variable_scope("outer"):
        fc.linear_model(features, [c["kw"]])
        fc.input_layer(features, [fc.embedding_column(c["kw"], 2)])
    fc.input_layer(features, [fc.embedding_column(c["kw"], 2)])
    with tf.variable_scope("part", partitioner=tf.fixed_size_partitioner(2)):
        fc.linear_model(features, [c["kw"]])
        fc.input_layer(features, [fc.embedding_column(c["kw"], 2)])
    return {
        "global": [(v.name, v.get_shape().as_list()) for v in tf.global_variables()],
        "trainable": [v.name for v in tf.trainable_variables()],
        "model": [v.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)],
    }


# --- wide and deep ------------------------------------------------------------------------------------------------


def _dense(tf, x, units, name):
    """``tf.layers.dense``'s variables (``<name>/kernel``, ``<name>/bias``) without the Keras layer, which
    TensorFlow 2.21's ``tf.compat.v1`` no longer has."""
    with tf.variable_scope(name):
        kernel = tf.get_variable("kernel", [int(x.get_shape()[1]), units])
        bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
    return tf.nn.bias_add(tf.matmul(x, kernel), bias)


def wide_deep_model(tf, fc, features_serialized, vocab_file):
    """Logits, loss and train op of a small wide-and-deep model: FTRL on the linear part, Adagrad on the deep."""
    c = columns(tf, fc, vocab_file)
    wide = [c["kw"], c["color"], c["cross"], c["age_b"], c["weighted"]]
    deep = [c["price"], c["dims"], fc.embedding_column(c["kw"], 4), fc.embedding_column(c["word"], 3),
            fc.indicator_column(c["color"]), fc.embedding_column(c["cross"], 2)]
    spec = fc.make_parse_example_spec(wide + deep + [fc.numeric_column("label")])
    features = tf.parse_example(features_serialized, features=spec)
    labels = features.pop("label")
    linear_logits = fc.linear_model(features, wide)
    net = fc.input_layer(features, deep)
    with tf.variable_scope("dnn"):
        net = tf.nn.relu(_dense(tf, net, 8, "hidden"))
        dnn_logits = _dense(tf, net, 1, "logits")
    logits = linear_logits + dnn_logits
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    linear_vars = [v for v in tf.trainable_variables() if v.name.startswith("linear_model/")]
    deep_vars = [v for v in tf.trainable_variables() if not v.name.startswith("linear_model/")]
    train = tf.group(tf.train.FtrlOptimizer(0.1).minimize(loss, var_list=linear_vars),
                     tf.train.AdagradOptimizer(0.1).minimize(loss, var_list=deep_vars))
    return logits, loss, train


# --- sequence columns ---------------------------------------------------------------------------------------------


def sequence_columns(tf, fc):
    return {
        "seq_val": fc.sequence_numeric_column("seq_val", shape=(2,)),
        "seq_emb": fc.embedding_column(fc.sequence_categorical_column_with_hash_bucket("seq_tok", 50), 2,
                                       initializer=tf.constant_initializer(init_array((50, 2), 9))),
        "seq_ind": fc.indicator_column(fc.sequence_categorical_column_with_vocabulary_list("seq_tok", SEQ_VOCAB)),
        "seq_id": fc.sequence_categorical_column_with_identity("num_ids", 8),
    }


def sequence_spec(tf, fc, priv):
    cols = sequence_columns(tf, fc)
    spec = priv.make_parse_example_spec(list(cols.values()))
    return {k: [type(v).__name__, v.dtype.name] for k, v in sorted(spec.items())}


def sequence_case(tf, fc, priv, serialized):
    cols = sequence_columns(tf, fc)
    spec = priv.make_parse_example_spec([cols["seq_val"], cols["seq_emb"], cols["seq_ind"]])
    features = tf.parse_example(tf.constant(serialized), features=spec)
    builder = priv.LazyBuilder(features)
    fetches = {}
    for name in ("seq_val", "seq_emb", "seq_ind"):
        with tf.variable_scope(name):
            dense, length = priv.sequence_dense(cols[name], features, builder)
        fetches[f"{name}/dense"] = dense
        fetches[f"{name}/length"] = length
    return fetches
