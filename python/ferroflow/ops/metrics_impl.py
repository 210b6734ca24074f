"""``tf.compat.v1.metrics``: streaming metrics over local variables.

Each metric creates its accumulators as local, non-trainable variables (collections
``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``) under its own scope, with TensorFlow's names, and
returns ``(value, update_op)``: running ``update_op`` folds one batch into the accumulators and
returns the metric over everything seen so far; ``value`` reads the accumulators without changing
them. Start (or restart) a stream with ``local_variables_initializer()``.

The top-k metrics compare sets of class ids per example. TensorFlow does this with its set ops
(``set_intersection``/``set_difference``/``set_size``); here the same counts come from pairwise
comparisons along the last dimension (an id counts once however often it appears, as in a set),
which needs no sparse set kernels and handles dense and ``SparseTensor`` labels alike.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, sparse_tensor
from ferroflow.framework.behavior import executing_eagerly
from ferroflow.framework.constant_op import constant
from ferroflow.framework.tensor_shape import dimension_value
from ferroflow.ops import (
    array_ops,
    check_ops,
    linalg_ops,
    math_ops,
    nn_ops,
    sparse_ops,
    state_ops,
    variable_scope,
)
from ferroflow.ops.losses_impl import _assert_broadcastable, _broadcast_weights
from ferroflow.ops.losses_impl import _remove_squeezable_dimensions as _squeeze_labels_predictions
from ferroflow.ops.special_math_ops import confusion_matrix
from ferroflow.ops.variables import Variable, VariableAggregation, VariableSynchronization
from ferroflow.platform import tf_logging as logging

__all__ = [
    "accuracy", "auc", "average_precision_at_k", "false_negatives", "false_negatives_at_thresholds",
    "false_positives", "false_positives_at_thresholds", "mean", "mean_absolute_error",
    "mean_cosine_distance", "mean_iou", "mean_per_class_accuracy", "mean_relative_error",
    "mean_squared_error", "mean_tensor", "percentage_below", "precision", "precision_at_k",
    "precision_at_thresholds", "precision_at_top_k", "recall", "recall_at_k", "recall_at_thresholds",
    "recall_at_top_k", "root_mean_squared_error", "sensitivity_at_specificity",
    "sparse_average_precision_at_k", "sparse_precision_at_k", "specificity_at_sensitivity",
    "true_negatives", "true_negatives_at_thresholds", "true_positives", "true_positives_at_thresholds",
]

_KEPSILON = 1e-7


# -- shared pieces -----------------------------------------------------------------------------------


def _graph_only(fn_name):
    if executing_eagerly():
        raise RuntimeError(f"tf.metrics.{fn_name} is not supported when eager execution is enabled.")


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialised local accumulator in LOCAL_VARIABLES and METRIC_VARIABLES."""
    dtype = dtypes.as_dtype(dtype)
    return Variable(
        lambda: array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        synchronization=VariableSynchronization.ON_READ,
        aggregation=VariableAggregation.SUM,
        name=name,
    )


def _collect(collections, tensor):
    if collections:
        ops.add_to_collections(collections, tensor)
    return tensor


def _append_unit_dim_if(x, condition):
    """``x`` with a trailing size-1 dimension where the scalar bool ``condition`` holds at run time."""
    extra = array_ops.fill(array_ops.stack([math_ops.cast(condition, dtypes.int32)]), 1)
    return array_ops.reshape(x, array_ops.concat([array_ops.shape(x), extra], 0))


def _align(predictions, labels, weights):
    """Squeezes a trailing unit dimension off labels or predictions so that their ranks agree, then
    brings ``weights`` to the predictions' rank where it is one more (squeeze) or one less (expand)."""
    predictions = ops.convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions, _ = _squeeze_labels_predictions(labels, predictions)
        predictions.get_shape().assert_is_compatible_with(labels.get_shape())
    if weights is None:
        return predictions, labels, None
    weights = ops.convert_to_tensor(weights)
    w_rank, p_rank = weights.get_shape().ndims, predictions.get_shape().ndims
    if w_rank == 0:
        return predictions, labels, weights
    if w_rank is not None and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, [-1])
        return predictions, labels, weights
    # Unknown ranks: decide at run time (a scalar weight is left alone).
    rank_diff = array_ops.rank(weights) - array_ops.rank(predictions)
    not_scalar = math_ops.not_equal(array_ops.rank(weights), 0)
    if w_rank is None or weights.get_shape().dims[-1].is_compatible_with(1):
        shape = array_ops.shape(weights)
        keep = array_ops.size(shape) - math_ops.cast(
            math_ops.logical_and(not_scalar, math_ops.equal(rank_diff, 1)), dtypes.int32)
        weights = array_ops.reshape(weights, array_ops.slice(shape, [0], array_ops.stack([keep])))
    weights = _append_unit_dim_if(weights, math_ops.logical_and(not_scalar, math_ops.equal(rank_diff, -1)))
    return predictions, labels, weights


def _as_bool_pair(predictions, labels, weights):
    return _align(math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights)


# -- means ---------------------------------------------------------------------------------------------


def _weighted_mean(values, weights, metrics_collections, updates_collections, name, default_name, per_element):
    """The running (weighted) mean of ``values``: over all elements (``mean``) or per position
    (``mean_tensor``)."""
    with variable_scope.variable_scope(name, default_name, (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        suffix, shape = ("_tensor", values.get_shape()) if per_element else ("", [])
        total = metric_variable(shape, dtypes.float32, name="total" + suffix)
        count = metric_variable(shape, dtypes.float32, name="count" + suffix)
        # what one batch adds to `count`: per position (mean_tensor) or in all (mean)
        batch_count = array_ops.ones_like(values) if per_element else None
        if weights is not None:
            values, _, weights = _align(values, None, weights)
            weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            if per_element:
                batch_count = math_ops.multiply(batch_count, weights)
            else:
                batch_count = math_ops.reduce_sum(weights)
        elif not per_element:
            batch_count = math_ops.cast(array_ops.size(values), dtypes.float32)
        new_total = state_ops.assign_add(total, values if per_element else math_ops.reduce_sum(values))
        # (TensorFlow also makes the count's update wait for `values`; nothing reads that order.)
        new_count = state_ops.assign_add(count, batch_count)
        value = _collect(metrics_collections, math_ops.div_no_nan(total, math_ops.maximum(count, 0), name="value"))
        update = math_ops.div_no_nan(new_total, math_ops.maximum(new_count, 0), name="update_op")
        return value, _collect(updates_collections, update)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The running weighted mean of all elements of ``values``."""
    _graph_only("mean")
    return _weighted_mean(values, weights, metrics_collections, updates_collections, name, "mean", False)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The running weighted mean of ``values`` position by position (a tensor of ``values``' shape)."""
    _graph_only("mean_tensor")
    return _weighted_mean(values, weights, metrics_collections, updates_collections, name, "mean", True)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The running (weighted) fraction of ``predictions`` equal to ``labels``."""
    _graph_only("accuracy")
    predictions, labels, weights = _align(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    hits = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(hits, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    """The running weighted mean of ``|predictions - labels|``."""
    _graph_only("mean_absolute_error")
    predictions, labels, weights = _align(predictions, labels, weights)
    errors = math_ops.abs(predictions - labels)
    return mean(errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    """The running weighted mean of ``(predictions - labels)**2``."""
    _graph_only("mean_squared_error")
    predictions, labels, weights = _align(predictions, labels, weights)
    errors = math_ops.squared_difference(labels, predictions)
    return mean(errors, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The square root of the running weighted mean squared error."""
    _graph_only("root_mean_squared_error")
    predictions, labels, weights = _align(predictions, labels, weights)
    mse, mse_update = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    value = _collect(metrics_collections, math_ops.sqrt(mse))
    return value, _collect(updates_collections, math_ops.sqrt(mse_update))


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """One minus the running weighted mean of the dot products of ``labels`` and ``predictions``
    along ``dim`` (both expected unit-normalised there)."""
    _graph_only("mean_cosine_distance")
    predictions, labels, weights = _align(predictions, labels, weights)
    dots = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_dot, mean_dot_update = mean(dots, weights, None, None, name or "mean_cosine_distance")
    value = _collect(metrics_collections, math_ops.subtract(1.0, mean_dot))
    return value, _collect(updates_collections, math_ops.subtract(1.0, mean_dot_update))


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The running weighted mean of ``|labels - predictions| / normalizer`` (0 where ``normalizer`` is 0)."""
    _graph_only("mean_relative_error")
    predictions, labels, weights = _align(predictions, labels, weights)
    predictions, normalizer, _ = _squeeze_labels_predictions(predictions, normalizer)
    predictions.get_shape().assert_is_compatible_with(normalizer.get_shape())
    relative = array_ops.where(
        math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
        math_ops.divide(math_ops.abs(labels - predictions), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None,
                     name=None):
    """The running weighted fraction of ``values`` below ``threshold``."""
    _graph_only("percentage_below")
    below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


# -- per-class metrics ---------------------------------------------------------------------------------


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of each class's running (weighted) accuracy."""
    _graph_only("mean_per_class_accuracy")
    with variable_scope.variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = math_ops.cast(labels, dtypes.int64)
        predictions = ops.convert_to_tensor(predictions)
        if labels.get_shape().ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if predictions.get_shape().ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        predictions.get_shape().assert_is_compatible_with(labels.get_shape())
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        seen = array_ops.ones([array_ops.size(labels)], dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        hits = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = ops.convert_to_tensor(weights)
            if weights.get_shape().ndims > 1:
                weights = array_ops.reshape(weights, [-1])
            weights = math_ops.cast(weights, dtypes.float32)
            hits *= weights
            seen *= weights
        new_total = state_ops.scatter_add(total, labels, seen)
        new_count = state_ops.scatter_add(count, labels, hits)
        per_class = math_ops.div_no_nan(count, math_ops.maximum(total, 0))
        value = _collect(metrics_collections, math_ops.reduce_mean(per_class, name="mean_accuracy"))
        update = math_ops.div_no_nan(new_count, math_ops.maximum(new_total, 0), name="update_op")
        return value, _collect(updates_collections, update)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """The mean over classes (those seen in labels or predictions) of intersection over union, from a
    running confusion matrix; ``update_op`` returns that matrix."""
    _graph_only("mean_iou")
    with variable_scope.variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions = ops.convert_to_tensor(predictions)
        labels = ops.convert_to_tensor(labels)
        predictions.get_shape().assert_is_compatible_with(labels.get_shape())
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        flat = [math_ops.cast(t, dtypes.int64) for t in (labels, predictions)]
        flat = [array_ops.reshape(t, [-1]) if t.get_shape().ndims > 1 else t for t in flat]
        if weights is not None:
            weights = ops.convert_to_tensor(weights)
            if weights.get_shape().ndims > 1:
                weights = array_ops.reshape(weights, [-1])
        batch_cm = confusion_matrix(flat[0], flat[1], num_classes, weights=weights, dtype=dtypes.float64)
        update = state_ops.assign_add(total_cm, batch_cm)

        predicted = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
        actual = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
        overlap = math_ops.cast(linalg_ops.diag_part(total_cm), dtypes.float32)
        union = predicted + actual - overlap
        present = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(union, 0), dtype=dtypes.float32))
        union = array_ops.where(math_ops.greater(union, 0), union, array_ops.ones_like(union))
        iou = math_ops.divide(overlap, union)
        value = array_ops.where(
            math_ops.greater(present, 0), math_ops.reduce_sum(iou, name="mean_iou") / present, 0.0)
        _collect(metrics_collections, value)
        return value, _collect(updates_collections, update)


# -- counts of binary outcomes ----------------------------------------------------------------------------


def _count_true(condition, weights, metrics_collections, updates_collections):
    """A running (weighted) count of the true elements of the bool tensor ``condition``."""
    check_ops.assert_type(condition, dtypes.bool)
    count = metric_variable([], dtypes.float32, name="count")
    amounts = math_ops.cast(condition, dtypes.float32)
    if weights is not None:
        with ops.control_dependencies((check_ops.assert_rank_in(weights, (0, array_ops.rank(amounts))),)):
            weights = math_ops.cast(weights, dtypes.float32)
            amounts = math_ops.multiply(amounts, weights)
    value = _collect(metrics_collections, array_ops.identity(count))
    update = state_ops.assign_add(count, math_ops.reduce_sum(amounts))
    return value, _collect(updates_collections, update)


# (label, prediction) of each outcome
_OUTCOMES = {
    "true_positives": (True, True),
    "false_positives": (False, True),
    "true_negatives": (False, False),
    "false_negatives": (True, False),
}


def _outcome_count(outcome, labels, predictions, weights, metrics_collections, updates_collections, name):
    _graph_only(outcome)
    want_label, want_prediction = _OUTCOMES[outcome]
    with variable_scope.variable_scope(name, outcome, (predictions, labels, weights)):
        predictions, labels, weights = _as_bool_pair(predictions, labels, weights)
        hit = math_ops.logical_and(math_ops.equal(labels, want_label), math_ops.equal(predictions, want_prediction))
        return _count_true(hit, weights, metrics_collections, updates_collections)


def true_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    """The running weighted count of elements where both labels and predictions are true."""
    return _outcome_count("true_positives", labels, predictions, weights, metrics_collections,
                          updates_collections, name)


def false_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    """The running weighted count of elements predicted true whose label is false."""
    return _outcome_count("false_positives", labels, predictions, weights, metrics_collections,
                          updates_collections, name)


def true_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    """The running weighted count of elements where both labels and predictions are false."""
    return _outcome_count("true_negatives", labels, predictions, weights, metrics_collections,
                          updates_collections, name)


def false_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    """The running weighted count of elements predicted false whose label is true."""
    return _outcome_count("false_negatives", labels, predictions, weights, metrics_collections,
                          updates_collections, name)


def _ratio_or_zero(num, other, name):
    """``num / (num + other)``, or 0 while both are 0."""
    denominator = num + other
    return array_ops.where(math_ops.greater(denominator, 0), math_ops.divide(num, denominator), 0.0, name)


def _precision_or_recall(kind, other, labels, predictions, weights, metrics_collections, updates_collections,
                         name):
    with variable_scope.variable_scope(name, kind, (predictions, labels, weights)):
        predictions, labels, weights = _as_bool_pair(predictions, labels, weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        rest, rest_update = other(labels, predictions, weights)
        value = _collect(metrics_collections, _ratio_or_zero(tp, rest, "value"))
        return value, _collect(updates_collections, _ratio_or_zero(tp_update, rest_update, "update_op"))


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """Running ``tp / (tp + fp)`` of boolean predictions (0 before any positive prediction)."""
    _graph_only("precision")
    return _precision_or_recall("precision", false_positives, labels, predictions, weights, metrics_collections,
                                updates_collections, name)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """Running ``tp / (tp + fn)`` of boolean predictions (0 before any positive label)."""
    if executing_eagerly():
        raise RuntimeError("tf.metrics.recall is not supported is not supported when eager execution is enabled.")
    return _precision_or_recall("recall", false_negatives, labels, predictions, weights, metrics_collections,
                                updates_collections, name)


# -- counts at thresholds -------------------------------------------------------------------------------

_THRESHOLD_COUNTS = (  # key, variable name, label is positive, prediction is above the threshold
    ("tp", "true_positives", True, True),
    ("fn", "false_negatives", True, False),
    ("tn", "true_negatives", False, False),
    ("fp", "false_positives", False, True),
)


def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None, includes=None):
    """Running weighted tp/fn/tn/fp counts (the keys in ``includes``), one per threshold, where a
    prediction above a threshold counts as positive. Returns ``(variables, update ops)`` by key."""
    keys = tuple(key for key, *_ in _THRESHOLD_COUNTS)
    if includes is None:
        includes = keys
    for key in includes:
        if key not in keys:
            raise ValueError(f"Invalid key: {key}")
    predictions = ops.convert_to_tensor(predictions)
    in_range = [
        check_ops.assert_greater_equal(predictions, math_ops.cast(0.0, dtype=predictions.dtype),
                                       message="predictions must be in [0, 1]"),
        check_ops.assert_less_equal(predictions, math_ops.cast(1.0, dtype=predictions.dtype),
                                    message="predictions must be in [0, 1]"),
    ]
    # As in TensorFlow, the range checks guard the casts: float32 predictions skip them.
    with ops.control_dependencies(in_range):
        predictions, labels, weights = _align(
            math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtype=dtypes.bool), weights)
    num_thresholds = len(thresholds)
    # [num_thresholds, num_predictions] grids
    above = math_ops.greater(array_ops.reshape(predictions, [1, -1]),
                             array_ops.expand_dims(constant(thresholds, dtype=dtypes.float32), [1]))
    positive = array_ops.reshape(math_ops.cast(labels, dtype=dtypes.bool), [1, -1])
    row_weights = None
    if weights is not None:
        weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        row_weights = array_ops.reshape(weights, [1, -1])
    variables, updates = {}, {}
    for key, var_name, label_positive, predicted_positive in _THRESHOLD_COUNTS:
        if key not in includes:
            continue
        var = metric_variable([num_thresholds], dtypes.float32, name=var_name)
        label_ok = positive if label_positive else math_ops.logical_not(positive)
        prediction_ok = above if predicted_positive else math_ops.logical_not(above)
        hits = math_ops.cast(math_ops.logical_and(label_ok, prediction_ok), dtypes.float32)
        if row_weights is not None:
            hits *= row_weights
        updates[key] = state_ops.assign_add(var, math_ops.reduce_sum(hits, 1))
        variables[key] = var
    return variables, updates


def _count_at_thresholds(key, labels, predictions, thresholds, weights, metrics_collections,
                         updates_collections, name):
    scope_name = dict((k, n) for k, n, *_ in _THRESHOLD_COUNTS)[key]
    _graph_only(scope_name + "_at_thresholds")
    with variable_scope.variable_scope(name, scope_name, (predictions, labels, weights)):
        variables, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=weights,
                                                             includes=(key,))
        value = _collect(metrics_collections, array_ops.identity(variables[key]))
        return value, _collect(updates_collections, updates[key])


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                 updates_collections=None, name=None):
    """Running weighted true positives for each threshold (positive: prediction above it)."""
    return _count_at_thresholds("tp", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Running weighted false positives for each threshold."""
    return _count_at_thresholds("fp", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                 updates_collections=None, name=None):
    """Running weighted true negatives for each threshold."""
    return _count_at_thresholds("tn", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Running weighted false negatives for each threshold."""
    return _count_at_thresholds("fn", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def _ratio_at_thresholds(kind, other, labels, predictions, thresholds, weights, metrics_collections,
                         updates_collections, name):
    _graph_only(kind + "_at_thresholds")
    with variable_scope.variable_scope(name, kind + "_at_thresholds", (predictions, labels, weights)):
        variables, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                                             includes=("tp", other))

        def ratio(tp, rest, suffix):
            return math_ops.divide(tp, _KEPSILON + tp + rest, name=f"{kind}_{suffix}")

        value = _collect(metrics_collections, ratio(variables["tp"], variables[other], "value"))
        return value, _collect(updates_collections, ratio(updates["tp"], updates[other], "update_op"))


def precision_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """Running weighted precision for each threshold: ``tp / (tp + fp + 1e-7)``."""
    return _ratio_at_thresholds("precision", "fp", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def recall_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """Running weighted recall for each threshold: ``tp / (tp + fn + 1e-7)``."""
    return _ratio_at_thresholds("recall", "fn", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def _evenly_spaced_thresholds(num_thresholds, top):
    """``num_thresholds`` thresholds: just below 0, the evenly spaced interior points, then ``top``."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [top]


_SUMMATION_METHODS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC or precision-recall curve, approximated over ``num_thresholds`` thresholds
    (or the given ``thresholds`` plus one just below 0 and one just above 1) by a Riemann sum."""
    _graph_only("auc")
    with variable_scope.variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if thresholds is not None:
            cuts = [0.0 - _KEPSILON] + sorted(thresholds) + [1.0 + _KEPSILON]
            num_thresholds = len(cuts)
        else:
            cuts = _evenly_spaced_thresholds(num_thresholds, 1.0 + _KEPSILON)
        variables, updates = _confusion_matrix_at_thresholds(labels, predictions, cuts, weights)
        epsilon = 1e-6
        n = num_thresholds

        def careful_pr_auc(tp, fp, fn):
            # Precision is interpolated linearly in the number of predicted positives between
            # neighbouring thresholds, and the area integrated exactly over each piece.
            d_tp = tp[: n - 1] - tp[1:]
            predicted = tp + fp
            slope = math_ops.div_no_nan(d_tp, math_ops.maximum(predicted[: n - 1] - predicted[1:], 0),
                                        name="prec_slope")
            intercept = tp[1:] - math_ops.multiply(slope, predicted[1:])
            ratio = array_ops.where(
                math_ops.logical_and(predicted[: n - 1] > 0, predicted[1:] > 0),
                math_ops.div_no_nan(predicted[: n - 1], math_ops.maximum(predicted[1:], 0),
                                    name="recall_relative_ratio"),
                array_ops.ones_like(predicted[1:]))
            pieces = math_ops.div_no_nan(slope * (d_tp + intercept * math_ops.log(ratio)),
                                         math_ops.maximum(tp[1:] + fn[1:], 0), name="pr_auc_increment")
            return math_ops.reduce_sum(pieces, name="interpolate_pr_auc")

        def area(tp, fn, tn, fp, op_name):
            if curve == "PR":
                if summation_method == "trapezoidal":
                    logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; please switch to "
                                    '"careful_interpolation" instead.')
                elif summation_method == "careful_interpolation":
                    return careful_pr_auc(tp, fp, fn)
            tpr = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.divide(fp, fp + tn + epsilon), tpr
            else:
                x, y = tpr, math_ops.divide(tp + epsilon, tp + fp + epsilon)
            widths = x[: n - 1] - x[1:]
            if summation_method in ("trapezoidal", "careful_interpolation"):
                heights = (y[: n - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                heights = math_ops.minimum(y[: n - 1], y[1:])
            elif summation_method == "majoring":
                heights = math_ops.maximum(y[: n - 1], y[1:])
            else:
                raise ValueError(f"Invalid summation_method: {summation_method} summation_method should be "
                                 "'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring'.")
            return math_ops.reduce_sum(math_ops.multiply(widths, heights), name=op_name)

        value = area(variables["tp"], variables["fn"], variables["tn"], variables["fp"], "value")
        _collect(metrics_collections, value)
        update = area(updates["tp"], updates["fn"], updates["tn"], updates["fp"], "update_op")
        return value, _collect(updates_collections, update)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The sensitivity (recall) at the threshold whose specificity is closest to ``specificity``."""
    _graph_only("sensitivity_at_specificity")
    if specificity < 0 or specificity > 1:
        raise ValueError(f"`specificity` must be in the range [0, 1]. Currently, `specificity` got {specificity}.")
    with variable_scope.variable_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        cuts = _evenly_spaced_thresholds(num_thresholds, 1.0 + _KEPSILON)
        variables, updates = _confusion_matrix_at_thresholds(labels, predictions, cuts, weights)

        def pick(c, op_name):
            specificities = math_ops.divide(c["tn"], c["tn"] + c["fp"] + _KEPSILON)
            at = math_ops.cast(math_ops.argmin(math_ops.abs(specificities - specificity), 0), dtypes.int32)
            return math_ops.divide(c["tp"][at], c["tp"][at] + c["fn"][at] + _KEPSILON, op_name)

        value = _collect(metrics_collections, pick(variables, "value"))
        return value, _collect(updates_collections, pick(updates, "update_op"))


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is closest to ``sensitivity`` (the last such
    threshold on ties)."""
    _graph_only("specificity_at_sensitivity")
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError(f"`sensitivity` must be in the range [0, 1]. Currently, `sensitivity` is {sensitivity}.")
    with variable_scope.variable_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        # TensorFlow's top threshold here is just below 1 (not just above, as in auc).
        cuts = _evenly_spaced_thresholds(num_thresholds, 1.0 - _KEPSILON)
        variables, updates = _confusion_matrix_at_thresholds(labels, predictions, cuts, weights)

        def pick(c, op_name):
            gaps = math_ops.abs(math_ops.divide(c["tp"], c["tp"] + c["fn"] + _KEPSILON) - sensitivity)
            closest = math_ops.cast(math_ops.equal(gaps, math_ops.reduce_min(gaps)), dtypes.int64)
            # argmax of the running count of closest thresholds: the last of them
            at = math_ops.cast(math_ops.argmax(math_ops.cumsum(closest), 0), dtypes.int32)
            return math_ops.divide(c["tn"][at], c["tn"][at] + c["fp"][at] + _KEPSILON, op_name)

        value = _collect(metrics_collections, pick(variables, "value"))
        return value, _collect(updates_collections, pick(updates, "update_op"))


# -- top-k metrics ----------------------------------------------------------------------------------------


def _at_k_name(base, k=None, class_id=None):
    name = f"{base}_at_{k}" if k is not None else f"{base}_at_k"
    return name if class_id is None else f"{name}_class{class_id}"


def _maybe_expand_labels(labels, predictions):
    """Labels with a trailing unit dimension when their rank is one less than the predictions'."""
    with ops.name_scope(None, "expand_labels", (labels, predictions)) as scope:
        labels = sparse_tensor.convert_to_tensor_or_sparse_tensor(labels)
        if isinstance(labels, sparse_tensor.SparseTensor):
            labels_rank = dimension_value(labels.dense_shape.get_shape()[0])
            predictions_rank = predictions.get_shape().ndims
            if labels_rank is not None and predictions_rank is not None:
                if predictions_rank != labels_rank + 1:
                    return labels
                extra = constant([1], dtypes.int64)
            else:
                grow = math_ops.equal(array_ops.rank(predictions), array_ops.size(labels.dense_shape) + 1)
                extra = array_ops.fill(array_ops.stack([math_ops.cast(grow, dtypes.int32)]),
                                       constant(1, dtypes.int64))
            return sparse_ops.sparse_reshape(labels, array_ops.concat((labels.dense_shape, extra), 0), name=scope)
        labels_rank = labels.get_shape().ndims
        predictions_rank = predictions.get_shape().ndims
        if labels_rank is not None and predictions_rank is not None:
            if predictions_rank == labels_rank:
                return labels
            if predictions_rank == labels_rank + 1:
                return array_ops.expand_dims(labels, -1, name=scope)
            raise ValueError(
                f"Unexpected labels shape {labels.get_shape()} for predictions shape {predictions.get_shape()}. "
                "Predictions rank should be the same rank as labels rank or labels rank plus one .")
        grow = math_ops.equal(array_ops.rank(predictions), array_ops.rank(labels) + 1)
        return _append_unit_dim_if(labels, grow)


class _IdSets:
    """One set of int64 ids per row of the last dimension: ``ids [..., n]`` and ``present [..., n]``
    (False for the empty slots of a SparseTensor, or ids filtered out)."""

    def __init__(self, ids, present):
        self.ids, self.present = ids, present

    @classmethod
    def of(cls, tensor):
        tensor = sparse_tensor.convert_to_tensor_or_sparse_tensor(tensor)
        if isinstance(tensor, sparse_tensor.SparseTensor):
            ids = sparse_ops.sparse_tensor_to_dense(
                sparse_tensor.SparseTensor(tensor.indices, math_ops.cast(tensor.values, dtypes.int64),
                                           tensor.dense_shape), default_value=0, validate_indices=False)
            marks = sparse_tensor.SparseTensor(tensor.indices, array_ops.ones_like(tensor.values, dtypes.int32),
                                               tensor.dense_shape)
            present = math_ops.cast(sparse_ops.sparse_tensor_to_dense(marks, default_value=0,
                                                                      validate_indices=False), dtypes.bool)
            return cls(ids, present)
        ids = math_ops.cast(tensor, dtypes.int64)
        return cls(ids, math_ops.greater_equal(array_ops.ones_like(ids), 0))

    def only(self, class_id):
        if class_id is None:
            return self
        return _IdSets(self.ids, math_ops.logical_and(self.present, math_ops.equal(self.ids, class_id)))

    def first_occurrences(self):
        """Present slots whose id does not appear in an earlier present slot of the row."""
        n = array_ops.shape(self.ids)[-1]
        positions = math_ops.range(n)
        earlier = math_ops.less(array_ops.expand_dims(positions, 1), array_ops.expand_dims(positions, 0))
        same = math_ops.equal(array_ops.expand_dims(self.ids, -1), array_ops.expand_dims(self.ids, -2))
        repeat = math_ops.reduce_any(
            math_ops.logical_and(math_ops.logical_and(same, earlier), array_ops.expand_dims(self.present, -1)),
            axis=-2)
        return math_ops.logical_and(self.present, math_ops.logical_not(repeat))

    def contains(self, ids):
        """For each element of ``ids [..., m]``: whether its row's set holds it."""
        same = math_ops.equal(array_ops.expand_dims(ids, -1), array_ops.expand_dims(self.ids, -2))
        return math_ops.reduce_any(math_ops.logical_and(same, array_ops.expand_dims(self.present, -2)), axis=-1)

    def size(self):
        return _count(self.first_occurrences())


def _count(mask):
    return math_ops.reduce_sum(math_ops.cast(mask, dtypes.float64), axis=-1)


def _top_k_counts(labels, predictions_idx, class_id):
    """Per row: (|top-k ∩ labels|, |top-k|, |labels|) as float64, sets taken after keeping only
    ``class_id`` when given."""
    label_sets = _IdSets.of(labels).only(class_id)
    predicted = _IdSets.of(predictions_idx).only(class_id)
    first = predicted.first_occurrences()
    both = _count(math_ops.logical_and(first, label_sets.contains(predicted.ids)))
    return both, _count(first), label_sets.size()


def _weighted(per_row, weights):
    if weights is None:
        return per_row
    with ops.control_dependencies((_assert_broadcastable(weights, per_row),)):
        return math_ops.multiply(per_row, math_ops.cast(weights, dtypes.float64))


def _streaming_sum(per_row, weights, scope_name, values):
    with ops.name_scope(None, scope_name, values) as scope:
        batch_total = math_ops.cast(math_ops.reduce_sum(_weighted(per_row, weights)), dtypes.float64)
        var = metric_variable([], dtypes.float64, name=scope)
        return var, state_ops.assign_add(var, batch_total, name="update")


def _top_k_ratio(kind, labels, predictions_idx, k, class_id, weights, metrics_collections, updates_collections,
                 name):
    """precision (tp / (tp + fp)) or recall (tp / (tp + fn)) of top-k ids, streamed."""
    with ops.name_scope(name, _at_k_name(kind, k, class_id=class_id), (predictions_idx, labels, weights)) as scope:
        labels = _maybe_expand_labels(labels, predictions_idx)
        top_k_idx = math_ops.cast(predictions_idx, dtypes.int64)
        both, n_predicted, n_labels = _top_k_counts(labels, top_k_idx, class_id)
        other_name, other = (("false_positive", n_predicted - both) if kind == "precision"
                             else ("false_negative", n_labels - both))
        values = (top_k_idx, labels, weights)
        tp, tp_update = _streaming_sum(both, weights, _at_k_name("true_positive", k, class_id), values)
        rest, rest_update = _streaming_sum(other, weights, _at_k_name(other_name, k, class_id), values)
        value = _collect(metrics_collections, math_ops.divide(tp, math_ops.add(tp, rest), name=scope))
        update = math_ops.divide(tp_update, math_ops.add(tp_update, rest_update), name="update")
        return value, _collect(updates_collections, update)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Running precision of given top-k class ids ``predictions_idx [..., k]`` against the label ids
    (dense ``[..., num_labels]`` or a SparseTensor), optionally for one ``class_id`` only."""
    _graph_only("precision_at_top_k")
    return _top_k_ratio("precision", labels, predictions_idx, k, class_id, weights, metrics_collections,
                        updates_collections, name)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Running recall of given top-k class ids against the label ids (see ``precision_at_top_k``)."""
    return _top_k_ratio("recall", labels, predictions_idx, k, class_id, weights, metrics_collections,
                        updates_collections, name)


def precision_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Running precision of the ``k`` highest-scoring classes of ``predictions [..., num_classes]``."""
    _graph_only("sparse_precision_at_k")
    with ops.name_scope(name, _at_k_name("precision", k, class_id=class_id), (predictions, labels, weights)) as scope:
        _, top_k_idx = nn_ops.top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k=k, class_id=class_id, weights=weights,
                                  metrics_collections=metrics_collections,
                                  updates_collections=updates_collections, name=scope)


def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                          updates_collections=None, name=None):
    """Deprecated name of ``precision_at_k``."""
    return precision_at_k(labels, predictions, k, class_id=class_id, weights=weights,
                          metrics_collections=metrics_collections, updates_collections=updates_collections,
                          name=name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """Running recall of the ``k`` highest-scoring classes of ``predictions [..., num_classes]``."""
    _graph_only("recall_at_k")
    with ops.name_scope(name, _at_k_name("recall", k, class_id=class_id), (predictions, labels, weights)) as scope:
        _, top_k_idx = nn_ops.top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k=k, class_id=class_id, weights=weights,
                               metrics_collections=metrics_collections, updates_collections=updates_collections,
                               name=scope)


def _drop_out_of_range_labels(labels, num_classes):
    """Label ids ``>= num_classes`` replaced by -1 (which then never matches a prediction)."""
    labels = sparse_tensor.convert_to_tensor_or_sparse_tensor(labels)
    is_sparse = isinstance(labels, sparse_tensor.SparseTensor)
    values = labels.values if is_sparse else labels
    any_outside = math_ops.greater_equal(math_ops.reduce_max(values), num_classes)
    outside = math_ops.logical_and(any_outside, math_ops.greater_equal(values, num_classes))
    cleaned = array_ops.where_v2(outside, -1 * array_ops.ones_like(values), values)
    if is_sparse:
        return sparse_tensor.SparseTensor(labels.indices, cleaned, labels.dense_shape)
    return cleaned


def _average_precision_per_row(labels, predictions_idx):
    """Average precision of each row's ranked ids: the mean over the first k ranks of the precision
    at each rank that retrieves a label, divided by min(#labels, k)."""
    with ops.name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        predictions_idx = math_ops.cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.get_shape().ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.get_shape().as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, it is None.")
        labels = _maybe_expand_labels(labels, predictions_idx)
        label_sets = _IdSets.of(labels)
        relevant = math_ops.cast(label_sets.contains(predictions_idx), dtypes.float64)
        hits_so_far = math_ops.cumsum(relevant, axis=-1)
        ranks = math_ops.cumsum(array_ops.ones_like(relevant), axis=-1)
        precision_sum = math_ops.reduce_sum(math_ops.divide(hits_so_far, ranks) * relevant, axis=(-1,))
        if isinstance(labels, sparse_tensor.SparseTensor):
            n_labels = label_sets.size()
        else:
            # dense labels: every id >= 0 counts, repeats included (TensorFlow's rule)
            n_labels = _count(math_ops.greater_equal(label_sets.ids, 0))
        n_relevant = math_ops.minimum(n_labels, float(k))
        return math_ops.divide(precision_sum, n_relevant, name=scope)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The running (weighted) mean over examples of the average precision of the ``k`` highest-scoring
    classes; label ids outside ``[0, num_classes)`` never match."""
    _graph_only("sparse_average_precision_at_k")
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with ops.name_scope(name, _at_k_name("average_precision", k), (predictions, labels, weights)) as scope:
        _, predictions_idx = nn_ops.top_k(predictions, k)
        num_classes = math_ops.cast(array_ops.shape(predictions)[-1], dtypes.int64)
        labels = _drop_out_of_range_labels(labels, num_classes)
        per_row = _average_precision_per_row(labels, predictions_idx)
        if weights is not None:
            weights = _broadcast_weights(math_ops.cast(weights, dtypes.float64), per_row)
            per_row = math_ops.multiply(per_row, weights)
        with ops.name_scope(None, "max", (per_row,)) as max_scope:
            max_var = metric_variable([], dtypes.float64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(per_row, name="batch_max"), dtypes.float64)
            else:
                batch_max = math_ops.reduce_sum(weights, name="batch_max")
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with ops.name_scope(None, "total", (per_row,)) as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
            total_update = state_ops.assign_add(total_var, math_ops.reduce_sum(per_row, name="batch_total"),
                                                name="update")
        value = _collect(metrics_collections, math_ops.div_no_nan(total_var, max_var, name="mean"))
        update = math_ops.div_no_nan(total_update, max_update, name=scope)
        return value, _collect(updates_collections, update)


def sparse_average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Deprecated name of ``average_precision_at_k``."""
    return average_precision_at_k(labels, predictions, k, weights=weights, metrics_collections=metrics_collections,
                                  updates_collections=updates_collections, name=name)
