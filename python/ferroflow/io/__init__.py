"""``tf.io``: file access and TFRecord files."""

from ferroflow.framework.graph_io import write_graph  # noqa: F401
from ferroflow.io import gfile  # noqa: F401
from ferroflow.io.tf_record import (  # noqa: F401
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
