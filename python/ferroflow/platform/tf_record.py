"""TFRecord files: ``tf.io.TFRecordWriter``, ``tf.io.tf_record_iterator`` and their options.

The framing (length, masked CRC-32C of the length, payload, masked CRC-32C of
the payload) and the GZIP / ZLIB streams are written and read by the Rust
core (``ferroflow-records``); files are byte-compatible with TensorFlow's. A
corrupt or truncated record raises ``tf.errors.DataLossError`` naming the file
and the byte offset.
"""

from __future__ import annotations

import os

from ferroflow import _native

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]


class TFRecordCompressionType:
    """The type of compression for a TFRecord file."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """Options used for manipulating TFRecord files.

    Only ``compression_type`` changes what is written; the zlib tuning
    arguments are accepted for compatibility and recorded on the object.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        # Validates now; kept as given, like TensorFlow.
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression name (``""``, ``"ZLIB"`` or ``"GZIP"``) of options, a type or a name."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, int) and options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if isinstance(options, str) and options in cls.compression_type_map.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _path(path):
    path = os.fspath(path)
    return path.decode() if isinstance(path, bytes) else path


class TFRecordWriter:
    """A class to write records to a TFRecords file (a context manager; ``close`` ends the file)."""

    def __init__(self, path, options=None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(compression_type=options)
        self._options = options
        self._writer = _native.RecordWriter(_path(path), TFRecordOptions.get_compression_type_string(options))

    def __enter__(self):
        return self

    def __exit__(self, unused_type, unused_value, unused_traceback):
        self.close()

    def write(self, record):
        """Writes a string record to the file."""
        try:
            self._writer.write(record)
        except TypeError:
            if isinstance(record, str):
                self._writer.write(record.encode("utf-8"))
            elif isinstance(record, (bytearray, memoryview)):
                self._writer.write(bytes(record))
            else:
                raise TypeError(f"write() argument must be bytes or str, not {type(record).__name__}") from None

    def flush(self):
        """Flushes the file."""
        self._writer.flush()

    def close(self):
        """Closes the file."""
        self._writer.close()


def tf_record_iterator(path, options=None):
    """An iterator that reads the records from a TFRecords file.

    Raises ``NotFoundError`` if the file does not exist and, while iterating,
    ``DataLossError`` on a corrupt or truncated record.
    """
    compression = TFRecordOptions.get_compression_type_string(options)
    return _native.RecordReader(_path(path), compression)
