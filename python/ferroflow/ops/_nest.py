"""The part of TensorFlow's ``nest`` rules the RNN code needs (``python/util/nest.py`` in TF).

A structure is a (possibly nested) list, tuple, namedtuple or dict; anything
else is a leaf. Dicts flatten in sorted key order, as in TensorFlow.
"""

from __future__ import annotations


def is_sequence(x):
    """True for the containers nest descends into (not strings, not tensors)."""
    return isinstance(x, (list, tuple, dict))


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def _sequence_like(instance, args):
    """A container of ``instance``'s type holding ``args``."""
    if isinstance(instance, dict):
        result = dict(zip(sorted(instance), args))
        return type(instance)((k, result[k]) for k in instance)
    if _is_namedtuple(instance):
        return type(instance)(*args)
    if isinstance(instance, list):
        return list(args)
    return tuple(args)


def flatten(structure):
    """The leaves of ``structure``, depth first."""
    if not is_sequence(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _describe(x):
    return type(x).__name__ if is_sequence(x) else "a leaf"


def assert_same_structure(nest1, nest2, check_types=True):
    """ValueError (TypeError for differing container types) unless both have the same nesting."""
    s1, s2 = is_sequence(nest1), is_sequence(nest2)
    if s1 != s2:
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1}\n\n"
            f"Second structure: {nest2}"
        )
    if not s1:
        return
    if check_types and type(nest1) is not type(nest2):
        # TensorFlow treats list and tuple of equal length as different types too.
        raise TypeError(
            f"The two structures don't have the same sequence type. First structure has type "
            f"{type(nest1)}, while second structure has type {type(nest2)}."
        )
    if isinstance(nest1, dict) and sorted(nest1) != sorted(nest2):
        raise ValueError(f"The two dictionaries don't have the same set of keys: {sorted(nest1)} vs {sorted(nest2)}")
    c1, c2 = _children(nest1), _children(nest2)
    if len(c1) != len(c2):
        raise ValueError(
            f"The two structures don't have the same number of elements.\n\nFirst structure ({len(c1)} "
            f"elements): {nest1}\n\nSecond structure ({len(c2)} elements): {nest2}"
        )
    for a, b in zip(c1, c2):
        assert_same_structure(a, b, check_types)


def pack_sequence_as(structure, flat_sequence):
    """``flat_sequence`` put back into the nesting of ``structure``."""
    flat_sequence = list(flat_sequence)
    if not is_sequence(structure):
        if len(flat_sequence) != 1:
            raise ValueError(f"Structure is a scalar but len(flat_sequence) == {len(flat_sequence)} > 1")
        return flat_sequence[0]
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {n} elements, but flat_sequence had {len(flat_sequence)} elements."
        )
    pos = 0

    def pack(s):
        nonlocal pos
        if not is_sequence(s):
            pos += 1
            return flat_sequence[pos - 1]
        return _sequence_like(s, [pack(c) for c in _children(s)])

    return pack(structure)


def map_structure(func, *structures):
    """``func`` applied leaf by leaf to structures of the same nesting."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*leaves) for leaves in zip(*flats)])


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
