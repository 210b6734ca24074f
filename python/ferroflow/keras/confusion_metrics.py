"""Keras's stateful metrics built on confusion-matrix counts: ``TruePositives``/``FalsePositives``/
``TrueNegatives``/``FalseNegatives``, ``Precision``, ``Recall``, ``AUC``, ``PrecisionAtRecall``,
``RecallAtPrecision``, ``SensitivityAtSpecificity``, ``SpecificityAtSensitivity`` and ``MeanIoU``
(re-exported by ``tf.keras.metrics``).

Each keeps counts per threshold in variables. A prediction counts as positive at threshold ``t`` when it is
greater than ``t``; every value of ``y_pred`` (flattened, unless ``AUC(multi_label=True)``) is one decision,
weighted by ``sample_weight`` broadcast to ``y_pred``. The default thresholds are TensorFlow's: 0.5 for the
counts, precision and recall (or every top-k value with ``top_k``); for AUC ``num_thresholds`` points
``i / (num_thresholds - 1)`` whose first and last are moved out by ``K.epsilon()``; for the
sensitivity/specificity family the same points without the shift. Results are the functions of the counts
TensorFlow's Keras computes (AUC by trapezoids, or Davis & Goadrich's interpolation for the PR curve).
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_metric import Metric
from ferroflow.ops import (
    array_ops,
    control_flow_ops,
    linalg_ops,
    math_ops,
    nn_ops,
    special_math_ops,
    state_ops,
)

__all__ = ["AUC", "FalseNegatives", "FalsePositives", "MeanIoU", "Precision", "PrecisionAtRecall", "Recall",
           "RecallAtPrecision", "SensitivityAtSpecificity", "SpecificityAtSensitivity", "TrueNegatives",
           "TruePositives", "update_confusion_matrix_variables"]

_NEG_INF = -1e10  # the threshold that keeps every top-k value (Keras's metrics_utils.NEG_INF)
_KINDS = ("tp", "fn", "fp", "tn")


def _thresholds_list(thresholds, default):
    """``thresholds`` as a list (``default`` when None), each checked to be in [0, 1]."""
    if thresholds is None:
        return [default]
    values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    bad = [t for t in values if t is None or t < 0 or t > 1]
    if bad:
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {bad}")
    return values


def _squeeze_or_expand(y_pred, y_true, sample_weight):
    """Keras's rank matching: a trailing axis of 1 dropped from whichever of ``y_true``/``y_pred`` has one
    more axis; ``sample_weight`` squeezed or given a trailing axis to reach ``y_pred``'s rank."""
    pr, tr = y_pred.shape.rank, y_true.shape.rank
    if pr is not None and tr is not None:
        if tr == pr + 1 and y_true.shape.as_list()[-1] == 1:
            y_true = array_ops.squeeze(y_true, [-1])
        elif pr == tr + 1 and y_pred.shape.as_list()[-1] == 1:
            y_pred = array_ops.squeeze(y_pred, [-1])
    if sample_weight is not None:
        pr, wr = y_pred.shape.rank, sample_weight.shape.rank
        if pr is not None and wr is not None and wr > 0:
            if wr == pr + 1:
                sample_weight = array_ops.squeeze(sample_weight, [-1])
            elif pr == wr + 1:
                sample_weight = array_ops.expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


def _filter_top_k(x, k):
    """``x`` with every value outside the ``k`` largest of its last axis set to -1e10."""
    _, idx = nn_ops.top_k(x, k, sorted=False)
    keep = math_ops.reduce_sum(array_ops.one_hot(idx, array_ops.shape(x)[-1], axis=-1), axis=-2)
    return x * keep + _NEG_INF * (1 - keep)


def update_confusion_matrix_variables(variables, y_true, y_pred, thresholds, top_k=None, class_id=None,
                                      sample_weight=None, multi_label=False, label_weights=None):
    """An op adding this batch's weighted counts to ``variables`` (a dict with any of ``'tp'``, ``'fn'``,
    ``'fp'``, ``'tn'``), one count per threshold (per threshold and label with ``multi_label``)."""
    unknown = sorted(set(variables) - set(_KINDS))
    if unknown or not variables:
        raise ValueError(f"Invalid keys: {unknown}. Valid variable key options are: {list(_KINDS)}")
    dtype = next(iter(variables.values())).dtype.base_dtype
    y_true = math_ops.cast(ops.convert_to_tensor(y_true), dtype)
    y_pred = math_ops.cast(ops.convert_to_tensor(y_pred), dtype)
    if sample_weight is not None:
        sample_weight = math_ops.cast(ops.convert_to_tensor(sample_weight), dtype)
    y_pred, y_true, sample_weight = _squeeze_or_expand(y_pred, y_true, sample_weight)
    if not y_pred.shape.is_compatible_with(y_true.shape):
        raise ValueError(f"Shapes {y_pred.shape} and {y_true.shape} are incompatible")
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true = y_true[..., class_id:class_id + 1]
        y_pred = y_pred[..., class_id:class_id + 1]
    thresholds = ops.convert_to_tensor(np.asarray(thresholds, np.float64), dtype=dtype)
    n = thresholds.shape.as_list()[0]
    if multi_label:  # [T, N, L]: one count per threshold and label
        preds = array_ops.expand_dims(y_pred, 0)
        labels = array_ops.expand_dims(math_ops.cast(y_true, dtypes.bool), 0)
        cuts = array_ops.reshape(thresholds, [n, 1, 1])
    else:  # [T, N * L]: every value one decision
        preds = array_ops.reshape(y_pred, [1, -1])
        labels = array_ops.reshape(math_ops.cast(y_true, dtypes.bool), [1, -1])
        cuts = array_ops.reshape(thresholds, [n, 1])
    ones = array_ops.ones_like(y_pred)
    weights = None
    if sample_weight is not None:
        weights = sample_weight * ones
    if label_weights is not None and not multi_label:
        lw = math_ops.cast(ops.convert_to_tensor(label_weights), dtype) * ones
        weights = lw if weights is None else weights * lw
    if weights is not None:
        weights = array_ops.expand_dims(weights, 0) if multi_label else array_ops.reshape(weights, [1, -1])
    pred_pos = math_ops.greater(preds, cuts)
    pred_pos = math_ops.logical_and(pred_pos, array_ops.ones_like(labels))  # tiled to [T, ...] like the labels
    label_pos = math_ops.logical_and(labels, array_ops.ones_like(pred_pos))
    cases = {"tp": (label_pos, pred_pos)}
    if "fn" in variables or "tn" in variables:
        cases["fn"] = (label_pos, math_ops.logical_not(pred_pos))
    if "fp" in variables or "tn" in variables:
        cases["fp"] = (math_ops.logical_not(label_pos), pred_pos)
        if "tn" in variables:
            cases["tn"] = (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos))
    updates = []
    for kind, (label, pred) in cases.items():
        if kind not in variables:
            continue
        var = variables[kind]
        hits = math_ops.cast(math_ops.logical_and(label, pred), var.dtype.base_dtype)
        if weights is not None:
            hits = hits * weights
        updates.append(state_ops.assign_add(var, math_ops.reduce_sum(hits, 1)))
    return control_flow_ops.group(*updates)


class _Counts(Metric):
    """One confusion-matrix count per threshold (a scalar result for one threshold)."""

    _kind = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = _thresholds_list(thresholds, 0.5)
        self.accumulator = self.add_weight("accumulator", shape=(len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return update_confusion_matrix_variables({self._kind: self.accumulator}, y_true, y_pred, self.thresholds,
                                                 sample_weight=sample_weight)

    def result(self):
        if len(self.thresholds) == 1:
            return array_ops.identity(self.accumulator[0])
        return array_ops.identity(self.accumulator)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_Counts):
    """The (weighted) number of positive labels predicted above each threshold."""

    _kind = "tp"


class FalsePositives(_Counts):
    """The (weighted) number of negative labels predicted above each threshold."""

    _kind = "fp"


class TrueNegatives(_Counts):
    """The (weighted) number of negative labels predicted at or below each threshold."""

    _kind = "tn"


class FalseNegatives(_Counts):
    """The (weighted) number of positive labels predicted at or below each threshold."""

    _kind = "fn"


class _PrecisionRecall(Metric):
    """``tp / (tp + other)`` per threshold, ``other`` being false positives (precision) or false negatives
    (recall); ``top_k`` counts only each row's k largest predictions, ``class_id`` only that column."""

    _other = None

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        self.thresholds = _thresholds_list(thresholds, 0.5 if top_k is None else _NEG_INF)
        n = len(self.thresholds)
        self.true_positives = self.add_weight("true_positives", shape=(n,))
        other = {"fp": "false_positives", "fn": "false_negatives"}[self._other]
        setattr(self, other, self.add_weight(other, shape=(n,)))
        self._other_var = getattr(self, other)

    def update_state(self, y_true, y_pred, sample_weight=None):
        return update_confusion_matrix_variables({"tp": self.true_positives, self._other: self._other_var}, y_true,
                                                 y_pred, self.thresholds, top_k=self.top_k, class_id=self.class_id,
                                                 sample_weight=sample_weight)

    def result(self):
        value = math_ops.div_no_nan(self.true_positives, self.true_positives + self._other_var)
        return value[0] if len(self.thresholds) == 1 else value

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_PrecisionRecall):
    """The fraction of predictions above the threshold whose label is positive."""

    _other = "fp"


class Recall(_PrecisionRecall):
    """The fraction of positive labels predicted above the threshold."""

    _other = "fn"


def _even_thresholds(num):
    """``num`` evenly spaced thresholds from 0 to 1 (the interior ones ``(i + 1) / (num - 1)``)."""
    return [(i + 1) * 1.0 / (num - 1) for i in range(num - 2)]


def _rate(a, b):
    return math_ops.div_no_nan(a, a + b)


class _FourCounts(Metric):
    """Metrics over all four counts at ``num_thresholds`` thresholds."""

    def _add_counts(self, shape):
        self.true_positives = self.add_weight("true_positives", shape=shape)
        self.true_negatives = self.add_weight("true_negatives", shape=shape)
        self.false_positives = self.add_weight("false_positives", shape=shape)
        self.false_negatives = self.add_weight("false_negatives", shape=shape)

    def _count_vars(self):
        return {"tp": self.true_positives, "tn": self.true_negatives, "fp": self.false_positives,
                "fn": self.false_negatives}


class _AtConstraint(_FourCounts):
    """The largest ``dependent`` rate among the thresholds where the ``constrained`` rate is at least
    ``value`` (0 where none is)."""

    _value_name = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._value_name}` must be in the range [0, 1]. Received: "
                             f"{self._value_name}={value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        super().__init__(name=name, dtype=dtype)
        self.value = value
        setattr(self, self._value_name, value)
        self.num_thresholds = num_thresholds
        self.class_id = class_id
        self._add_counts((num_thresholds,))
        self.thresholds = [0.5] if num_thresholds == 1 else [0.0] + _even_thresholds(num_thresholds) + [1.0]

    def update_state(self, y_true, y_pred, sample_weight=None):
        return update_confusion_matrix_variables(self._count_vars(), y_true, y_pred, self.thresholds,
                                                 class_id=self.class_id, sample_weight=sample_weight)

    def _rates(self):
        """(constrained, dependent) rates per threshold."""
        raise NotImplementedError

    def result(self):
        constrained, dependent = self._rates()
        feasible = math_ops.greater_equal(constrained, self.value)
        # the rates are never negative, so zeros where infeasible leave the maximum over the feasible ones
        return math_ops.reduce_max(array_ops.where(feasible, dependent, array_ops.zeros_like(dependent)))

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, self._value_name: self.value,
                "class_id": self.class_id}


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) at a specificity of at least ``specificity``."""

    _value_name = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def _rates(self):
        return (_rate(self.true_negatives, self.false_positives), _rate(self.true_positives, self.false_negatives))


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity at a sensitivity (recall) of at least ``sensitivity``."""

    _value_name = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def _rates(self):
        return (_rate(self.true_positives, self.false_negatives), _rate(self.true_negatives, self.false_positives))


class PrecisionAtRecall(_AtConstraint):
    """The best precision at a recall of at least ``recall``."""

    _value_name = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def _rates(self):
        return (_rate(self.true_positives, self.false_negatives), _rate(self.true_positives, self.false_positives))


class RecallAtPrecision(_AtConstraint):
    """The best recall at a precision of at least ``precision``."""

    _value_name = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def _rates(self):
        return (_rate(self.true_positives, self.false_positives), _rate(self.true_positives, self.false_negatives))


_CURVES = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}
_SUMMATIONS = ("interpolation", "minoring", "majoring")


class AUC(_FourCounts):
    """The area under the ROC curve (``curve='ROC'``), the precision-recall curve (``'PR'``) or the
    precision-recall-gain curve (``'PRGAIN'``), from counts at ``num_thresholds`` thresholds (or at
    ``thresholds`` plus the two ends); ``multi_label`` keeps one curve per label and averages their areas
    (weighted by ``label_weights``)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        key = str(curve).lower()
        if key not in _CURVES:
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["PR", "ROC", "PRGAIN"]')
        summation = str(summation_method).lower()
        if summation not in _SUMMATIONS:
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            inner = sorted(_thresholds_list(thresholds, 0.5))
            self.num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            inner = _even_thresholds(num_thresholds)
        self._thresholds = np.array([0.0 - K.epsilon()] + inner + [1.0 + K.epsilon()])
        self.curve = _CURVES[key]
        self.summation_method = summation
        super().__init__(name=name, dtype=dtype)
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else \
            ops.convert_to_tensor(np.asarray(label_weights), dtype=self.dtype)
        self._label_weights_value = label_weights
        self._from_logits = from_logits
        self._built = False
        if multi_label:
            if num_labels:
                self._build(num_labels)
        elif num_labels:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        else:
            self._build(None)

    @property
    def thresholds(self):
        return list(self._thresholds)

    def _build(self, num_labels):
        self._num_labels = num_labels
        self._add_counts((self.num_thresholds,) if num_labels is None else (self.num_thresholds, num_labels))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.convert_to_tensor(y_pred)
        if not self._built:
            if y_pred.shape.rank != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank "
                                 f"{y_pred.shape.rank}. Full shape received for `y_pred`: {y_pred.shape}")
            self._build(int(y_pred.shape.as_list()[1]))
        if self._from_logits:
            y_pred = math_ops.sigmoid(y_pred)
        return update_confusion_matrix_variables(self._count_vars(), y_true, y_pred, self._thresholds,
                                                 sample_weight=sample_weight, multi_label=self.multi_label,
                                                 label_weights=None if self.multi_label else self.label_weights)

    def _over_labels(self, by_threshold):
        """The area: the sum over thresholds, then (multi-label) the labels' mean or weighted mean."""
        if not self.multi_label:
            return math_ops.reduce_sum(by_threshold)
        by_label = math_ops.reduce_sum(by_threshold, axis=0)
        if self.label_weights is None:
            return math_ops.reduce_mean(by_label)
        return math_ops.div_no_nan(math_ops.reduce_sum(by_label * self.label_weights),
                                   math_ops.reduce_sum(self.label_weights))

    def _interpolate_pr_auc(self):
        """Davis & Goadrich (2006): precision interpolated along each threshold interval."""
        n = self.num_thresholds
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = math_ops.div_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0), math_ops.greater(p[1:], 0.0))
        ratio = array_ops.where(both, math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0)),
                                array_ops.ones_like(p[1:]))
        increment = math_ops.div_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                                        math_ops.maximum(tp[1:] + fn[1:], 0.0))
        return self._over_labels(increment)

    def result(self):
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        tp, tn, fp, fn = self.true_positives, self.true_negatives, self.false_positives, self.false_negatives
        recall = _rate(tp, fn)
        if self.curve == "ROC":
            x, y = _rate(fp, tn), recall
        elif self.curve == "PR":
            x, y = recall, _rate(tp, fp)
        else:
            scale = math_ops.div_no_nan(tp + fn, fp + tn)
            recall_gain = 1.0 - scale * math_ops.div_no_nan(fn, tp)
            precision_gain = 1.0 - scale * math_ops.div_no_nan(fp, tp)
            no_tp = math_ops.equal(tp, 0.0)
            recall_gain = array_ops.where(no_tp, array_ops.zeros_like(recall_gain), recall_gain)
            precision_gain = array_ops.where(no_tp, array_ops.ones_like(precision_gain), precision_gain)
            x, y = math_ops.maximum(recall_gain, array_ops.zeros_like(recall_gain)), precision_gain
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(y[:n - 1], y[1:])
        else:
            heights = math_ops.maximum(y[:n - 1], y[1:])
        return self._over_labels((x[:n - 1] - x[1:]) * heights)

    def reset_states(self):
        if self._built:
            super().reset_states()

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels, "label_weights": self._label_weights_value,
                  "from_logits": self._from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config


class MeanIoU(Metric):
    """The mean over classes of intersection over union (``tp / (tp + fp + fn)``), from a confusion matrix of
    class ids (``y_pred`` cast to ids, or its argmax with ``sparse_y_pred=False``); classes never seen nor
    predicted are left out of the mean."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = num_classes
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_weight("total_confusion_matrix", shape=(num_classes, num_classes))

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.sparse_y_true:
            y_true = math_ops.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = math_ops.argmax(y_pred, axis=self.axis)
        y_true = array_ops.reshape(math_ops.cast(y_true, self.dtype), [-1])
        y_pred = array_ops.reshape(math_ops.cast(y_pred, self.dtype), [-1])
        if sample_weight is not None:
            sample_weight = array_ops.reshape(math_ops.cast(sample_weight, self.dtype), [-1])
        if self.ignore_class is not None:
            keep = math_ops.not_equal(y_true, math_ops.cast(self.ignore_class, self.dtype))
            y_true = array_ops.boolean_mask(y_true, keep)
            y_pred = array_ops.boolean_mask(y_pred, keep)
            if sample_weight is not None:
                sample_weight = array_ops.boolean_mask(sample_weight, keep)
        cm = special_math_ops.confusion_matrix(y_true, y_pred, self.num_classes, weights=sample_weight,
                                              dtype=self.dtype)
        return state_ops.assign_add(self.total_cm, cm)

    def result(self):
        predicted = math_ops.reduce_sum(self.total_cm, axis=0)
        actual = math_ops.reduce_sum(self.total_cm, axis=1)
        tp = linalg_ops.matrix_diag_part(self.total_cm)
        denominator = predicted + actual - tp
        valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), self.dtype))
        iou = math_ops.div_no_nan(tp, denominator)
        return math_ops.div_no_nan(math_ops.reduce_sum(iou), valid)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}

