"""``tf.data.TFRecordDataset``, ``TextLineDataset`` and ``FixedLengthRecordDataset``."""

from __future__ import annotations

from ferroflow.data import _structure as structure
from ferroflow.data.dataset_ops import Dataset, _int64, _string
from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make

__all__ = ["FixedLengthRecordDataset", "TFRecordDataset", "TextLineDataset"]

_DEFAULT_BUFFER = 256 * 1024


def _filenames(filenames):
    t = ops.convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if t.shape.rank not in (None, 0, 1):
        raise TypeError("`filenames` must be a `tf.Tensor` of `tf.string` of rank 0 or 1.")
    return t


def _records(op_type, filenames, inputs, name):
    s = structure.TensorSpec([], dtypes.string)
    with ops.name_scope(name, op_type):
        v = make(op_type, [filenames] + inputs, {"metadata": ""} if op_type != "TFRecordDataset" else {})
    return Dataset(v, s)


def _maybe_parallel(filenames, num_parallel_reads, one_file):
    """One dataset over ``filenames``, or an interleave of one per file read in parallel."""
    if num_parallel_reads is None:
        return one_file(filenames)
    files = Dataset.from_tensor_slices(filenames if filenames.shape.rank == 1 else [filenames])
    return files.interleave(one_file, cycle_length=num_parallel_reads, block_length=1,
                            num_parallel_calls=num_parallel_reads)


class _FileDataset(Dataset):
    """The records of one or more files, read by the op ``_op`` from its file name, compression type and
    buffer size (TFRecord files, text lines)."""

    _op = None

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        args = (filenames, compression_type, buffer_size, num_parallel_reads)
        filenames = _filenames(filenames)

        def one(f):
            return _records(
                self._op, f,
                [_string(compression_type or "", "compression_type"),
                 _int64(_DEFAULT_BUFFER if buffer_size is None else buffer_size, "buffer_size")],
                name,
            )

        ds = _maybe_parallel(filenames, num_parallel_reads, one)
        super().__init__(ds._variant_tensor, ds._structure)
        self._rebuild = lambda: type(self)(*args)


class TFRecordDataset(_FileDataset):
    """The records of one or more TFRecord files (``compression_type`` "", "ZLIB" or "GZIP")."""

    _op = "TFRecordDataset"


class TextLineDataset(_FileDataset):
    """The lines of one or more text files, without their line ends."""

    _op = "TextLineDataset"


class FixedLengthRecordDataset(Dataset):
    """Records of ``record_bytes`` bytes between a header and a footer of each file."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        args = (filenames, record_bytes, header_bytes, footer_bytes, buffer_size, compression_type,
                num_parallel_reads)
        filenames = _filenames(filenames)

        def one(f):
            return _records(
                "FixedLengthRecordDatasetV2", f,
                [_int64(header_bytes or 0, "header_bytes"), _int64(record_bytes, "record_bytes"),
                 _int64(footer_bytes or 0, "footer_bytes"),
                 _int64(_DEFAULT_BUFFER if buffer_size is None else buffer_size, "buffer_size"),
                 _string(compression_type or "", "compression_type")],
                name,
            )

        ds = _maybe_parallel(filenames, num_parallel_reads, one)
        super().__init__(ds._variant_tensor, ds._structure)
        self._rebuild = lambda: type(self)(*args)
