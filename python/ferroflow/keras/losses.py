"""``tf.keras.losses``: per-sample loss functions ``fn(y_true, y_pred)`` (a mean over the last axis where
Keras takes one), by name or as callables (``get``), and the loss classes (``SparseCategoricalCrossentropy(
from_logits=True)``, ...): objects whose call weighs and reduces the per-sample losses (``Reduction``)."""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.keras import backend as K
from ferroflow.ops import clip_ops, math_ops

__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "CategoricalHinge", "CosineProximity", "Hinge", "Huber",
           "KLDivergence", "LogCosh", "Loss", "LossFunctionWrapper", "MeanAbsoluteError", "MeanAbsolutePercentageError",
           "MeanSquaredError", "MeanSquaredLogarithmicError", "Poisson", "Reduction", "SparseCategoricalCrossentropy",
           "SquaredHinge", "huber_loss", "binary_crossentropy", "categorical_crossentropy", "categorical_hinge", "cosine_proximity",
           "deserialize", "get", "hinge", "kld", "kullback_leibler_divergence", "logcosh", "mae", "mape",
           "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
           "mean_squared_logarithmic_error", "mse", "msle", "poisson", "serialize", "sparse_categorical_crossentropy",
           "squared_hinge"]


def _pair(y_true, y_pred):
    y_pred = ops.convert_to_tensor(y_pred)
    y_true = math_ops.cast(ops.convert_to_tensor(y_true), y_pred.dtype.base_dtype)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), K.epsilon()))
    return 100.0 * math_ops.reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, K.epsilon()) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, K.epsilon()) + 1.0)
    return math_ops.reduce_mean(math_ops.squared_difference(first, second), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = math_ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = math_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(0.0, neg - pos + 1.0)


def logcosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return math_ops.reduce_mean(x + math_ops.softplus(-2.0 * x) - math_ops.log(2.0), axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = math_ops.cast(array_shape_last(y_true), y_pred.dtype.base_dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return K.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def array_shape_last(x):
    from ferroflow.ops import array_ops

    return array_ops.shape(x)[-1]


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return K.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return math_ops.reduce_mean(K.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = clip_ops.clip_by_value(y_true, K.epsilon(), 1.0)
    y_pred = clip_ops.clip_by_value(y_pred, K.epsilon(), 1.0)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(y_pred - y_true * math_ops.log(y_pred + K.epsilon()), axis=-1)


def cosine_proximity(y_true, y_pred, axis=-1):
    from ferroflow.ops import nn_ops

    y_true, y_pred = _pair(y_true, y_pred)
    y_true = nn_ops.l2_normalize(y_true, axis=axis)
    y_pred = nn_ops.l2_normalize(y_pred, axis=axis)
    return -math_ops.reduce_sum(y_true * y_pred, axis=axis)


def huber_loss(y_true, y_pred, delta=1.0):
    """Quadratic for errors up to ``delta``, linear beyond (the mean over the last axis)."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = math_ops.abs(y_pred - y_true)
    quadratic = math_ops.minimum(error, delta)
    linear = error - quadratic
    return math_ops.reduce_mean(0.5 * math_ops.square(quadratic) + delta * linear, axis=-1)


# -- loss classes ---------------------------------------------------------------------------------------------------
class Reduction:
    """How a ``Loss`` reduces its weighted per-sample losses: ``AUTO`` and ``SUM_OVER_BATCH_SIZE`` divide the sum
    by the number of elements, ``SUM`` sums, ``NONE`` keeps them."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


class Loss:
    """A loss object: ``loss(y_true, y_pred, sample_weight=None)`` is the reduced, weighted ``call`` of each
    sample; ``compile`` takes one in place of a loss function."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        from ferroflow.keras.engine import weighting

        with ops.name_scope(self.name or type(self).__name__):
            per_sample = self.call(y_true, y_pred)
            return weighting.reduce_loss(per_sample, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError("Loss subclasses implement call(y_true, y_pred)")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A ``Loss`` computing ``fn(y_true, y_pred, **kwargs)`` per sample."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**self._fn_kwargs, **super().get_config()}


def _loss_class(name, fn, snake, params=(), doc=None):
    """A ``LossFunctionWrapper`` subclass ``name`` for ``fn`` taking the keyword arguments ``params``."""
    defaults = dict(params)

    def __init__(self, *args, reduction=Reduction.AUTO, name=snake, **kwargs):  # noqa: N807
        values = dict(defaults)
        for key, value in zip(defaults, args):
            values[key] = value
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        values.update(kwargs)
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **values)

    return type(name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc or f"``{fn.__name__}`` as a Loss.",
                                               "__module__": __name__})


MeanSquaredError = _loss_class("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _loss_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                          "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _loss_class("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                          "mean_squared_logarithmic_error")
BinaryCrossentropy = _loss_class("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                                 (("from_logits", False), ("label_smoothing", 0)))
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                      (("from_logits", False), ("label_smoothing", 0)))
SparseCategoricalCrossentropy = _loss_class("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                            "sparse_categorical_crossentropy", (("from_logits", False),))
Hinge = _loss_class("Hinge", hinge, "hinge")
SquaredHinge = _loss_class("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _loss_class("CategoricalHinge", categorical_hinge, "categorical_hinge")
KLDivergence = _loss_class("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
Poisson = _loss_class("Poisson", poisson, "poisson")
LogCosh = _loss_class("LogCosh", logcosh, "logcosh")
Huber = _loss_class("Huber", huber_loss, "huber_loss", (("delta", 1.0),))
CosineProximity = _loss_class("CosineProximity", cosine_proximity, "cosine_proximity", (("axis", -1),))


def unwrap(loss):
    """The per-sample function behind a loss (a ``LossFunctionWrapper``'s ``fn``), for choosing metrics."""
    return loss.fn if isinstance(loss, LossFunctionWrapper) else loss


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence
cosine = cosine_proximity

_BY_NAME = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
    "squared_hinge": squared_hinge, "hinge": hinge, "categorical_hinge": categorical_hinge, "logcosh": logcosh,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_crossentropy": binary_crossentropy, "kullback_leibler_divergence": kullback_leibler_divergence,
    "kld": kullback_leibler_divergence, "poisson": poisson, "cosine_proximity": cosine_proximity,
    "cosine": cosine_proximity, "huber_loss": huber_loss,
}
_CLASSES = {cls.__name__: cls for cls in (MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
                                          MeanSquaredLogarithmicError, BinaryCrossentropy, CategoricalCrossentropy,
                                          SparseCategoricalCrossentropy, Hinge, SquaredHinge, CategoricalHinge,
                                          KLDivergence, Poisson, LogCosh, Huber, CosineProximity)}


def serialize(loss):
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return loss.__name__


def deserialize(name, custom_objects=None):
    if isinstance(name, dict):
        cls = (custom_objects or {}).get(name["class_name"]) or _CLASSES.get(name["class_name"])
        if cls is None:
            raise ValueError(f"Unknown loss function: {name['class_name']}")
        return cls.from_config(name.get("config", {}))
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name not in _BY_NAME:
        raise ValueError(f"Unknown loss function: {name}")
    return _BY_NAME[name]


def get(identifier):
    """A loss function from a name (``'mse'``, ``'categorical_crossentropy'``, ...) or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        raise ValueError(f"Received uninstantiated Loss class: {identifier}\nPlease call loss classes before passing "
                         "them to Model.compile.")
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")
