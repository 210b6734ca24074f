"""``tf.train.experimental.PythonState``: Python state saved in object-based checkpoints."""

from __future__ import annotations

import abc

__all__ = ["PythonState"]


class PythonState(metaclass=abc.ABCMeta):
    """A mixin whose ``serialize()`` bytes a ``tf.train.Checkpoint`` saves and hands back to ``deserialize``."""

    @abc.abstractmethod
    def serialize(self):
        """The object's state as a string (bytes)."""

    @abc.abstractmethod
    def deserialize(self, string_value):
        """Restores the state from what ``serialize`` returned."""
