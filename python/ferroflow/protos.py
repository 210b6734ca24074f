"""TensorFlow's protocol buffer message classes, in one place.

Generated from ferroflow's own .proto files (``ferroflow/core``), which keep
TensorFlow's package, names and field numbers: bytes, text format and JSON are
interchangeable with TensorFlow's. ``tf.GraphDef``, ``tf.ConfigProto``,
``tf.train.Example`` and friends are these classes.
"""

from ferroflow.core.example.example_pb2 import Example, SequenceExample
from ferroflow.core.example.feature_pb2 import (
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)
from ferroflow.core.framework.attr_value_pb2 import AttrValue, NameAttrList
from ferroflow.core.framework.full_type_pb2 import FullTypeDef, FullTypeId
from ferroflow.core.framework.function_pb2 import (
    FunctionDef,
    FunctionDefLibrary,
    GradientDef,
    RegisteredGradient,
)
from ferroflow.core.framework.graph_debug_info_pb2 import GraphDebugInfo
from ferroflow.core.framework.graph_pb2 import GraphDef
from ferroflow.core.framework.histogram_pb2 import HistogramProto
from ferroflow.core.framework.node_def_pb2 import NodeDef
from ferroflow.core.framework.op_def_pb2 import OpDef, OpDeprecation, OpList
from ferroflow.core.framework.resource_handle_pb2 import ResourceHandleProto
from ferroflow.core.framework.step_stats_pb2 import (
    AllocationRecord,
    AllocatorMemoryUsed,
    DeviceStepStats,
    MemoryStats,
    NodeExecStats,
    StepStats,
)
from ferroflow.core.framework.summary_pb2 import DataClass, Summary, SummaryDescription, SummaryMetadata
from ferroflow.core.framework.tensor_pb2 import TensorProto, VariantTensorDataProto
from ferroflow.core.framework.tensor_shape_pb2 import TensorShapeProto
from ferroflow.core.framework.tensor_slice_pb2 import TensorSliceProto
from ferroflow.core.framework.types_pb2 import DataType, SerializedDType
from ferroflow.core.framework.variable_pb2 import (
    SaveSliceInfoDef,
    VariableAggregation,
    VariableDef,
    VariableSynchronization,
)
from ferroflow.core.framework.versions_pb2 import VersionDef
from ferroflow.core.protobuf.checkpoint_state_pb2 import CheckpointState
from ferroflow.core.protobuf.cluster_pb2 import ClusterDef, JobDef
from ferroflow.core.protobuf.config_pb2 import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
    SessionMetadata,
    ThreadPoolOptionProto,
)
from ferroflow.core.protobuf.device_filters_pb2 import (
    ClusterDeviceFilters,
    JobDeviceFilters,
    TaskDeviceFilters,
)
from ferroflow.core.protobuf.meta_graph_pb2 import (
    AssetFileDef,
    CollectionDef,
    MetaGraphDef,
    SignatureDef,
    TensorInfo,
)
from ferroflow.core.protobuf.rewriter_config_pb2 import (
    AutoParallelOptions,
    RewriterConfig,
    ScopedAllocatorOptions,
)
from ferroflow.core.protobuf.saver_pb2 import SaverDef
from ferroflow.core.protobuf.struct_pb2 import (
    BoundedTensorSpecProto,
    DictValue,
    ListValue,
    NamedTupleValue,
    NoneValue,
    PairValue,
    StructuredValue,
    TensorSpecProto,
    TupleValue,
    TypeSpecProto,
)
from ferroflow.core.protobuf.tensor_bundle_pb2 import BundleEntryProto, BundleHeaderProto
from ferroflow.core.protobuf.tensorflow_server_pb2 import ServerDef
from ferroflow.core.protobuf.trackable_object_graph_pb2 import RegisteredSaver, TrackableObjectGraph
from ferroflow.core.util.event_pb2 import (
    Event,
    LogMessage,
    RequestedExitCode,
    SessionLog,
    SourceMetadata,
    TaggedRunMetadata,
    WatchdogConfig,
    WorkerHealth,
    WorkerHeartbeatRequest,
    WorkerHeartbeatResponse,
    WorkerShutdownMode,
)

__all__ = [
    "AllocationRecord", "AllocatorMemoryUsed", "AssetFileDef", "AttrValue", "AutoParallelOptions",
    "BoundedTensorSpecProto", "BundleEntryProto", "BundleHeaderProto", "BytesList", "CheckpointState",
    "ClusterDef", "ClusterDeviceFilters", "CollectionDef", "ConfigProto", "DataClass", "DataType",
    "DeviceStepStats", "DictValue", "Event", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
    "FloatList", "FullTypeDef", "FullTypeId", "FunctionDef", "FunctionDefLibrary", "GPUOptions",
    "GradientDef", "GraphDebugInfo", "GraphDef", "GraphOptions", "HistogramProto", "Int64List", "JobDef",
    "JobDeviceFilters", "ListValue", "LogMessage", "MemoryStats", "MetaGraphDef", "NameAttrList",
    "NamedTupleValue", "NodeDef", "NodeExecStats", "NoneValue", "OpDef", "OpDeprecation", "OpList",
    "OptimizerOptions", "PairValue", "RegisteredGradient", "RegisteredSaver", "RequestedExitCode",
    "ResourceHandleProto", "RewriterConfig", "RunMetadata", "RunOptions", "SaveSliceInfoDef", "SaverDef",
    "ScopedAllocatorOptions", "SequenceExample", "SerializedDType", "ServerDef", "SessionLog",
    "SessionMetadata", "SignatureDef", "SourceMetadata", "StepStats", "StructuredValue", "Summary",
    "SummaryDescription", "SummaryMetadata", "TaggedRunMetadata", "TaskDeviceFilters", "TensorInfo",
    "TensorProto", "TensorShapeProto", "TensorSliceProto", "TensorSpecProto", "ThreadPoolOptionProto",
    "TrackableObjectGraph", "TupleValue", "TypeSpecProto", "VariableAggregation", "VariableDef",
    "VariableSynchronization", "VariantTensorDataProto", "VersionDef", "WatchdogConfig", "WorkerHealth",
    "WorkerHeartbeatRequest", "WorkerHeartbeatResponse", "WorkerShutdownMode",
]
