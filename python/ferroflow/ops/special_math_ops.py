"""``tf.math`` special functions, the elementwise ops around them and the reductions of issue 23.

The op-backed names create TensorFlow's op types (``Erf``, ``Igamma``, ``BesselI0e``, ``Xlogy``,
``CumulativeLogsumexp``, ``DenseBincount``, ...); ``lbeta``, ``polyval``, ``reduce_std``,
``reduce_variance``, ``reciprocal_no_nan``, ``erfcinv``, ``bincount`` and ``confusion_matrix`` are
composed of ops exactly as TensorFlow composes them.
"""

from __future__ import annotations

import builtins

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, to_int_tensor


def _is_ragged(v):
    return getattr(type(v), "_ragged_elementwise", False)


def _unary(op_type, scope_name=None):
    """An op wrapper; ``scope_name`` is the name scope TensorFlow's Python wrapper opens (None: the op's own)."""

    def f(x, name=None):
        if scope_name is None:
            with ops.name_scope(name, op_type, [x]) as scope:
                t = ops.convert_to_tensor(x, name="x")
                return make(op_type, [t], {}, scope)
        with ops.name_scope(name, scope_name, [x]):
            t = ops.convert_to_tensor(x, name="x")
            return make(op_type, [t], {}, op_type)

    f.__name__ = scope_name or op_type.lower()
    f.__doc__ = f"Elementwise ``{op_type}``."
    return f


def _binary(op_type, args=("x", "y"), scope_name=None):
    def f(x, y, name=None):
        if scope_name is None:
            with ops.name_scope(name, op_type, [x, y]) as scope:
                a, b = array_ops._convert_pair(x, y)
                return make(op_type, [a, b], {}, scope)
        with ops.name_scope(name, scope_name, [x]):
            a, b = array_ops._convert_pair(x, y)
            return make(op_type, [a, b], {}, op_type)

    f.__name__ = scope_name or op_type.lower()
    f.__doc__ = f"Elementwise ``{op_type}`` of ``{args[0]}`` and ``{args[1]}`` with broadcasting."
    return f


acos = _unary("Acos")
asin = _unary("Asin")
atan = _unary("Atan")
acosh = _unary("Acosh")
asinh = _unary("Asinh")
atanh = _unary("Atanh")
sinh = _unary("Sinh")
cosh = _unary("Cosh")
erf = _unary("Erf")
erfc = _unary("Erfc")
erfinv = _unary("Erfinv", "erfinv")
ndtri = _unary("Ndtri", "ndtri")
lgamma = _unary("Lgamma")
digamma = _unary("Digamma")
rint = _unary("Rint")
bessel_i0 = _unary("BesselI0", "bessel_i0")
bessel_i0e = _unary("BesselI0e", "bessel_i0e")
bessel_i1 = _unary("BesselI1", "bessel_i1")
bessel_i1e = _unary("BesselI1e", "bessel_i1e")

xlogy = _binary("Xlogy")
xlog1py = _binary("Xlog1py", scope_name="xlog1py")
xdivy = _binary("Xdivy", scope_name="xdivy")
truncatediv = _binary("TruncateDiv")


def _pair_named(a, b, names, op_type):
    """Converts ``a`` then ``b`` (to ``a``'s dtype), as TensorFlow's generated wrappers do: a tensor ``b`` of
    another dtype is the op's TypeError."""
    ta = ops.convert_to_tensor(a, name=names[0])
    if isinstance(b, ops.Tensor) and b.dtype.base_dtype != ta.dtype.base_dtype:
        raise TypeError(
            f"Input '{names[1]}' of '{op_type}' Op has type {b.dtype.base_dtype.name} that does not match type "
            f"{ta.dtype.base_dtype.name} of argument '{names[0]}'."
        )
    tb = ops.convert_to_tensor(b, dtype=ta.dtype, name=names[1])
    return ta, tb


def _ab_op(op_type, names):
    def f(a, x, name=None):
        with ops.name_scope(name, op_type, [a, x]) as scope:
            ta, tx = _pair_named(a, x, names, op_type)
            return make(op_type, [ta, tx], {}, scope)

    f.__name__ = op_type.lower()
    f.__doc__ = f"Elementwise ``{op_type}`` with broadcasting."
    return f


igamma = _ab_op("Igamma", ("a", "x"))
igammac = _ab_op("Igammac", ("a", "x"))
polygamma = _ab_op("Polygamma", ("a", "x"))


def zeta(x, q, name=None):
    """Hurwitz zeta ``sum_k (k + q)^-x`` (``Zeta``)."""
    with ops.name_scope(name, "Zeta", [x, q]) as scope:
        tx, tq = _pair_named(x, q, ("x", "q"), "Zeta")
        return make("Zeta", [tx, tq], {}, scope)


def betainc(a, b, x, name=None):
    """Regularized incomplete beta function ``I_x(a, b)`` (``Betainc``)."""
    with ops.name_scope(name, "Betainc", [a, b, x]) as scope:
        ta = ops.convert_to_tensor(a, name="a")
        tb = ops.convert_to_tensor(b, dtype=ta.dtype, name="b")
        tx = ops.convert_to_tensor(x, dtype=ta.dtype, name="x")
        return make("Betainc", [ta, tb, tx], {}, scope)


def nextafter(x1, x2, name=None):
    """The next representable value after ``x1`` in the direction of ``x2`` (``NextAfter``)."""
    with ops.name_scope(name, "NextAfter", [x1, x2]) as scope:
        a, b = _pair_named(x1, x2, ("x1", "x2"), "NextAfter")
        return make("NextAfter", [a, b], {}, scope)


def multiply_no_nan(x, y, name=None):
    """``x * y``, but 0 where ``y`` is 0 even if ``x`` is NaN or infinite (``MulNoNan``)."""
    with ops.name_scope(name, "multiply_no_nan", [x, y]) as name:
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
        return make("MulNoNan", [x, y], {}, name)


def reciprocal_no_nan(x, name=None):
    """``1 / x``, 0 where ``x`` is 0 (``DivNoNan(1, x)``)."""
    with ops.name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        one = ops.convert_to_tensor(1, dtype=x.dtype.base_dtype, name="one")
        return make("DivNoNan", [one, x], {}, scope)


def erfcinv(x, name=None):
    """Inverse complementary error function, ``-ndtri(x / 2) / sqrt(2)`` as TensorFlow composes it."""
    with ops.name_scope(name, "erfcinv", [x]):
        x = ops.convert_to_tensor(x, name="start")
        return -ndtri(0.5 * x) * np.sqrt(0.5)


def lbeta(x, name=None):
    """``log(|Beta(x)|)`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``."""
    with ops.name_scope(name, "lbeta", [x]):
        x = ops.convert_to_tensor(x, name="x")
        log_prod_gamma_x = math_ops.reduce_sum(lgamma(x), axis=[-1])
        sum_x = math_ops.reduce_sum(x, axis=[-1])
        log_gamma_sum_x = lgamma(sum_x)
        return log_prod_gamma_x - log_gamma_sum_x


def polyval(coeffs, x, name=None):
    """``coeffs[0] * x^(n-1) + ... + coeffs[n-1]`` by Horner's rule (``coeffs`` is a Python list)."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with ops.name_scope(name, "polyval", list(coeffs) + [x]) as name:
        x = ops.convert_to_tensor(x, name="x")
        if len(coeffs) < 1:
            return array_ops.zeros_like(x, name=name)
        coeffs = [ops.convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Variance (mean of squared deviations) over ``axis``; integers are refused as in TensorFlow."""
    name = name if name else "reduce_variance"
    if _is_ragged(input_tensor):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.reduce_variance(input_tensor, axis, keepdims, name)
    with ops.name_scope(name):
        input_tensor = ops.convert_to_tensor(input_tensor)
        means = math_ops.reduce_mean(input_tensor, axis=axis, keepdims=True)
        if means.dtype.is_integer:
            raise TypeError(f"Input must be either real or complex. Received integer type {means.dtype}.")
        squared_deviations = math_ops.square(input_tensor - means)
        return math_ops.reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation over ``axis``: ``sqrt(reduce_variance)``."""
    name = name if name else "reduce_std"
    with ops.name_scope(name):
        if _is_ragged(input_tensor):
            return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))  # as TensorFlow
        input_tensor = ops.convert_to_tensor(input_tensor)
        variance = reduce_variance(input_tensor, axis=axis, keepdims=keepdims)
        return make("Sqrt", [variance], {}, "Sqrt")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """``sqrt(sum(x^2))`` over ``axis`` (``EuclideanNorm``)."""
    keepdims = builtins.bool(keepdims)
    x = ops.convert_to_tensor(input_tensor)
    with ops.name_scope(name, "EuclideanNorm", [x]) as scope:
        dims = math_ops._reduction_dims(x, axis)
        return make("EuclideanNorm", [x, dims], {"keep_dims": keepdims}, scope)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (``CumulativeLogsumexp``)."""
    with ops.name_scope(name, "CumulativeLogsumexp", [x]) as name:
        x = ops.convert_to_tensor(x, name="x")
        a = to_int_tensor(axis, "axis")
        return make("CumulativeLogsumexp", [x, a],
                    {"exclusive": builtins.bool(exclusive), "reverse": builtins.bool(reverse)}, name)


def invert_permutation(x, name=None):
    """The inverse permutation ``y[x[i]] = i`` (``InvertPermutation``)."""
    with ops.name_scope(name, "InvertPermutation", [x]) as scope:
        t = ops.convert_to_tensor(x, name="x")
        if t.dtype not in (dtypes.int32, dtypes.int64):
            t = ops.convert_to_tensor(x, dtype=dtypes.int32, name="x")
        return make("InvertPermutation", [t], {}, scope)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32):
    """Counts of each value of ``arr`` (or sums of ``weights``), as TF1's ``tf.math.bincount``
    (TensorFlow 2.21 builds it with ``DenseBincount`` over the flattened input)."""
    with ops.name_scope("bincount"):
        if _is_ragged(arr):  # the counts of every value (TensorFlow's ragged dispatch)
            arr = arr.flat_values
            if _is_ragged(weights):
                weights = weights.flat_values
        arr = ops.convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = ops.convert_to_tensor(weights, name="weights")
        if not arr.dtype.is_integer:
            arr = math_ops.cast(arr, dtypes.int32)
        array_is_nonempty = math_ops.greater(array_ops.size(arr), 0)
        output_size = math_ops.cast(array_is_nonempty, arr.dtype) * (math_ops.reduce_max(arr) + 1)
        if minlength is not None:
            minlength = ops.convert_to_tensor(minlength, name="minlength", dtype=arr.dtype)
            output_size = math_ops.maximum(minlength, output_size)
        if maxlength is not None:
            maxlength = ops.convert_to_tensor(maxlength, name="maxlength", dtype=arr.dtype)
            output_size = math_ops.minimum(maxlength, output_size)
        if weights is not None:
            weights = array_ops.reshape(weights, [-1])
        arr = array_ops.reshape(arr, [-1])
        if weights is None:
            weights = ops.convert_to_tensor(np.zeros([0], dtypes.as_dtype(dtype).as_numpy_dtype))
        elif not isinstance(weights, ops.Tensor):
            raise ValueError(f"Argument `weights` must be a tf.Tensor if `values` is a tf.Tensor. "
                             f"Received weights={weights} of type: {type(weights).__name__}")
        return make("DenseBincount", [arr, output_size, weights], {"binary_output": False}, "DenseBincount")


def _remove_squeezable_dimensions(labels, predictions):
    """Squeezes a trailing size-1 dimension so labels and predictions have one rank (static ranks)."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        diff = pr - lr
        if diff == 1 and predictions.shape.dims[-1].is_compatible_with(1):
            predictions = array_ops.squeeze(predictions, [-1])
        elif diff == -1 and labels.shape.dims[-1].is_compatible_with(1):
            labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None, weights=None):
    """The ``[num_classes, num_classes]`` matrix counting (or weighting) each (label, prediction) pair."""
    from ferroflow.ops import check_ops, control_flow_ops

    with ops.name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)) as name:
        with ops.name_scope(None, "remove_squeezable_dimensions", [labels, predictions]):
            labels, predictions = _remove_squeezable_dimensions(
                ops.convert_to_tensor(labels, name="labels"), ops.convert_to_tensor(predictions, name="predictions"))
        predictions = math_ops.cast(predictions, dtypes.int64)
        labels = math_ops.cast(labels, dtypes.int64)
        labels = control_flow_ops.with_dependencies(
            [check_ops.assert_non_negative(labels, message="`labels` contains negative values")], labels)
        predictions = control_flow_ops.with_dependencies(
            [check_ops.assert_non_negative(predictions, message="`predictions` contains negative values")],
            predictions)
        if num_classes is None:
            num_classes = math_ops.maximum(math_ops.reduce_max(predictions), math_ops.reduce_max(labels)) + 1
        else:
            num_classes_int64 = math_ops.cast(num_classes, dtypes.int64)
            labels = control_flow_ops.with_dependencies(
                [check_ops.assert_less(labels, num_classes_int64, message="`labels` out of bound")], labels)
            predictions = control_flow_ops.with_dependencies(
                [check_ops.assert_less(predictions, num_classes_int64, message="`predictions` out of bound")],
                predictions)
        if weights is not None:
            weights = ops.convert_to_tensor(weights, name="weights")
            predictions.get_shape().assert_is_compatible_with(weights.get_shape())
            weights = math_ops.cast(weights, dtype)
        shape = array_ops.stack([num_classes, num_classes])
        indices = array_ops.stack([labels, predictions], axis=1)
        values = array_ops.ones_like(predictions, dtype) if weights is None else weights
        return make("ScatterNd", [indices, values, math_ops.cast(shape, dtypes.int64)], {}, name)
