"""Array ops: sources, shapes, slicing, joining, gathering (``tf.reshape`` and friends)."""

from __future__ import annotations

import builtins
import collections
import math
import numbers

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.ops._op_util import as_list_or_tensor, make, make_op, shape_attr, to_int_tensor, type_attr
from ferroflow.ops._ragged_hook import on_flat_values

newaxis = None

# Above this many elements, zeros/ones use a Fill op instead of a constant
# (a constant would store the whole buffer in the graph).
_CONST_FILL_LIMIT = 1000


def placeholder(dtype, shape=None, name=None):
    """A tensor that must be fed at run time."""
    dtype = dtypes.as_dtype(dtype)
    return make("Placeholder", [], {"dtype": type_attr(dtype), "shape": shape_attr(shape)}, name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TensorFlow's argument name
    """Passes ``input`` through unless a value is fed."""
    x = ops.convert_to_tensor(input)
    return make(
        "PlaceholderWithDefault", [x], {"dtype": type_attr(x.dtype), "shape": shape_attr(shape)}, name
    )


@on_flat_values("input")
def identity(input, name=None):  # noqa: A002
    x = ops.convert_to_tensor(input)
    return make("Identity", [x], {}, name)


@on_flat_values("input")
def stop_gradient(input, name=None):  # noqa: A002
    x = ops.convert_to_tensor(input)
    return make("StopGradient", [x], {}, name)


def _static_shape_list(shape):
    """A Python list of ints if ``shape`` is fully static, else None."""
    shape = as_list_or_tensor(shape)
    if isinstance(shape, ops.Tensor):
        v = tensor_util.constant_value(shape)
        return None if v is None else [int(d) for d in np.reshape(v, [-1])]
    if isinstance(shape, (numbers.Integral, np.integer)):
        return [int(shape)]
    if isinstance(shape, (list, tuple)) and all(isinstance(d, (numbers.Integral, np.integer)) for d in shape):
        return [int(d) for d in shape]
    if isinstance(shape, np.ndarray):
        return [int(d) for d in shape.reshape(-1)]
    return None


def _filled(shape, value, dtype, name, default_name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops.name_scope(name, default_name, [shape] if isinstance(shape, ops.Tensor) else None) as scope:
        static = _static_shape_list(shape)
        # Python ints: a huge shape must not wrap around into a small product. A negative
        # dimension goes to Fill, whose shape function names it (ValueError, as in TF).
        if static is not None and min(static, default=0) >= 0 and math.prod(static) < _CONST_FILL_LIMIT:
            if 0 in static:
                empty = np.zeros(static, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
                return constant_op.constant(empty, dtype=dtype, name=scope)
            return constant_op.constant(value, dtype=dtype, shape=static, name=scope)
        dims = to_int_tensor(as_list_or_tensor(shape), "shape_as_tensor")
        v = constant_op.constant(value, dtype=dtype, name="Const")
        return make("Fill", [dims, v], {}, scope)


def zeros(shape, dtype=dtypes.float32, name=None, layout=None):
    """A tensor of zeros."""
    dtype = dtypes.as_dtype(dtype)
    return _filled(shape, "" if dtype == dtypes.string else (False if dtype.is_bool else 0), dtype, name, "zeros")


def ones(shape, dtype=dtypes.float32, name=None, layout=None):
    """A tensor of ones."""
    dtype = dtypes.as_dtype(dtype)
    return _filled(shape, True if dtype.is_bool else 1, dtype, name, "ones")


def fill(dims, value, name=None, layout=None):
    """A tensor of shape ``dims`` filled with the scalar ``value``."""
    v = ops.convert_to_tensor(value)
    d = to_int_tensor(as_list_or_tensor(dims), "dims")
    return make("Fill", [d, v], {}, name)


def _like(tensor, dtype, name, optimize, value, default_name, op_type):
    x = ops.convert_to_tensor(tensor)
    dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)
    if dtype.is_bool:
        value = builtins.bool(value)
    with ops.name_scope(name, default_name, [x]) as scope:
        if optimize and x.shape.is_fully_defined() and dtype != dtypes.string:
            return _filled(x.shape.as_list(), value, dtype, scope, default_name)
        if dtype == x.dtype:
            return make(op_type, [x], {}, scope)
        return _filled(shape(x), value, dtype, scope, default_name)


def _ragged(*values):
    """True when an argument (or an item of a list argument) is a RaggedTensor: the function hands over to
    ``ragged_dispatch``, as TensorFlow's dispatch does."""
    for v in values:
        if isinstance(v, (list, tuple)):
            if any(getattr(type(x), "_ragged_elementwise", False) for x in v):
                return True
        elif getattr(type(v), "_ragged_elementwise", False):
            return True
    return False


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    if _ragged(tensor):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.like(zeros_like, tensor, dtype, name)
    return _like(tensor, dtype, name, optimize, 0, "zeros_like", "ZerosLike")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    if _ragged(tensor):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.like(ones_like, tensor, dtype, name)
    return _like(tensor, dtype, name, optimize, 1, "ones_like", "OnesLike")


def shape(input, name=None, out_type=None):  # noqa: A002
    """The shape of ``input`` as a 1-D int32 (or ``out_type``) tensor."""
    x = ops.convert_to_tensor(input)
    out_type = dtypes.int32 if out_type is None else dtypes.as_dtype(out_type)
    return make("Shape", [x], {"out_type": type_attr(out_type)}, name)


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    return [shape(x, out_type=out_type) for x in input]


def size(input, name=None, out_type=None):  # noqa: A002
    if _ragged(input):  # every scalar of the flat values
        return size(input.flat_values, name=name, out_type=out_type)
    x = ops.convert_to_tensor(input)
    out_type = dtypes.int32 if out_type is None else dtypes.as_dtype(out_type)
    return make("Size", [x], {"out_type": type_attr(out_type)}, name)


def rank(input, name=None):  # noqa: A002
    if _ragged(input):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.rank(input, name)
    x = ops.convert_to_tensor(input)
    return make("Rank", [x], {}, name)


def reshape(tensor, shape, name=None):  # noqa: F811 - TensorFlow's argument name
    x = ops.convert_to_tensor(tensor)
    s = to_int_tensor(as_list_or_tensor(shape), "shape")
    return make("Reshape", [x, s], {}, name)


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes dimensions (reverses them when ``perm`` is None)."""
    x = ops.convert_to_tensor(a)
    with ops.name_scope(name, "transpose", [x]) as scope:
        if perm is None:
            if x.shape.ndims is None:
                r = rank(x)
                from ferroflow.ops import math_ops

                perm = math_ops.subtract(math_ops.subtract(r, 1), range(0, r, 1))
            else:
                perm = list(reversed(builtins.range(x.shape.ndims)))
        p = to_int_tensor(perm, "perm")
        return make("Transpose", [x, p], {}, scope)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    x = ops.convert_to_tensor(a)
    nd = x.shape.ndims
    if nd is None:
        raise ValueError("matrix_transpose needs a tensor of known rank")
    if nd < 2:
        raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: {x.shape}")
    return transpose(x, list(builtins.range(nd - 2)) + [nd - 1, nd - 2], name=name)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    if _ragged(input):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.expand_dims(input, axis, name)
    x = ops.convert_to_tensor(input)
    return make("ExpandDims", [x, to_int_tensor(axis, "dim")], {}, name)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if isinstance(axis, int):
        axis = [axis]
    if _ragged(input):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.squeeze(input, axis, name)
    x = ops.convert_to_tensor(input)
    return make("Squeeze", [x], {"squeeze_dims": [int(a) for a in (axis or [])]}, name)


def concat(values, axis, name="concat"):
    """Joins tensors along ``axis``."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if not values:
        raise ValueError("List argument 'values' to 'ConcatV2' Op with length 0 shorter than minimum length 2.")
    if _ragged(values):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.concat(values, axis, name=None if name == "concat" else name)
    if len(values) == 1:
        with ops.name_scope(name) as scope:
            t = ops.convert_to_tensor(values[0])
            ax = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            if ax.dtype != dtypes.int32 or ax.shape.ndims not in (None, 0):
                raise TypeError("concat axis must be a scalar int32")
            return identity(t, name=scope)
    # Inputs given as Python values become constants inside the op's scope ('concat/values_0',
    # 'concat/axis'), as TensorFlow's op builder names them.
    with ops.name_scope(name, "ConcatV2", values) as scope:
        tensors = ops.convert_n_to_tensor(values, name="values")
        dt = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype != dt:
                raise TypeError(
                    f"Tensors in list passed to 'values' of 'ConcatV2' Op have types [{', '.join(x.dtype.name for x in tensors)}] that don't all match."
                )
        ax = to_int_tensor(axis, "axis")
        return make("ConcatV2", tensors + [ax], {"N": len(tensors)}, scope)


def stack(values, axis=0, name="stack"):
    """Stacks equal-shaped tensors along a new ``axis``.

    As in TensorFlow, when some of ``values`` are tensors (or variables) the first one's dtype is the dtype of
    the rest: ``stack([int64_tensor, 2])`` converts the 2 to int64."""
    if _ragged(values):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.stack(values, axis, name=None if name == "stack" else name)
    first = next((v.dtype.base_dtype for v in values if isinstance(getattr(v, "dtype", None), dtypes.DType)), None)
    try:
        tensors = ops.convert_n_to_tensor(values, dtype=first)
    except (TypeError, ValueError):
        if first is None:
            raise
        seen = []
        for v in values:
            try:
                seen.append(ops.convert_to_tensor(v).dtype.base_dtype.name)
            except (TypeError, ValueError):
                seen.append("<NOT CONVERTIBLE TO TENSOR>")
        raise TypeError(
            f"Tensors in list passed to 'values' of 'Pack' Op have types [{', '.join(seen)}] that don't all match."
        ) from None
    if not tensors:
        # TensorFlow converts an empty list (axis 0) to a constant: a float32 tensor of shape [0].
        if axis != 0:
            raise ValueError(f"stack of no values along axis {axis}: only axis 0 gives TensorFlow's empty constant")
        return ops.convert_to_tensor([], dtype=dtypes.float32, name=name)
    dt = tensors[0].dtype
    if any(t.dtype != dt for t in tensors):
        raise TypeError(
            f"Tensors in list passed to 'values' of 'Pack' Op have types [{', '.join(x.dtype.name for x in tensors)}] that don't all match."
        )
    r = tensors[0].shape.ndims
    if r is not None and not -r - 1 <= axis < r + 1:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-r - 1}, {r + 1})")
    return make("Pack", tensors, {"axis": int(axis), "N": len(tensors)}, name)


def parallel_stack(values, name="parallel_stack"):
    """Stacks along a new first axis (same result as ``stack(values, 0)``)."""
    return stack(values, axis=0, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits along ``axis`` into a list of tensors with that dimension removed."""
    x = ops.convert_to_tensor(value)
    if num is None:
        if x.shape.ndims is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
        r = x.shape.ndims
        if not -r <= axis < r:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-r}, {r})")
        num = x.shape[axis].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    op = make_op("Unpack", [x], {"num": int(num), "axis": int(axis)}, name)
    return list(op.outputs)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits into ``num`` equal parts or into parts of the given sizes."""
    x = ops.convert_to_tensor(value)
    if isinstance(num_or_size_splits, (numbers.Integral, np.integer)) and not isinstance(num_or_size_splits, bool):
        n = int(num_or_size_splits)
        ax = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="split_dim")
        op = make_op("Split", [ax, x], {"num_split": n}, name)
        return list(op.outputs)
    sizes = to_int_tensor(num_or_size_splits, "size_splits")
    if num is None:
        s = sizes.shape
        if s.ndims != 1 or s[0].value is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
        num = s[0].value
    ax = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="split_dim")
    op = make_op("SplitV", [x, sizes, ax], {"num_split": int(num)}, name)
    return list(op.outputs)


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    # Python begin/size become 'Slice/begin' and 'Slice/size', as TensorFlow's op builder names them.
    with ops.name_scope(name, "Slice", [input_, begin, size]) as scope:
        x = ops.convert_to_tensor(input_, name="input")
        b = to_int_tensor(begin, "begin")
        s = to_int_tensor(size, "size", dtype=b.dtype)
        return make("Slice", [x, b, s], {}, scope)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """TensorFlow's strided slice (what ``tensor[...]`` builds)."""
    x = ops.convert_to_tensor(input_)
    b = to_int_tensor(begin, "begin")
    e = to_int_tensor(end, "end", dtype=b.dtype)
    if strides is None:
        strides = ones_like(b)
    s = to_int_tensor(strides, "strides", dtype=b.dtype)
    attrs = {
        "begin_mask": int(begin_mask),
        "end_mask": int(end_mask),
        "ellipsis_mask": int(ellipsis_mask),
        "new_axis_mask": int(new_axis_mask),
        "shrink_axis_mask": int(shrink_axis_mask),
    }
    out = make("StridedSlice", [x, b, e, s], attrs, name)
    if var is not None:
        parent_name = name

        def assign(value, name=None):
            # TF names the update "<slice scope>_assign" ("strided_slice/_assign").
            if name is None:
                name = (parent_name or "strided_slice") + "_assign"
            return var._strided_slice_assign(b, e, s, value, name, **attrs)

        _slice_assigns(out.graph)[out.op._id] = assign
    return out


def bitcast(input, type, name=None):  # noqa: A002
    """``input``'s bytes reinterpreted as ``type`` (TF's ``Bitcast``): a smaller element type adds a
    last dimension of ``size(input.dtype) / size(type)``, a larger one consumes a last dimension of
    ``size(type) / size(input.dtype)``."""
    x = ops.convert_to_tensor(input, name="input")
    return make("Bitcast", [x], {"type": type_attr(type)}, name)


def _slice_assigns(graph):
    """Per graph: the ``assign`` function of each strided slice taken of a variable (``v[1:3]``)."""
    table = getattr(graph, "_strided_slice_assigns", None)
    if table is None:
        table = graph._strided_slice_assigns = {}
    return table


def _tensor_assign(self):
    """``v[1:3].assign(value)``: only a slice taken directly of a variable has it (as in TF)."""
    fn = None if self.value_index != 0 else getattr(self.graph, "_strided_slice_assigns", {}).get(self.op._id)
    if fn is None:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'assign'")
    return fn


def _is_index(x):
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool) or (
        isinstance(x, ops.Tensor) and x.dtype in (dtypes.int32, dtypes.int64)
    )


def _slice_helper(tensor, slice_spec, var=None):
    """``tensor[slice_spec]``: ints, slices (with steps), Ellipsis, ``tf.newaxis`` and scalar int tensors."""
    if not isinstance(slice_spec, (list, tuple)) or (isinstance(slice_spec, list) and not slice_spec):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    index = 0
    for s in slice_spec:
        if isinstance(s, _builtin_slice):
            if s.start is not None and not _is_index(s.start):
                raise TypeError(f"Slice start must be an integer or None, got {s.start!r}")
            if s.stop is not None and not _is_index(s.stop):
                raise TypeError(f"Slice stop must be an integer or None, got {s.stop!r}")
            if s.step is not None and not _is_index(s.step):
                raise TypeError(f"Slice step must be an integer or None, got {s.step!r}")
            begin.append(0 if s.start is None else s.start)
            end.append(0 if s.stop is None else s.stop)
            strides.append(1 if s.step is None else s.step)
            if s.start is None:
                begin_mask |= 1 << index
            if s.stop is None:
                end_mask |= 1 << index
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= 1 << index
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= 1 << index
        elif _is_index(s):
            begin.append(s)
            end.append(s + 1 if not isinstance(s, ops.Tensor) else s + 1)
            strides.append(1)
            shrink_axis_mask |= 1 << index
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {s!r}"
            )
        index += 1
    with ops.name_scope(None, "strided_slice", [tensor]) as name:
        packed = [_pack_index(v, n) for v, n in ((begin, "stack"), (end, "stack_1"), (strides, "stack_2"))]
        # As TF: one int64 bound makes all three int64 (StridedSlice(Assign) needs one index type).
        if any(p.dtype == dtypes.int64 for p in packed):
            packed = [p if p.dtype == dtypes.int64 else cast(p, dtypes.int64) for p in packed]
        return strided_slice(tensor, *packed, begin_mask=begin_mask, end_mask=end_mask,
                             ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                             shrink_axis_mask=shrink_axis_mask, var=var, name=name)


_builtin_slice = builtins.slice


def _pack_index(values, name):
    if any(isinstance(v, ops.Tensor) for v in values):
        dt = next(v.dtype for v in values if isinstance(v, ops.Tensor))
        return stack([v if isinstance(v, ops.Tensor) else constant_op.constant(v, dtype=dt) for v in values], name=name)
    vals = [int(v) for v in values]
    dt = dtypes.int64 if any(not -(2**31) <= v < 2**31 for v in vals) else dtypes.int32
    return constant_op.constant(vals, dtype=dt, name=name)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Gathers slices of ``params`` along ``axis`` at ``indices``."""
    if _ragged(params, indices):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.gather(params, indices, validate_indices, name, axis, batch_dims)
    p = ops.convert_to_tensor(params, name="params")
    i = ops.convert_to_tensor(indices, name="indices")
    if axis is None:
        axis = batch_dims
    ax = to_int_tensor(axis, "axis", dtype=i.dtype if i.dtype in (dtypes.int32, dtypes.int64) else None)
    return make("GatherV2", [p, i, ax], {"batch_dims": int(batch_dims)}, name)


def gather_nd(params, indices, name=None, batch_dims=0, bad_indices_policy=""):
    """Slices of ``params`` at the index tuples in the last dim of ``indices``; with ``batch_dims`` the leading
    dims of both are batch dims, each batch gathering from its own slice of ``params``."""
    p = ops.convert_to_tensor(params, name="params")
    i = ops.convert_to_tensor(indices, name="indices")
    if batch_dims != 0:
        with ops.name_scope(name, "GatherNd", [p, i]):
            return _batch_gather_nd(p, i, int(batch_dims))
    return make("GatherNd", [p, i], {}, name)


def _batch_gather_nd(p, i, batch_dims):
    """``gather_nd`` over batch dims, as TensorFlow builds it: the batch dims are flattened into one, and each
    index tuple is prefixed with its batch's position."""
    if i.shape.ndims is not None and batch_dims >= i.shape.ndims:
        raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than rank(`indices`) = {i.shape.ndims}")
    ps, ids = shape(p), shape(i)
    batch_shape = ps[:batch_dims]
    from ferroflow.ops import math_ops

    batch_size = math_ops.reduce_prod(batch_shape, [0], keepdims=True)
    inner = ids[batch_dims:]
    flat_i = reshape(i, concat([batch_size, inner], 0))
    # Each tuple's batch position, broadcast over the index dims: [B, i1, ..., iK, 1].
    k = rank(i) - batch_dims - 1
    pos = reshape(cast(range(batch_size[0]), i.dtype), concat([batch_size, ones([k], dtypes.int32), [1]], 0))
    pos = broadcast_to(pos, concat([batch_size, inner[:-1], [1]], 0))
    flat_p = reshape(p, concat([batch_size, ps[batch_dims:]], 0))
    out = make("GatherNd", [flat_p, concat([pos, flat_i], -1)], {}, "GatherNd")
    out = reshape(out, concat([batch_shape, shape(out)[1:]], 0))
    sp, si = p.shape, i.shape
    if sp.ndims is not None and si.ndims is not None and si[-1] is not None:
        depth = int(si[-1])
        out.set_shape(sp[:batch_dims].concatenate(si[batch_dims:-1]).concatenate(sp[batch_dims + depth:]))
    return out


def tile(input, multiples, name=None):  # noqa: A002
    if _ragged(input):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.tile(input, multiples, name)
    x = ops.convert_to_tensor(input)
    return make("Tile", [x, to_int_tensor(multiples, "multiples")], {}, name)


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads ``tensor``; mode is CONSTANT, REFLECT or SYMMETRIC (any case)."""
    x = ops.convert_to_tensor(tensor)
    p = to_int_tensor(paddings, "paddings")
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, ops.Tensor) and np.all(np.asarray(constant_values) == 0):
            return make("Pad", [x, p], {}, name)
        c = ops.convert_to_tensor(constant_values, dtype=x.dtype, name="constant_values")
        return make("PadV2", [x, p, c], {}, name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return make("MirrorPad", [x, p], {"mode": mode}, name)
    raise ValueError(f"Value of argument `mode` expected to be one of \"CONSTANT\", \"REFLECT\", or \"SYMMETRIC\". Received `mode` = {mode}")


@on_flat_values("indices")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes ``indices`` along a new axis of size ``depth``."""
    with ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        given = [v.dtype if isinstance(v, ops.Tensor) else tensor_util.infer_dtype(v)
                 for v in (on_value, off_value) if v is not None]
        if len(given) == 2 and given[0] != given[1]:
            raise TypeError(f"dtype {given[0]!r} of on_value does not match dtype {given[1]!r} of off_value")
        if dtype is None:
            for v in (on_value, off_value):
                if isinstance(v, ops.Tensor):
                    dtype = v.dtype
                    break
                if v is not None and not isinstance(v, (ops.Tensor,)):
                    dtype = tensor_util.infer_dtype(v)
                    break
        dtype = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        on = ops.convert_to_tensor(1 if on_value is None else on_value, dtype=dtype, name="on_value")
        off = ops.convert_to_tensor(0 if off_value is None else off_value, dtype=dtype, name="off_value")
        i = ops.convert_to_tensor(indices)
        d = ops.convert_to_tensor(depth, dtype=dtypes.int32, name="depth")
        return make("OneHot", [i, d, on, off], {"axis": -1 if axis is None else int(axis)}, scope)


def reverse(tensor, axis, name=None):
    if _ragged(tensor):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.reverse(tensor, axis, name)
    x = ops.convert_to_tensor(tensor)
    return make("ReverseV2", [x, to_int_tensor(axis, "axis")], {}, name)


reverse_v2 = reverse


def broadcast_to(input, shape, name=None):  # noqa: A002
    x = ops.convert_to_tensor(input)
    return make("BroadcastTo", [x, to_int_tensor(as_list_or_tensor(shape), "shape")], {}, name)


def where(condition, x=None, y=None, name=None):
    """TF1 ``where``: coordinates of true elements, or an elementwise choice (cond may be a row selector)."""
    if _ragged(condition, x, y):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.where(condition, x, y, name)
    c = ops.convert_to_tensor(condition, name="condition")
    if x is None and y is None:
        return make("Where", [c], {}, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    xt, yt = _convert_pair(x, y)
    return make("Select", [c, xt, yt], {}, name)


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct elements of the vector ``x`` in order of first appearance (``y``), and for each
    element of ``x`` the position of its value in ``y`` (``idx``, of dtype ``out_idx``)."""
    xt = ops.convert_to_tensor(x, name="x")
    op = make_op("Unique", [xt], {"out_idx": type_attr(out_idx)}, name)
    return _Unique(*op.outputs)


# TensorFlow's result type: a namedtuple, so ``sess.run(unique(...))`` returns one too.
_Unique = collections.namedtuple("Unique", ["y", "idx"])


def where_v2(condition, x=None, y=None, name=None):
    """``where`` with NumPy broadcasting of condition, x and y."""
    if _ragged(condition, x, y):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.where(condition, x, y, name, v2=True)
    c = ops.convert_to_tensor(condition, name="condition")
    if x is None and y is None:
        return make("Where", [c], {}, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    xt, yt = _convert_pair(x, y)
    return make("SelectV2", [c, xt, yt], {}, name)


def _convert_pair(x, y):
    if isinstance(x, ops.Tensor) and isinstance(y, ops.Tensor):
        # Two tensors keep their dtypes: the op's inference raises TensorFlow's TypeError on a mismatch.
        return x, y
    if isinstance(x, ops.Tensor) or not isinstance(y, ops.Tensor):
        xt = ops.convert_to_tensor(x, name="x")
        yt = ops.convert_to_tensor(y, dtype=xt.dtype, name="y")
    else:
        yt = ops.convert_to_tensor(y, name="y")
        xt = ops.convert_to_tensor(x, dtype=yt.dtype, name="x")
    return xt, yt


def cast(x, dtype, name=None):
    """Converts ``x`` to ``dtype`` (floats truncate toward zero when cast to integers)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if _ragged(x):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.cast(x, dtype, name)
    from ferroflow.framework import indexed_slices, sparse_tensor

    if isinstance(x, sparse_tensor.SparseTensor):
        with ops.name_scope(name, "Cast", [x]) as scope:
            return sparse_tensor.SparseTensor(x.indices, cast(x.values, dtype, name=scope), x.dense_shape)
    if isinstance(x, indexed_slices.IndexedSlices):
        with ops.name_scope(name, "Cast", [x]) as scope:
            return indexed_slices.IndexedSlices(cast(x.values, dtype, name=scope), x.indices, x.dense_shape)
    if hasattr(x, "_as_tensor") and not isinstance(x, ops.Tensor):
        x = x._as_tensor()
    if isinstance(x, ops.Tensor):
        if x.dtype == dtype:
            return x
        with ops.name_scope(name, "Cast", [x]) as scope:
            return make("Cast", [x], {"DstT": type_attr(dtype), "SrcT": type_attr(x.dtype), "Truncate": False}, scope)
    with ops.name_scope(name, "Cast", []) as scope:
        t = ops.convert_to_tensor(x, name="x")
        if t.dtype == dtype:
            return t
        return make("Cast", [t], {"DstT": type_attr(dtype), "SrcT": type_attr(t.dtype), "Truncate": False}, scope)


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` if known without running the graph, else None."""
    return tensor_util.constant_value(tensor, partial)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """Elements of ``tensor`` where ``mask`` is true (mask over the leading dims)."""
    with ops.name_scope(name, values=[tensor, mask]):
        t = ops.convert_to_tensor(tensor, name="tensor")
        m = ops.convert_to_tensor(mask, name="mask")
        k = m.shape.ndims
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        if k is None:
            raise ValueError("Number of mask dimensions must be specified")
        axis = 0 if axis is None else axis
        static_axis = tensor_util.constant_value(ops.convert_to_tensor(axis))
        if static_axis is not None:
            # As TensorFlow, the axis is used as a Python slice start: a negative one checks (and masks) the
            # wrong dims, so it is only usable when those happen to match.
            axis = int(static_axis)
            t.shape[axis:axis + k].assert_is_compatible_with(m.shape)
        leading = shape(t)
        flat_shape = concat([leading[:axis], [-1], leading[axis + k:]], 0)
        flat = reshape(t, flat_shape)
        idx = squeeze(where(reshape(m, [-1])), axis=[1])
        out = gather(flat, idx, axis=axis)
        if t.shape.ndims is not None:
            out.set_shape(t.shape[:axis].concatenate([None]).concatenate(t.shape[axis + k:]))
        return out


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    from ferroflow.ops import math_ops

    with ops.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = ops.convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.maximum(constant_op.constant(0, dtype=lengths.dtype), math_ops.reduce_max(lengths))
        else:
            maxlen = ops.convert_to_tensor(maxlen)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {maxlen} "
                             f"with shape '{maxlen.shape}' instead")
        # As TensorFlow: the lengths are cast to maxlen's dtype (float lengths truncate), not the other way.
        r = range(0, maxlen, 1, dtype=maxlen.dtype)
        m = math_ops.less(r, cast(expand_dims(lengths, -1), maxlen.dtype))
        return m if dtypes.as_dtype(dtype) == dtypes.bool else cast(m, dtype)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TensorFlow's name
    """``[start, start + delta, ...)`` up to ``limit`` (exclusive)."""
    if limit is None:
        start, limit = 0, start
    with ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        if dtype is not None:
            dt = dtypes.as_dtype(dtype)
        else:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            found = []
            for v in (start, limit, delta):
                found.append(v.dtype if isinstance(v, ops.Tensor) else tensor_util.infer_dtype(v))
            dt = max(found, key=lambda d: order.index(d) if d in order else 0)
        parts = []
        for v, n in ((start, "start"), (limit, "limit"), (delta, "delta")):
            t = v if isinstance(v, ops.Tensor) else ops.convert_to_tensor(v, dtype=dt, name=n)
            parts.append(cast(t, dt) if t.dtype != dt else t)
        return make("Range", parts, {"Tidx": type_attr(dt)}, scope)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (``LinSpace``). As TensorFlow's
    ``linspace``: integer ends give float64 values (as ``truediv`` does), ``num`` 0 an empty tensor, a constant
    negative ``num`` a ValueError."""
    if axis != 0:
        raise NotImplementedError("linspace with axis != 0 is not supported")
    s = ops.convert_to_tensor(start, name="start")
    e = ops.convert_to_tensor(stop, dtype=s.dtype, name="stop")
    n = ops.convert_to_tensor(num, dtype=dtypes.int32, name="num")
    from ferroflow.ops.math_ops import _TRUEDIV_TARGET

    target = _TRUEDIV_TARGET.get(s.dtype.base_dtype)
    if target is not None:
        s, e = cast(s, target), cast(e, target)
    static_n = tensor_util.constant_value(n)
    if static_n is not None and int(static_n) < 0:
        raise ValueError(f"Requires start <= limit when delta > 0: 1/{int(static_n)}")
    if static_n is not None and int(static_n) == 0:
        return zeros([0], dtype=s.dtype, name=name or "LinSpace")
    return make("LinSpace", [s, e, n], {}, name)


lin_space = linspace


def _getitem(self, slice_spec):
    return _slice_helper(self, slice_spec)


ops.Tensor.__getitem__ = _getitem
ops.Tensor.assign = property(_tensor_assign)


def guarantee_const(input, name=None):  # noqa: A002
    """``input`` unchanged, marked as constant across runs (TF's ``GuaranteeConst``; no gradient)."""
    return make("GuaranteeConst", [ops.convert_to_tensor(input, name="input")], {}, name)


# -- autopacking: ``convert_to_tensor`` of a list or tuple that holds tensors -------------------------------


def _autopack(value, dtype=None, name=None):
    """Stacks a (nested) list holding tensors into one tensor, as TF's autopacking does."""

    def convert(v):
        if isinstance(v, (list, tuple)):
            return _autopack(v, dtype)
        return ops.convert_to_tensor(v, dtype=dtype)

    parts = [convert(v) for v in value]
    target = dtype
    if target is None:
        # Python numbers among the parts follow the tensors' dtype.
        tensor_types = {p.dtype for p in parts if p.op.type != "Const"}
        target = tensor_types.pop() if len(tensor_types) == 1 else parts[0].dtype
    parts = [p if p.dtype == target else cast(p, target) for p in parts]
    return stack(parts, name=name or "packed")


def _autopacking_conversion_function(value, dtype=None, name=None, as_ref=False):
    del as_ref  # a packed tensor is never a reference
    if not constant_op._contains_tensor(value):
        return NotImplemented
    return _autopack(value, dtype=dtype, name=name)


ops.register_tensor_conversion_function((list, tuple), _autopacking_conversion_function, 99)
