from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskDeviceFilters(_message.Message):
    __slots__ = ("device_filters",)
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, device_filters: _Optional[_Iterable[str]] = ...) -> None: ...

class JobDeviceFilters(_message.Message):
    __slots__ = ("name", "tasks")
    class TasksEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: TaskDeviceFilters
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[TaskDeviceFilters, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    tasks: _containers.MessageMap[int, TaskDeviceFilters]
    def __init__(self, name: _Optional[str] = ..., tasks: _Optional[_Mapping[int, TaskDeviceFilters]] = ...) -> None: ...

class ClusterDeviceFilters(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobDeviceFilters]
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobDeviceFilters, _Mapping]]] = ...) -> None: ...
