"""TF1's readers (``tf.TFRecordReader``, ``tf.TextLineReader``, ``tf.FixedLengthRecordReader``,
``tf.WholeFileReader``, ``tf.IdentityReader``, ``tf.LMDBReader`` and their base ``tf.ReaderBase``) and the
whole-file ops ``tf.read_file``, ``tf.write_file``, ``tf.matching_files`` (also under ``tf.io``).

A reader takes file names from a queue (``string_input_producer``) and yields ``(key, value)`` records; the
reading runs in Rust and waits on the queue without holding the GIL. ``LMDBReader`` has only TensorFlow's
reference-handle op, so its methods build TensorFlow's older ops (``ReaderRead`` over a ``FakeQueue``, ...),
as TensorFlow does.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops.data_flow_ops import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
from ferroflow.platform.tf_record import TFRecordOptions

__all__ = [
    "ReaderBase",
    "TFRecordReader",
    "TextLineReader",
    "FixedLengthRecordReader",
    "WholeFileReader",
    "IdentityReader",
    "LMDBReader",
    "read_file",
    "write_file",
    "matching_files",
    # tf.io's queue names
    "PaddingFIFOQueue",
    "PriorityQueue",
    "QueueBase",
    "RandomShuffleQueue",
]


def _queue_handle(queue):
    return queue.queue_ref if hasattr(queue, "queue_ref") else ops.convert_to_tensor(queue)


def _op_type(reader_ref, v2_type):
    """The V2 op for a resource handle, TensorFlow's older op (no ``V2``) for a reference handle."""
    return v2_type if reader_ref.dtype == dtypes.resource else v2_type[:-2]


class ReaderBase:
    """Base class for readers: the read ops over a reader handle (``reader_ref``)."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        """The reader's resource handle."""
        return self._reader_ref

    @property
    def supports_serialize(self):
        """Whether ``serialize_state`` and ``restore_state`` work for this reader."""
        return self._supports_serialize

    def read(self, queue, name=None):
        """The next ``(key, value)`` record, taking a new file name from ``queue`` when one is used up;
        ``OutOfRangeError`` once the queue is closed and empty."""
        return self._read_op("ReaderReadV2", [_queue_handle(queue)], name)

    def _read_op(self, v2_type, inputs, name):
        op_type = _op_type(self._reader_ref, v2_type)
        if op_type != v2_type:
            # A reference-handle reader reads a queue through a reference to it, as TensorFlow does.
            inputs = [make("FakeQueue", [inputs[0]], {})] + inputs[1:]
        op = make_op(op_type, [self._reader_ref] + inputs, {}, name=name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records (``keys``, ``values`` vectors) from one file."""
        n = ops.convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
        return self._read_op("ReaderReadUpToV2", [_queue_handle(queue), n], name)

    def num_records_produced(self, name=None):
        """An int64 tensor: the records read so far."""
        return make(_op_type(self._reader_ref, "ReaderNumRecordsProducedV2"), [self._reader_ref], {}, name=name)

    def num_work_units_completed(self, name=None):
        """An int64 tensor: the files finished so far."""
        return make(_op_type(self._reader_ref, "ReaderNumWorkUnitsCompletedV2"), [self._reader_ref], {}, name=name)

    def serialize_state(self, name=None):
        """A string tensor: the reader's state (``UnimplementedError`` for readers that cannot)."""
        return make(_op_type(self._reader_ref, "ReaderSerializeStateV2"), [self._reader_ref], {}, name=name)

    def restore_state(self, state, name=None):
        """An op restoring a state from ``serialize_state``."""
        state = ops.convert_to_tensor(state, dtype=dtypes.string, name="state")
        return make_op(_op_type(self._reader_ref, "ReaderRestoreStateV2"), [self._reader_ref, state], {}, name=name)

    def reset(self, name=None):
        """An op returning the reader to its initial state."""
        return make_op(_op_type(self._reader_ref, "ReaderResetV2"), [self._reader_ref], {}, name=name)


def _reader(op_type, name, **attrs):
    attrs.setdefault("container", "")
    attrs.setdefault("shared_name", "")
    return make(op_type, [], attrs, name=name)


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files; ``options`` (a ``TFRecordOptions`` or compression name) gives
    the compression. Keys are ``file:offset``."""

    def __init__(self, name=None, options=None):
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__(_reader("TFRecordReaderV2", name, compression_type=compression))


class TextLineReader(ReaderBase):
    """Reads the lines of text files (newlines removed), after ``skip_header_lines`` lines of each file.
    Keys are ``file:line`` (1-based)."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_reader("TextLineReaderV2", name, skip_header_lines=int(skip_header_lines or 0)))


class FixedLengthRecordReader(ReaderBase):
    """Reads records of ``record_bytes`` bytes between ``header_bytes`` and ``footer_bytes`` of each file,
    one every ``hop_bytes`` bytes (default: back to back). Keys are ``file:index``."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None,
                 encoding=None):
        super().__init__(_reader(
            "FixedLengthRecordReaderV2", name,
            record_bytes=int(record_bytes),
            header_bytes=int(header_bytes or 0),
            footer_bytes=int(footer_bytes or 0),
            hop_bytes=int(hop_bytes or 0),
            encoding=encoding or "",
        ))


class WholeFileReader(ReaderBase):
    """Reads each file whole: key the file name, value its contents."""

    def __init__(self, name=None):
        super().__init__(_reader("WholeFileReaderV2", name))


class IdentityReader(ReaderBase):
    """Outputs each work item itself as key and value (supports ``serialize_state``)."""

    def __init__(self, name=None):
        super().__init__(_reader("IdentityReaderV2", name), supports_serialize=True)


class LMDBReader(ReaderBase):
    """Reads the entries of LMDB databases (a ``data.mdb`` file or its directory), each file's in key
    order: key the entry's key, value its value. ``options`` is accepted and unused, as in TensorFlow.

    Corrupt or truncated files fail with ``DataLossError`` naming the file; databases with sorted
    duplicates or named sub-databases with ``UnimplementedError``. (TensorFlow 2.21 keeps the class but its
    kernel only raises UnimplementedError; ferroflow reads the files itself, without liblmdb.)
    """

    def __init__(self, name=None, options=None):
        del options  # unused, as in TensorFlow
        super().__init__(_reader("LMDBReader", name))


def read_file(filename, name=None):
    """A string tensor: the contents of the file ``filename``."""
    filename = ops.convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    return make("ReadFile", [filename], {}, name=name)


def write_file(filename, contents, name=None):
    """An op writing ``contents`` to ``filename`` (atomically; parent directories are created)."""
    filename = ops.convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    contents = ops.convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    return make_op("WriteFile", [filename, contents], {}, name=name)


def matching_files(pattern, name=None):
    """A string vector: the sorted files matching the glob ``pattern`` (a string or a vector of them)."""
    pattern = ops.convert_to_tensor(pattern, dtype=dtypes.string, name="pattern")
    return make("MatchingFiles", [pattern], {}, name=name)
