"""``tf.nest``: flatten, rebuild and map nested structures of lists, tuples, dicts, namedtuples and attrs objects."""

from ferroflow.ops._nest import assert_same_structure, flatten, is_nested, map_structure, pack_sequence_as

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
