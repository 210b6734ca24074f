"""``tf.experimental.Optional`` (also ``tf.data.experimental.Optional``) and its spec ``tf.OptionalSpec``.

An optional is a value that may be absent. TensorFlow carries it as one variant tensor; ferroflow's graph
holds the two halves as ordinary tensors: a bool scalar (``has_value()``) and the value's components. An
optional made by ``Optional.empty(element_spec)`` has no components, so ``get_value()`` builds zeros of the
spec's shape behind an assertion: running it fails with ``InvalidArgumentError``, as TensorFlow's does.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.constant_op import constant
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.type_spec import TensorSpec, TypeSpec, type_spec_from_value
from ferroflow.ops import _nest as nest

__all__ = ["Optional", "OptionalSpec"]


def _as_component(v):
    if isinstance(v, (SparseTensor, ops.Tensor)) or isinstance(getattr(v, "_type_spec", None), TypeSpec):
        return v
    return ops.convert_to_tensor(v)


class Optional:
    """A value that may be absent. Build one with ``Optional.from_value`` or ``Optional.empty``."""

    __slots__ = ()

    @staticmethod
    def from_value(value):
        """An optional holding ``value`` (a tensor or a nested structure of them)."""
        with ops.name_scope("optional"):
            with ops.name_scope("value"):
                value = nest.map_structure(_as_component, value)
            has_value = constant(True, dtype=dtypes.bool, name="has_value")
        spec = nest.map_structure(type_spec_from_value, value)
        return _OptionalImpl(has_value, value, spec)

    @staticmethod
    def empty(element_spec):
        """An optional with no value, whose value would be described by ``element_spec``."""
        for leaf in nest.flatten(element_spec):
            if not isinstance(leaf, TensorSpec):
                raise TypeError(
                    f"Optional.empty: element_spec must be a structure of tf.TensorSpec in ferroflow, got {leaf!r}")
        with ops.name_scope("optional_none"):
            has_value = constant(False, dtype=dtypes.bool, name="has_value")
        return _OptionalImpl(has_value, None, element_spec)

    def has_value(self, name=None):
        raise NotImplementedError

    def get_value(self, name=None):
        raise NotImplementedError

    @property
    def element_spec(self):
        raise NotImplementedError


class _OptionalImpl(Optional):
    __slots__ = ("_has_value", "_value", "_element_spec")

    def __init__(self, has_value, value, element_spec):
        self._has_value = has_value
        self._value = value
        self._element_spec = element_spec

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def _type_spec(self):
        return OptionalSpec(self._element_spec)

    def has_value(self, name=None):
        """A bool scalar: whether this optional holds a value."""
        from ferroflow.ops.array_ops import identity

        with ops.name_scope(name, "OptionalHasValue"):
            return identity(self._has_value)

    def get_value(self, name=None):
        """The value (a structure like ``element_spec``); running it on an empty optional raises
        ``InvalidArgumentError``."""
        from ferroflow.ops.array_ops import identity, zeros
        from ferroflow.ops.control_flow_ops import Assert

        with ops.name_scope(name, "OptionalGetValue"):
            if self._value is not None:
                return nest.map_structure(
                    lambda v: identity(v) if isinstance(v, ops.Tensor) else v, self._value)
            check = Assert(self._has_value, ["The optional does not have a value"])
            with ops.control_dependencies([check]):
                return nest.map_structure(
                    lambda s: identity(zeros([d if d is not None else 0 for d in
                                              (s.shape.as_list() if s.shape.rank is not None else [])],
                                             dtype=s.dtype)),
                    self._element_spec)


def _leaves(spec):
    return nest.flatten(spec)


def _same_structure(a, b):
    try:
        nest.assert_same_structure(a, b)
    except (ValueError, TypeError):
        return False
    return True


class OptionalSpec(TypeSpec):
    """The spec of an ``Optional``: the spec of the value it may hold (``element_spec``, any nested structure
    of specs). Two optional specs are compatible when their element specs have the same structure and
    compatible leaves."""

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return _OptionalImpl

    def _serialize(self):
        return (self._element_spec,)

    def __eq__(self, other):
        return (type(other) is OptionalSpec and _same_structure(self._element_spec, other._element_spec)
                and all(a == b for a, b in zip(_leaves(self._element_spec), _leaves(other._element_spec))))

    def __hash__(self):
        return hash(("OptionalSpec", tuple(_leaves(self._element_spec))))

    def __repr__(self):
        return f"OptionalSpec({self._element_spec!r},)"

    def _pairs(self, other):
        if not isinstance(other, OptionalSpec) or not _same_structure(self._element_spec, other._element_spec):
            return None
        return list(zip(_leaves(self._element_spec), _leaves(other._element_spec)))

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        pairs = self._pairs(other)
        return pairs is not None and all(a.is_compatible_with(b) for a, b in pairs)

    def is_subtype_of(self, other):
        pairs = self._pairs(other)
        return pairs is not None and all(a.is_subtype_of(b) for a, b in pairs)

    def most_specific_common_supertype(self, others):
        element = self._element_spec
        for other in others:
            pairs = OptionalSpec(element)._pairs(other)
            if pairs is None:
                return None
            merged = [a.most_specific_common_supertype([b]) for a, b in pairs]
            if any(m is None for m in merged):
                return None
            element = nest.pack_sequence_as(element, merged)
        return OptionalSpec(element)

    @classmethod
    def from_value(cls, value):
        """The spec of the optional ``value``."""
        return cls(value.element_spec)
