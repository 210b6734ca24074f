"""The premade estimators' ``weight_column`` and ``label_vocabulary`` (TF 1.15's heads): weighted training loss
(a SUM of weight x loss), weighted metrics and the average-loss summary, string labels mapped through the
vocabulary and class names in the predictions; values checked against numpy from the trained variables."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf

RNG = np.random.RandomState(3)
X = RNG.rand(12, 2).astype(np.float32)
Y = (X @ np.array([1.5, -2.0], np.float32) + 0.2 > 0).astype(np.int64)
W = RNG.uniform(0.2, 3.0, 12).astype(np.float32)
NAMES = np.array([b"neg", b"pos"])


def _input(labels, weights=None, epochs=None):
    features = {"x": X}
    if weights is not None:
        features["w"] = weights
    return lambda: tf.data.Dataset.from_tensors((features, labels)).repeat(epochs)


def _sigmoid_xent(logits, z):
    return np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))


def test_binary_weights_and_vocabulary_against_numpy(tmp_path):
    est = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=(2,))], model_dir=str(tmp_path), weight_column="w",
        label_vocabulary=["neg", "pos"], optimizer=tf.train.GradientDescentOptimizer(0.1),
        config=tf.estimator.RunConfig(log_step_count_steps=None))
    est.train(_input(NAMES[Y], W), steps=2)
    kernel = est.get_variable_value("linear/linear_model/x/weights")
    bias = est.get_variable_value("linear/linear_model/bias_weights")
    logits = (X @ kernel + bias)[:, 0]
    losses = _sigmoid_xent(logits, Y)
    result = est.evaluate(_input(NAMES[Y], W, epochs=1))
    assert result["loss"] == pytest.approx(np.sum(W * losses), rel=1e-5)
    assert result["average_loss"] == pytest.approx(np.sum(W * losses) / W.sum(), rel=1e-5)
    hits = (logits > 0) == Y
    assert result["accuracy"] == pytest.approx(np.sum(W * hits) / W.sum(), rel=1e-5)
    assert result["label/mean"] == pytest.approx(np.sum(W * Y) / W.sum(), rel=1e-5)
    logistic = 1 / (1 + np.exp(-logits))
    assert result["prediction/mean"] == pytest.approx(np.sum(W * logistic) / W.sum(), rel=1e-4)
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensors({"x": X})))
    assert [p["classes"][0] for p in preds] == list(NAMES[(logits > 0).astype(int)])
    assert list(preds[0]["all_classes"]) == [b"neg", b"pos"]
    # A label outside the vocabulary fails the range check.
    bad = NAMES[Y].copy()
    bad[0] = b"maybe"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must >= 0"):
        est.train(_input(bad, W), steps=1)


def test_zero_weights_train_as_if_the_examples_were_absent(tmp_path):
    # With a SUM loss, an example of weight 0 adds nothing to the gradient: one full batch with half the
    # weights 0 trains exactly as the other half alone.
    keep = np.arange(12) % 2 == 0
    cols = [tf.feature_column.numeric_column("x", shape=(2,))]
    target = (X @ np.array([0.5, -1.0], np.float32)).astype(np.float32)

    def run(model_dir, features, labels, weight_column):
        est = tf.estimator.LinearRegressor(cols, model_dir=model_dir, weight_column=weight_column,
                                           optimizer=tf.train.GradientDescentOptimizer(0.05),
                                           config=tf.estimator.RunConfig(log_step_count_steps=None))
        est.train(lambda: tf.data.Dataset.from_tensors((features, labels)).repeat(), steps=4)
        return est

    weighted = run(str(tmp_path / "a"), {"x": X, "w": keep.astype(np.float32)}, target, "w")
    alone = run(str(tmp_path / "b"), {"x": X[keep]}, target[keep], None)
    for name in ("linear/linear_model/x/weights", "linear/linear_model/bias_weights"):
        np.testing.assert_allclose(weighted.get_variable_value(name), alone.get_variable_value(name), rtol=1e-6)
    kernel = weighted.get_variable_value("linear/linear_model/x/weights")
    bias = weighted.get_variable_value("linear/linear_model/bias_weights")
    out = (X @ kernel + bias)[:, 0]
    w = np.where(keep, 1.0, 0.0)
    result = weighted.evaluate(lambda: tf.data.Dataset.from_tensors(({"x": X, "w": w.astype(np.float32)}, target)))
    assert result["average_loss"] == pytest.approx(np.sum(w * (out - target) ** 2) / w.sum(), rel=1e-5)
    assert result["label/mean"] == pytest.approx(np.sum(w * target) / w.sum(), rel=1e-5)


def test_multi_class_dnn_with_vocabulary_and_weights(tmp_path):
    names = np.array([b"cat", b"dog", b"eel"])
    labels = (X[:, 0] * 3).astype(np.int64).clip(0, 2)
    est = tf.estimator.DNNClassifier(
        [4], [tf.feature_column.numeric_column("x", shape=(2,))], n_classes=3, model_dir=str(tmp_path),
        weight_column=tf.feature_column.numeric_column("w"), label_vocabulary=("cat", "dog", "eel"),
        optimizer=tf.train.GradientDescentOptimizer(0.2), config=tf.estimator.RunConfig(log_step_count_steps=None))
    est.train(_input(names[labels], W), steps=3)
    v = est.get_variable_value
    hidden = np.maximum(X @ v("dnn/hiddenlayer_0/kernel") + v("dnn/hiddenlayer_0/bias"), 0)
    logits = hidden @ v("dnn/logits/kernel") + v("dnn/logits/bias")
    shifted = logits - logits.max(1, keepdims=True)
    xent = np.log(np.exp(shifted).sum(1)) - shifted[np.arange(12), labels]
    result = est.evaluate(_input(names[labels], W, epochs=1))
    assert result["loss"] == pytest.approx(np.sum(W * xent), rel=1e-4)
    assert result["average_loss"] == pytest.approx(np.sum(W * xent) / W.sum(), rel=1e-4)
    assert result["accuracy"] == pytest.approx(np.sum(W * (logits.argmax(1) == labels)) / W.sum(), rel=1e-5)
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensors({"x": X[:3]})))
    assert [p["classes"][0] for p in preds] == list(names[logits[:3].argmax(1)])
    with pytest.raises(ValueError, match="Labels dtype should be string if there is a vocabulary"):
        est.train(_input(labels, W), steps=1)
    with pytest.raises(ValueError, match="label_vocabulary should be a list or a tuple"):
        tf.estimator.DNNClassifier([4], [tf.feature_column.numeric_column("x")], n_classes=3, label_vocabulary="ab")
    with pytest.raises(TypeError, match="Weight column must be either a string or _NumericColumn"):
        tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x", shape=(2,))],
                                     weight_column=tf.feature_column.categorical_column_with_identity("w", 3)
                                     ).train(_input(X[:, 0], W), steps=1)


def test_partitioners_split_the_variables(tmp_path):
    cat = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1])
    ident = tf.feature_column.categorical_column_with_identity("c", 5)
    est = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=(2,)), ident], model_dir=str(tmp_path / "linear"),
        partitioner=tf.fixed_size_partitioner(2), optimizer=tf.train.GradientDescentOptimizer(0.1),
        config=tf.estimator.RunConfig(log_step_count_steps=None))
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": X, "c": cat}, Y)).repeat(), steps=1)
    # The checkpoint holds each partitioned variable whole (its slices saved under one name), as TF's Saver.
    kernel = est.get_variable_value("linear/linear_model/x/weights")
    table = est.get_variable_value("linear/linear_model/c/weights")
    bias = est.get_variable_value("linear/linear_model/bias_weights")
    assert table.shape == (5, 1)
    logits = X @ kernel + table[cat] + bias
    # The graph holds the slices: TF's fixed_size_partitioner cuts 5 rows into parts of 3 and 2.
    assert _graph_variables(est) >= {"linear/linear_model/c/weights/part_0:0": [3, 1],
                                     "linear/linear_model/c/weights/part_1:0": [2, 1],
                                     "linear/linear_model/bias_weights/part_0:0": [1]}.items()
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensors({"x": X, "c": cat})))
    np.testing.assert_allclose([p["logits"] for p in preds], logits, rtol=1e-5, atol=1e-6)

    dnn = tf.estimator.DNNClassifier(
        [3], [tf.feature_column.embedding_column(ident, 4)], model_dir=str(tmp_path / "dnn"),
        input_layer_partitioner=tf.fixed_size_partitioner(2), config=tf.estimator.RunConfig(log_step_count_steps=None))
    dnn.train(lambda: tf.data.Dataset.from_tensors(({"c": cat}, Y)).repeat(), steps=1)
    prefix = "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights/part_"
    assert _graph_variables(dnn) >= {prefix + "0:0": [3, 4], prefix + "1:0": [2, 4],
                                     "dnn/hiddenlayer_0/kernel:0": [4, 3]}.items()
    assert dnn.get_variable_value(prefix[:-len("/part_")]).shape == (5, 4)


def _graph_variables(est):
    """{name: shape} of the global variables in the estimator's latest meta graph."""
    with tf.Graph().as_default():
        tf.train.import_meta_graph(est.latest_checkpoint() + ".meta")
        return {v.name: v.shape.as_list() for v in tf.global_variables()}.items()
