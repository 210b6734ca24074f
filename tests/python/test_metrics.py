"""tf.metrics (tf.compat.v1.metrics) against TensorFlow 2.21 (tools/make_metrics_fixtures.py).

Each fixture case builds one metric over placeholders, initialises the local variables and streams
three batches through the update op: the update op's result and the value read after each batch,
the variable names and collections, and the value/update tensor names must be TensorFlow's.
"""

from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1
from ferroflow.ops import metrics_impl

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "metrics" / "metrics.json"
DOC = json.loads(FIXTURES.read_text())
CASES = {c["id"]: c for c in DOC["cases"]}
ERRORS = {c["id"]: c for c in DOC["errors"]}

PUBLIC = sorted({c["fn"] for c in DOC["cases"]})


def _placeholders(inputs):
    out = {}
    for key, spec in inputs.items():
        dtype, shape = spec["dtype"], spec["shape"]
        if dtype.startswith("sparse_"):
            out[key] = tf.sparse_placeholder(tf.as_dtype(dtype[7:]), shape=shape, name=key)
        else:
            out[key] = tf.placeholder(tf.as_dtype(dtype), shape=shape, name=key)
    return out


def _feed(phs, inputs, batch):
    feed = {}
    for key, spec in inputs.items():
        dtype = spec["dtype"]
        if dtype.startswith("sparse_"):
            sp = batch[key]
            feed[phs[key]] = tf.SparseTensorValue(
                np.array(sp["indices"], np.int64).reshape(-1, 2), np.array(sp["values"], np.int64),
                np.array(sp["dense_shape"], np.int64))
        else:
            feed[phs[key]] = np.array(batch[key], dtype=np.dtype(dtype))
    return feed


def _close(actual, expected, what):
    expected = np.array(expected, dtype=np.float64)
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=2e-6, atol=1e-7, err_msg=what)


def test_all_public_functions_exist_in_both_namespaces():
    names = ("accuracy auc average_precision_at_k false_negatives false_negatives_at_thresholds false_positives "
             "false_positives_at_thresholds mean mean_absolute_error mean_cosine_distance mean_iou "
             "mean_per_class_accuracy mean_relative_error mean_squared_error mean_tensor percentage_below "
             "precision precision_at_k precision_at_thresholds precision_at_top_k recall recall_at_k "
             "recall_at_thresholds recall_at_top_k root_mean_squared_error sensitivity_at_specificity "
             "sparse_average_precision_at_k sparse_precision_at_k specificity_at_sensitivity true_negatives "
             "true_negatives_at_thresholds true_positives true_positives_at_thresholds").split()
    assert len(names) == 33
    assert sorted(metrics_impl.__all__) == names
    assert set(PUBLIC) == set(names)  # every function has fixture cases
    for name in names:
        assert getattr(tf.metrics, name) is getattr(tf_v1.metrics, name) is getattr(metrics_impl, name)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_streams_like_tensorflow(case_id):
    case = CASES[case_id]
    graph = tf.Graph()
    with graph.as_default():
        phs = _placeholders(case["inputs"])
        kwargs = dict(case["kwargs"])
        if case["collections"]:
            kwargs.update(metrics_collections=["metric_values"], updates_collections=["metric_updates"])
        value, update = getattr(tf.metrics, case["fn"])(**phs, **kwargs)
        assert [v.name for v in tf.local_variables()] == case["local_variables"]
        assert [v.name for v in graph.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == case["metric_variables"]
        assert [v.name for v in tf.global_variables()] == case["global_variables"] == []
        assert tf.trainable_variables() == []
        assert (value.name, update.name) == (case["value_name"], case["update_name"])
        assert value.dtype.name == case["value_dtype"]
        if case["collections"]:
            assert [t.name for t in graph.get_collection("metric_values")] == case["metric_values"]
            assert [t.name for t in graph.get_collection("metric_updates")] == case["metric_updates"]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            _close(sess.run(value), case["initial_value"], "before any batch")
            for i, batch in enumerate(case["batches"]):
                _close(sess.run(update, _feed(phs, case["inputs"], batch)), case["updates"][i], f"update {i}")
                _close(sess.run(value), case["values"][i], f"value after batch {i}")
            # Re-initialising the local variables restarts the stream.
            sess.run(tf.local_variables_initializer())
            _close(sess.run(update, _feed(phs, case["inputs"], case["batches"][0])), case["updates"][0], "restart")


@pytest.mark.parametrize("case_id", sorted(ERRORS))
def test_errors_like_tensorflow(case_id):
    case = ERRORS[case_id]
    graph = tf.Graph()
    with graph.as_default():
        phs = {k: tf.placeholder(tf.as_dtype(d), shape=s, name=k) for k, (d, s) in case["inputs"].items()}

        def build():
            if case["fn"] == "_confusion_matrix_at_thresholds":
                return metrics_impl._confusion_matrix_at_thresholds(
                    tf.constant([True]), tf.constant([0.5]), [0.5], includes=("tp", "xx"))
            return getattr(tf.metrics, case["fn"])(**phs, **case["kwargs"])

        if case["error"] is None:
            build()
            return
        if case.get("feed") is None:
            with pytest.raises(getattr(builtins, case["error"])) as info:
                build()
            expected = case["message"]
            # TensorFlow's broadcast message ends with reprs of the tensors; compare what precedes them.
            cut = expected.find(" Received weights=")
            actual = str(info.value)
            assert type(info.value).__name__ == case["error"]
            assert actual[:cut] == expected[:cut] if cut >= 0 else actual == expected
            return
        _, update = build()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            with pytest.raises(getattr(tf.errors, case["error"])) as info:
                sess.run(update, {phs[k]: v for k, v in case["feed"].items()})
        # the assertion's own message and condition, as TensorFlow words them
        expected = case["message"].split(" [x (")[0]
        assert expected in str(info.value)


def test_value_does_not_update_and_update_accumulates():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        value, update = tf.metrics.mean(x)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value) == 0.0
            sess.run(update, {x: [1.0, 2.0, 3.0]})
            for _ in range(3):  # reading the value leaves the totals alone
                assert sess.run(value) == pytest.approx(2.0)
            assert sess.run(update, {x: [10.0]}) == pytest.approx(4.0)


def test_two_metrics_get_distinct_scopes_and_eval_metric_ops_pairs():
    with tf.Graph().as_default():
        labels = tf.constant([1, 0, 1, 1])
        preds = tf.constant([1, 1, 1, 0])
        first = tf.metrics.accuracy(labels, preds)
        second = tf.metrics.accuracy(labels, preds)
        names = [v.name for v in tf.local_variables()]
        assert names == ["accuracy/total:0", "accuracy/count:0", "accuracy_1/total:0", "accuracy_1/count:0"]
        eval_metric_ops = {"acc": first, "acc2": second, "auc": tf.metrics.auc(labels, tf.constant([.9, .2, .7, .4]))}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run({k: u for k, (_, u) in eval_metric_ops.items()})
            out = sess.run({k: v for k, (v, _) in eval_metric_ops.items()})
        assert out["acc"] == out["acc2"] == pytest.approx(0.5)
        assert out["auc"] == pytest.approx(1.0, abs=1e-5)  # every positive outscores the negative


def test_dynamic_shapes():
    # ranks known, sizes not: weights broadcast and label expansion decided at run time
    with tf.Graph().as_default():
        values = tf.placeholder(tf.float32, [None, 2])
        weights = tf.placeholder(tf.float32, [None])
        value, update = tf.metrics.mean(values, weights)
        labels = tf.placeholder(tf.int64, None)
        scores = tf.placeholder(tf.float32, [None, 4])
        p_value, p_update = tf.metrics.precision_at_k(labels, scores, 2)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            got = sess.run(update, {values: [[1.0, 3.0], [5.0, 7.0]], weights: [1.0, 0.0]})
            assert got == pytest.approx(2.0)
            got = sess.run(p_update, {labels: [2, 1], scores: [[0.1, 0.2, 0.9, 0.3], [0.8, 0.1, 0.2, 0.7]]})
            assert got == pytest.approx(0.25)


def test_signatures_match_tensorflow():
    import inspect

    for name, params in DOC["signatures"].items():
        ours = [[p.name, None if p.default is inspect.Parameter.empty else p.default]
                for p in inspect.signature(getattr(tf.metrics, name)).parameters.values()]
        assert ours == params, name


def test_unknown_ranks():
    # weights one rank short of the values, neither rank known while building: expanded at run time
    with tf.Graph().as_default():
        values = tf.placeholder(tf.float32)
        weights = tf.placeholder(tf.float32)
        _, update = tf.metrics.mean(values, weights)
        labels = tf.sparse_placeholder(tf.int64)
        scores = tf.placeholder(tf.float32, [2, 4])
        _, r_update = tf.metrics.recall_at_k(labels, scores, 2)
        v = np.array([[1.0, 3.0], [5.0, 7.0]], np.float32)
        w = np.array([1.0, 3.0], np.float32)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            total, count = (v * w[:, None]).sum(), 2 * w.sum()
            assert sess.run(update, {values: v, weights: w}) == pytest.approx(total / count)
            total, count = total + 2 * v.sum(), count + 2 * v.size  # then a scalar weight
            assert sess.run(update, {values: v, weights: 2.0}) == pytest.approx(total / count)
            # rank-1 sparse labels (one id per example) gain a unit dimension; example 0 hits, 1 misses
            sp = tf.SparseTensorValue(np.array([[0], [1]], np.int64), np.array([2, 1], np.int64),
                                      np.array([2], np.int64))
            got = sess.run(r_update, {labels: sp, scores: [[0.1, 0.2, 0.9, 0.3], [0.8, 0.1, 0.2, 0.7]]})
            assert got == pytest.approx(0.5)
