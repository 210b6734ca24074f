"""``tf.keras.metrics``: per-sample metric functions ``fn(y_true, y_pred)``; ``Model.compile(metrics=...)``
averages them over each epoch (over all samples seen, as Keras's stateful mean metrics do). The metric objects
(``Mean``, ``SparseCategoricalAccuracy()``, ...) keep that state in variables for TF1 code of their own
(``update_state``/``result``/``reset_states``); given to ``compile`` they report under their ``name``."""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras import losses as losses_mod
from ferroflow.keras.confusion_metrics import (
    AUC,
    FalseNegatives,
    FalsePositives,
    MeanIoU,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from ferroflow.keras.engine.base_metric import Metric
from ferroflow.keras.losses import (  # noqa: F401 - Keras exposes the losses as metrics too
    MAE,
    MAPE,
    MSE,
    MSLE,
    binary_crossentropy,
    categorical_crossentropy,
    cosine_proximity,
    hinge,
    kullback_leibler_divergence,
    logcosh,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from ferroflow.ops import array_ops, math_ops, nn_ops, state_ops

__all__ = ["AUC", "Accuracy", "BinaryAccuracy", "BinaryCrossentropy", "CategoricalAccuracy", "CategoricalCrossentropy", "FalseNegatives",
           "FalsePositives", "Hinge", "KLDivergence", "Mean", "MeanIoU", "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanMetricWrapper",
           "MeanSquaredError", "MeanSquaredLogarithmicError", "Metric", "Poisson", "Precision", "PrecisionAtRecall", "Recall", "RecallAtPrecision", "Reduce", "RootMeanSquaredError",
           "SensitivityAtSpecificity", "SparseCategoricalAccuracy", "SparseCategoricalCrossentropy",
           "SparseTopKCategoricalAccuracy", "SpecificityAtSensitivity", "SquaredHinge", "Sum", "TopKCategoricalAccuracy",
           "TrueNegatives", "TruePositives", "accuracy", "binary_accuracy", "categorical_accuracy", "deserialize", "get", "serialize",
           "sparse_categorical_accuracy", "sparse_top_k_categorical_accuracy", "top_k_categorical_accuracy",
           "mae", "mse", "mape", "msle", "mean_absolute_error", "mean_squared_error", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "metric_class"]


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of ``(y_pred > threshold) == y_true``."""
    y_pred = ops.convert_to_tensor(y_pred)
    threshold = math_ops.cast(threshold, y_pred.dtype.base_dtype)
    pred = math_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype.base_dtype)
    y_true = math_ops.cast(y_true, y_pred.dtype.base_dtype)
    return math_ops.reduce_mean(math_ops.cast(math_ops.equal(y_true, pred), K.floatx()), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred) == argmax(y_true)``."""
    return math_ops.cast(math_ops.equal(math_ops.argmax(y_true, -1), math_ops.argmax(y_pred, -1)), K.floatx())


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred)`` equals the integer label ``y_true``."""
    y_pred = ops.convert_to_tensor(y_pred)
    y_true = ops.convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and \
            y_true.shape.rank == y_pred.shape.rank:
        y_true = array_ops.squeeze(y_true, [-1])
    pred = math_ops.argmax(y_pred, -1)
    if y_true.dtype.base_dtype != pred.dtype.base_dtype:
        pred = math_ops.cast(pred, y_true.dtype.base_dtype)
    return math_ops.cast(math_ops.equal(y_true, pred), K.floatx())


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return math_ops.cast(nn_ops.in_top_k(y_pred, math_ops.argmax(y_true, -1), k), K.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true = ops.convert_to_tensor(y_true)
    if y_true.shape.rank == 2:
        y_true = array_ops.squeeze(y_true, [-1])
    return math_ops.cast(nn_ops.in_top_k(y_pred, math_ops.cast(y_true, dtypes.int32), k), K.floatx())



def accuracy(y_true, y_pred):
    """1 where ``y_pred`` equals ``y_true`` (after casting ``y_true`` to ``y_pred``'s type)."""
    y_pred = ops.convert_to_tensor(y_pred)
    y_true = math_ops.cast(ops.convert_to_tensor(y_true), y_pred.dtype.base_dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), K.floatx())


# -- metric objects ----------------------------------------------------------------------------------------------
class Reduce(Metric):
    """Sums values (``Sum``) or averages them (``Mean``: weighted by ``sample_weight``)."""

    _mean = True

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight("total")
        if self._mean:
            self.count = self.add_weight("count")

    def _parts(self, values, sample_weight):
        from ferroflow.keras.engine import weighting

        return weighting.mean_parts(values, sample_weight)

    def update_state(self, values, sample_weight=None):
        total, count = self._parts(values, sample_weight)
        add_total = state_ops.assign_add(self.total, math_ops.cast(total, self._dtype))
        if not self._mean:
            return add_total.op if hasattr(add_total, "op") else add_total
        with ops.control_dependencies([add_total]):
            add_count = state_ops.assign_add(self.count, math_ops.cast(count, self._dtype))
        return add_count.op if hasattr(add_count, "op") else add_count

    def result(self):
        if not self._mean:
            return array_ops.identity(self.total)
        return math_ops.div_no_nan(self.total, self.count)


class Sum(Reduce):
    """The (weighted) sum of the values seen."""

    _mean = False

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)


class Mean(Reduce):
    """The (weighted) mean of the values seen."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` over every sample seen (what ``compile(metrics=[...])``
    reports for a metric function)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def values(self, y_true, y_pred):
        """The per-sample values this metric averages."""
        return self._fn(y_true, y_pred, **self._fn_kwargs)

    def update_state(self, y_true, y_pred, sample_weight=None):
        return super().update_state(self.values(y_true, y_pred), sample_weight=sample_weight)

    def get_config(self):
        return {**self._fn_kwargs, **super().get_config()}


def _metric_class(name, fn, snake, params=()):
    defaults = dict(params)

    def __init__(self, name=snake, dtype=None, **kwargs):  # noqa: N807
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **{**defaults, **kwargs})

    return type(name, (MeanMetricWrapper,), {"__init__": __init__, "__module__": __name__,
                                             "__doc__": f"The mean of ``{fn.__name__}`` over the samples seen."})


Accuracy = _metric_class("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _metric_class("BinaryAccuracy", binary_accuracy, "binary_accuracy", (("threshold", 0.5),))
CategoricalAccuracy = _metric_class("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _metric_class("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                          "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _metric_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                        "top_k_categorical_accuracy", (("k", 5),))
SparseTopKCategoricalAccuracy = _metric_class("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                              "sparse_top_k_categorical_accuracy", (("k", 5),))
MeanSquaredError = _metric_class("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _metric_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _metric_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                            "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _metric_class("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                            "mean_squared_logarithmic_error")
Hinge = _metric_class("Hinge", hinge, "hinge")
SquaredHinge = _metric_class("SquaredHinge", squared_hinge, "squared_hinge")
BinaryCrossentropy = _metric_class("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                                   (("from_logits", False), ("label_smoothing", 0)))
CategoricalCrossentropy = _metric_class("CategoricalCrossentropy", categorical_crossentropy,
                                        "categorical_crossentropy", (("from_logits", False), ("label_smoothing", 0)))
SparseCategoricalCrossentropy = _metric_class("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                              "sparse_categorical_crossentropy", (("from_logits", False),))
KLDivergence = _metric_class("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
Poisson = _metric_class("Poisson", poisson, "poisson")


class RootMeanSquaredError(Mean):
    """The square root of the mean squared error over every value seen."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def values(self, y_true, y_pred):
        y_pred = ops.convert_to_tensor(y_pred)
        return math_ops.squared_difference(y_pred, math_ops.cast(y_true, y_pred.dtype.base_dtype))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return super().update_state(self.values(y_true, y_pred), sample_weight=sample_weight)

    def result(self):
        return math_ops.sqrt(math_ops.div_no_nan(self.total, self.count))

    @staticmethod
    def finish(mean):
        """The reported value from the mean of ``values`` (``compile`` aggregates the means itself)."""
        return float(np.sqrt(mean))


_BY_NAME = {
    "accuracy": accuracy,
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
}


def serialize(metric):
    if isinstance(metric, Metric):
        return {"class_name": type(metric).__name__, "config": metric.get_config()}
    return metric.__name__


def deserialize(name, custom_objects=None):
    """A metric function by name, or a metric object from a class name or ``{"class_name", "config"}``."""
    if isinstance(name, dict):
        cls = (custom_objects or {}).get(name["class_name"]) or metric_class(name["class_name"])
        if cls is None:
            raise ValueError(f"Unknown metric: {name['class_name']}")
        return cls.from_config(name.get("config", {}))
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name in _STATEFUL:
        return _STATEFUL[name]()
    return losses_mod.deserialize(name)


def metric_class(name):
    """The ``Metric`` subclass of this module named ``name`` (``'AUC'``, ``'MeanSquaredError'``), or None."""
    cls = globals().get(name)
    return cls if isinstance(cls, type) and issubclass(cls, Metric) else None


def get(identifier):
    """A metric function from a name or a callable; a metric object from its class name (``'AUC'``) or config."""
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")


# Metric objects ``compile`` makes from a class name (their constructors need no argument).
_STATEFUL = {cls.__name__: cls for cls in (AUC, FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives,
                                           TruePositives)}
