"""``tf.summary``: TF1 summary ops, ``FileWriter`` and the summary protocol buffers."""

from ferroflow.core.framework.summary_pb2 import Summary, SummaryDescription  # noqa: F401
from ferroflow.core.util.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from ferroflow.summary.summary_ops import (  # noqa: F401
    all_v2_summary_ops,
    audio,
    get_summary_description,
    histogram,
    image,
    initialize,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from ferroflow.summary.writer import FileWriter, FileWriterCache  # noqa: F401
