"""The protocol buffer messages TensorFlow exports under ``tf.train``."""

from ferroflow.protos import (
    BytesList,
    CheckpointState,
    ClusterDef,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    JobDef,
    SaverDef,
    SequenceExample,
    ServerDef,
)

__all__ = [
    "BytesList", "CheckpointState", "ClusterDef", "Example", "Feature", "FeatureList", "FeatureLists",
    "Features", "FloatList", "Int64List", "JobDef", "SaverDef", "SequenceExample", "ServerDef",
]
