"""``tf.keras.regularizers``: ``l1``, ``l2``, ``l1_l2`` (a weight's penalty, added to the model's loss)."""

from __future__ import annotations

from ferroflow.ops import math_ops

__all__ = ["L1L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2", "serialize"]


class Regularizer:
    """Base class: ``regularizer(weight)`` returns a scalar penalty tensor."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = float(l1)
        self.l2 = float(l2)

    def __call__(self, x):
        terms = []
        if self.l1:
            terms.append(math_ops.reduce_sum(self.l1 * math_ops.abs(x)))
        if self.l2:
            terms.append(math_ops.reduce_sum(self.l2 * math_ops.square(x)))
        if not terms:
            return math_ops.cast(0.0, x.dtype.base_dtype)
        return terms[0] if len(terms) == 1 else math_ops.add(terms[0], terms[1])

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):  # noqa: E741 - Keras's argument name
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811
    return L1L2(l1=l1, l2=l2)


def serialize(regularizer):
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config, custom_objects=None):
    """A regularizer from ``{"class_name", "config"}``: ``L1L2``, or TF 2.x's ``L1``/``L2`` (as ``L1L2``)."""
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or {"L1L2": L1L2, "L1": L1L2, "L2": L1L2}.get(name)
    if cls is None:
        raise ValueError(f"Unknown regularizer: {name}")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier in ("l1", "l2", "l1_l2"):
            return {"l1": l1, "l2": l2, "l1_l2": l1_l2}[identifier]()
        raise ValueError(f"Unknown regularizer: {identifier}")
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
