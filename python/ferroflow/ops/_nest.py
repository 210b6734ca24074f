"""TensorFlow's ``nest`` rules (``python/util/nest.py`` in TF), behind ``tf.nest`` and the RNN/loop code.

A structure is a (possibly nested) list, tuple, namedtuple, mapping (dict,
OrderedDict, defaultdict, any ``collections.abc.Mapping``), mapping view or
``attrs``-decorated object; anything else (strings, sets, numpy arrays,
tensors, None) is a leaf. Mappings flatten in sorted key order and are
rebuilt in their own key order, as in TensorFlow. With
``expand_composites=True`` a SparseTensor or IndexedSlices is a structure of
its component tensors too.
"""

from __future__ import annotations

import collections
import collections.abc as _abc

from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.framework.sparse_tensor import SparseTensor


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_attrs(x):
    return hasattr(type(x), "__attrs_attrs__")


def _is_composite(x):
    """SparseTensor / IndexedSlices: structures of their component tensors when expanded."""
    return isinstance(x, (SparseTensor, IndexedSlices))


def is_sequence(x):
    """True for the containers nest descends into (not strings, sets, arrays or tensors)."""
    return isinstance(x, (list, tuple, _abc.Mapping, _abc.MappingView)) or _is_attrs(x)


def is_nested(seq):
    """``tf.nest.is_nested``: whether ``seq`` is a structure nest descends into."""
    return is_sequence(seq)


def _is_structure(x, expand_composites):
    return is_sequence(x) or (expand_composites and _is_composite(x))


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError as e:
        raise TypeError(f"nest only supports dicts with sortable keys; got {list(mapping)!r}: {e}") from None


def _children(x):
    if isinstance(x, _abc.Mapping):
        return [x[k] for k in _sorted_keys(x)]
    if _is_attrs(x):
        return [getattr(x, a.name) for a in type(x).__attrs_attrs__]
    if _is_composite(x):
        if isinstance(x, IndexedSlices):
            parts = [x.values, x.indices]
            return parts + ([x.dense_shape] if x.dense_shape is not None else [])
        return [x.indices, x.values, x.dense_shape]
    return list(x)


def _sequence_like(instance, args):
    """A container of ``instance``'s type holding ``args`` (given in flatten order)."""
    if isinstance(instance, _abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), args))
        kind = type(instance)
        if isinstance(instance, collections.defaultdict):
            rebuilt = collections.defaultdict(instance.default_factory)
            for k in instance:
                rebuilt[k] = by_key[k]
            return rebuilt
        return kind((k, by_key[k]) for k in instance)
    if _is_namedtuple(instance):
        return type(instance)(*args)
    if _is_attrs(instance):
        return type(instance)(*args)
    if _is_composite(instance):
        return type(instance)(*_composite_ctor_args(instance, args))
    if isinstance(instance, _abc.MappingView) or isinstance(instance, list):
        return list(args)
    return tuple(args)


def _composite_ctor_args(instance, args):
    if isinstance(instance, IndexedSlices):
        return (args[0], args[1], args[2] if len(args) > 2 else None)
    return tuple(args)


def flatten(structure, expand_composites=False):
    """``tf.nest.flatten``: the leaves of ``structure``, depth first (None is a leaf)."""
    if not _is_structure(structure, expand_composites):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child, expand_composites))
    return out


def _show(x):
    return f"type={type(x).__name__} str={x}"


def _same_kind(a, b):
    """TF's check_types rule: equal types, or two mappings, or namedtuples of one name and fields."""
    if type(a) is type(b):
        return True
    if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping):
        return True
    if _is_namedtuple(a) and _is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and type(a)._fields == type(b)._fields
    return False


def _structure_mismatch(nest1, nest2, detail, error=ValueError):
    return error(
        f"The two structures don't have the same nested structure.\n\nFirst structure: {_show(nest1)}\n\n"
        f"Second structure: {_show(nest2)}\n\nMore specifically: {detail}"
    )


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """``tf.nest.assert_same_structure``: ValueError (TypeError for differing container types) unless alike."""

    def check(a, b):
        sa, sb = _is_structure(a, expand_composites), _is_structure(b, expand_composites)
        if sa != sb:
            seq, leaf = (a, b) if sa else (b, a)
            raise _structure_mismatch(
                nest1, nest2, f'Substructure "{_show(seq)}" is a sequence, while substructure "{_show(leaf)}" is not'
            )
        if not sa:
            return
        if check_types and not _same_kind(a, b):
            raise _structure_mismatch(
                nest1,
                nest2,
                f"The two structures don't have the same sequence type. First structure {_show(a)} has type "
                f"{type(a).__name__}, while second structure {_show(b)} has type {type(b).__name__}",
                TypeError,
            )
        if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping) and set(a) != set(b):
            raise _structure_mismatch(
                nest1,
                nest2,
                f"The two dictionaries don't have the same set of keys. First structure has keys "
                f"{_sorted_keys(a)}, while second structure has keys {_sorted_keys(b)}",
            )
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb):
            raise _structure_mismatch(
                nest1,
                nest2,
                f"The two structures don't have the same number of elements. First structure: {_show(a)}. "
                f"Second structure: {_show(b)}",
            )
        for x, y in zip(ca, cb):
            check(x, y)

    check(nest1, nest2)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``tf.nest.pack_sequence_as``: ``flat_sequence`` put back into the nesting of ``structure``."""
    if not is_sequence(flat_sequence):
        raise TypeError(
            f"Attempted to pack value:\n  {flat_sequence}\ninto a structure, but found incompatible type "
            f"`{type(flat_sequence)}` instead."
        )
    flat_sequence = list(flat_sequence)
    if not _is_structure(structure, expand_composites):
        if len(flat_sequence) != 1:
            raise ValueError(
                f"The target structure is of type `{type(structure)}`\n  {structure}\nHowever the input is a "
                f"sequence ({type(flat_sequence)}) of length {len(flat_sequence)}.\n  {flat_sequence}\n"
                "nest cannot guarantee that it is safe to map one to the other."
            )
        return flat_sequence[0]
    n = len(flatten(structure, expand_composites))
    if n != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had {len(flat_sequence)} items.  "
            f"Structure: {structure}, flat_sequence: {flat_sequence}."
        )
    pos = 0

    def pack(s):
        nonlocal pos
        if not _is_structure(s, expand_composites):
            pos += 1
            return flat_sequence[pos - 1]
        return _sequence_like(s, [pack(c) for c in _children(s)])

    return pack(structure)


def map_structure(func, *structure, **kwargs):
    """``tf.nest.map_structure``: ``func`` applied leaf by leaf to structures of the same nesting.

    Keyword arguments: ``check_types`` (default True) and ``expand_composites``
    (default False); the result has the nesting of the first structure.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    expand_composites = kwargs.pop("expand_composites", False)
    if kwargs:
        raise ValueError(
            "Only valid keyword arguments are `check_types` and `expand_composites`, not: "
            + ", ".join(f"`{k}`" for k in kwargs)
        )
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types, expand_composites)
    flats = [flatten(s, expand_composites) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)], expand_composites)


def flatten_up_to(shallow_tree, input_tree):
    """``input_tree`` flattened only as deep as ``shallow_tree`` goes (deeper parts stay whole)."""
    if not is_sequence(shallow_tree):
        return [input_tree]
    if not is_sequence(input_tree):
        raise TypeError(f"If shallow structure is a sequence, input must also be a sequence. Input has type: {type(input_tree)}.")
    shallow, inp = _children(shallow_tree), _children(input_tree)
    if len(shallow) != len(inp):
        raise ValueError(
            f"The two structures don't have the same sequence length. Input structure has length {len(inp)}, "
            f"while shallow structure has length {len(shallow)}."
        )
    out = []
    for s, i in zip(shallow, inp):
        out.extend(flatten_up_to(s, i))
    return out


def map_structure_up_to(shallow_tree, func, *inputs):
    """``func`` applied to the parts of ``inputs`` at the leaves of ``shallow_tree``."""
    flats = [flatten_up_to(shallow_tree, i) for i in inputs]
    return pack_sequence_as(shallow_tree, [func(*parts) for parts in zip(*flats)])


def get_traverse_shallow_structure(traverse_fn, structure):
    """The bool structure ``traverse_fn`` selects: True descends (or keeps a leaf), False stops."""
    to_traverse = traverse_fn(structure)
    if not is_sequence(structure):
        if not isinstance(to_traverse, bool):
            raise TypeError(f"traverse_fn returned structure: {to_traverse} for non-structure: {structure}")
        return to_traverse
    level = []
    if isinstance(to_traverse, bool):
        if not to_traverse:
            return False
        for branch in _children(structure):
            level.append(get_traverse_shallow_structure(traverse_fn, branch))
    elif not is_sequence(to_traverse):
        raise TypeError(f"traverse_fn returned a non-bool scalar: {to_traverse} for input: {structure}")
    else:
        flatten_up_to(to_traverse, structure)  # checks that to_traverse is a shallow version of structure
        for t, branch in zip(_children(to_traverse), _children(structure)):
            if not isinstance(t, bool):
                raise TypeError(
                    f"traverse_fn didn't return a depth=1 structure of bools. saw: {t} for structure: {to_traverse}"
                )
            level.append(get_traverse_shallow_structure(traverse_fn, branch) if t else False)
    return _sequence_like(structure, level)
