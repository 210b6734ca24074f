"""What a Saver saves: ``SaveSpec`` (one tensor and its checkpoint key) and ``SaveableObject``.

They sit in the framework layer because ops modules define saveables of their own (a mutable lookup
table saves its exported keys and values) and must not import the training package.
"""

from __future__ import annotations

from ferroflow.framework import dtypes


class SaveSpec:
    """One tensor a saveable writes: its value, its checkpoint key and its slice spec (``""`` if whole)."""

    def __init__(self, tensor, slice_spec, name, dtype=None, device=None):
        self._tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtypes.as_dtype(dtype if dtype is not None else tensor.dtype).base_dtype
        self.device = device if device is not None else getattr(tensor, "device", "")

    @property
    def tensor(self):
        """The tensor to save (called if it was given as a function)."""
        return self._tensor() if callable(self._tensor) else self._tensor


class SaveableObject:
    """Something the Saver can save (through ``specs``) and restore (``restore``)."""

    def __init__(self, op, specs, name):
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self):
        return self.specs[0].device if self.specs else ""

    def restore(self, restored_tensors, restored_shapes):
        """An op assigning ``restored_tensors`` back (subclasses implement it)."""
        raise NotImplementedError(f"Saveable {self.name} cannot be restored")
