"""TF1 learning-rate schedules (``tf.train.exponential_decay`` and friends).

Each function returns a scalar Tensor of the learning rate at ``global_step``, computed in the dtype of
``learning_rate`` (float32 for a Python float): the step and every Python hyper-parameter are first made
into tensors (a Python float becomes float32, an int becomes int32) and then cast to that dtype.

TensorFlow 1 runs these graphs through Grappler, which rewrites two things that change the rounding
(specs/optimizers.md, sections 1.7 and 4):

* ``x / c`` with a constant ``c`` becomes ``x * (1/c)``, the reciprocal rounded in the schedule's dtype;
* ``c1 * (x * c2)`` becomes ``x * (c1*c2)``, the constant product rounded once.

ferroflow has no Grappler, so the graph-mode forms are built directly whenever the operands are constants
(Python numbers or constant tensors); non-constant operands (placeholders, variables) keep the plain form.
The rewrite is visible, e.g. ``polynomial_decay(cycle=True)`` restarts early at ``step = k*decay_steps``
when ``step * fl(1/decay_steps)`` rounds up.

The forms built here are those of a schedule alone in its graph (checked bit for bit against TensorFlow
2.21 over hundreds of parameter sets). Grappler skips the push-down when the intermediate product has
another consumer, e.g. when several cosine schedules with the same ``decay_steps`` are fetched together;
TensorFlow's own cosine schedules then differ by one ulp of the cosine argument.
"""

from __future__ import annotations

import math

from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.ops import array_ops, math_ops, random_ops

__all__ = [
    "cosine_decay",
    "cosine_decay_restarts",
    "exponential_decay",
    "inverse_time_decay",
    "linear_cosine_decay",
    "natural_exp_decay",
    "noisy_linear_cosine_decay",
    "piecewise_constant",
    "piecewise_constant_decay",
    "polynomial_decay",
]


class _Hyper:
    """A hyper-parameter cast to the schedule dtype, remembering whether Grappler would see a constant."""

    def __init__(self, value, dtype, name):
        if value is None:
            raise ValueError("None values not supported.")
        # A Python number becomes a tensor first (float -> float32, int -> int32), then is cast.
        t = ops.convert_to_tensor(value, name=name)
        self.is_const = not _is_tensor_like(value) or tensor_util.constant_value(t) is not None
        self.tensor = math_ops.cast(t, dtype)


def _is_tensor_like(value):
    return isinstance(value, ops.Tensor) or hasattr(value, "_as_tensor")


def _learning_rate_and_step(learning_rate, global_step):
    if global_step is None:
        raise ValueError("None values not supported.")
    lr = ops.convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = lr.dtype.base_dtype
    step = math_ops.cast(global_step, dtype)
    return lr, dtype, step


def _div_by(x, c):
    """``x / c`` as graph-mode TensorFlow evaluates it: ``x * fl(1/c)`` for a constant ``c``."""
    if c.is_const:
        return math_ops.multiply(x, math_ops.reciprocal(c.tensor))
    return math_ops.truediv(x, c.tensor)


def _require_float32(dtype, op_type, arg, other):
    """TensorFlow mixes float32 constants (``tf.constant(math.pi)``, a ``1.0`` literal) into some schedules,
    so any other learning-rate dtype fails at graph construction with the op's TypeError."""
    if dtype != dtypes.float32:
        raise TypeError(
            f"Input '{arg}' of '{op_type}' Op has type {dtype.name} that does not match type float32 of "
            f"argument '{other}'."
        )


def _pi():
    return constant_op.constant(math.pi, dtype=dtypes.float32)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """``learning_rate * decay_rate ** (global_step / decay_steps)`` (the exponent floored if ``staircase``)."""
    with ops.name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        return _exponential(lr, dtype, s, decay_steps, decay_rate, staircase, scope)


def _exponential(lr, dtype, s, decay_steps, decay_rate, staircase, scope):
    ds = _Hyper(decay_steps, dtype, "decay_steps")
    rate = _Hyper(decay_rate, dtype, "decay_rate")
    p = _div_by(s, ds)
    if staircase:
        p = math_ops.floor(p)
    return math_ops.multiply(lr, math_ops.pow(rate.tensor, p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """``learning_rate * exp(-decay_rate) ** (global_step / decay_steps)``.

    As in TensorFlow, ``exp(-decay_rate)`` is computed first (in float32 for a Python float) and then
    raised to the power, rather than ``exp(-decay_rate * p)``.
    """
    with ops.name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        rate = ops.convert_to_tensor(decay_rate, name="decay_rate")
        natural_rate = math_ops.exp(math_ops.negative(rate))
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        return _exponential(lr, dtype, s, decay_steps, natural_rate, staircase, scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)`` (the ratio floored if ``staircase``)."""
    with ops.name_scope(name, "InverseTimeDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        ds = _Hyper(decay_steps, dtype, "decay_steps")
        rate = _Hyper(decay_rate, dtype, "decay_rate")
        one = math_ops.cast(constant_op.constant(1), dtype)
        if staircase:
            p = math_ops.floor(_div_by(s, ds))
            scaled = math_ops.multiply(rate.tensor, p)
        elif ds.is_const and rate.is_const:
            # rate * (s * fl(1/ds)) -> s * fl(rate * fl(1/ds))  (Grappler constant push-down)
            scaled = math_ops.multiply(s, math_ops.multiply(rate.tensor, math_ops.reciprocal(ds.tensor)))
        else:
            scaled = math_ops.multiply(rate.tensor, _div_by(s, ds))
        denom = math_ops.add(one, scaled)
        return math_ops.truediv(lr, denom, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """``(lr - end) * (1 - step/decay_steps) ** power + end``; with ``cycle`` the horizon restarts."""
    with ops.name_scope(name, "PolynomialDecay", [learning_rate, global_step, decay_steps, end_learning_rate,
                                                  power]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        end = _Hyper(end_learning_rate, dtype, "end_learning_rate")
        pw = _Hyper(power, dtype, "power")
        ds = _Hyper(decay_steps, dtype, "decay_steps")
        if cycle:
            _require_float32(dtype, "SelectV2", "e", "t")
            raw = decay_steps._as_tensor() if hasattr(decay_steps, "_as_tensor") else decay_steps
            if isinstance(raw, ops.Tensor) and raw.dtype.base_dtype != dtype:
                # TensorFlow divides the step by the raw decay_steps here, which needs the same dtype.
                raise TypeError(f"`x` and `y` must have the same dtype, got {dtype!r} != {raw.dtype.base_dtype!r}.")
            is_zero = math_ops.equal(s, math_ops.cast(0, dtype))
            multiplier = array_ops.where_v2(is_zero, constant_op.constant(1.0, dtype=dtype),
                                            math_ops.ceil(_div_by(s, ds)))
            p = math_ops.truediv(s, math_ops.multiply(ds.tensor, multiplier))
        else:
            p = _div_by(math_ops.minimum(s, ds.tensor), ds)
        one = constant_op.constant(1, dtype=dtype)
        decayed = math_ops.multiply(math_ops.subtract(lr, end.tensor), math_ops.pow(math_ops.subtract(one, p), pw.tensor))
        return math_ops.add(decayed, end.tensor, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)``."""
    with ops.name_scope(name, "CosineDecay", [learning_rate, global_step, decay_steps, alpha]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        _require_float32(dtype, "Mul", "y", "x")
        ds = _Hyper(decay_steps, dtype, "decay_steps")
        c = math_ops.minimum(s, ds.tensor)
        pi = _pi()
        if ds.is_const:
            # pi * (c * R(ds)) -> c * [pi * R(ds)]
            arg = math_ops.multiply(c, math_ops.multiply(pi, math_ops.reciprocal(ds.tensor)))
        else:
            arg = math_ops.multiply(pi, math_ops.truediv(c, ds.tensor))
        one_plus_cos = math_ops.add(constant_op.constant(1.0, dtype=dtype), math_ops.cos(arg))
        alpha_t = _Hyper(alpha, dtype, "alpha")
        if not _is_tensor_like(alpha):
            # (1 - alpha) is a Python double rounded to float32; A * (0.5 * y) -> y * [A * 0.5].
            factor = constant_op.constant(float(1 - alpha), dtype=dtype) * 0.5
            decayed = math_ops.add(math_ops.multiply(one_plus_cos, factor), alpha_t.tensor)
        else:
            cd = math_ops.multiply(constant_op.constant(0.5, dtype=dtype), one_plus_cos)
            decayed = math_ops.add(math_ops.multiply(math_ops.subtract(1.0, alpha_t.tensor), cd), alpha_t.tensor)
        return math_ops.multiply(lr, decayed, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    """Cosine decay with warm restarts (SGDR): periods grow by ``t_mul``, peaks shrink by ``m_mul``."""
    with ops.name_scope(name, "SGDRDecay", [learning_rate, global_step, first_decay_steps, t_mul, m_mul,
                                           alpha]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        _require_float32(dtype, "Mul", "y", "x")
        fds = _Hyper(first_decay_steps, dtype, "first_decay_steps")
        alpha_t = _Hyper(alpha, dtype, "alpha")
        t_mul_t = _Hyper(t_mul, dtype, "t_mul")
        m_mul_t = _Hyper(m_mul, dtype, "m_mul")
        one = constant_op.constant(1.0, dtype=dtype)
        f = _div_by(s, fds)

        def restart_arithmetic():
            i = math_ops.floor(f)
            return i, math_ops.subtract(f, i)

        def restart_geometric():
            one_minus_t = math_ops.subtract(one, t_mul_t.tensor)
            log_t = math_ops.log(t_mul_t.tensor)
            if t_mul_t.is_const:
                i = math_ops.floor(math_ops.multiply(
                    math_ops.log(math_ops.subtract(one, math_ops.multiply(f, one_minus_t))),
                    math_ops.reciprocal(log_t)))
            else:
                i = math_ops.floor(math_ops.truediv(
                    math_ops.log(math_ops.subtract(one, math_ops.multiply(f, one_minus_t))), log_t))
            t_pow_i = math_ops.pow(t_mul_t.tensor, i)
            if t_mul_t.is_const:
                sum_r = math_ops.multiply(math_ops.subtract(one, t_pow_i), math_ops.reciprocal(one_minus_t))
            else:
                sum_r = math_ops.truediv(math_ops.subtract(one, t_pow_i), one_minus_t)
            return i, math_ops.truediv(math_ops.subtract(f, sum_r), t_pow_i)

        t_static = tensor_util.constant_value(t_mul_t.tensor)
        if t_static is not None:
            i, frac = restart_arithmetic() if float(t_static) == 1.0 else restart_geometric()
        else:
            # TensorFlow picks a branch with tf.cond; both are computed here and one is selected.
            is_one = math_ops.equal(t_mul_t.tensor, one)
            i_a, f_a = restart_arithmetic()
            i_g, f_g = restart_geometric()
            i = array_ops.where_v2(is_one, i_a, i_g)
            frac = array_ops.where_v2(is_one, f_a, f_g)

        a = math_ops.multiply(constant_op.constant(0.5, dtype=dtype), math_ops.pow(m_mul_t.tensor, i))
        b = math_ops.add(one, math_ops.cos(math_ops.multiply(_pi(), frac)))
        one_minus_alpha = math_ops.subtract(one, alpha_t.tensor)
        if alpha_t.is_const:
            # [1 - alpha] * (a * b) -> ([1 - alpha] * a) * b  (Grappler constant push-down)
            scaled = math_ops.multiply(math_ops.multiply(one_minus_alpha, a), b)
        else:
            scaled = math_ops.multiply(one_minus_alpha, math_ops.multiply(a, b))
        decayed = math_ops.add(scaled, alpha_t.tensor)
        return math_ops.multiply(lr, decayed, name=scope)


def _linear_cosine_parts(dtype, s, decay_steps, num_periods):
    """``(c, linear_decayed, cosine_decayed)`` shared by the (noisy) linear cosine schedules."""
    ds = _Hyper(decay_steps, dtype, "decay_steps")
    periods = _Hyper(num_periods, dtype, "num_periods")
    c = math_ops.minimum(s, ds.tensor)
    linear = _div_by(math_ops.subtract(ds.tensor, c), ds)
    two_periods = math_ops.multiply(constant_op.constant(2.0, dtype=dtype), periods.tensor)
    pi = _pi()
    if ds.is_const and periods.is_const:
        # pi * ([2 * periods] * (c * R(ds))) -> c * [pi * [[2 * periods] * R(ds)]]
        arg = math_ops.multiply(c, math_ops.multiply(pi, math_ops.multiply(two_periods, math_ops.reciprocal(ds.tensor))))
    elif periods.is_const:
        # pi * ([2 * periods] * (c / ds)) -> (c / ds) * [pi * [2 * periods]]
        arg = math_ops.multiply(math_ops.truediv(c, ds.tensor), math_ops.multiply(pi, two_periods))
    elif ds.is_const:
        # pi * (2p * (c * R(ds))) -> 2p * (pi * (c * R(ds))) -> 2p * (c * [pi * R(ds)])
        arg = math_ops.multiply(two_periods, math_ops.multiply(c, math_ops.multiply(pi, math_ops.reciprocal(ds.tensor))))
    else:
        # pi * (2p * (c / ds)) -> 2p * (pi * (c / ds))
        arg = math_ops.multiply(two_periods, math_ops.multiply(pi, math_ops.truediv(c, ds.tensor)))
    half = constant_op.constant(0.5, dtype=dtype)
    cosine = math_ops.multiply(half, math_ops.add(constant_op.constant(1.0, dtype=dtype), math_ops.cos(arg)))
    return c, linear, cosine


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """``lr * ((alpha + linear) * cosine + beta)`` with ``linear = (decay_steps - step) / decay_steps``."""
    with ops.name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        _require_float32(dtype, "Mul", "y", "x")
        alpha_t = _Hyper(alpha, dtype, "alpha")
        beta_t = _Hyper(beta, dtype, "beta")
        _, linear, cosine = _linear_cosine_parts(dtype, s, decay_steps, num_periods)
        decayed = math_ops.add(math_ops.multiply(math_ops.add(alpha_t.tensor, linear), cosine), beta_t.tensor)
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0, variance_decay=0.55,
                              num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """Linear cosine decay with ``N(0, initial_variance / (1 + step) ** variance_decay)`` noise on the linear part.

    The noise is a fresh ``random_normal`` sample on every evaluation.
    """
    with ops.name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:
        lr, dtype, s = _learning_rate_and_step(learning_rate, global_step)
        if dtype != dtypes.float32:
            # TensorFlow's random_normal (float32) refuses a stddev of another dtype with a ValueError.
            raise ValueError(
                f"stddev: Tensor conversion requested dtype float32 for Tensor with dtype {dtype.name} "
                "(noisy_linear_cosine_decay draws float32 noise)"
            )
        variance0 = _Hyper(initial_variance, dtype, "initial_variance")
        vdecay = _Hyper(variance_decay, dtype, "variance_decay")
        alpha_t = _Hyper(alpha, dtype, "alpha")
        beta_t = _Hyper(beta, dtype, "beta")
        c, linear, cosine = _linear_cosine_parts(dtype, s, decay_steps, num_periods)
        variance = math_ops.truediv(
            variance0.tensor, math_ops.pow(math_ops.add(constant_op.constant(1.0, dtype=dtype), c), vdecay.tensor))
        std = math_ops.sqrt(variance)
        noisy = math_ops.add(linear, random_ops.random_normal(linear.shape, stddev=std, dtype=dtype))
        decayed = math_ops.add(math_ops.multiply(math_ops.add(alpha_t.tensor, noisy), cosine), beta_t.tensor)
        return math_ops.multiply(lr, decayed, name=scope)


def _flatten(x):
    if isinstance(x, (list, tuple)):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    return [x]


def piecewise_constant(x, boundaries, values, name=None):
    """``values[0]`` for ``x <= boundaries[0]``, ``values[i]`` for ``boundaries[i-1] < x <= boundaries[i]``,
    ``values[-1]`` beyond the last boundary."""
    boundaries = [ops.convert_to_tensor(b) for b in _flatten(boundaries)]
    values = [ops.convert_to_tensor(v) for v in _flatten(values)]
    if x is None:
        raise ValueError("None values not supported.")
    x_t = ops.convert_to_tensor(x)
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype != x_t.dtype.base_dtype:
            if b.dtype.base_dtype == dtypes.int32 and x_t.dtype.base_dtype == dtypes.int64:
                boundaries[i] = math_ops.cast(b, dtypes.int64)
            else:
                raise ValueError(
                    f"Boundaries ({b.dtype.base_dtype}) must have the same dtype as x ({x_t.dtype.base_dtype})."
                )
    for v in values[1:]:
        if v.dtype.base_dtype != values[0].dtype.base_dtype:
            raise ValueError(
                f"Values must have elements all with the same dtype ({values[0].dtype.base_dtype} vs "
                f"{v.dtype.base_dtype})."
            )
    with ops.name_scope(name, "PiecewiseConstant", [x_t] + boundaries + values) as scope:
        # TensorFlow uses tf.case over mutually exclusive predicates with values[0] as the default;
        # the same choice is made here with a chain of selects.
        pairs = [(math_ops.less_equal(x_t, boundaries[0]), values[0]),
                 (math_ops.greater(x_t, boundaries[-1]), values[-1])]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            pairs.append((math_ops.logical_and(math_ops.greater(x_t, low), math_ops.less_equal(x_t, high)), v))
        result = values[0]
        for pred, v in reversed(pairs):
            result = array_ops.where_v2(pred, v, result)
        return array_ops.identity(result, name=scope)


piecewise_constant_decay = piecewise_constant
