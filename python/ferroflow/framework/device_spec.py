"""``tf.DeviceSpec``: device names such as ``/job:ps/replica:0/task:1/device:GPU:0``.

A device name has up to five fields, each optional: job, replica, task,
device type and device index. ``from_string`` parses a name (TensorFlow's
grammar: ``/``-separated ``job:NAME``, ``replica:INT``, ``task:INT``,
``device:TYPE:INDEX`` or the legacy short ``cpu:0`` / ``GPU:1`` forms, ``*``
as "any index"); ``to_string`` writes the canonical form, fields in the order
job, replica, task, device, unset ones left out. ``make_merged_spec(other)``
starts from this spec and lets every field ``other`` sets win; that is how
nested ``tf.device`` scopes and device functions combine.

``DeviceSpec`` is TensorFlow 1's mutable spec (field setters,
``parse_from_string`` and ``merge_from`` change it in place).
"""

from __future__ import annotations

__all__ = ["DeviceSpec", "canonical_device", "merge_device_strings"]

# Device types the short form (``/cpu:0``) accepts; TensorFlow adds the
# physical devices it finds, and ferroflow has only the CPU.
_VALID_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})

_PARSE_CACHE: dict = {}
_MERGE_CACHE: dict = {}


def _str_or_none(value):
    return None if value is None else str(value)


def _int_or_none(value):
    return None if value is None else int(value)


def _device_type_or_none(device_type):
    # The lowercase legacy spellings become uppercase; other types stay as given.
    if device_type in ("cpu", "gpu"):
        return device_type.upper()
    return _str_or_none(device_type)


def _parse(spec):
    """``(job, replica, task, device_type, device_index)`` of a device name (fields still raw)."""
    cached = _PARSE_CACHE.get(spec)
    if cached is not None:
        return cached
    text = spec or ""
    job = replica = task = device_type = device_index = None
    for part in text.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        n = len(pieces)
        head = pieces[0]
        if n == 2 and head == "job":
            job = pieces[1]
        elif n == 2 and head == "replica":
            replica = pieces[1]
        elif n == 2 and head == "task":
            task = pieces[1]
        elif n in (1, 2) and head.upper() in _VALID_DEVICE_TYPES:
            if device_type is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {text}.")
            device_type = head.upper()
            if n == 2 and pieces[1] != "*":
                device_index = int(pieces[1])
        elif n == 3 and head == "device":
            if device_type is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {text}.")
            device_type = pieces[1]
            if pieces[2] != "*":
                device_index = int(pieces[2])
        elif head != "":
            raise ValueError(f"Unknown attribute '{head}' is encountered while parsing the device spec: '{text}'.")
    result = (job, replica, task, device_type, device_index)
    if isinstance(spec, str):
        _PARSE_CACHE[spec] = result
    return result


def _to_string(job, replica, task, device_type, device_index):
    out = []
    if job is not None:
        out.append("/job:" + job)
    if replica is not None:
        out.append(f"/replica:{replica}")
    if task is not None:
        out.append(f"/task:{task}")
    if device_type is not None:
        out.append(f"/device:{device_type}:{'*' if device_index is None else device_index}")
    return "".join(out)


class DeviceSpec:
    """A (possibly partial) device name: job, replica, task, device type and index."""

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index", "_as_string")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self._job = _str_or_none(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        self._device_type = _device_type_or_none(device_type)
        self._device_index = _int_or_none(device_index)
        self._as_string = None

    # -- fields (settable: TensorFlow 1's DeviceSpec is mutable) -----------------
    @property
    def job(self):
        return self._job

    @job.setter
    def job(self, job):
        self._job = _str_or_none(job)
        self._as_string = None

    @property
    def replica(self):
        return self._replica

    @replica.setter
    def replica(self, replica):
        self._replica = _int_or_none(replica)
        self._as_string = None

    @property
    def task(self):
        return self._task

    @task.setter
    def task(self, task):
        self._task = _int_or_none(task)
        self._as_string = None

    @property
    def device_type(self):
        return self._device_type

    @device_type.setter
    def device_type(self, device_type):
        self._device_type = _device_type_or_none(device_type)
        self._as_string = None

    @property
    def device_index(self):
        return self._device_index

    @device_index.setter
    def device_index(self, device_index):
        self._device_index = _int_or_none(device_index)
        self._as_string = None

    def _fields(self):
        return (self._job, self._replica, self._task, self._device_type, self._device_index)

    # -- strings -------------------------------------------------------------------
    def to_string(self):
        """The canonical name, e.g. ``/job:ps/task:0/device:CPU:0`` (unset fields left out)."""
        if self._as_string is None:
            self._as_string = _to_string(*self._fields())
        return self._as_string

    @classmethod
    def from_string(cls, spec):
        """Parses a device name; ValueError on an unknown field or two device types."""
        return cls(*_parse(spec))

    def parse_from_string(self, spec):
        """Replaces every field with those parsed from ``spec`` (unset ones become None); returns self."""
        (self.job, self.replica, self.task, self.device_type, self.device_index) = _parse(spec)
        return self

    # -- combining -----------------------------------------------------------------
    def _combined(self, dev):
        return tuple(
            theirs if theirs is not None else mine for mine, theirs in zip(self._fields(), dev._fields())
        )

    def make_merged_spec(self, dev):
        """A new spec: this one's fields, overridden by every field ``dev`` sets."""
        return self.__class__(*self._combined(dev))

    def merge_from(self, dev):
        """Overrides this spec's fields, in place, with every field ``dev`` sets."""
        (self.job, self.replica, self.task, self.device_type, self.device_index) = self._combined(dev)

    def replace(self, **kwargs):
        """A new spec with the given fields (``job=``, ``task=``, ``device_type=``, ...) replaced."""
        fields = dict(
            job=self._job, replica=self._replica, task=self._task, device_type=self._device_type,
            device_index=self._device_index,
        )
        fields.update(kwargs)
        return self.__class__(**fields)

    def __eq__(self, other):
        return isinstance(other, self.__class__) and self.to_string() == other.to_string()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"<DeviceSpec(job={self._job!r}, replica={self._replica!r}, task={self._task!r}, " \
               f"device_type={self._device_type!r}, device_index={self._device_index!r})>"


def canonical_device(spec):
    """The canonical form of a device name or ``DeviceSpec`` (``"/cpu:0"`` -> ``"/device:CPU:0"``)."""
    if spec is None:
        return ""
    if isinstance(spec, DeviceSpec):
        return spec.to_string()
    if hasattr(spec, "to_string"):
        return spec.to_string()
    return _to_string(*DeviceSpec(*_parse(spec))._fields())


def merge_device_strings(base, over):
    """The canonical name of ``base`` with every field ``over`` sets taking precedence.

    Both are device names (strings); the result is cached, since a graph
    merges the same few pairs over and over.
    """
    key = (base, over)
    result = _MERGE_CACHE.get(key)
    if result is None:
        result = DeviceSpec.from_string(base).make_merged_spec(DeviceSpec.from_string(over)).to_string()
        if len(_MERGE_CACHE) < 10000:
            _MERGE_CACHE[key] = result
    return result
