"""Regenerate tests/fixtures/metrics/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_metrics_fixtures.py

Every case below builds one ``tf.compat.v1.metrics`` function over placeholders of fixed shapes
(a ``sparse_placeholder`` for sparse labels), runs ``local_variables_initializer`` and then feeds
three seeded batches through the update op. ``metrics.json`` records, per case, the inputs of each
batch, what the update op returned and what the value tensor read afterwards, the names of the
local, metric and global variables, the names of the value and update tensors, and (where the
case passes ``metrics_collections``/``updates_collections``) what those collections hold; and the
parameter names and defaults of every public function. Error
cases record the exception class and text TensorFlow gives, at build time or on the first run.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "metrics"
BATCHES = 3


def _ints(rng, high, shape, low=0):
    return rng.integers(low, high, size=shape)


def _unit(rng, shape):
    return rng.random(shape).round(3)


def _cases():
    """(id, function, {input: (dtype, shape, maker)}, kwargs, options); makers take the rng."""
    r = np.random.default_rng
    f32, i64, b = "float32", "int64", "bool"
    out = []

    def add(cid, fn, inputs, kwargs=None, **opts):
        out.append((cid, fn, inputs, kwargs or {}, opts))

    lbl3 = (i64, [6], lambda g: _ints(g, 3, [6]))
    add("accuracy", "accuracy", {"labels": lbl3, "predictions": lbl3})
    add("accuracy_weighted", "accuracy",
        {"labels": lbl3, "predictions": lbl3, "weights": (f32, [6], lambda g: _unit(g, [6]))},
        collections=True)
    add("accuracy_squeeze", "accuracy",
        {"labels": (i64, [6, 1], lambda g: _ints(g, 3, [6, 1])), "predictions": lbl3,
         "weights": (f32, [6, 1], lambda g: _unit(g, [6, 1]))}, {"name": "acc"})
    vals = (f32, [4, 3], lambda g: g.standard_normal([4, 3]).round(3))
    add("mean", "mean", {"values": vals}, collections=True)
    add("mean_weighted_row", "mean", {"values": vals, "weights": (f32, [4, 1], lambda g: _unit(g, [4, 1]))})
    add("mean_weighted_full", "mean", {"values": vals, "weights": (f32, [4, 3], lambda g: _unit(g, [4, 3]))})
    add("mean_tensor", "mean_tensor", {"values": vals}, collections=True)
    add("mean_tensor_weighted", "mean_tensor",
        {"values": vals, "weights": (f32, [4, 1], lambda g: (g.random([4, 1]) > 0.3).astype(np.float32))})
    reg = (f32, [5], lambda g: g.standard_normal(5).round(3))
    w5 = (f32, [5], lambda g: _unit(g, [5]))
    for fn in ("mean_absolute_error", "mean_squared_error", "root_mean_squared_error"):
        add(fn, fn, {"labels": reg, "predictions": reg})
        add(fn + "_weighted", fn, {"labels": reg, "predictions": reg, "weights": w5})

    def unit_rows(g):
        x = g.standard_normal([4, 3])
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).round(4)

    rows = (f32, [4, 3], unit_rows)
    add("mean_cosine_distance", "mean_cosine_distance", {"labels": rows, "predictions": rows}, {"dim": 1})
    add("mean_cosine_distance_weighted", "mean_cosine_distance",
        {"labels": rows, "predictions": rows, "weights": (f32, [4, 1], lambda g: _unit(g, [4, 1]))}, {"dim": 1})
    add("mean_relative_error", "mean_relative_error",
        {"labels": reg, "predictions": reg,
         "normalizer": (f32, [5], lambda g: np.where(g.random(5) > 0.7, 0.0, g.random(5) + 0.5).round(3))})
    add("percentage_below", "percentage_below", {"values": reg}, {"threshold": 0.25})
    add("percentage_below_weighted", "percentage_below", {"values": reg, "weights": w5}, {"threshold": -0.1})
    cls = (i64, [8], lambda g: _ints(g, 3, [8]))
    w8 = (f32, [8], lambda g: _unit(g, [8]))
    add("mean_iou", "mean_iou", {"labels": cls, "predictions": cls}, {"num_classes": 3}, collections=True)
    add("mean_iou_weighted", "mean_iou", {"labels": cls, "predictions": cls, "weights": w8}, {"num_classes": 4})
    add("mean_per_class_accuracy", "mean_per_class_accuracy", {"labels": cls, "predictions": cls},
        {"num_classes": 3})
    add("mean_per_class_accuracy_weighted", "mean_per_class_accuracy",
        {"labels": cls, "predictions": cls, "weights": w8}, {"num_classes": 4})
    bools = (b, [8], lambda g: g.random(8) > 0.5)
    for fn in ("true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall"):
        add(fn, fn, {"labels": bools, "predictions": bools}, collections=fn in ("true_positives", "precision"))
        add(fn + "_weighted", fn, {"labels": bools, "predictions": bools, "weights": w8})
    add("precision_int_inputs", "precision",
        {"labels": (i64, [2, 4], lambda g: _ints(g, 2, [2, 4])), "predictions": (f32, [2, 4],
                                                                                lambda g: _ints(g, 2, [2, 4]))})
    probs = (f32, [8], lambda g: _unit(g, [8]))
    thr = [0.15, 0.5, 0.85]
    for fn in ("true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall"):
        name = fn + "_at_thresholds"
        add(name, name, {"labels": bools, "predictions": probs}, {"thresholds": thr},
            collections=fn == "precision")
        add(name + "_weighted", name, {"labels": bools, "predictions": probs, "weights": w8}, {"thresholds": thr})
    lab2 = (i64, [4, 2], lambda g: _ints(g, 2, [4, 2]))
    prob2 = (f32, [4, 2], lambda g: _unit(g, [4, 2]))
    add("auc_roc", "auc", {"labels": lab2, "predictions": prob2}, collections=True)
    add("auc_roc_weighted", "auc", {"labels": lab2, "predictions": prob2,
                                    "weights": (f32, [4, 1], lambda g: _unit(g, [4, 1]))}, {"num_thresholds": 20})
    for curve in ("ROC", "PR"):
        for method in ("careful_interpolation", "trapezoidal", "minoring", "majoring"):
            add(f"auc_{curve}_{method}", "auc", {"labels": bools, "predictions": probs},
                {"curve": curve, "summation_method": method, "num_thresholds": 13})
    add("auc_explicit_thresholds", "auc", {"labels": bools, "predictions": probs, "weights": w8},
        {"thresholds": [0.7, 0.2, 0.45], "curve": "PR"})
    add("sensitivity_at_specificity", "sensitivity_at_specificity", {"labels": bools, "predictions": probs},
        {"specificity": 0.7})
    add("sensitivity_at_specificity_weighted", "sensitivity_at_specificity",
        {"labels": bools, "predictions": probs, "weights": w8}, {"specificity": 0.4, "num_thresholds": 30})
    add("specificity_at_sensitivity", "specificity_at_sensitivity", {"labels": bools, "predictions": probs},
        {"sensitivity": 0.6})
    add("specificity_at_sensitivity_weighted", "specificity_at_sensitivity",
        {"labels": bools, "predictions": probs, "weights": w8}, {"sensitivity": 0.3, "num_thresholds": 25})

    # top-k metrics: 4 examples, 6 classes
    scores = (f32, [4, 6], lambda g: g.permutation(24).reshape(4, 6).astype(np.float32) / 24)
    topl = (i64, [4, 3], lambda g: _ints(g, 6, [4, 3]))
    w4 = (f32, [4], lambda g: _unit(g, [4]))
    for fn in ("precision_at_k", "recall_at_k", "sparse_precision_at_k"):
        add(fn, fn, {"labels": topl, "predictions": scores}, {"k": 2}, collections=fn == "precision_at_k")
        add(fn + "_class", fn, {"labels": topl, "predictions": scores}, {"k": 3, "class_id": 2})
        add(fn + "_weighted", fn, {"labels": topl, "predictions": scores, "weights": w4}, {"k": 2})
        add(fn + "_rank1_labels", fn, {"labels": (i64, [4], lambda g: _ints(g, 6, [4])), "predictions": scores},
            {"k": 1})
    idx = (i64, [4, 3], lambda g: np.stack([g.permutation(6)[:3] for _ in range(4)]))
    for fn in ("precision_at_top_k", "recall_at_top_k"):
        add(fn, fn, {"labels": topl, "predictions_idx": idx}, {"k": 3})
        add(fn + "_no_k", fn, {"labels": topl, "predictions_idx": idx, "weights": w4})
        add(fn + "_class", fn, {"labels": topl, "predictions_idx": idx}, {"class_id": 4})
    add("precision_at_top_k_duplicates", "precision_at_top_k",
        {"labels": topl, "predictions_idx": (i64, [4, 3], lambda g: _ints(g, 6, [4, 3]))})
    apl = (i64, [4, 3], lambda g: _ints(g, 8, [4, 3]))  # some labels >= 6: cleaned to -1
    for fn in ("average_precision_at_k", "sparse_average_precision_at_k"):
        add(fn, fn, {"labels": apl, "predictions": scores}, {"k": 3}, collections=fn == "average_precision_at_k")
        add(fn + "_weighted", fn, {"labels": apl, "predictions": scores, "weights": w4}, {"k": 2})
    add("average_precision_at_k_rank1_labels", "average_precision_at_k",
        {"labels": (i64, [4], lambda g: _ints(g, 6, [4])), "predictions": scores}, {"k": 4})

    def sparse_labels(g):
        # rows of 0-3 distinct labels in [0, 6), as (indices, values, dense_shape [4, 3])
        indices, values = [], []
        for row in range(4):
            n = int(g.integers(0, 4))
            for j, v in enumerate(sorted(g.choice(6, size=n, replace=False))):
                indices.append([row, j])
                values.append(int(v))
        return {"indices": indices, "values": values, "dense_shape": [4, 3]}

    sl = ("sparse_int64", [4, 3], sparse_labels)
    add("precision_at_k_sparse", "precision_at_k", {"labels": sl, "predictions": scores}, {"k": 2})
    add("recall_at_k_sparse", "recall_at_k", {"labels": sl, "predictions": scores, "weights": w4}, {"k": 3})
    add("recall_at_k_sparse_class", "recall_at_k", {"labels": sl, "predictions": scores}, {"k": 3, "class_id": 1})
    add("average_precision_at_k_sparse", "average_precision_at_k", {"labels": sl, "predictions": scores},
        {"k": 3})
    del r
    return out


# (id, function, {input: (dtype, shape)}, kwargs, at run time?)
ERRORS = [
    ("accuracy_shape", "accuracy", {"labels": ("int64", [3]), "predictions": ("int64", [4])}, {}),
    ("mean_weights_broadcast", "mean", {"values": ("float32", [4, 3]), "weights": ("float32", [2])}, {}),
    ("mean_weights_dims", "mean", {"values": ("float32", [4, 3]), "weights": ("float32", [4, 2])}, {}),
    ("auc_curve", "auc", {"labels": ("bool", [4]), "predictions": ("float32", [4])}, {"curve": "XY"}),
    ("auc_summation", "auc", {"labels": ("bool", [4]), "predictions": ("float32", [4])},
     {"summation_method": "bogus"}),
    ("auc_num_thresholds_1", "auc", {"labels": ("bool", [4]), "predictions": ("float32", [4])},
     {"num_thresholds": 1}),
    ("auc_num_thresholds_0", "auc", {"labels": ("bool", [4]), "predictions": ("float32", [4])},
     {"num_thresholds": 0}),
    ("thresholds_key", "_confusion_matrix_at_thresholds", {}, {}),
    ("sensitivity_range", "sensitivity_at_specificity", {"labels": ("bool", [4]), "predictions": ("float32", [4])},
     {"specificity": 1.5}),
    ("specificity_range", "specificity_at_sensitivity", {"labels": ("bool", [4]), "predictions": ("float32", [4])},
     {"sensitivity": -0.1}),
    ("average_precision_k0", "average_precision_at_k",
     {"labels": ("int64", [2, 1]), "predictions": ("float32", [2, 5])}, {"k": 0}),
    ("top_k_labels_rank", "precision_at_top_k", {"labels": ("int64", [2, 3, 4]), "predictions_idx": ("int64", [2])},
     {}),
    ("mean_iou_shape", "mean_iou", {"labels": ("int64", [4]), "predictions": ("int64", [5])}, {"num_classes": 3}),
    ("precision_shape", "precision", {"labels": ("bool", [4]), "predictions": ("bool", [3])}, {}),
    ("auc_predictions_range", "auc", {"labels": ("bool", [4]), "predictions": ("float64", [4])}, {},
     {"labels": [True, False, True, False], "predictions": [0.1, 1.5, 0.3, 0.2]}),
    ("mean_iou_label_range", "mean_iou", {"labels": ("int64", [4]), "predictions": ("int64", [4])},
     {"num_classes": 3}, {"labels": [0, 1, 3, 2], "predictions": [0, 1, 2, 2]}),
]


def _np_dtype(name):
    return {"float32": np.float32, "int64": np.int64, "bool": np.bool_}[name]


def _to_json(x):
    if isinstance(x, dict):
        return {k: _to_json(v) for k, v in x.items()}
    return np.asarray(x).tolist()


def _run_case(tf, cid, fn, inputs, kwargs, opts, rng):
    graph = tf.Graph()
    with graph.as_default():
        feeds_ph, args = {}, {}
        for key, (dtype, shape, _) in inputs.items():
            if dtype.startswith("sparse_"):
                ph = tf.sparse_placeholder(tf.as_dtype(dtype[7:]), shape=shape, name=key)
            else:
                ph = tf.placeholder(tf.as_dtype(dtype), shape=shape, name=key)
            feeds_ph[key] = ph
            args[key] = ph
        kw = dict(kwargs)
        if opts.get("collections"):
            kw.update(metrics_collections=["metric_values"], updates_collections=["metric_updates"])
        value, update = getattr(tf.metrics, fn)(**args, **kw)
        rec = {
            "id": cid, "fn": fn, "kwargs": kwargs, "collections": bool(opts.get("collections")),
            "inputs": {k: {"dtype": d, "shape": s} for k, (d, s, _) in inputs.items()},
            "value_name": value.name, "update_name": update.name,
            "value_dtype": value.dtype.name,
            "local_variables": [v.name for v in tf.local_variables()],
            "metric_variables": [v.name for v in graph.get_collection(tf.GraphKeys.METRIC_VARIABLES)],
            "global_variables": [v.name for v in tf.global_variables()],
            "batches": [], "updates": [], "values": [],
        }
        if opts.get("collections"):
            rec["metric_values"] = [t.name for t in graph.get_collection("metric_values")]
            rec["metric_updates"] = [t.name for t in graph.get_collection("metric_updates")]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            rec["initial_value"] = _to_json(sess.run(value))
            for _ in range(BATCHES):
                batch, feed = {}, {}
                for key, (dtype, shape, maker) in inputs.items():
                    if dtype.startswith("sparse_"):
                        sp = maker(rng)
                        batch[key] = sp
                        feed[feeds_ph[key]] = tf.SparseTensorValue(
                            np.array(sp["indices"], np.int64).reshape(-1, 2), np.array(sp["values"], np.int64),
                            np.array(sp["dense_shape"], np.int64))
                    else:
                        arr = np.asarray(maker(rng)).astype(_np_dtype(dtype)).reshape(shape)
                        batch[key] = arr.tolist()
                        feed[feeds_ph[key]] = arr
                rec["batches"].append(batch)
                rec["updates"].append(_to_json(sess.run(update, feed)))
                rec["values"].append(_to_json(sess.run(value)))
    return rec


def _message(msg):
    """The lines of an error's text that say what failed (not TensorFlow's execution banner)."""
    lines = [ln.strip() for ln in msg.split("\n") if "assertion failed" in ln]
    return lines[0] if lines else msg.split("\n")[0]


def _run_error(tf, case):
    cid, fn, inputs, kwargs = case[:4]
    feed_values = case[4] if len(case) > 4 else None
    graph = tf.Graph()
    with graph.as_default():
        phs = {k: tf.placeholder(tf.as_dtype(d), shape=s, name=k) for k, (d, s) in inputs.items()}
        try:
            if fn == "_confusion_matrix_at_thresholds":
                from tensorflow.python.ops import metrics_impl

                metrics_impl._confusion_matrix_at_thresholds(
                    tf.constant([True]), tf.constant([0.5]), [0.5], includes=("tp", "xx"))
                raise AssertionError("no error")
            value, update = getattr(tf.metrics, fn)(**phs, **kwargs)
            if feed_values is None:
                return {"id": cid, "fn": fn, "inputs": inputs, "kwargs": kwargs, "error": None}
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                sess.run(update, {phs[k]: v for k, v in feed_values.items()})
            return {"id": cid, "fn": fn, "inputs": inputs, "kwargs": kwargs, "feed": feed_values, "error": None}
        except (ValueError, TypeError, tf.errors.OpError) as e:
            msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
            return {"id": cid, "fn": fn, "inputs": inputs, "kwargs": kwargs, "feed": feed_values,
                    "error": type(e).__name__, "message": _message(msg)}


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261128)
    cases = [_run_case(tf, *c, rng) for c in _cases()]
    errors = [_run_error(tf, c) for c in ERRORS]
    signatures = {
        name: [[p.name, None if p.default is inspect.Parameter.empty else p.default]
               for p in inspect.signature(getattr(tf.metrics, name)).parameters.values()]
        for name in dir(tf.metrics) if not name.startswith("_")
    }
    doc = {"tensorflow": tf.__version__, "numpy": np.__version__, "signatures": signatures, "cases": cases,
           "errors": errors}
    (OUT / "metrics.json").write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
    (OUT / "README.md").write_text(
        "# tf.metrics fixtures\n\nWritten by `tools/make_metrics_fixtures.py` with TensorFlow "
        f"{tf.__version__} (`tf.compat.v1.metrics`, graph mode, NumPy {np.__version__}): per case the "
        "inputs of three batches, the update op's result after each, the value read after each, "
        "variable and tensor names, collections, the signatures; error cases with TensorFlow's exception class and "
        "text (for run-time errors the line of the failed assertion). Used by `tests/python/test_metrics.py`, which never imports TensorFlow.\n")
    print(f"{len(cases)} cases, {len(errors)} error cases")


if __name__ == "__main__":
    main()
