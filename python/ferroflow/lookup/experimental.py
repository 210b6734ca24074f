"""``tf.lookup.experimental``: the mutable tables (see ``ferroflow.ops.lookup_ops``)."""

from ferroflow.ops.lookup_ops import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
