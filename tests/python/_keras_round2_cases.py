"""tf.keras pieces run the same way by ferroflow (tests/python/test_keras_round2.py) and by TensorFlow 2.21's
tf_keras in graph mode (tools/make_keras_round2_fixtures.py writes tests/fixtures/keras/round2/<case>.npz).

Each case takes the module (``ferroflow`` or ``tensorflow.compat.v1``) and returns a dict of numpy arrays (or
strings) to compare: stateful metric objects used on their own (update_state / result / reset_states), ...
"""

import numpy as np


def _run_metric(tf, sess, metric, batches):
    """The metric's result after each batch (``(y_true, y_pred, sample_weight)``), then after reset_states."""
    updates = [metric.update_state(y, p, sample_weight=w) for y, p, w in batches]
    result = metric.result()
    sess.run(tf.variables_initializer(metric.variables))
    out = []
    for u in updates:
        sess.run(u)
        out.append(np.asarray(sess.run(result), np.float64))
    metric.reset_states()
    out.append(np.asarray(sess.run(result), np.float64))
    return out


def standalone_metrics(tf):
    """Every confusion-matrix metric on its own over two batches (the second weighted), reset at the end; the
    names TF gives metric objects made without one; a metric called (update and result in one tensor)."""
    k = tf.keras
    rng = np.random.RandomState(0)
    y = (rng.rand(30, 2) > 0.5).astype(np.float32)
    p = rng.rand(30, 2).astype(np.float32)
    w = rng.rand(30).astype(np.float32)
    binary = [(y[:12], p[:12], None), (y[12:], p[12:], w[12:])]
    metrics = [
        k.metrics.Precision(), k.metrics.Recall(thresholds=[0.2, 0.7]), k.metrics.AUC(), k.metrics.AUC(curve="PR"),
        k.metrics.AUC(num_thresholds=17, summation_method="minoring"),
        k.metrics.AUC(multi_label=True, num_thresholds=50),
        k.metrics.AUC(curve="PR", summation_method="majoring", thresholds=[0.3, 0.5]),
        k.metrics.AUC(curve="PRGAIN", num_thresholds=20), k.metrics.AUC(from_logits=True, num_thresholds=25),
        k.metrics.AUC(multi_label=True, label_weights=[0.3, 1.2], curve="PR"),
        k.metrics.AUC(label_weights=[0.5, 2.0], num_thresholds=30),
        k.metrics.TruePositives(), k.metrics.FalseNegatives(thresholds=[0.1, 0.9]), k.metrics.TrueNegatives(),
        k.metrics.FalsePositives(thresholds=0.35),
        k.metrics.PrecisionAtRecall(0.6), k.metrics.SensitivityAtSpecificity(0.5, num_thresholds=30),
        k.metrics.SpecificityAtSensitivity(0.4), k.metrics.RecallAtPrecision(0.5),
        k.metrics.Precision(top_k=1), k.metrics.Recall(class_id=1), k.metrics.Precision(top_k=1, thresholds=[0.4]),
    ]
    sess = k.backend.get_session()
    out = {"names": np.array([m.name for m in metrics])}
    for i, m in enumerate(metrics):
        for j, value in enumerate(_run_metric(tf, sess, m, binary)):
            out[f"m{i}_{j}"] = value
    labels = rng.randint(0, 3, 20)
    preds = rng.randint(0, 3, 20).astype(np.float32)
    iou = k.metrics.MeanIoU(num_classes=4)
    for j, value in enumerate(_run_metric(tf, sess, iou, [(labels, preds, None), (labels[::-1], preds, w[:20])])):
        out[f"iou_{j}"] = value
    onehot = np.eye(3, dtype=np.float32)[labels]
    probs = rng.rand(20, 3).astype(np.float32)
    iou2 = k.metrics.MeanIoU(num_classes=3, sparse_y_true=False, sparse_y_pred=False, name="iou_onehot")
    out["iou_onehot"] = _run_metric(tf, sess, iou2, [(onehot, probs, None)])[0]
    top = k.metrics.TopKCategoricalAccuracy(k=2)
    out["top_k"] = _run_metric(tf, sess, top, [(onehot, probs, None), (onehot[:5], probs[5:10], w[:5])])[1]
    called = k.metrics.AUC(name="called")
    value = called(y[:, :1], p[:, :1])
    sess.run(tf.variables_initializer(called.variables))
    out["called"] = np.asarray(sess.run(value), np.float64)
    return out


CASES = {"standalone_metrics": standalone_metrics}
