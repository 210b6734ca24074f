"""``tf.data``: input pipelines as dataset ops, run by Rust iterators (see ``dataset_ops``)."""

from ferroflow.data import experimental  # noqa: F401
from ferroflow.data._structure import DatasetSpec
from ferroflow.data.dataset_ops import (
    AUTOTUNE,
    Dataset,
    get_output_classes,
    get_output_shapes,
    get_output_types,
)
from ferroflow.data.experimental import Options, ThreadingOptions
from ferroflow.data.iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from ferroflow.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset

DatasetV1 = Dataset
INFINITE_CARDINALITY = experimental.INFINITE_CARDINALITY
UNKNOWN_CARDINALITY = experimental.UNKNOWN_CARDINALITY

__all__ = [
    "AUTOTUNE", "Dataset", "DatasetSpec", "DatasetV1", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "FixedLengthRecordDataset", "Iterator", "Options", "TFRecordDataset",
    "ThreadingOptions",
    "TextLineDataset", "experimental", "get_output_classes", "get_output_shapes", "get_output_types",
    "make_initializable_iterator", "make_one_shot_iterator",
]
