"""Element types, numbered like TensorFlow's ``DataType`` enum."""

from __future__ import annotations

import builtins as _builtins

import numpy as np

try:  # bfloat16 arrays, when the ml_dtypes package is installed
    import ml_dtypes as _ml_dtypes

    _BF16_NP = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
    _BF16_NP = None

_NAMES = {
    1: "float32",
    2: "float64",
    3: "int32",
    4: "uint8",
    5: "int16",
    6: "int8",
    7: "string",
    8: "complex64",
    9: "int64",
    10: "bool",
    11: "qint8",
    12: "quint8",
    13: "qint32",
    14: "bfloat16",
    15: "qint16",
    16: "quint16",
    17: "uint16",
    18: "complex128",
    19: "float16",
    20: "resource",
    21: "variant",
    22: "uint32",
    23: "uint64",
}

_NUMPY = {
    1: np.float32,
    2: np.float64,
    3: np.int32,
    4: np.uint8,
    5: np.int16,
    6: np.int8,
    7: object,
    8: np.complex64,
    9: np.int64,
    10: np.bool_,
    # The quantized types as TensorFlow's NumPy structured dtypes.
    11: np.dtype([("qint8", np.int8)]),
    12: np.dtype([("quint8", np.uint8)]),
    13: np.dtype([("qint32", np.int32)]),
    15: np.dtype([("qint16", np.int16)]),
    16: np.dtype([("quint16", np.uint16)]),
    17: np.uint16,
    18: np.complex128,
    19: np.float16,
    22: np.uint32,
    23: np.uint64,
}

_FLOATING = {1, 2, 14, 19}
_INTEGER = {3, 4, 5, 6, 9, 17, 22, 23}
_UNSIGNED = {4, 17, 22, 23}
_COMPLEX = {8, 18}
_QUANTIZED = {11, 12, 13, 15, 16}
_SIZES = {
    1: 4, 2: 8, 3: 4, 4: 1, 5: 2, 6: 1, 8: 8, 9: 8, 10: 1, 11: 1, 12: 1, 13: 4,
    14: 2, 15: 2, 16: 2, 17: 2, 18: 16, 19: 2, 22: 4, 23: 8,
}


class DType:
    """The type of a tensor's elements (``tf.float32``, ``tf.int64``, ...)."""

    __slots__ = ("_type_enum",)

    def __init__(self, type_enum, handle_data=None):
        type_enum = int(type_enum)
        base = type_enum - 100 if type_enum > 100 else type_enum
        if base not in _NAMES:
            raise TypeError(f"Unsupported DataType enum value {type_enum}")
        self._type_enum = type_enum

    @property
    def _is_ref_dtype(self):
        return self._type_enum > 100

    @property
    def base_dtype(self):
        return _BY_ENUM[self._type_enum - 100] if self._is_ref_dtype else self

    @property
    def real_dtype(self):
        b = self.base_dtype
        return {8: float32, 18: float64}.get(b._type_enum, b)

    @property
    def as_datatype_enum(self):
        return self._type_enum

    @property
    def name(self):
        n = _NAMES[self.base_dtype._type_enum]
        return n + "_ref" if self._is_ref_dtype else n

    @property
    def as_numpy_dtype(self):
        e = self.base_dtype._type_enum
        if e == 14:
            return _ml_dtypes.bfloat16 if _ml_dtypes is not None else np.float32
        return _NUMPY[e]

    @property
    def is_floating(self):
        return self.base_dtype._type_enum in _FLOATING

    @property
    def is_integer(self):
        return self.base_dtype._type_enum in _INTEGER

    @property
    def is_unsigned(self):
        return self.base_dtype._type_enum in _UNSIGNED

    @property
    def is_complex(self):
        return self.base_dtype._type_enum in _COMPLEX

    @property
    def is_bool(self):
        return self.base_dtype._type_enum == 10

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def is_quantized(self):
        return self.base_dtype._type_enum in _QUANTIZED

    @property
    def is_numpy_compatible(self):
        return self.base_dtype._type_enum not in (20, 21)

    @property
    def size(self):
        return _SIZES.get(self.base_dtype._type_enum, 1)

    @property
    def min(self):
        """The smallest representable value."""
        if self.is_floating:
            if self.base_dtype._type_enum == 14:
                return -3.3895313892515355e38
            return float(np.finfo(self.as_numpy_dtype).min)
        if self.is_integer:
            return int(np.iinfo(self.as_numpy_dtype).min)
        if self.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        """The largest representable value."""
        if self.is_floating:
            if self.base_dtype._type_enum == 14:
                return 3.3895313892515355e38
            return float(np.finfo(self.as_numpy_dtype).max)
        if self.is_integer:
            return int(np.iinfo(self.as_numpy_dtype).max)
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def limits(self):
        """``(min, max)`` of the type."""
        return self.min, self.max

    def is_compatible_with(self, other):
        other = as_dtype(other)
        return self._type_enum in (other.as_datatype_enum, other.base_dtype.as_datatype_enum)

    def is_subtype_of(self, other):
        return self == as_dtype(other)

    def most_specific_common_supertype(self, types):
        return self if all(self == as_dtype(t) for t in types) else None

    def _as_ref(self):
        return self if self._is_ref_dtype else _BY_ENUM[self._type_enum + 100]

    def __eq__(self, other):
        if other is None:
            return False
        if isinstance(other, DType):
            return self._type_enum == other._type_enum
        try:
            return self._type_enum == as_dtype(other)._type_enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._type_enum

    def __reduce__(self):
        return as_dtype, (self.name,)

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"


_BY_ENUM = {}
for _e in list(_NAMES):
    _BY_ENUM[_e] = DType(_e)
    _BY_ENUM[_e + 100] = DType(_e + 100)

float16 = half = _BY_ENUM[19]
bfloat16 = _BY_ENUM[14]
float32 = _BY_ENUM[1]
float64 = double = _BY_ENUM[2]
int8 = _BY_ENUM[6]
int16 = _BY_ENUM[5]
int32 = _BY_ENUM[3]
int64 = _BY_ENUM[9]
uint8 = _BY_ENUM[4]
uint16 = _BY_ENUM[17]
uint32 = _BY_ENUM[22]
uint64 = _BY_ENUM[23]
bool = _BY_ENUM[10]  # noqa: A001 - TensorFlow's public name
string = _BY_ENUM[7]
complex64 = _BY_ENUM[8]
complex128 = _BY_ENUM[18]
resource = _BY_ENUM[20]
variant = _BY_ENUM[21]
# The quantized types are dtype objects only (no kernel computes on them).
qint8 = _BY_ENUM[11]
quint8 = _BY_ENUM[12]
qint32 = _BY_ENUM[13]
qint16 = _BY_ENUM[15]
quint16 = _BY_ENUM[16]

#: dtypes the Rust core computes with.
SUPPORTED = frozenset(e for e in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 17, 18, 19, 22, 23))

_STR_TO_DTYPE = {d.name: d for d in _BY_ENUM.values()}
_STR_TO_DTYPE.update({"float": float32, "double": float64, "half": float16})

_NP_TO_DTYPE = {np.dtype(v): _BY_ENUM[k] for k, v in _NUMPY.items() if v is not object}
if _BF16_NP is not None:
    _NP_TO_DTYPE[_BF16_NP] = bfloat16


def as_dtype(type_value):
    """Converts a DType, enum value, name, NumPy dtype or Python type to a ``DType``."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, (int, np.integer)) and not isinstance(type_value, (np.bool_,)):
        if int(type_value) in _BY_ENUM:
            return _BY_ENUM[int(type_value)]
        raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")
    if isinstance(type_value, str):
        if type_value in _STR_TO_DTYPE:
            return _STR_TO_DTYPE[type_value]
        raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")
    if type_value is builtins_float:
        return float32
    if type_value is builtins_int:
        return int32
    if type_value is builtins_bool:
        return _BY_ENUM[10]
    if type_value in (builtins_str, builtins_bytes, object):
        return string
    try:
        npd = np.dtype(type_value)
    except TypeError:
        npd = None
    if npd is not None:
        if npd in _NP_TO_DTYPE:
            return _NP_TO_DTYPE[npd]
        if npd.kind in ("S", "U", "O"):
            return string
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


builtins_float = _builtins.float
builtins_int = _builtins.int
builtins_bool = _builtins.bool
builtins_str = _builtins.str
builtins_bytes = _builtins.bytes

QUANTIZED_DTYPES = frozenset(
    [qint8, quint8, qint16, quint16, qint32]
    + [_BY_ENUM[e + 100] for e in (11, 12, 13, 15, 16)]
)
