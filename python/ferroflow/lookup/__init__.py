"""``tf.lookup`` (TF1's names, as ``tf.compat.v1.lookup``): tables and their initializers
(see ``ferroflow.ops.lookup_ops``)."""

from ferroflow.lookup import experimental
from ferroflow.ops.lookup_ops import (
    KeyValueTensorInitializer,
    TextFileIndex,
    TextFileInitializer,
)
from ferroflow.ops.lookup_ops import StaticHashTableV1 as StaticHashTable
from ferroflow.ops.lookup_ops import StaticVocabularyTableV1 as StaticVocabularyTable

__all__ = [
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
    "experimental",
]
