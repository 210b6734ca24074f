"""NumPy <-> native tensor encodings, and TensorFlow's value-conversion rules."""

from __future__ import annotations

import numbers

import numpy as np

from ferroflow.framework import dtypes

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _flatten(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def infer_dtype(value):
    """The dtype TensorFlow gives a Python or NumPy value when none is requested."""
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "SUO":
            return dtypes.string
        return dtypes.as_dtype(arr.dtype)
    items = list(_flatten(value))
    if items and all(isinstance(v, (str, bytes)) for v in items):
        return dtypes.string
    if any(isinstance(v, (str, bytes)) for v in items):
        raise TypeError(f"Can't convert {value!r}: mixed strings and numbers")
    arr = np.array(value)
    if arr.dtype.kind == "b":
        return dtypes.bool
    if arr.dtype.kind in "iu":
        if arr.dtype == np.uint64:
            # Python ints above int64's range (NumPy's uint64), as TensorFlow infers them.
            return dtypes.uint64
        if arr.size == 0 or (arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX):
            return dtypes.int32
        return dtypes.int64
    if arr.dtype.kind == "f":
        # Python floats become float32 (numpy floats keep their width above).
        if any(isinstance(v, np.floating) for v in items):
            return dtypes.as_dtype(max((v.dtype for v in items if isinstance(v, np.generic)), key=lambda d: d.itemsize))
        return dtypes.float32
    if arr.dtype.kind == "c":
        # Python complex numbers are complex128 (numpy ones keep their width).
        if items and all(isinstance(v, np.complex64) for v in items):
            return dtypes.complex64
        return dtypes.complex128
    if arr.size == 0:
        return dtypes.float32
    raise TypeError(f"Failed to convert object of type {type(value).__name__} to Tensor. Contents: {value!r}")


def _check_compatible(value, dtype):
    """TensorFlow's check that Python values fit the requested dtype; True when it let a Dimension through."""
    if isinstance(value, (np.ndarray, np.generic)):
        return False
    dimensions = False
    for v in _flatten(value):
        ok = True
        if dtype == dtypes.string:
            ok = isinstance(v, (str, bytes))
        elif dtype.is_bool:
            ok = isinstance(v, (bool, np.bool_))
        elif dtype.is_quantized:
            # TensorFlow builds quantized tensors from NumPy arrays only.
            ok = False
        elif dtype.is_integer:
            # TF's integer filter also takes Dimensions: tf.zeros([x.get_shape()[-1]]) and tf.reshape(x, [-1, d]).
            ok = isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, float)
            if not ok and _is_dimension(v):
                ok = dimensions = True
        elif dtype.is_floating or dtype.is_complex:
            ok = isinstance(v, (numbers.Number, np.number)) and not isinstance(v, (str, bytes))
        if not ok:
            raise TypeError(f"Expected {dtype.name}, but got {v} of type '{type(v).__name__}'.")
    return dimensions


def _is_dimension(v):
    from ferroflow.framework.tensor_shape import Dimension

    return isinstance(v, Dimension)


def _dimension_values(value):
    """``value`` with every Dimension replaced by its int (None stays None: NumPy then refuses it)."""
    from ferroflow.framework.tensor_shape import Dimension

    def strip(v):
        if isinstance(v, (list, tuple)):
            return [strip(x) for x in v]
        return v.value if isinstance(v, Dimension) else v

    return strip(value)


def to_numpy(value, dtype=None):
    """Converts a Python/NumPy value to an array of ``dtype`` (inferred when None)."""
    dtype = infer_dtype(value) if dtype is None else dtypes.as_dtype(dtype).base_dtype
    if _check_compatible(value, dtype):
        value = _dimension_values(value)
    if dtype == dtypes.string:
        arr = np.array(value, dtype=object)
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(arr.shape), dtype
    if dtype == dtypes.bfloat16:
        return np.asarray(value, dtype=np.float32), dtype
    if dtype.is_quantized:
        return quantized_storage(value, dtype), dtype
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            if dtype.is_integer:
                arr = wrap_integers(value, dtype.as_numpy_dtype)
            else:
                arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    except ValueError as e:
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name}: {e}") from None
    return arr, dtype


def wrap_integers(value, np_dtype):
    """``value`` as an array of the integer ``np_dtype``, out-of-range Python ints wrapping around
    (``tf.constant(-1, tf.uint8)`` is 255 and 300 is 44) as TensorFlow 2.21 builds graph constants and feeds:
    NumPy infers the array first (int64, or uint64 above int64's range), then casts it. An int beyond uint64's
    range stays an object, whose cast raises ``OverflowError`` as in TensorFlow.

    One deliberate difference: a list mixing ints above int64's range with negative ones, which NumPy infers
    as float64, keeps every bit here (``constant([2**64 - 1, -1], tf.uint64)`` is both values; TensorFlow
    2.21 rounds through float64 and gives 0 for the first)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and not isinstance(value, (np.ndarray, np.generic)):
        items = list(_flatten(value))
        if items and all(isinstance(v, (int, np.integer)) for v in items):
            # Every int here lies in [-2**63, 2**64): NumPy made an object array otherwise.
            arr = np.array([int(v) % 2**64 for v in items], dtype=np.uint64).reshape(arr.shape)
    return arr if arr.dtype == np_dtype else arr.astype(np_dtype)


def quantized_storage(value, dtype):
    """A value of a quantized ``dtype`` as the integers it is stored as (``qint8`` -> int8, ...); takes
    integers, or TensorFlow's one-field structured arrays (``np.dtype([("qint8", np.int8)])``)."""
    storage = dtype.as_numpy_dtype[0]
    arr = np.asarray(value)
    if arr.dtype.names:
        arr = arr[arr.dtype.names[0]]
    if arr.dtype.kind not in "iub":
        raise TypeError(f"Cannot convert an array of dtype {arr.dtype} to {dtype.name}")
    return arr.astype(storage)


def _bf16_bits(arr):
    """float32 -> bfloat16 bit patterns (round to nearest even)."""
    if arr.dtype == np.uint16:
        return arr
    if dtypes._BF16_NP is not None and arr.dtype == dtypes._BF16_NP:
        return arr.view(np.uint16)
    f = np.array(arr, dtype=np.float32, order="C")
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded).astype(np.uint16)


def to_native(arr, dtype):
    """The value the native module takes for a tensor of ``dtype``."""
    if dtype == dtypes.string:
        arr = np.asarray(arr, dtype=object)
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.reshape(-1)]
        return ("strings", list(arr.shape), flat)
    if dtype == dtypes.bfloat16:
        return _bf16_bits(np.asarray(arr))
    arr = np.asarray(arr)
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one.)
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def tensor_attr(arr, dtype):
    """A ``("tensor", value, enum)`` attribute for the native graph."""
    return ("tensor", to_native(arr, dtype), dtype.as_datatype_enum)


def from_native(value, dtype):
    """Post-processes a fetched value: bfloat16 arrives as uint16 bits."""
    if dtype == dtypes.bfloat16:
        arr = np.asarray(value, dtype=np.uint16)
        if dtypes._BF16_NP is not None:
            out = arr.view(dtypes._BF16_NP)
        else:
            out = (arr.astype(np.uint32) << 16).view(np.float32)
        return out if out.ndim else out[()]
    return value


def constant_value(tensor, partial=False):
    """The value of ``tensor`` if it can be computed without running the graph, else None."""
    from ferroflow.framework.ops import Tensor

    if isinstance(tensor, (np.ndarray, np.generic)):
        return tensor
    if not isinstance(tensor, Tensor):
        return tensor
    v = tensor.graph._native.const_value(tensor._tid)
    if v is None:
        return None
    v = from_native(v, tensor.dtype)
    return np.asarray(v)


def constant_value_as_shape(tensor):
    """The shape a 1-D shape tensor describes, as far as known at construction time."""
    from ferroflow.framework.tensor_shape import TensorShape, unknown_shape

    dims = tensor.graph._native.shape_value(tensor._tid)
    return unknown_shape() if dims is None else TensorShape(dims)


_PROTO_FIELDS = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val", 6: "int_val",
                 9: "int64_val", 10: "bool_val", 14: "half_val", 17: "int_val", 19: "half_val", 22: "uint32_val",
                 23: "uint64_val",
                 # The quantized types, read as the integers of their width (how ferroflow holds them).
                 11: "int_val", 12: "int_val", 13: "int_val", 15: "int_val", 16: "int_val"}
_QUANTIZED_STORAGE = {11: np.int8, 12: np.uint8, 13: np.int32, 15: np.int16, 16: np.uint16}


def string_tensor_content(content, n):
    """The ``n`` strings of a string TensorProto's ``tensor_content`` (varint lengths, then the bytes)."""
    pos, lengths = 0, []
    try:
        for _ in range(n):
            length, shift = 0, 0
            while True:
                byte = content[pos]
                pos += 1
                length |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
            lengths.append(length)
    except IndexError:
        raise ValueError(f"a string TensorProto's tensor_content ({len(content)} bytes) does not hold {n} "
                         "length-prefixed strings") from None
    out = []
    for length in lengths:
        out.append(content[pos:pos + length])
        pos += length
    if pos != len(content):
        raise ValueError(f"a string TensorProto's tensor_content ({len(content)} bytes) does not hold {n} "
                         "length-prefixed strings")
    return out


def _proto_to_ndarray(proto):
    """A ``TensorProto``'s value, as TensorFlow's ``make_ndarray`` decodes it."""
    shape = [d.size for d in proto.tensor_shape.dim]
    num_elements = int(np.prod(shape, dtype=np.int64))
    if proto.dtype == 7:
        if proto.tensor_content and not proto.string_val:
            # How TensorFlow's C++ writes a string tensor of more than one element (a graph rewrite's
            # constants): every length as a varint, then the bytes. TensorFlow's Python reader raises here.
            return np.array(string_tensor_content(proto.tensor_content, num_elements), dtype=object).reshape(shape)
        values = list(proto.string_val)
        if num_elements > len(values):
            values.extend([values[-1] if values else b""] * (num_elements - len(values)))
        return np.array(values, dtype=object).reshape(shape)
    field = _PROTO_FIELDS.get(proto.dtype)
    if field is None:
        raise TypeError(f"Unsupported tensor type: {proto.dtype}")
    np_dtype = ({22: np.uint32, 23: np.uint64, **_QUANTIZED_STORAGE}.get(proto.dtype)
                or np.dtype(dtypes.as_dtype(proto.dtype).as_numpy_dtype))
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=np_dtype).copy().reshape(shape)
    raw = getattr(proto, field)
    if field == "half_val":
        values = np.fromiter(raw, dtype=np.uint16).view(np_dtype)
    else:
        values = np.fromiter(raw, dtype=np_dtype)
    if values.size == 0:
        return np.zeros(shape, np_dtype)
    if values.size != num_elements:
        values = np.pad(values, (0, num_elements - values.size), "edge")
    return values.reshape(shape)


def make_ndarray(tensor):
    """NumPy value of a ``TensorProto``, of a constant tensor or of a NumPy-convertible value."""
    if hasattr(tensor, "tensor_shape") and hasattr(tensor, "string_val"):
        return _proto_to_ndarray(tensor)
    v = constant_value(tensor)
    if v is None:
        raise TypeError(f"{tensor} is not a constant")
    return np.asarray(v)


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """``values`` (a NumPy array, a nested list or a scalar) as a ``tf.TensorProto``.

    Laid out as TensorFlow lays it out: several numeric elements as raw
    little-endian ``tensor_content``, a single one in the typed field (which
    also fills a larger ``shape``), strings in ``string_val``. With ``shape``
    the element count must match it, unless the value is a single element
    (repeated to fill it) or ``allow_broadcast`` lets NumPy broadcast it;
    ``verify_shape`` demands the value's own shape equal ``shape``.
    """
    from ferroflow.core.framework.tensor_pb2 import TensorProto
    from ferroflow.framework.tensor_shape import TensorShape

    if isinstance(values, TensorProto):
        return values
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype is not None and dtype == dtypes.string or (dtype is None and _is_string_like(values)):
        array = np.array(values, dtype=object)
        array = np.vectorize(lambda v: v.encode() if isinstance(v, str) else bytes(v), otypes=[object])(array) \
            if array.size else array
        dtype = dtypes.string
    else:
        np_dtype = None if dtype is None else dtype.as_numpy_dtype
        array = np.asarray(values, dtype=np_dtype)
        if dtype is None:
            if array.dtype == np.float64 and not isinstance(values, np.ndarray):
                array = array.astype(np.float32)  # Python floats become float32, as in tf.constant
            elif array.dtype == np.int64 and not isinstance(values, (np.ndarray, np.generic)) \
                    and array.size and np.abs(array).max() < 2**31:
                array = array.astype(np.int32)
            dtype = dtypes.as_dtype(array.dtype)
    if shape is None:
        shape = list(array.shape)
    else:
        shape = [int(d) for d in TensorShape(shape).as_list()]
        size = int(np.prod(shape, dtype=np.int64))
        if verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
        if allow_broadcast and array.size != size:
            try:
                array = np.broadcast_to(array, shape)
            except ValueError:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.") from None
        elif array.size not in (size, 1):
            raise ValueError(f"Too many elements provided. Takes at most {size:d}, but got {array.size:d}."
                             if array.size > size else
                             f"Expected {size} elements to fill shape {tuple(shape)}, got {array.size}.")
    proto = TensorProto(dtype=dtype.as_datatype_enum, tensor_shape=TensorShape(shape).as_proto())
    if dtype == dtypes.string:
        proto.string_val.extend(array.reshape(-1).tolist())
        return proto
    size = int(np.prod(shape, dtype=np.int64))
    if array.size == size and size > 1:
        proto.tensor_content = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        return proto
    flat = array.reshape(-1)
    field = _PROTO_FIELDS.get(dtype.as_datatype_enum)
    if field == "half_val":
        proto.half_val.extend(flat.view(np.uint16).astype(np.int32).tolist())
    elif dtype in (dtypes.complex64, dtypes.complex128):
        target = proto.scomplex_val if dtype == dtypes.complex64 else proto.dcomplex_val
        for v in flat:
            target.extend([v.real, v.imag])
    elif field is None:
        raise TypeError(f"make_tensor_proto cannot encode dtype {dtype.name}")
    else:
        getattr(proto, field).extend(flat.tolist())
    return proto


def _is_string_like(values):
    if isinstance(values, (str, bytes)):
        return True
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "SUO" and values.size > 0 and isinstance(values.reshape(-1)[0], (str, bytes))
    if isinstance(values, (list, tuple)):
        flat = values
        while isinstance(flat, (list, tuple)) and flat:
            flat = flat[0]
        return isinstance(flat, (str, bytes))
    return False
