"""The protocol buffer messages TensorFlow exports at the top level (``tf.GraphDef`` etc.)."""

from ferroflow.protos import (
    AttrValue,
    ConfigProto,
    Event,
    GPUOptions,
    GraphDef,
    GraphOptions,
    HistogramProto,
    LogMessage,
    MetaGraphDef,
    NameAttrList,
    NodeDef,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
    SessionLog,
    Summary,
    SummaryMetadata,
    TensorInfo,
)

__all__ = [
    "AttrValue", "ConfigProto", "Event", "GPUOptions", "GraphDef", "GraphOptions", "HistogramProto",
    "LogMessage", "MetaGraphDef", "NameAttrList", "NodeDef", "OptimizerOptions", "RunMetadata", "RunOptions",
    "SessionLog", "Summary", "SummaryMetadata", "TensorInfo",
]
