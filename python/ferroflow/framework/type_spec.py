"""Type specifications: what kind of value a tensor-like thing is, without its contents.

``tf.TensorSpec`` (dtype + partial shape + name), ``tf.SparseTensorSpec``, ``tf.IndexedSlicesSpec``,
``tf.NoneTensorSpec`` and
``tf.type_spec_from_value``. ``tf.data`` describes its elements with them (``element_spec``), and
``tf.nest`` treats them as leaves. Compatibility follows TensorFlow: same dtype and compatible
shapes (an unknown dimension matches any).

``tf.RaggedTensorSpec`` and ``tf.TensorArraySpec`` live beside the types they describe (``ops/ragged.py``,
``ops/tensor_array_ops.py``); those types report their spec through a ``_type_spec`` property, which
``type_spec_from_value`` asks for.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from ferroflow.framework.tensor_shape import TensorShape, as_shape


class TypeSpec:
    """Base class of the specs: each says which Python type it describes (``value_type``) and
    compares through ``_serialize()``, a tuple of its defining fields."""

    __slots__ = ()

    @property
    def value_type(self):
        raise NotImplementedError

    def _serialize(self):
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and _hashable(self._serialize()) == _hashable(other._serialize())

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self).__name__, _hashable(self._serialize())))

    def __repr__(self):
        fields = ", ".join(repr(f) for f in self._serialize())
        return f"{type(self).__name__}({fields})"

    def __reduce__(self):
        return type(self), self._serialize()

    def is_compatible_with(self, spec_or_value):
        """True if ``spec_or_value`` (a spec or a value) could be described by this spec."""
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else type_spec_from_value(spec_or_value)
        if type(self) is not type(other):
            return False
        return all(_fields_compatible(a, b) for a, b in zip(self._serialize(), other._serialize()))

    def is_subtype_of(self, other):
        """True if every value this spec describes is also described by ``other``."""
        if type(self) is not type(other):
            return False
        return all(_field_subtype(a, b) for a, b in zip(self._serialize(), other._serialize()))

    def most_specific_common_supertype(self, others):
        """The narrowest spec describing the values of this spec and of every spec in ``others``
        (unknown where they disagree), or None if they differ in kind or dtype."""
        fields = list(self._serialize())
        for other in others:
            if type(other) is not type(self):
                return None
            merged = []
            for a, b in zip(fields, other._serialize()):
                m = _field_supertype(a, b)
                if m is _NO_SUPERTYPE:
                    return None
                merged.append(m)
            fields = merged
        return type(self)(*fields)

    def most_specific_compatible_type(self, other):
        """TF1's name for ``most_specific_common_supertype([other])``; raises ValueError if none."""
        out = self.most_specific_common_supertype([other])
        if out is None:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return out


_NO_SUPERTYPE = object()


def _hashable(v):
    if isinstance(v, TensorShape):
        return None if v.dims is None else tuple(v.as_list())
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    return v


def _fields_compatible(a, b):
    if isinstance(a, TensorShape):
        return a.is_compatible_with(b)
    if isinstance(a, TypeSpec):
        return a.is_compatible_with(b)
    return a == b


def _field_subtype(a, b):
    if isinstance(a, TensorShape):
        if b.dims is None:
            return True
        if a.dims is None or len(a) != len(b):
            return False
        return all(y is None or x == y for x, y in zip(a.as_list(), b.as_list()))
    if isinstance(a, TypeSpec):
        return a.is_subtype_of(b)
    return a == b


def _field_supertype(a, b):
    if isinstance(a, TensorShape):
        return a.most_specific_compatible_shape(b)
    if isinstance(a, TypeSpec):
        m = a.most_specific_common_supertype([b])
        return _NO_SUPERTYPE if m is None else m
    return a if a == b else _NO_SUPERTYPE


def base_dtype(d):
    """``d`` as a DType without its reference flag (how the specs store dtypes)."""
    return dtypes.as_dtype(d).base_dtype


class TensorSpec(TypeSpec):
    """A dense tensor's dtype and (partial) shape, and an optional name (a placeholder's)."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._shape = as_shape(shape)
        self._dtype = base_dtype(dtype)
        self._name = name

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)

    @property
    def value_type(self):
        from ferroflow.framework import ops

        return ops.Tensor

    def _serialize(self):
        return (self._shape, self._dtype, self._name)

    def __repr__(self):
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"

    def is_compatible_with(self, spec_or_tensor):
        # The name is not part of compatibility.
        other = spec_or_tensor
        if not isinstance(other, TypeSpec):
            other = type_spec_from_value(other)
        return (isinstance(other, TensorSpec) and self._dtype.is_compatible_with(other.dtype)
                and self._shape.is_compatible_with(other.shape))

    def most_specific_common_supertype(self, others):
        shape, name = self._shape, self._name
        for o in others:
            if not isinstance(o, TensorSpec) or o.dtype != self._dtype:
                return None
            shape = shape.most_specific_compatible_shape(o.shape)
            name = name if name == o.name else None
        return TensorSpec(shape, self._dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """A TensorSpec with ``spec``'s shape and dtype (and ``name``, else ``spec``'s name)."""
        return cls(spec.shape, spec.dtype, name if name is not None else getattr(spec, "name", None))

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of a Tensor (its static shape and dtype; named after its op unless ``name``)."""
        from ferroflow.framework import ops

        if not isinstance(tensor, ops.Tensor):
            raise ValueError(f"`tensor` should be a tf.Tensor, but got {type(tensor).__name__}")
        return cls(tensor.shape, tensor.dtype, name if name is not None else tensor.op.name)


class SparseTensorSpec(TypeSpec):
    """A SparseTensor's dense shape (partial) and values dtype."""

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape=None, dtype=dtypes.float32):
        self._shape = as_shape(shape)
        self._dtype = base_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)

    @property
    def value_type(self):
        from ferroflow.framework.sparse_tensor import SparseTensor

        return SparseTensor

    def _serialize(self):
        return (self._shape, self._dtype)

    def __repr__(self):
        return f"SparseTensorSpec(shape={self._shape}, dtype={self._dtype!r})"

    @classmethod
    def from_value(cls, value):
        from ferroflow.framework.sparse_tensor import SparseTensorValue

        if isinstance(value, SparseTensorValue):
            return cls(list(value.dense_shape), dtypes.as_dtype(value.values.dtype))
        shape = value.shape if isinstance(value.shape, TensorShape) else TensorShape(None)
        return cls(shape, value.dtype)


class IndexedSlicesSpec(TypeSpec):
    """An IndexedSlices' dense shape, values dtype, indices dtype and shapes."""

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype", "_indices_shape")

    def __init__(self, shape=None, dtype=dtypes.float32, indices_dtype=dtypes.int64, dense_shape_dtype=None,
                 indices_shape=None):
        self._shape = as_shape(shape)
        self._values_dtype = base_dtype(dtype)
        self._indices_dtype = base_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else base_dtype(dense_shape_dtype)
        self._indices_shape = as_shape(indices_shape).with_rank_at_most(1)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._values_dtype)

    @property
    def value_type(self):
        from ferroflow.framework.indexed_slices import IndexedSlices

        return IndexedSlices

    def _serialize(self):
        return (self._shape, self._values_dtype, self._indices_dtype, self._dense_shape_dtype,
                self._indices_shape)


class NoneTensorSpec(TypeSpec):
    """The spec of None where a structure holds no value (an optional input, for instance)."""

    __slots__ = ()

    @property
    def value_type(self):
        return type(None)

    def _serialize(self):
        return ()

    def most_specific_compatible_shape(self, other):
        if type(self) is not type(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return self

    @classmethod
    def from_value(cls, value):
        if value is not None:
            raise ValueError(f"NoneTensorSpec describes only None, got {value!r}")
        return cls()


def type_spec_from_value(value):
    """The TypeSpec of ``value``: a Tensor (or anything convertible to one), SparseTensor(Value),
    IndexedSlices, RaggedTensor, TensorArray or None. Raises TypeError for anything else."""
    if isinstance(value, ops.Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        return SparseTensorSpec.from_value(value)
    if isinstance(value, IndexedSlices):
        dense_shape = value.dense_shape
        return IndexedSlicesSpec(value.values.shape, value.dtype, value.indices.dtype,
                                 None if dense_shape is None else dense_shape.dtype, value.indices.shape)
    if value is None:
        return NoneTensorSpec()
    spec = getattr(value, "_type_spec", None)
    if isinstance(spec, TypeSpec):
        return spec
    try:
        # A scratch graph: describing a Python value must not add a constant to the user's graph.
        with ops.Graph().as_default():
            t = ops.convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Could not build a TypeSpec for {value!r} of type {type(value).__name__}") from e
    return TensorSpec(t.shape, t.dtype)
