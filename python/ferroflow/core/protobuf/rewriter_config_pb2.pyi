from ferroflow.core.framework import attr_value_pb2 as _attr_value_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AutoParallelOptions(_message.Message):
    __slots__ = ("enable", "num_replicas")
    ENABLE_FIELD_NUMBER: _ClassVar[int]
    NUM_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    enable: bool
    num_replicas: int
    def __init__(self, enable: bool = ..., num_replicas: _Optional[int] = ...) -> None: ...

class ScopedAllocatorOptions(_message.Message):
    __slots__ = ("enable_op",)
    ENABLE_OP_FIELD_NUMBER: _ClassVar[int]
    enable_op: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, enable_op: _Optional[_Iterable[str]] = ...) -> None: ...

class RewriterConfig(_message.Message):
    __slots__ = ("cpu_layout_conversion", "layout_optimizer", "constant_folding", "shape_optimization", "remapping", "common_subgraph_elimination", "arithmetic_optimization", "dependency_optimization", "loop_optimization", "function_optimization", "debug_stripper", "disable_model_pruning", "scoped_allocator_optimization", "pin_to_host_optimization", "implementation_selector", "auto_mixed_precision", "auto_mixed_precision_mkl", "auto_mixed_precision_onednn_bfloat16", "auto_mixed_precision_cpu", "disable_meta_optimizer", "disable_tfg_optimizer", "use_plugin_optimizers", "experimental_conditional_code_motion", "meta_optimizer_iterations", "min_graph_nodes", "experimental_disable_compressed_tensor_optimization", "experimental_disable_folding_quantization_emulation", "memory_optimization", "memory_optimizer_target_node_name_scope", "meta_optimizer_timeout_ms", "auto_parallel", "fail_on_optimizer_errors", "scoped_allocator_opts", "optimizers", "custom_optimizers")
    class Toggle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEFAULT: _ClassVar[RewriterConfig.Toggle]
        ON: _ClassVar[RewriterConfig.Toggle]
        OFF: _ClassVar[RewriterConfig.Toggle]
        AGGRESSIVE: _ClassVar[RewriterConfig.Toggle]
        EXPERIMENTAL_MLIR: _ClassVar[RewriterConfig.Toggle]
        EXPERIMENTAL_BOTH: _ClassVar[RewriterConfig.Toggle]
    DEFAULT: RewriterConfig.Toggle
    ON: RewriterConfig.Toggle
    OFF: RewriterConfig.Toggle
    AGGRESSIVE: RewriterConfig.Toggle
    EXPERIMENTAL_MLIR: RewriterConfig.Toggle
    EXPERIMENTAL_BOTH: RewriterConfig.Toggle
    class CpuLayout(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        NO_CONVERSION_ON_CPU: _ClassVar[RewriterConfig.CpuLayout]
        NCHW_TO_NHWC: _ClassVar[RewriterConfig.CpuLayout]
        NHWC_TO_NCHW: _ClassVar[RewriterConfig.CpuLayout]
    NO_CONVERSION_ON_CPU: RewriterConfig.CpuLayout
    NCHW_TO_NHWC: RewriterConfig.CpuLayout
    NHWC_TO_NCHW: RewriterConfig.CpuLayout
    class NumIterationsType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEFAULT_NUM_ITERS: _ClassVar[RewriterConfig.NumIterationsType]
        ONE: _ClassVar[RewriterConfig.NumIterationsType]
        TWO: _ClassVar[RewriterConfig.NumIterationsType]
    DEFAULT_NUM_ITERS: RewriterConfig.NumIterationsType
    ONE: RewriterConfig.NumIterationsType
    TWO: RewriterConfig.NumIterationsType
    class MemOptType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEFAULT_MEM_OPT: _ClassVar[RewriterConfig.MemOptType]
        NO_MEM_OPT: _ClassVar[RewriterConfig.MemOptType]
        MANUAL: _ClassVar[RewriterConfig.MemOptType]
        SWAPPING_HEURISTICS: _ClassVar[RewriterConfig.MemOptType]
        RECOMPUTATION_HEURISTICS: _ClassVar[RewriterConfig.MemOptType]
        SCHEDULING_HEURISTICS: _ClassVar[RewriterConfig.MemOptType]
        HEURISTICS: _ClassVar[RewriterConfig.MemOptType]
    DEFAULT_MEM_OPT: RewriterConfig.MemOptType
    NO_MEM_OPT: RewriterConfig.MemOptType
    MANUAL: RewriterConfig.MemOptType
    SWAPPING_HEURISTICS: RewriterConfig.MemOptType
    RECOMPUTATION_HEURISTICS: RewriterConfig.MemOptType
    SCHEDULING_HEURISTICS: RewriterConfig.MemOptType
    HEURISTICS: RewriterConfig.MemOptType
    class CustomGraphOptimizer(_message.Message):
        __slots__ = ("name", "parameter_map")
        class ParameterMapEntry(_message.Message):
            __slots__ = ("key", "value")
            KEY_FIELD_NUMBER: _ClassVar[int]
            VALUE_FIELD_NUMBER: _ClassVar[int]
            key: str
            value: _attr_value_pb2.AttrValue
            def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_attr_value_pb2.AttrValue, _Mapping]] = ...) -> None: ...
        NAME_FIELD_NUMBER: _ClassVar[int]
        PARAMETER_MAP_FIELD_NUMBER: _ClassVar[int]
        name: str
        parameter_map: _containers.MessageMap[str, _attr_value_pb2.AttrValue]
        def __init__(self, name: _Optional[str] = ..., parameter_map: _Optional[_Mapping[str, _attr_value_pb2.AttrValue]] = ...) -> None: ...
    CPU_LAYOUT_CONVERSION_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_OPTIMIZER_FIELD_NUMBER: _ClassVar[int]
    CONSTANT_FOLDING_FIELD_NUMBER: _ClassVar[int]
    SHAPE_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    REMAPPING_FIELD_NUMBER: _ClassVar[int]
    COMMON_SUBGRAPH_ELIMINATION_FIELD_NUMBER: _ClassVar[int]
    ARITHMETIC_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCY_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    LOOP_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    DEBUG_STRIPPER_FIELD_NUMBER: _ClassVar[int]
    DISABLE_MODEL_PRUNING_FIELD_NUMBER: _ClassVar[int]
    SCOPED_ALLOCATOR_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    PIN_TO_HOST_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    IMPLEMENTATION_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    AUTO_MIXED_PRECISION_FIELD_NUMBER: _ClassVar[int]
    AUTO_MIXED_PRECISION_MKL_FIELD_NUMBER: _ClassVar[int]
    AUTO_MIXED_PRECISION_ONEDNN_BFLOAT16_FIELD_NUMBER: _ClassVar[int]
    AUTO_MIXED_PRECISION_CPU_FIELD_NUMBER: _ClassVar[int]
    DISABLE_META_OPTIMIZER_FIELD_NUMBER: _ClassVar[int]
    DISABLE_TFG_OPTIMIZER_FIELD_NUMBER: _ClassVar[int]
    USE_PLUGIN_OPTIMIZERS_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_CONDITIONAL_CODE_MOTION_FIELD_NUMBER: _ClassVar[int]
    META_OPTIMIZER_ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    MIN_GRAPH_NODES_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_DISABLE_COMPRESSED_TENSOR_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_DISABLE_FOLDING_QUANTIZATION_EMULATION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_OPTIMIZATION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_OPTIMIZER_TARGET_NODE_NAME_SCOPE_FIELD_NUMBER: _ClassVar[int]
    META_OPTIMIZER_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    AUTO_PARALLEL_FIELD_NUMBER: _ClassVar[int]
    FAIL_ON_OPTIMIZER_ERRORS_FIELD_NUMBER: _ClassVar[int]
    SCOPED_ALLOCATOR_OPTS_FIELD_NUMBER: _ClassVar[int]
    OPTIMIZERS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_OPTIMIZERS_FIELD_NUMBER: _ClassVar[int]
    cpu_layout_conversion: RewriterConfig.CpuLayout
    layout_optimizer: RewriterConfig.Toggle
    constant_folding: RewriterConfig.Toggle
    shape_optimization: RewriterConfig.Toggle
    remapping: RewriterConfig.Toggle
    common_subgraph_elimination: RewriterConfig.Toggle
    arithmetic_optimization: RewriterConfig.Toggle
    dependency_optimization: RewriterConfig.Toggle
    loop_optimization: RewriterConfig.Toggle
    function_optimization: RewriterConfig.Toggle
    debug_stripper: RewriterConfig.Toggle
    disable_model_pruning: bool
    scoped_allocator_optimization: RewriterConfig.Toggle
    pin_to_host_optimization: RewriterConfig.Toggle
    implementation_selector: RewriterConfig.Toggle
    auto_mixed_precision: RewriterConfig.Toggle
    auto_mixed_precision_mkl: RewriterConfig.Toggle
    auto_mixed_precision_onednn_bfloat16: RewriterConfig.Toggle
    auto_mixed_precision_cpu: RewriterConfig.Toggle
    disable_meta_optimizer: bool
    disable_tfg_optimizer: bool
    use_plugin_optimizers: RewriterConfig.Toggle
    experimental_conditional_code_motion: RewriterConfig.Toggle
    meta_optimizer_iterations: RewriterConfig.NumIterationsType
    min_graph_nodes: int
    experimental_disable_compressed_tensor_optimization: bool
    experimental_disable_folding_quantization_emulation: bool
    memory_optimization: RewriterConfig.MemOptType
    memory_optimizer_target_node_name_scope: str
    meta_optimizer_timeout_ms: int
    auto_parallel: AutoParallelOptions
    fail_on_optimizer_errors: bool
    scoped_allocator_opts: ScopedAllocatorOptions
    optimizers: _containers.RepeatedScalarFieldContainer[str]
    custom_optimizers: _containers.RepeatedCompositeFieldContainer[RewriterConfig.CustomGraphOptimizer]
    def __init__(self, cpu_layout_conversion: _Optional[_Union[RewriterConfig.CpuLayout, str]] = ..., layout_optimizer: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., constant_folding: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., shape_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., remapping: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., common_subgraph_elimination: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., arithmetic_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., dependency_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., loop_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., function_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., debug_stripper: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., disable_model_pruning: bool = ..., scoped_allocator_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., pin_to_host_optimization: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., implementation_selector: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., auto_mixed_precision: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., auto_mixed_precision_mkl: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., auto_mixed_precision_onednn_bfloat16: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., auto_mixed_precision_cpu: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., disable_meta_optimizer: bool = ..., disable_tfg_optimizer: bool = ..., use_plugin_optimizers: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., experimental_conditional_code_motion: _Optional[_Union[RewriterConfig.Toggle, str]] = ..., meta_optimizer_iterations: _Optional[_Union[RewriterConfig.NumIterationsType, str]] = ..., min_graph_nodes: _Optional[int] = ..., experimental_disable_compressed_tensor_optimization: bool = ..., experimental_disable_folding_quantization_emulation: bool = ..., memory_optimization: _Optional[_Union[RewriterConfig.MemOptType, str]] = ..., memory_optimizer_target_node_name_scope: _Optional[str] = ..., meta_optimizer_timeout_ms: _Optional[int] = ..., auto_parallel: _Optional[_Union[AutoParallelOptions, _Mapping]] = ..., fail_on_optimizer_errors: bool = ..., scoped_allocator_opts: _Optional[_Union[ScopedAllocatorOptions, _Mapping]] = ..., optimizers: _Optional[_Iterable[str]] = ..., custom_optimizers: _Optional[_Iterable[_Union[RewriterConfig.CustomGraphOptimizer, _Mapping]]] = ...) -> None: ...
