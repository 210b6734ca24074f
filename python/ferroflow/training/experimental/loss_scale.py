"""TF1's loss scales (``tf.train.experimental.LossScale`` and its two subclasses).

A loss scale multiplies the loss before differentiation and divides the
gradients after it, so small float16/bfloat16 gradients do not underflow.
``DynamicLossScale`` keeps its state in two non-trainable variables named as
TensorFlow names them (``current_loss_scale`` and ``good_steps``) and, in
graph mode, ``update(grads)`` returns the op that adjusts them plus a boolean
tensor saying whether the step's gradients may be applied.
"""

from __future__ import annotations

import abc

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, control_flow_ops, math_ops
from ferroflow.ops import variables as variables_mod

__all__ = ["LossScale", "FixedLossScale", "DynamicLossScale", "get"]


class LossScale(metaclass=abc.ABCMeta):
    """Loss scale base class: ``__call__`` gives the scale (a float32 scalar), ``update`` adjusts it."""

    def __init__(self):
        # (name, graph) -> variable, as TF keys its weights.
        self._weights = {}

    @abc.abstractmethod
    def __call__(self):
        """The current loss scale as a scalar float32 tensor."""

    @abc.abstractmethod
    def update(self, grads):
        """``(update_op, should_apply_gradients)`` for the (unscaled) gradients ``grads``."""

    def _add_weight(self, name, initial_value, dtype=None):
        graph = ops.get_default_graph()
        key = (name, id(graph))
        if self._weights.get(key) is not None:
            raise RuntimeError(f"Duplicate variables detected. {(name, graph)}")
        with ops.init_scope():
            variable = variables_mod.Variable(initial_value=initial_value, name=name, dtype=dtype, trainable=False)
        self._weights[key] = variable
        return variable

    def _weights_in_graph(self):
        graph_id = id(ops.get_default_graph())
        return [v for (_, gid), v in sorted(self._weights.items()) if gid == graph_id]

    def get_config(self):
        """The constructor arguments of this loss scale."""
        return {}

    @classmethod
    def from_config(cls, config):
        """Creates the loss scale from its ``get_config()``."""
        return cls(**config)


class FixedLossScale(LossScale):
    """A loss scale that never changes."""

    def __init__(self, loss_scale_value):
        super().__init__()
        if isinstance(loss_scale_value, bool) or not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return ops.convert_to_tensor(self._loss_scale_value)

    def update(self, grads):
        del grads
        return control_flow_ops.no_op(), True

    def __repr__(self):
        return f"FixedLossScale({self._loss_scale_value})"

    def get_config(self):
        return {"loss_scale_value": self._loss_scale_value}


def _is_all_finite(grads):
    """A scalar bool: every element of every (non-None) gradient is finite."""
    per_grad = []
    for g in grads:
        if g is None:
            continue
        values = g.values if hasattr(g, "indices") and hasattr(g, "values") else g
        per_grad.append(math_ops.reduce_all(math_ops.is_finite(values)))
    if not per_grad:
        return ops.convert_to_tensor(True)
    return math_ops.reduce_all(ops.convert_to_tensor(per_grad) if len(per_grad) > 1 else per_grad[0])


class DynamicLossScale(LossScale):
    """A loss scale that doubles (by ``multiplier``) every ``increment_period`` finite steps and halves on overflow.

    A step whose gradients hold an Inf or NaN is skipped: ``update`` says not
    to apply it, divides the scale by ``multiplier`` (never below 1) and
    resets the good-step counter.
    """

    def __init__(self, initial_loss_scale=2 ** 15, increment_period=2000, multiplier=2.0):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight(
            name="current_loss_scale", dtype=dtypes.float32, initial_value=self._initial_loss_scale)
        self._num_good_steps = self._add_weight(name="good_steps", dtype=dtypes.int64, initial_value=0)

    @property
    def initial_loss_scale(self):
        return self._initial_loss_scale

    @property
    def increment_period(self):
        return self._increment_period

    @property
    def multiplier(self):
        return self._multiplier

    def __call__(self):
        return ops.convert_to_tensor(self._current_loss_scale)

    def update(self, grads):
        """``(update_op, is_finite)``: the op adjusting the scale and counter, and whether to apply ``grads``."""
        grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
        is_finite = _is_all_finite(grads)
        scale, good = self._current_loss_scale, self._num_good_steps
        # TF's nested conds, computed branch-free with selects (same values): on finite gradients the
        # counter grows and, reaching ``increment_period``, resets while the scale is multiplied (kept
        # if that overflows); on non-finite ones the counter resets and the scale is divided (floor 1).
        reaches_period = (good + 1) >= self._increment_period
        grown = scale * self._multiplier
        grown = array_ops.where(math_ops.is_finite(grown), grown, scale)
        shrunk = math_ops.maximum(scale / self._multiplier, 1.0)
        new_scale = array_ops.where(is_finite, array_ops.where(reaches_period, grown, scale), shrunk)
        zero = ops.convert_to_tensor(0, dtype=dtypes.int64)
        new_good = array_ops.where(
            math_ops.logical_and(is_finite, math_ops.logical_not(reaches_period)), good + 1, zero)
        update_op = control_flow_ops.group(scale.assign(new_scale), good.assign(new_good))
        return update_op, is_finite

    def __repr__(self):
        return (f"DynamicLossScale(initial_loss_scale={self.initial_loss_scale}, "
                f"increment_period={self.increment_period}, multiplier={self.multiplier})")

    def get_config(self):
        return {"initial_loss_scale": self.initial_loss_scale, "increment_period": self.increment_period,
                "multiplier": self.multiplier}


def get(identifier):
    """A loss scale from a number (fixed), ``"dynamic"``, a ``LossScale`` or None."""
    if isinstance(identifier, (int, float)) and not isinstance(identifier, bool):
        return FixedLossScale(identifier)
    if isinstance(identifier, str) and identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale):
        return identifier
    if identifier is None:
        return None
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")
