"""Math ops: arithmetic, comparisons, reductions, matmul, and the Tensor operators."""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make, to_int_tensor, type_attr
from ferroflow.ops._ragged_hook import on_flat_values

cast = array_ops.cast
range = array_ops.range  # noqa: A001 - TensorFlow's name


def _is_ragged(v):
    return getattr(type(v), "_ragged_elementwise", False)


def _unary(op_type, default_name=None):
    def f(x, name=None):
        if _is_ragged(x):  # ragged dispatch: the op on the flat values
            return x.with_flat_values(f(x.flat_values, name=name))
        with ops.name_scope(name, default_name or op_type, [x]) as scope:
            t = ops.convert_to_tensor(x, name="x")
            return make(op_type, [t], {}, scope)

    f.__name__ = (default_name or op_type).lower()
    f.__doc__ = f"Elementwise ``{op_type}``."
    return f


def _binary(op_type, default_name=None):
    def f(x, y, name=None):
        if _is_ragged(x) or _is_ragged(y):
            from ferroflow.ops.ragged import ragged_elementwise

            return ragged_elementwise(f, x, y, name)
        with ops.name_scope(name, default_name or op_type, [x, y]) as scope:
            a, b = array_ops._convert_pair(x, y)
            return make(op_type, [a, b], {}, scope)

    f.__name__ = (default_name or op_type).lower()
    f.__doc__ = f"Elementwise ``{op_type}`` with broadcasting."
    return f


_add_v2 = _binary("AddV2", "Add")
_add_strings = _binary("Add")


def add(x, y, name=None):
    """``x + y`` with broadcasting; strings concatenate (TensorFlow's ``Add`` op, as ``AddV2`` has no strings)."""
    if any(isinstance(v, ops.Tensor) and v.dtype == dtypes.string for v in (x, y)) or all(
        isinstance(v, (str, bytes)) for v in (x, y)
    ):
        return _add_strings(x, y, name=name)
    return _add_v2(x, y, name=name)


subtract = _binary("Sub")
multiply = _binary("Mul")
realdiv = _binary("RealDiv")
floordiv = _binary("FloorDiv", "floordiv")
floor_div = floordiv
floormod = _binary("FloorMod")
mod = floormod
truncatemod = _binary("TruncateMod")
maximum = _binary("Maximum")
minimum = _binary("Minimum")
squared_difference = _binary("SquaredDifference")
equal = _binary("Equal")
not_equal = _binary("NotEqual")
less = _binary("Less")
less_equal = _binary("LessEqual")
greater = _binary("Greater")
greater_equal = _binary("GreaterEqual")
logical_and = _binary("LogicalAnd")
logical_or = _binary("LogicalOr")

negative = _unary("Neg")
neg = negative
sign = _unary("Sign")
square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
log = _unary("Log")
log1p = _unary("Log1p")
expm1 = _unary("Expm1")
sin = _unary("Sin")
cos = _unary("Cos")
tan = _unary("Tan")
tanh = _unary("Tanh")
sigmoid = _unary("Sigmoid")
floor = _unary("Floor")
ceil = _unary("Ceil")
reciprocal = _unary("Reciprocal")
logical_not = _unary("LogicalNot")
is_finite = _unary("IsFinite")
is_inf = _unary("IsInf")
is_nan = _unary("IsNan")
softplus = _unary("Softplus")


def atan2(y, x, name=None):
    """Elementwise ``atan(y / x)`` with the quadrant of ``(x, y)``."""
    with ops.name_scope(name, "Atan2", [y, x]) as scope:
        a, b = array_ops._convert_pair(y, x)
        return make("Atan2", [a, b], {}, scope)


@on_flat_values("x")
def abs(x, name=None):  # noqa: A001 - TensorFlow's name
    with ops.name_scope(name, "Abs", [x]) as scope:
        t = ops.convert_to_tensor(x, name="x")
        if t.dtype.is_complex:  # TensorFlow builds ComplexAbs for complex input
            return make("ComplexAbs", [t], {"Tout": type_attr(t.dtype.real_dtype)}, scope)
        return make("Abs", [t], {}, scope)


@on_flat_values("x")
def round(x, name=None):  # noqa: A001 - TensorFlow's name
    """Rounds half to even; integers pass through."""
    t = ops.convert_to_tensor(x, name="x")
    if t.dtype.is_integer:
        return t
    return make("Round", [t], {}, name)


def pow(x, y, name=None):  # noqa: A001 - TensorFlow's name
    with ops.name_scope(name, "Pow", [x]) as scope:
        a, b = array_ops._convert_pair(x, y)
        return make("Pow", [a, b], {}, scope)


def logical_xor(x, y, name="LogicalXor"):
    with ops.name_scope(name, "LogicalXor", [x, y]) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


_TRUEDIV_TARGET = {
    dtypes.int8: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint16: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.uint32: dtypes.float64,
    dtypes.int64: dtypes.float64,
    dtypes.uint64: dtypes.float64,
}


def truediv(x, y, name=None):
    """Division that casts integers to floating point first (Python 3 ``/``)."""
    if _is_ragged(x) or _is_ragged(y):
        from ferroflow.ops.ragged import ragged_elementwise

        return ragged_elementwise(truediv, x, y, name)
    with ops.name_scope(name, "truediv", [x, y]) as scope:
        a, b = array_ops._convert_pair(x, y)
        if a.dtype != b.dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {a.dtype!r} != {b.dtype!r}.")
        target = _TRUEDIV_TARGET.get(a.dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return make("RealDiv", [a, b], {}, scope)


def div_no_nan(x, y, name=None):
    """``x / y``, or 0 where ``y`` is 0; integers are divided as floats, as ``truediv`` divides them."""
    if _is_ragged(x) or _is_ragged(y):
        from ferroflow.ops.ragged import ragged_elementwise

        return ragged_elementwise(div_no_nan, x, y, name)
    with ops.name_scope(name, "div_no_nan", [x, y]) as scope:
        a, b = array_ops._convert_pair(x, y)
        if a.dtype != b.dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {a.dtype!r} != {b.dtype!r}.")
        target = _TRUEDIV_TARGET.get(a.dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return make("DivNoNan", [a, b], {}, scope)


def divide(x, y, name=None):
    """``x / y`` (true division)."""
    return truediv(x, y, name=name or "truediv")


def div(x, y, name=None):
    """TF1 ``div``: floor division for integers, real division for floats. ``y`` is converted to ``x``'s
    dtype, as TensorFlow's ``div`` converts it (a tensor of another dtype is a ValueError)."""
    with ops.name_scope(name, "div", [x, y]) as scope:
        a = ops.convert_to_tensor(x, name="x")
        b = ops.convert_to_tensor(y, dtype=a.dtype.base_dtype, name="y")
        if a.dtype.is_integer:
            return make("FloorDiv", [a, b], {}, scope)
        return make("RealDiv", [a, b], {}, scope)


def scalar_mul(scalar, x, name=None):
    with ops.name_scope(name, "scalar_mul", [x]) as scope:
        t = ops.convert_to_tensor(x)
        s = ops.convert_to_tensor(scalar, dtype=t.dtype, name="scalar")
        if s.shape.ndims not in (None, 0):
            raise ValueError(f"Only scalar multiply works, got shape {s.shape}")
        return multiply(s, t, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    return cast(x, dtypes.bfloat16, name=name)


def _limit_in(limit, src):
    """``limit`` as a value of float dtype ``src``, moved toward zero when rounding carried it past
    ``limit`` (float32(2**31 - 1) rounds up to 2**31, which no int32 holds), as TensorFlow does."""
    with np.errstate(over="ignore"):
        v = np.asarray(limit, dtype=src.as_numpy_dtype)
    if not np.isfinite(v) or builtins.abs(float(v)) > builtins.abs(limit):
        v = np.nextafter(v, np.asarray(0, dtype=v.dtype)) if np.isfinite(v) else np.asarray(
            np.finfo(v.dtype).max * np.sign(v), dtype=v.dtype)
    return v


def saturate_cast(value, dtype, name=None):
    """Casts ``value`` to ``dtype``, clamping it to the target's range first."""
    with ops.name_scope(name, "saturate_cast", [value]) as scope:
        x = ops.convert_to_tensor(value)
        dtype = dtypes.as_dtype(dtype)
        if x.dtype.is_numeric and dtype.is_numeric and not dtype.is_floating:
            if x.dtype.is_integer:
                lo, hi = max(x.dtype.min, dtype.min), min(x.dtype.max, dtype.max)
            else:
                lo, hi = _limit_in(dtype.min, x.dtype), _limit_in(dtype.max, x.dtype)
            x = minimum(maximum(x, ops.convert_to_tensor(lo, dtype=x.dtype)), ops.convert_to_tensor(hi, dtype=x.dtype))
        return cast(x, dtype, name=scope)


def _lookup(new_name, new_value, old_name, old_value):
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
        return old_value
    return new_value


def _reduction_dims(x, axis):
    if axis is None:
        if x.shape.ndims is not None:
            return ops.convert_to_tensor(np.arange(x.shape.ndims, dtype=np.int32), name="Const")
        return array_ops.range(0, array_ops.rank(x))
    return to_int_tensor(axis, "reduction_indices")


def _reducer(op_type, default_name):
    def f(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
        keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
        keepdims = False if keepdims is None else builtins.bool(keepdims)
        if _is_ragged(input_tensor):
            from ferroflow.ops import ragged_dispatch

            return ragged_dispatch.reduce(default_name.lower(), input_tensor, axis, keepdims, name)
        x = ops.convert_to_tensor(input_tensor)
        # TF makes the indices of a full reduction before the op's name scope ("Const", not "Sum/Const");
        # an explicit axis becomes "Sum/reduction_indices" inside it.
        dims = _reduction_dims(x, axis) if axis is None else None
        with ops.name_scope(name, default_name, [x]) as scope:
            if dims is None:
                dims = _reduction_dims(x, axis)
            out = make(op_type, [x, dims], {"keep_dims": keepdims}, scope)
            if axis is None and not keepdims and x.shape.ndims is None:
                # Every axis of an input of unknown rank: still a scalar, as TensorFlow sets it.
                out.set_shape([])
            return out

    f.__name__ = default_name.lower()
    f.__doc__ = f"``{op_type}`` over ``axis`` (every axis when None)."
    return f


reduce_sum = _reducer("Sum", "Sum")
reduce_mean = _reducer("Mean", "Mean")
reduce_max = _reducer("Max", "Max")
reduce_min = _reducer("Min", "Min")
reduce_prod = _reducer("Prod", "Prod")
reduce_any = _reducer("Any", "Any")
reduce_all = _reducer("All", "All")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = builtins.bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        # A RaggedTensor goes through the ragged reductions and broadcasting, as in TensorFlow.
        x = input_tensor if _is_ragged(input_tensor) else ops.convert_to_tensor(input_tensor)
        m = array_ops.stop_gradient(reduce_max(x, axis, keepdims=True))
        finite = array_ops.where_v2(is_finite(m), m, array_ops.zeros_like(m))
        s = log(reduce_sum(exp(subtract(x, finite)), axis, keepdims=keepdims))
        if not keepdims:
            finite = array_ops.reshape(finite, array_ops.shape(s))
        return add(s, finite, name=scope)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    input_tensor = input if input_tensor is None else input_tensor
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    with ops.name_scope(name, "count_nonzero", [input_tensor]):
        x = ops.convert_to_tensor(input_tensor)
        zero = array_ops.zeros([], dtype=x.dtype)
        return cast(reduce_sum(cast(not_equal(x, zero), dtypes.int64), axis, keepdims=keepdims), dtype)


def _arg(op_type):
    def f(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
        axis = _lookup("axis", axis, "dimension", dimension)
        if axis is None:
            axis = 0
        x = ops.convert_to_tensor(input)
        a = to_int_tensor(axis, "dimension")
        return make(op_type, [x, a], {"output_type": ("type", dtypes.as_dtype(output_type).as_datatype_enum)}, name)

    f.__name__ = op_type.lower()
    return f


argmax = _arg("ArgMax")
argmin = _arg("ArgMin")


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    return argmax(input, axis=dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    return argmin(input, axis=dimension, output_type=output_type, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """Matrix product of the last two dimensions (batched over leading ones)."""
    with ops.name_scope(name, "MatMul", [a, b]) as scope:
        ta = builtins.bool(transpose_a or adjoint_a)
        tb = builtins.bool(transpose_b or adjoint_b)
        x, y = array_ops._convert_pair(a, b)
        rank2 = x.shape.ndims == 2 and y.shape.ndims == 2 or (x.shape.ndims is None and y.shape.ndims is None)
        if x.dtype.is_complex:
            # As TensorFlow: MatMul only transposes, so an adjoint conjugates first; BatchMatMulV2's
            # adj_x/adj_y conjugate, so a plain transpose conjugates first to undo it.
            from ferroflow.ops.complex_ops import conj

            flip_a, flip_b = (adjoint_a, adjoint_b) if rank2 else (transpose_a, transpose_b)
            x = conj(x) if flip_a else x
            y = conj(y) if flip_b else y
        if rank2:
            return make("MatMul", [x, y], {"transpose_a": ta, "transpose_b": tb}, scope)
        return make("BatchMatMulV2", [x, y], {"adj_x": ta, "adj_y": tb}, scope)


def add_n(inputs, name=None):
    """Sum of a list of same-shaped tensors."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a non-empty list of tensors of the same shape and type")
    if any(_is_ragged(v) for v in inputs):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.add_n(inputs, name)
    tensors = ops.convert_n_to_tensor(inputs)
    if len(tensors) == 1:
        return array_ops.identity(tensors[0], name=name)
    return make("AddN", tensors, {"N": len(tensors)}, name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    return add_n(inputs, name=name)


def _cumulative(op_type):
    def f(x, axis=0, exclusive=False, reverse=False, name=None):
        if op_type == "Cumsum" and _is_ragged(x):
            from ferroflow.ops import ragged_dispatch

            return ragged_dispatch.cumsum(x, axis, exclusive, reverse, name)
        with ops.name_scope(name, op_type, [x]) as scope:
            t = ops.convert_to_tensor(x, name="x")
            a = to_int_tensor(axis, "axis")
            return make(op_type, [t, a], {"exclusive": builtins.bool(exclusive), "reverse": builtins.bool(reverse)}, scope)

    f.__name__ = op_type.lower()
    return f


cumsum = _cumulative("Cumsum")
cumprod = _cumulative("Cumprod")


def log_sigmoid(x, name=None):
    with ops.name_scope(name, "LogSigmoid", [x]) as scope:
        return negative(softplus(negative(x)), name=scope)


@on_flat_values("t")
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamps ``t`` to [min, max] (built as Minimum then Maximum, like TensorFlow).

    For an IndexedSlices only the values are clipped; the result keeps the indices.
    """
    if isinstance(t, IndexedSlices):
        values = clip_by_value(t.values, clip_value_min, clip_value_max, name=name)
        return IndexedSlices(values, t.indices, t.dense_shape)
    with ops.name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        x = ops.convert_to_tensor(t, name="t")
        lo = ops.convert_to_tensor(clip_value_min, dtype=x.dtype, name="clip_value_min")
        hi = ops.convert_to_tensor(clip_value_max, dtype=x.dtype, name="clip_value_max")
        upper = minimum(x, hi)
        x.shape.merge_with(upper.shape)  # ValueError if the bounds would grow t (as in TensorFlow)
        out = maximum(upper, lo, name=scope)
        x.shape.merge_with(out.shape)
        return out


def tensordot(a, b, axes, name=None):
    """Contracts ``axes`` of ``a`` and ``b`` (static shapes only)."""
    with ops.name_scope(name, "Tensordot", [a, b]) as scope:
        x, y = array_ops._convert_pair(a, b)
        if isinstance(axes, int):
            ax_a = list(builtins.range(x.shape.ndims - axes, x.shape.ndims))
            ax_b = list(builtins.range(axes))
        else:
            ax_a, ax_b = [list(np.atleast_1d(v)) for v in axes]
        sa, sb = x.shape.as_list(), y.shape.as_list()
        ax_a = [i % len(sa) for i in ax_a]
        ax_b = [i % len(sb) for i in ax_b]
        free_a = [i for i in builtins.range(len(sa)) if i not in ax_a]
        free_b = [i for i in builtins.range(len(sb)) if i not in ax_b]
        # The contracted size: from whichever operand knows each contracted dim, else read at run time.
        dims = [sa[i] if sa[i] is not None else sb[j] for i, j in zip(ax_a, ax_b)]
        if None in dims:
            ka = reduce_prod(array_ops.gather(array_ops.shape(x), np.asarray(ax_a, np.int32)))
            shape_a, shape_b = array_ops.stack([-1, ka]), array_ops.stack([ka, -1])
        else:
            ka = int(np.prod(dims))
            shape_a, shape_b = [-1, ka], [ka, -1]
        xa = array_ops.reshape(array_ops.transpose(x, free_a + ax_a), shape_a)
        yb = array_ops.reshape(array_ops.transpose(y, ax_b + free_b), shape_b)
        out = matmul(xa, yb)
        static = [sa[i] for i in free_a] + [sb[i] for i in free_b]
        if None not in static:
            return array_ops.reshape(out, static, name=scope)
        # Free dimensions known only at run time come from the operands' shapes.
        parts = [array_ops.gather(array_ops.shape(x), np.asarray(free_a, np.int32)),
                 array_ops.gather(array_ops.shape(y), np.asarray(free_b, np.int32))]
        result = array_ops.reshape(out, array_ops.concat(parts, 0), name=scope)
        result.set_shape(static)
        return result


def _binary_operator(func, op_name, reverse=False):
    def wrapper(self, other):
        with ops.name_scope(None, op_name, [self, other]) as scope:
            if isinstance(other, ops.Tensor):
                y = other
            else:
                try:
                    # TF names the converted operand after its place: "mul/y" for t * 2, "mul/x" for 2 * t.
                    y = ops.convert_to_tensor(other, dtype=self.dtype.base_dtype, name="x" if reverse else "y")
                except TypeError:
                    # Let other tensor-like types supply the reflected operator;
                    # plain numbers and arrays of the wrong type are an error.
                    if isinstance(other, _PLAIN_VALUES):
                        raise
                    return NotImplemented
            if reverse:
                return func(y, self, name=scope)
            return func(self, y, name=scope)

    wrapper.__name__ = op_name
    return wrapper


_PLAIN_VALUES = (numbers.Number, np.ndarray, np.generic, list, builtins.tuple, str, bytes)


def _override_operators(cls):
    binaries = {
        "add": add,
        "sub": subtract,
        "mul": multiply,
        "truediv": truediv,
        "div": div,
        "floordiv": floordiv,
        "mod": floormod,
        "pow": pow,
        "matmul": matmul,
        "and": logical_and,
        "or": logical_or,
        "xor": logical_xor,
    }
    for key, func in binaries.items():
        setattr(cls, f"__{key}__", _binary_operator(func, key))
        setattr(cls, f"__r{key}__", _binary_operator(func, key, reverse=True))
    cls.__lt__ = _binary_operator(less, "Less")
    cls.__le__ = _binary_operator(less_equal, "LessEqual")
    cls.__gt__ = _binary_operator(greater, "Greater")
    cls.__ge__ = _binary_operator(greater_equal, "GreaterEqual")
    cls.__neg__ = lambda self: negative(self)
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: logical_not(self)


_override_operators(ops.Tensor)


def _indexed_slices_to_tensor(self, dtype=None, name=None):
    """The dense form of IndexedSlices: its rows summed into zeros of ``dense_shape``."""
    del dtype  # convert_to_tensor checks the result's dtype
    if self._dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {self!r}")
    with ops.name_scope(name, "IndexedSlicesToTensor", [self._values, self._indices]):
        rows = array_ops.cast(self._dense_shape[0], self._indices.dtype)
        summed = unsorted_segment_sum(self._values, self._indices, rows)
        return array_ops.reshape(summed, array_ops.cast(self._dense_shape, "int32"))


# IndexedSlices is a framework type; its arithmetic and dense conversion need ops, so they are attached here
# (TF attaches Tensor's operators the same way).
IndexedSlices._as_tensor = _indexed_slices_to_tensor
IndexedSlices.__neg__ = lambda self: IndexedSlices(negative(self._values), self._indices, self._dense_shape)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """``out[segment_ids[i]] += data[i]`` into ``num_segments`` rows."""
    with ops.name_scope(name, "UnsortedSegmentSum", [data, segment_ids, num_segments]) as scope:
        d = ops.convert_to_tensor(data, name="data")
        ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        n = ops.convert_to_tensor(num_segments, dtype=ids.dtype, name="num_segments")
        return make("UnsortedSegmentSum", [d, ids, n], {}, scope)
