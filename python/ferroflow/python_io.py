"""``tf.python_io`` (``tf.compat.v1.python_io``): TFRecord files."""

from ferroflow.platform.tf_record import (  # noqa: F401
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
