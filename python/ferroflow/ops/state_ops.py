"""Ops on variable references: create, assign, scatter, test initialization."""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.ops._op_util import make, shape_attr, type_attr


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """The raw ``VariableV2`` op: a mutable tensor living in the session."""
    return make(
        "VariableV2",
        [],
        {"shape": shape_attr(shape), "dtype": type_attr(dtype), "container": container, "shared_name": shared_name},
        name,
    )


def _ref(ref):
    """The reference tensor of a Variable (or a raw ``VariableV2`` output)."""
    if hasattr(ref, "_ref") and not isinstance(ref, ops.Tensor):
        return ref._ref()
    return ref


def _is_variable(x):
    return hasattr(x, "_ref") and not isinstance(x, ops.Tensor)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Sets the variable to ``value``; returns the variable (its new value when fetched).

    As in TF, ``ref`` may also be a slice of a variable (``tf.assign(v[1:3], value)``),
    which assigns through ``StridedSliceAssign``.
    """
    if isinstance(ref, ops.Tensor) and hasattr(ref, "assign"):
        return ref.assign(value, name=name)
    r = _ref(ref)
    v = ops.convert_to_tensor(value, dtype=r.dtype, name="value")
    attrs = {"validate_shape": True if validate_shape is None else bool(validate_shape), "use_locking": True}
    return make("Assign", [r, v], attrs, name)


def assign_add(ref, value, use_locking=None, name=None):
    r = _ref(ref)
    v = ops.convert_to_tensor(value, dtype=r.dtype, name="value")
    return make("AssignAdd", [r, v], {"use_locking": bool(use_locking)}, name)


def assign_sub(ref, value, use_locking=None, name=None):
    r = _ref(ref)
    v = ops.convert_to_tensor(value, dtype=r.dtype, name="value")
    return make("AssignSub", [r, v], {"use_locking": bool(use_locking)}, name)


def _scatter(op_type, ref, indices, updates, use_locking, name):
    r = _ref(ref)
    i = ops.convert_to_tensor(indices, name="indices")
    u = ops.convert_to_tensor(updates, dtype=r.dtype, name="updates")
    return make(op_type, [r, i, u], {"use_locking": bool(use_locking)}, name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """``ref[indices] = updates`` in place."""
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] += updates`` in place (duplicates accumulate)."""
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """``ref[indices] -= updates`` in place (duplicates accumulate)."""
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


def is_variable_initialized(ref, name=None):
    """A bool scalar: has the variable been assigned in this session?"""
    return make("IsVariableInitialized", [_ref(ref)], {}, name)


def strided_slice_assign(ref, begin, end, strides, value, begin_mask=0, end_mask=0, ellipsis_mask=0,
                         new_axis_mask=0, shrink_axis_mask=0, name=None):
    """``ref[begin:end:strides] = value`` in place (TF's ``StridedSliceAssign``); returns the variable.

    ``value`` broadcasts into the slice's shape; the masks are those of ``strided_slice``.
    """
    from ferroflow.ops._op_util import to_int_tensor

    r = _ref(ref)
    with ops.name_scope(name, "StridedSliceAssign", [r, begin, end, strides, value]) as scope:
        b = to_int_tensor(begin, "begin")
        e = to_int_tensor(end, "end", dtype=b.dtype)
        s = to_int_tensor(strides, "strides", dtype=b.dtype)
        v = value if isinstance(value, ops.Tensor) else ops.convert_to_tensor(value, dtype=r.dtype, name="value")
        attrs = {
            "begin_mask": int(begin_mask),
            "end_mask": int(end_mask),
            "ellipsis_mask": int(ellipsis_mask),
            "new_axis_mask": int(new_axis_mask),
            "shrink_axis_mask": int(shrink_axis_mask),
        }
        return make("StridedSliceAssign", [r, b, e, s, v], attrs, scope)
