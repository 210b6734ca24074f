from ferroflow.core.framework import graph_pb2 as _graph_pb2
from ferroflow.core.framework import step_stats_pb2 as _step_stats_pb2
from ferroflow.core.protobuf import cluster_pb2 as _cluster_pb2
from ferroflow.core.protobuf import rewriter_config_pb2 as _rewriter_config_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GPUOptions(_message.Message):
    __slots__ = ("per_process_gpu_memory_fraction", "allow_growth", "allocator_type", "deferred_deletion_bytes", "visible_device_list", "polling_active_delay_usecs", "polling_inactive_delay_msecs", "force_gpu_compatible", "experimental")
    class Experimental(_message.Message):
        __slots__ = ("virtual_devices", "use_unified_memory", "num_dev_to_dev_copy_streams", "collective_ring_order", "timestamped_allocator", "kernel_tracker_max_interval", "kernel_tracker_max_bytes", "kernel_tracker_max_pending", "internal_fragmentation_fraction", "use_cuda_malloc_async", "disallow_retry_on_allocation_failure")
        class VirtualDevices(_message.Message):
            __slots__ = ("memory_limit_mb", "priority", "device_ordinal")
            MEMORY_LIMIT_MB_FIELD_NUMBER: _ClassVar[int]
            PRIORITY_FIELD_NUMBER: _ClassVar[int]
            DEVICE_ORDINAL_FIELD_NUMBER: _ClassVar[int]
            memory_limit_mb: _containers.RepeatedScalarFieldContainer[float]
            priority: _containers.RepeatedScalarFieldContainer[int]
            device_ordinal: _containers.RepeatedScalarFieldContainer[int]
            def __init__(self, memory_limit_mb: _Optional[_Iterable[float]] = ..., priority: _Optional[_Iterable[int]] = ..., device_ordinal: _Optional[_Iterable[int]] = ...) -> None: ...
        VIRTUAL_DEVICES_FIELD_NUMBER: _ClassVar[int]
        USE_UNIFIED_MEMORY_FIELD_NUMBER: _ClassVar[int]
        NUM_DEV_TO_DEV_COPY_STREAMS_FIELD_NUMBER: _ClassVar[int]
        COLLECTIVE_RING_ORDER_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMPED_ALLOCATOR_FIELD_NUMBER: _ClassVar[int]
        KERNEL_TRACKER_MAX_INTERVAL_FIELD_NUMBER: _ClassVar[int]
        KERNEL_TRACKER_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
        KERNEL_TRACKER_MAX_PENDING_FIELD_NUMBER: _ClassVar[int]
        INTERNAL_FRAGMENTATION_FRACTION_FIELD_NUMBER: _ClassVar[int]
        USE_CUDA_MALLOC_ASYNC_FIELD_NUMBER: _ClassVar[int]
        DISALLOW_RETRY_ON_ALLOCATION_FAILURE_FIELD_NUMBER: _ClassVar[int]
        virtual_devices: _containers.RepeatedCompositeFieldContainer[GPUOptions.Experimental.VirtualDevices]
        use_unified_memory: bool
        num_dev_to_dev_copy_streams: int
        collective_ring_order: str
        timestamped_allocator: bool
        kernel_tracker_max_interval: int
        kernel_tracker_max_bytes: int
        kernel_tracker_max_pending: int
        internal_fragmentation_fraction: float
        use_cuda_malloc_async: bool
        disallow_retry_on_allocation_failure: bool
        def __init__(self, virtual_devices: _Optional[_Iterable[_Union[GPUOptions.Experimental.VirtualDevices, _Mapping]]] = ..., use_unified_memory: bool = ..., num_dev_to_dev_copy_streams: _Optional[int] = ..., collective_ring_order: _Optional[str] = ..., timestamped_allocator: bool = ..., kernel_tracker_max_interval: _Optional[int] = ..., kernel_tracker_max_bytes: _Optional[int] = ..., kernel_tracker_max_pending: _Optional[int] = ..., internal_fragmentation_fraction: _Optional[float] = ..., use_cuda_malloc_async: bool = ..., disallow_retry_on_allocation_failure: bool = ...) -> None: ...
    PER_PROCESS_GPU_MEMORY_FRACTION_FIELD_NUMBER: _ClassVar[int]
    ALLOW_GROWTH_FIELD_NUMBER: _ClassVar[int]
    ALLOCATOR_TYPE_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_DELETION_BYTES_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_DEVICE_LIST_FIELD_NUMBER: _ClassVar[int]
    POLLING_ACTIVE_DELAY_USECS_FIELD_NUMBER: _ClassVar[int]
    POLLING_INACTIVE_DELAY_MSECS_FIELD_NUMBER: _ClassVar[int]
    FORCE_GPU_COMPATIBLE_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_FIELD_NUMBER: _ClassVar[int]
    per_process_gpu_memory_fraction: float
    allow_growth: bool
    allocator_type: str
    deferred_deletion_bytes: int
    visible_device_list: str
    polling_active_delay_usecs: int
    polling_inactive_delay_msecs: int
    force_gpu_compatible: bool
    experimental: GPUOptions.Experimental
    def __init__(self, per_process_gpu_memory_fraction: _Optional[float] = ..., allow_growth: bool = ..., allocator_type: _Optional[str] = ..., deferred_deletion_bytes: _Optional[int] = ..., visible_device_list: _Optional[str] = ..., polling_active_delay_usecs: _Optional[int] = ..., polling_inactive_delay_msecs: _Optional[int] = ..., force_gpu_compatible: bool = ..., experimental: _Optional[_Union[GPUOptions.Experimental, _Mapping]] = ...) -> None: ...

class OptimizerOptions(_message.Message):
    __slots__ = ("do_common_subexpression_elimination", "do_constant_folding", "max_folded_constant_in_bytes", "do_function_inlining", "opt_level", "global_jit_level", "cpu_global_jit")
    class Level(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        L1: _ClassVar[OptimizerOptions.Level]
        L0: _ClassVar[OptimizerOptions.Level]
    L1: OptimizerOptions.Level
    L0: OptimizerOptions.Level
    class GlobalJitLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEFAULT: _ClassVar[OptimizerOptions.GlobalJitLevel]
        OFF: _ClassVar[OptimizerOptions.GlobalJitLevel]
        ON_1: _ClassVar[OptimizerOptions.GlobalJitLevel]
        ON_2: _ClassVar[OptimizerOptions.GlobalJitLevel]
    DEFAULT: OptimizerOptions.GlobalJitLevel
    OFF: OptimizerOptions.GlobalJitLevel
    ON_1: OptimizerOptions.GlobalJitLevel
    ON_2: OptimizerOptions.GlobalJitLevel
    DO_COMMON_SUBEXPRESSION_ELIMINATION_FIELD_NUMBER: _ClassVar[int]
    DO_CONSTANT_FOLDING_FIELD_NUMBER: _ClassVar[int]
    MAX_FOLDED_CONSTANT_IN_BYTES_FIELD_NUMBER: _ClassVar[int]
    DO_FUNCTION_INLINING_FIELD_NUMBER: _ClassVar[int]
    OPT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_JIT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    CPU_GLOBAL_JIT_FIELD_NUMBER: _ClassVar[int]
    do_common_subexpression_elimination: bool
    do_constant_folding: bool
    max_folded_constant_in_bytes: int
    do_function_inlining: bool
    opt_level: OptimizerOptions.Level
    global_jit_level: OptimizerOptions.GlobalJitLevel
    cpu_global_jit: bool
    def __init__(self, do_common_subexpression_elimination: bool = ..., do_constant_folding: bool = ..., max_folded_constant_in_bytes: _Optional[int] = ..., do_function_inlining: bool = ..., opt_level: _Optional[_Union[OptimizerOptions.Level, str]] = ..., global_jit_level: _Optional[_Union[OptimizerOptions.GlobalJitLevel, str]] = ..., cpu_global_jit: bool = ...) -> None: ...

class GraphOptions(_message.Message):
    __slots__ = ("enable_recv_scheduling", "optimizer_options", "build_cost_model", "build_cost_model_after", "infer_shapes", "place_pruned_graph", "enable_bfloat16_sendrecv", "timeline_step", "rewrite_options")
    ENABLE_RECV_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    OPTIMIZER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    BUILD_COST_MODEL_FIELD_NUMBER: _ClassVar[int]
    BUILD_COST_MODEL_AFTER_FIELD_NUMBER: _ClassVar[int]
    INFER_SHAPES_FIELD_NUMBER: _ClassVar[int]
    PLACE_PRUNED_GRAPH_FIELD_NUMBER: _ClassVar[int]
    ENABLE_BFLOAT16_SENDRECV_FIELD_NUMBER: _ClassVar[int]
    TIMELINE_STEP_FIELD_NUMBER: _ClassVar[int]
    REWRITE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    enable_recv_scheduling: bool
    optimizer_options: OptimizerOptions
    build_cost_model: int
    build_cost_model_after: int
    infer_shapes: bool
    place_pruned_graph: bool
    enable_bfloat16_sendrecv: bool
    timeline_step: int
    rewrite_options: _rewriter_config_pb2.RewriterConfig
    def __init__(self, enable_recv_scheduling: bool = ..., optimizer_options: _Optional[_Union[OptimizerOptions, _Mapping]] = ..., build_cost_model: _Optional[int] = ..., build_cost_model_after: _Optional[int] = ..., infer_shapes: bool = ..., place_pruned_graph: bool = ..., enable_bfloat16_sendrecv: bool = ..., timeline_step: _Optional[int] = ..., rewrite_options: _Optional[_Union[_rewriter_config_pb2.RewriterConfig, _Mapping]] = ...) -> None: ...

class ThreadPoolOptionProto(_message.Message):
    __slots__ = ("num_threads", "global_name")
    NUM_THREADS_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_NAME_FIELD_NUMBER: _ClassVar[int]
    num_threads: int
    global_name: str
    def __init__(self, num_threads: _Optional[int] = ..., global_name: _Optional[str] = ...) -> None: ...

class ConfigProto(_message.Message):
    __slots__ = ("device_count", "intra_op_parallelism_threads", "inter_op_parallelism_threads", "use_per_session_threads", "session_inter_op_thread_pool", "placement_period", "device_filters", "gpu_options", "pluggable_device_options", "allow_soft_placement", "log_device_placement", "graph_options", "operation_timeout_in_ms", "cluster_def", "isolate_session_state", "share_cluster_devices_in_session", "experimental")
    class DeviceCountEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class Experimental(_message.Message):
        __slots__ = ("collective_group_leader", "executor_type", "recv_buf_max_chunk", "use_numa_affinity", "collective_deterministic_sequential_execution", "collective_nccl", "share_session_state_in_clusterspec_propagation", "disable_thread_spinning", "share_cluster_devices_in_session", "session_metadata", "optimize_for_static_graph", "enable_mlir_bridge", "mlir_bridge_rollout", "enable_mlir_graph_optimization", "disable_output_partition_graphs", "xla_fusion_autotuner_thresh", "use_tfrt", "disable_functional_ops_lowering", "xla_prefer_single_graph_cluster", "disable_optimize_for_static_graph")
        class MlirBridgeRollout(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            MLIR_BRIDGE_ROLLOUT_UNSPECIFIED: _ClassVar[ConfigProto.Experimental.MlirBridgeRollout]
            MLIR_BRIDGE_ROLLOUT_ENABLED: _ClassVar[ConfigProto.Experimental.MlirBridgeRollout]
            MLIR_BRIDGE_ROLLOUT_DISABLED: _ClassVar[ConfigProto.Experimental.MlirBridgeRollout]
        MLIR_BRIDGE_ROLLOUT_UNSPECIFIED: ConfigProto.Experimental.MlirBridgeRollout
        MLIR_BRIDGE_ROLLOUT_ENABLED: ConfigProto.Experimental.MlirBridgeRollout
        MLIR_BRIDGE_ROLLOUT_DISABLED: ConfigProto.Experimental.MlirBridgeRollout
        COLLECTIVE_GROUP_LEADER_FIELD_NUMBER: _ClassVar[int]
        EXECUTOR_TYPE_FIELD_NUMBER: _ClassVar[int]
        RECV_BUF_MAX_CHUNK_FIELD_NUMBER: _ClassVar[int]
        USE_NUMA_AFFINITY_FIELD_NUMBER: _ClassVar[int]
        COLLECTIVE_DETERMINISTIC_SEQUENTIAL_EXECUTION_FIELD_NUMBER: _ClassVar[int]
        COLLECTIVE_NCCL_FIELD_NUMBER: _ClassVar[int]
        SHARE_SESSION_STATE_IN_CLUSTERSPEC_PROPAGATION_FIELD_NUMBER: _ClassVar[int]
        DISABLE_THREAD_SPINNING_FIELD_NUMBER: _ClassVar[int]
        SHARE_CLUSTER_DEVICES_IN_SESSION_FIELD_NUMBER: _ClassVar[int]
        SESSION_METADATA_FIELD_NUMBER: _ClassVar[int]
        OPTIMIZE_FOR_STATIC_GRAPH_FIELD_NUMBER: _ClassVar[int]
        ENABLE_MLIR_BRIDGE_FIELD_NUMBER: _ClassVar[int]
        MLIR_BRIDGE_ROLLOUT_FIELD_NUMBER: _ClassVar[int]
        ENABLE_MLIR_GRAPH_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
        DISABLE_OUTPUT_PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
        XLA_FUSION_AUTOTUNER_THRESH_FIELD_NUMBER: _ClassVar[int]
        USE_TFRT_FIELD_NUMBER: _ClassVar[int]
        DISABLE_FUNCTIONAL_OPS_LOWERING_FIELD_NUMBER: _ClassVar[int]
        XLA_PREFER_SINGLE_GRAPH_CLUSTER_FIELD_NUMBER: _ClassVar[int]
        DISABLE_OPTIMIZE_FOR_STATIC_GRAPH_FIELD_NUMBER: _ClassVar[int]
        collective_group_leader: str
        executor_type: str
        recv_buf_max_chunk: int
        use_numa_affinity: bool
        collective_deterministic_sequential_execution: bool
        collective_nccl: bool
        share_session_state_in_clusterspec_propagation: bool
        disable_thread_spinning: bool
        share_cluster_devices_in_session: bool
        session_metadata: SessionMetadata
        optimize_for_static_graph: bool
        enable_mlir_bridge: bool
        mlir_bridge_rollout: ConfigProto.Experimental.MlirBridgeRollout
        enable_mlir_graph_optimization: bool
        disable_output_partition_graphs: bool
        xla_fusion_autotuner_thresh: int
        use_tfrt: bool
        disable_functional_ops_lowering: bool
        xla_prefer_single_graph_cluster: bool
        disable_optimize_for_static_graph: bool
        def __init__(self, collective_group_leader: _Optional[str] = ..., executor_type: _Optional[str] = ..., recv_buf_max_chunk: _Optional[int] = ..., use_numa_affinity: bool = ..., collective_deterministic_sequential_execution: bool = ..., collective_nccl: bool = ..., share_session_state_in_clusterspec_propagation: bool = ..., disable_thread_spinning: bool = ..., share_cluster_devices_in_session: bool = ..., session_metadata: _Optional[_Union[SessionMetadata, _Mapping]] = ..., optimize_for_static_graph: bool = ..., enable_mlir_bridge: bool = ..., mlir_bridge_rollout: _Optional[_Union[ConfigProto.Experimental.MlirBridgeRollout, str]] = ..., enable_mlir_graph_optimization: bool = ..., disable_output_partition_graphs: bool = ..., xla_fusion_autotuner_thresh: _Optional[int] = ..., use_tfrt: bool = ..., disable_functional_ops_lowering: bool = ..., xla_prefer_single_graph_cluster: bool = ..., disable_optimize_for_static_graph: bool = ...) -> None: ...
    DEVICE_COUNT_FIELD_NUMBER: _ClassVar[int]
    INTRA_OP_PARALLELISM_THREADS_FIELD_NUMBER: _ClassVar[int]
    INTER_OP_PARALLELISM_THREADS_FIELD_NUMBER: _ClassVar[int]
    USE_PER_SESSION_THREADS_FIELD_NUMBER: _ClassVar[int]
    SESSION_INTER_OP_THREAD_POOL_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_PERIOD_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    GPU_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PLUGGABLE_DEVICE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_SOFT_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    LOG_DEVICE_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    OPERATION_TIMEOUT_IN_MS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_DEF_FIELD_NUMBER: _ClassVar[int]
    ISOLATE_SESSION_STATE_FIELD_NUMBER: _ClassVar[int]
    SHARE_CLUSTER_DEVICES_IN_SESSION_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_FIELD_NUMBER: _ClassVar[int]
    device_count: _containers.ScalarMap[str, int]
    intra_op_parallelism_threads: int
    inter_op_parallelism_threads: int
    use_per_session_threads: bool
    session_inter_op_thread_pool: _containers.RepeatedCompositeFieldContainer[ThreadPoolOptionProto]
    placement_period: int
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    gpu_options: GPUOptions
    pluggable_device_options: GPUOptions
    allow_soft_placement: bool
    log_device_placement: bool
    graph_options: GraphOptions
    operation_timeout_in_ms: int
    cluster_def: _cluster_pb2.ClusterDef
    isolate_session_state: bool
    share_cluster_devices_in_session: bool
    experimental: ConfigProto.Experimental
    def __init__(self, device_count: _Optional[_Mapping[str, int]] = ..., intra_op_parallelism_threads: _Optional[int] = ..., inter_op_parallelism_threads: _Optional[int] = ..., use_per_session_threads: bool = ..., session_inter_op_thread_pool: _Optional[_Iterable[_Union[ThreadPoolOptionProto, _Mapping]]] = ..., placement_period: _Optional[int] = ..., device_filters: _Optional[_Iterable[str]] = ..., gpu_options: _Optional[_Union[GPUOptions, _Mapping]] = ..., pluggable_device_options: _Optional[_Union[GPUOptions, _Mapping]] = ..., allow_soft_placement: bool = ..., log_device_placement: bool = ..., graph_options: _Optional[_Union[GraphOptions, _Mapping]] = ..., operation_timeout_in_ms: _Optional[int] = ..., cluster_def: _Optional[_Union[_cluster_pb2.ClusterDef, _Mapping]] = ..., isolate_session_state: bool = ..., share_cluster_devices_in_session: bool = ..., experimental: _Optional[_Union[ConfigProto.Experimental, _Mapping]] = ...) -> None: ...

class RunOptions(_message.Message):
    __slots__ = ("trace_level", "timeout_in_ms", "inter_op_thread_pool", "output_partition_graphs", "report_tensor_allocations_upon_oom", "experimental")
    class TraceLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        NO_TRACE: _ClassVar[RunOptions.TraceLevel]
        SOFTWARE_TRACE: _ClassVar[RunOptions.TraceLevel]
        HARDWARE_TRACE: _ClassVar[RunOptions.TraceLevel]
        FULL_TRACE: _ClassVar[RunOptions.TraceLevel]
    NO_TRACE: RunOptions.TraceLevel
    SOFTWARE_TRACE: RunOptions.TraceLevel
    HARDWARE_TRACE: RunOptions.TraceLevel
    FULL_TRACE: RunOptions.TraceLevel
    class Experimental(_message.Message):
        __slots__ = ("collective_graph_key", "use_run_handler_pool", "run_handler_pool_options")
        class RunHandlerPoolOptions(_message.Message):
            __slots__ = ("priority",)
            PRIORITY_FIELD_NUMBER: _ClassVar[int]
            priority: int
            def __init__(self, priority: _Optional[int] = ...) -> None: ...
        COLLECTIVE_GRAPH_KEY_FIELD_NUMBER: _ClassVar[int]
        USE_RUN_HANDLER_POOL_FIELD_NUMBER: _ClassVar[int]
        RUN_HANDLER_POOL_OPTIONS_FIELD_NUMBER: _ClassVar[int]
        collective_graph_key: int
        use_run_handler_pool: bool
        run_handler_pool_options: RunOptions.Experimental.RunHandlerPoolOptions
        def __init__(self, collective_graph_key: _Optional[int] = ..., use_run_handler_pool: bool = ..., run_handler_pool_options: _Optional[_Union[RunOptions.Experimental.RunHandlerPoolOptions, _Mapping]] = ...) -> None: ...
    TRACE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_IN_MS_FIELD_NUMBER: _ClassVar[int]
    INTER_OP_THREAD_POOL_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    REPORT_TENSOR_ALLOCATIONS_UPON_OOM_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_FIELD_NUMBER: _ClassVar[int]
    trace_level: RunOptions.TraceLevel
    timeout_in_ms: int
    inter_op_thread_pool: int
    output_partition_graphs: bool
    report_tensor_allocations_upon_oom: bool
    experimental: RunOptions.Experimental
    def __init__(self, trace_level: _Optional[_Union[RunOptions.TraceLevel, str]] = ..., timeout_in_ms: _Optional[int] = ..., inter_op_thread_pool: _Optional[int] = ..., output_partition_graphs: bool = ..., report_tensor_allocations_upon_oom: bool = ..., experimental: _Optional[_Union[RunOptions.Experimental, _Mapping]] = ...) -> None: ...

class RunMetadata(_message.Message):
    __slots__ = ("step_stats", "partition_graphs", "function_graphs", "session_metadata")
    class FunctionGraphs(_message.Message):
        __slots__ = ("partition_graphs", "pre_optimization_graph", "post_optimization_graph")
        PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
        PRE_OPTIMIZATION_GRAPH_FIELD_NUMBER: _ClassVar[int]
        POST_OPTIMIZATION_GRAPH_FIELD_NUMBER: _ClassVar[int]
        partition_graphs: _containers.RepeatedCompositeFieldContainer[_graph_pb2.GraphDef]
        pre_optimization_graph: _graph_pb2.GraphDef
        post_optimization_graph: _graph_pb2.GraphDef
        def __init__(self, partition_graphs: _Optional[_Iterable[_Union[_graph_pb2.GraphDef, _Mapping]]] = ..., pre_optimization_graph: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., post_optimization_graph: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ...) -> None: ...
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    SESSION_METADATA_FIELD_NUMBER: _ClassVar[int]
    step_stats: _step_stats_pb2.StepStats
    partition_graphs: _containers.RepeatedCompositeFieldContainer[_graph_pb2.GraphDef]
    function_graphs: _containers.RepeatedCompositeFieldContainer[RunMetadata.FunctionGraphs]
    session_metadata: SessionMetadata
    def __init__(self, step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ..., partition_graphs: _Optional[_Iterable[_Union[_graph_pb2.GraphDef, _Mapping]]] = ..., function_graphs: _Optional[_Iterable[_Union[RunMetadata.FunctionGraphs, _Mapping]]] = ..., session_metadata: _Optional[_Union[SessionMetadata, _Mapping]] = ...) -> None: ...

class SessionMetadata(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...
