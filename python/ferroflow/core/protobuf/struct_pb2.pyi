from ferroflow.core.framework import tensor_pb2 as _tensor_pb2
from ferroflow.core.framework import tensor_shape_pb2 as _tensor_shape_pb2
from ferroflow.core.framework import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StructuredValue(_message.Message):
    __slots__ = ("none_value", "float64_value", "int64_value", "string_value", "bool_value", "tensor_shape_value", "tensor_dtype_value", "tensor_spec_value", "type_spec_value", "bounded_tensor_spec_value", "list_value", "tuple_value", "dict_value", "named_tuple_value", "tensor_value", "numpy_value")
    NONE_VALUE_FIELD_NUMBER: _ClassVar[int]
    FLOAT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_SHAPE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_DTYPE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_SPEC_VALUE_FIELD_NUMBER: _ClassVar[int]
    TYPE_SPEC_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOUNDED_TENSOR_SPEC_VALUE_FIELD_NUMBER: _ClassVar[int]
    LIST_VALUE_FIELD_NUMBER: _ClassVar[int]
    TUPLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    DICT_VALUE_FIELD_NUMBER: _ClassVar[int]
    NAMED_TUPLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_VALUE_FIELD_NUMBER: _ClassVar[int]
    NUMPY_VALUE_FIELD_NUMBER: _ClassVar[int]
    none_value: NoneValue
    float64_value: float
    int64_value: int
    string_value: str
    bool_value: bool
    tensor_shape_value: _tensor_shape_pb2.TensorShapeProto
    tensor_dtype_value: _types_pb2.DataType
    tensor_spec_value: TensorSpecProto
    type_spec_value: TypeSpecProto
    bounded_tensor_spec_value: BoundedTensorSpecProto
    list_value: ListValue
    tuple_value: TupleValue
    dict_value: DictValue
    named_tuple_value: NamedTupleValue
    tensor_value: _tensor_pb2.TensorProto
    numpy_value: _tensor_pb2.TensorProto
    def __init__(self, none_value: _Optional[_Union[NoneValue, _Mapping]] = ..., float64_value: _Optional[float] = ..., int64_value: _Optional[int] = ..., string_value: _Optional[str] = ..., bool_value: bool = ..., tensor_shape_value: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., tensor_dtype_value: _Optional[_Union[_types_pb2.DataType, str]] = ..., tensor_spec_value: _Optional[_Union[TensorSpecProto, _Mapping]] = ..., type_spec_value: _Optional[_Union[TypeSpecProto, _Mapping]] = ..., bounded_tensor_spec_value: _Optional[_Union[BoundedTensorSpecProto, _Mapping]] = ..., list_value: _Optional[_Union[ListValue, _Mapping]] = ..., tuple_value: _Optional[_Union[TupleValue, _Mapping]] = ..., dict_value: _Optional[_Union[DictValue, _Mapping]] = ..., named_tuple_value: _Optional[_Union[NamedTupleValue, _Mapping]] = ..., tensor_value: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ..., numpy_value: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ...) -> None: ...

class NoneValue(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListValue(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[StructuredValue]
    def __init__(self, values: _Optional[_Iterable[_Union[StructuredValue, _Mapping]]] = ...) -> None: ...

class TupleValue(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[StructuredValue]
    def __init__(self, values: _Optional[_Iterable[_Union[StructuredValue, _Mapping]]] = ...) -> None: ...

class DictValue(_message.Message):
    __slots__ = ("fields",)
    class FieldsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: StructuredValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[StructuredValue, _Mapping]] = ...) -> None: ...
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    fields: _containers.MessageMap[str, StructuredValue]
    def __init__(self, fields: _Optional[_Mapping[str, StructuredValue]] = ...) -> None: ...

class PairValue(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: StructuredValue
    def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[StructuredValue, _Mapping]] = ...) -> None: ...

class NamedTupleValue(_message.Message):
    __slots__ = ("name", "values")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    values: _containers.RepeatedCompositeFieldContainer[PairValue]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[_Union[PairValue, _Mapping]]] = ...) -> None: ...

class TensorSpecProto(_message.Message):
    __slots__ = ("name", "shape", "dtype")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    shape: _tensor_shape_pb2.TensorShapeProto
    dtype: _types_pb2.DataType
    def __init__(self, name: _Optional[str] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ...) -> None: ...

class BoundedTensorSpecProto(_message.Message):
    __slots__ = ("name", "shape", "dtype", "minimum", "maximum")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    name: str
    shape: _tensor_shape_pb2.TensorShapeProto
    dtype: _types_pb2.DataType
    minimum: _tensor_pb2.TensorProto
    maximum: _tensor_pb2.TensorProto
    def __init__(self, name: _Optional[str] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ..., minimum: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ..., maximum: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ...) -> None: ...

class TypeSpecProto(_message.Message):
    __slots__ = ("type_spec_class", "type_state", "type_spec_class_name", "num_flat_components")
    class TypeSpecClass(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNKNOWN: _ClassVar[TypeSpecProto.TypeSpecClass]
        SPARSE_TENSOR_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        INDEXED_SLICES_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        RAGGED_TENSOR_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        TENSOR_ARRAY_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        DATA_DATASET_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        DATA_ITERATOR_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        OPTIONAL_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        PER_REPLICA_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        VARIABLE_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        ROW_PARTITION_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        REGISTERED_TYPE_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
        EXTENSION_TYPE_SPEC: _ClassVar[TypeSpecProto.TypeSpecClass]
    UNKNOWN: TypeSpecProto.TypeSpecClass
    SPARSE_TENSOR_SPEC: TypeSpecProto.TypeSpecClass
    INDEXED_SLICES_SPEC: TypeSpecProto.TypeSpecClass
    RAGGED_TENSOR_SPEC: TypeSpecProto.TypeSpecClass
    TENSOR_ARRAY_SPEC: TypeSpecProto.TypeSpecClass
    DATA_DATASET_SPEC: TypeSpecProto.TypeSpecClass
    DATA_ITERATOR_SPEC: TypeSpecProto.TypeSpecClass
    OPTIONAL_SPEC: TypeSpecProto.TypeSpecClass
    PER_REPLICA_SPEC: TypeSpecProto.TypeSpecClass
    VARIABLE_SPEC: TypeSpecProto.TypeSpecClass
    ROW_PARTITION_SPEC: TypeSpecProto.TypeSpecClass
    REGISTERED_TYPE_SPEC: TypeSpecProto.TypeSpecClass
    EXTENSION_TYPE_SPEC: TypeSpecProto.TypeSpecClass
    TYPE_SPEC_CLASS_FIELD_NUMBER: _ClassVar[int]
    TYPE_STATE_FIELD_NUMBER: _ClassVar[int]
    TYPE_SPEC_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    NUM_FLAT_COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    type_spec_class: TypeSpecProto.TypeSpecClass
    type_state: StructuredValue
    type_spec_class_name: str
    num_flat_components: int
    def __init__(self, type_spec_class: _Optional[_Union[TypeSpecProto.TypeSpecClass, str]] = ..., type_state: _Optional[_Union[StructuredValue, _Mapping]] = ..., type_spec_class_name: _Optional[str] = ..., num_flat_components: _Optional[int] = ...) -> None: ...
