"""``tf.keras.constraints``: projections applied to a weight after each update (``max_norm``, ``non_neg``, ...)."""

from __future__ import annotations

from ferroflow.keras import backend as K
from ferroflow.ops import clip_ops, math_ops

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "get", "max_norm", "min_max_norm",
           "non_neg", "unit_norm"]


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}


class MaxNorm(Constraint):
    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        norms = K.sqrt(math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True))
        desired = clip_ops.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (K.epsilon() + norms))


class NonNeg(Constraint):
    def __call__(self, w):
        return w * math_ops.cast(math_ops.greater_equal(w, 0.0), w.dtype.base_dtype)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (K.epsilon() + K.sqrt(math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True)))


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = K.sqrt(math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True))
        desired = self.rate * clip_ops.clip_by_value(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (K.epsilon() + norms))


max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        table = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}
        if identifier not in table:
            raise ValueError(f"Unknown constraint: {identifier}")
        return table[identifier]()
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")
