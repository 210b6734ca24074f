"""Partially known shapes (``tf.TensorShape``) and their dimensions."""

from __future__ import annotations


class Dimension:
    """One dimension of a ``TensorShape``: a non-negative int, or unknown (``None``)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
            return
        try:
            v = int(value.__index__())
        except AttributeError:
            raise TypeError(
                f"Dimension value must be integer or None or have an __index__ method, got value "
                f"'{value!r}' with type '{type(value)}'"
            ) from None
        if v < 0:
            raise ValueError(f"Dimension {v} must be >= 0")
        self._value = v

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    def __index__(self):
        return self.__int__()

    def __bool__(self):
        return bool(self._value)

    def __hash__(self):
        return hash(self._value)

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        eq = self.__eq__(other)
        if eq is None or eq is NotImplemented:
            return eq
        return not eq

    def _cmp(self, other, f):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return f(self._value, other.value)

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a >= b)

    def _arith(self, other, f):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(f(self._value, other.value))

    def __add__(self, o):
        return self._arith(o, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, o):
        return self._arith(o, lambda a, b: a - b)

    def __rsub__(self, o):
        return as_dimension(o) - self

    def __mul__(self, o):
        return self._arith(o, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return self._arith(o, lambda a, b: a // b)

    def __rfloordiv__(self, o):
        return as_dimension(o) // self

    def __mod__(self, o):
        return self._arith(o, lambda a, b: a % b)

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other.value)

    def __reduce__(self):
        return Dimension, (self._value,)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension):
    """The int (or None) held by a dimension or plain value."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index):
    shape = as_shape(shape)
    if shape.dims is None:
        return Dimension(None)
    return shape.dims[index]


class TensorShape:
    """A shape whose rank and dimensions may be unknown."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif hasattr(dims, "unknown_rank") and hasattr(dims, "dim"):  # a TensorShapeProto
            self._dims = None if dims.unknown_rank else [as_dimension(d.size if d.size >= 0 else None)
                                                          for d in dims.dim]
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, Dimension)) or hasattr(dims, "__index__") and not hasattr(dims, "__len__"):
            self._dims = [as_dimension(dims)]
        else:
            try:
                self._dims = [as_dimension(d) for d in dims]
            except TypeError:
                raise TypeError(f"Cannot convert {dims!r} to a TensorShape") from None

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_proto(self):
        """This shape as a ``tf.TensorShapeProto`` (unknown dimensions are -1)."""
        from ferroflow.core.framework.tensor_shape_pb2 import TensorShapeProto

        if self._dims is None:
            return TensorShapeProto(unknown_rank=True)
        return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d.value is None else d.value)
                                     for d in self._dims])

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return unknown_shape()
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def is_fully_defined(self):
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims) or not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a.value if a.value == b.value else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank):
        if self._dims is None:
            return unknown_shape(rank=rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def _as_native(self):
        """``None`` for unknown rank, else a list of ints/None (the native encoding)."""
        return None if self._dims is None else [d.value for d in self._dims]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims if self._dims is not None and other._dims is not None else (
            self._dims is None and other._dims is None
        )

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        # TF 1.x's form (TensorFlow with v2 behavior disabled): the dims as Dimension objects.
        return f"TensorShape({self._dims!r})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __reduce__(self):
        return TensorShape, (self._as_native(),)


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None, **kwargs):
    if rank is None and "ndims" in kwargs:
        rank = kwargs["ndims"]
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    return TensorShape([])


def vector(length):
    return TensorShape([length])


def matrix(rows, cols):
    return TensorShape([rows, cols])
