"""TF1 streaming evaluation with tf.metrics, as eval scripts and Estimator model_fns used it: a classifier
trained a few steps, then an eval loop over batches running only the update ops (tf.metrics.accuracy,
precision, recall, auc (ROC and PR, careful_interpolation), mean, mean_per_class_accuracy, mean_iou,
precision_at_k/recall_at_k on sparse labels, false_negatives, true_positives_at_thresholds,
mean_squared_error with weights, root_mean_squared_error, percentage_below, mean_tensor), the values read
once at the end; the metric variables in tf.GraphKeys.LOCAL_VARIABLES / METRIC_VARIABLES re-zeroed by
tf.local_variables_initializer (or by a variables_initializer over the ones of one name scope, the
"reset one metric" recipe) for a second pass over other data; metrics_collections/updates_collections; and
tf.confusion_matrix over all batches.

Weights start from numpy values: every number is deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(60)
    n_classes = 4
    X = rng.randn(96, 5).astype(np.float32)
    labels_np = (np.argmax(X[:, :4] + 0.3 * rng.randn(96, 4), axis=1)).astype(np.int64)

    x = tf.placeholder(tf.float32, [None, 5], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    w = tf.Variable(fixed_init([5, n_classes], 600), name="w")
    b = tf.Variable(tf.zeros([n_classes]), name="b")
    logits = tf.matmul(x, w) + b
    probs = tf.nn.softmax(logits)
    predictions = tf.argmax(logits, axis=1)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

    is_zero = tf.equal(labels, 0)
    p_zero = probs[:, 0]
    with tf.name_scope("eval"):
        metrics = {
            "accuracy": tf.metrics.accuracy(labels, predictions),
            "precision": tf.metrics.precision(is_zero, tf.equal(predictions, 0)),
            "recall": tf.metrics.recall(is_zero, tf.equal(predictions, 0)),
            "auc": tf.metrics.auc(is_zero, p_zero, num_thresholds=50),
            "auc_pr": tf.metrics.auc(is_zero, p_zero, num_thresholds=50, curve="PR",
                                     summation_method="careful_interpolation"),
            "mean_loss": tf.metrics.mean(loss),
            "mean_per_class": tf.metrics.mean_per_class_accuracy(labels, predictions, n_classes),
            "mean_iou": tf.metrics.mean_iou(labels, predictions, n_classes),
            "precision_at_2": tf.metrics.precision_at_k(labels, logits, k=2),
            "recall_at_2": tf.metrics.recall_at_k(labels, logits, k=2),
            "false_negatives": tf.metrics.false_negatives(is_zero, tf.equal(predictions, 0)),
            "tp_at_thresholds": tf.metrics.true_positives_at_thresholds(is_zero, p_zero, [0.25, 0.5, 0.75]),
            "mse_weighted": tf.metrics.mean_squared_error(
                tf.one_hot(labels, n_classes), probs, weights=tf.reshape(tf.cast(labels + 1, tf.float32), [-1, 1])
            ),
            "rmse": tf.metrics.root_mean_squared_error(tf.one_hot(labels, n_classes), probs),
            "below_half": tf.metrics.percentage_below(p_zero, 0.5),
            "mean_tensor": tf.metrics.mean_tensor(tf.reduce_mean(probs, axis=0)),
        }
    with tf.name_scope("collected"):
        coll_value, coll_update = tf.metrics.accuracy(
            labels, predictions, metrics_collections=["my_metrics"], updates_collections=["my_updates"],
            name="acc_collected",
        )
    update_ops = {k: v[1] for k, v in metrics.items()}
    value_ops = {k: v[0] for k, v in metrics.items()}
    accuracy_vars = tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES, scope="eval/accuracy")
    reset_accuracy = tf.variables_initializer(accuracy_vars)
    out = {
        "local_variables": sorted(v.op.name for v in tf.local_variables()),
        "metric_variables": sorted(v.op.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)),
        "value_names": {k: v.name for k, v in value_ops.items()},
        "update_names": {k: v.name for k, v in update_ops.items()},
        "my_metrics": [t.name for t in tf.get_collection("my_metrics")],
        "my_updates": [t.name for t in tf.get_collection("my_updates")],
        "accuracy_vars": sorted(v.op.name for v in accuracy_vars),
    }

    def flat(v):
        return np.asarray(v, np.float64).ravel().tolist()

    batches = np.split(np.arange(96), 4)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        losses = []
        for _ in range(steps):
            _, l = sess.run([train_op, loss], {x: X[:64], labels: labels_np[:64]})
            losses.append(float(l))
        out["losses"] = losses
        first_updates = None
        for idx in batches[:3]:
            upd = sess.run(update_ops, {x: X[idx], labels: labels_np[idx]})
            if first_updates is None:
                first_updates = {k: flat(v) for k, v in upd.items()}
        out["first_updates"] = first_updates
        out["pass1"] = {k: flat(v) for k, v in sess.run(value_ops).items()}
        sess.run(reset_accuracy)
        out["accuracy_after_reset"] = float(sess.run(value_ops["accuracy"]))
        out["auc_not_reset"] = float(sess.run(value_ops["auc"]))
        sess.run(tf.local_variables_initializer())
        sess.run(update_ops, {x: X[batches[3]], labels: labels_np[batches[3]]})
        sess.run(coll_update, {x: X[batches[3]], labels: labels_np[batches[3]]})
        out["pass2"] = {k: flat(v) for k, v in sess.run(value_ops).items()}
        out["collected"] = float(sess.run(coll_value))
        preds_all = sess.run(predictions, {x: X})
        cm = tf.confusion_matrix(labels_np, preds_all, num_classes=n_classes)
        out["confusion"] = sess.run(cm).tolist()
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
