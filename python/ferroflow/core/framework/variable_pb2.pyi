from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VariableSynchronization(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIABLE_SYNCHRONIZATION_AUTO: _ClassVar[VariableSynchronization]
    VARIABLE_SYNCHRONIZATION_NONE: _ClassVar[VariableSynchronization]
    VARIABLE_SYNCHRONIZATION_ON_WRITE: _ClassVar[VariableSynchronization]
    VARIABLE_SYNCHRONIZATION_ON_READ: _ClassVar[VariableSynchronization]

class VariableAggregation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIABLE_AGGREGATION_NONE: _ClassVar[VariableAggregation]
    VARIABLE_AGGREGATION_SUM: _ClassVar[VariableAggregation]
    VARIABLE_AGGREGATION_MEAN: _ClassVar[VariableAggregation]
    VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA: _ClassVar[VariableAggregation]
VARIABLE_SYNCHRONIZATION_AUTO: VariableSynchronization
VARIABLE_SYNCHRONIZATION_NONE: VariableSynchronization
VARIABLE_SYNCHRONIZATION_ON_WRITE: VariableSynchronization
VARIABLE_SYNCHRONIZATION_ON_READ: VariableSynchronization
VARIABLE_AGGREGATION_NONE: VariableAggregation
VARIABLE_AGGREGATION_SUM: VariableAggregation
VARIABLE_AGGREGATION_MEAN: VariableAggregation
VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA: VariableAggregation

class VariableDef(_message.Message):
    __slots__ = ("variable_name", "initial_value_name", "initializer_name", "snapshot_name", "save_slice_info_def", "is_resource", "trainable", "synchronization", "aggregation")
    VARIABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    INITIAL_VALUE_NAME_FIELD_NUMBER: _ClassVar[int]
    INITIALIZER_NAME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SAVE_SLICE_INFO_DEF_FIELD_NUMBER: _ClassVar[int]
    IS_RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TRAINABLE_FIELD_NUMBER: _ClassVar[int]
    SYNCHRONIZATION_FIELD_NUMBER: _ClassVar[int]
    AGGREGATION_FIELD_NUMBER: _ClassVar[int]
    variable_name: str
    initial_value_name: str
    initializer_name: str
    snapshot_name: str
    save_slice_info_def: SaveSliceInfoDef
    is_resource: bool
    trainable: bool
    synchronization: VariableSynchronization
    aggregation: VariableAggregation
    def __init__(self, variable_name: _Optional[str] = ..., initial_value_name: _Optional[str] = ..., initializer_name: _Optional[str] = ..., snapshot_name: _Optional[str] = ..., save_slice_info_def: _Optional[_Union[SaveSliceInfoDef, _Mapping]] = ..., is_resource: bool = ..., trainable: bool = ..., synchronization: _Optional[_Union[VariableSynchronization, str]] = ..., aggregation: _Optional[_Union[VariableAggregation, str]] = ...) -> None: ...

class SaveSliceInfoDef(_message.Message):
    __slots__ = ("full_name", "full_shape", "var_offset", "var_shape")
    FULL_NAME_FIELD_NUMBER: _ClassVar[int]
    FULL_SHAPE_FIELD_NUMBER: _ClassVar[int]
    VAR_OFFSET_FIELD_NUMBER: _ClassVar[int]
    VAR_SHAPE_FIELD_NUMBER: _ClassVar[int]
    full_name: str
    full_shape: _containers.RepeatedScalarFieldContainer[int]
    var_offset: _containers.RepeatedScalarFieldContainer[int]
    var_shape: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, full_name: _Optional[str] = ..., full_shape: _Optional[_Iterable[int]] = ..., var_offset: _Optional[_Iterable[int]] = ..., var_shape: _Optional[_Iterable[int]] = ...) -> None: ...
