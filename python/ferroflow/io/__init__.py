"""``tf.io``: file access, TFRecord files, readers and parsing."""

from ferroflow.framework.graph_io import write_graph  # noqa: F401
from ferroflow.io import gfile  # noqa: F401
from ferroflow.ops.image_codecs import *  # noqa: F401,F403
from ferroflow.ops.io_ops import *  # noqa: F401,F403
from ferroflow.ops.parsing_ops import *  # noqa: F401,F403
from ferroflow.ops.parsing_ragged import RaggedFeature  # noqa: F401
from ferroflow.ops.proto_ops import decode_proto, encode_proto  # noqa: F401
from ferroflow.platform.tf_record import (  # noqa: F401
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from ferroflow.training.input import match_filenames_once  # noqa: F401
