"""Seeded random ops (``tf.random_normal`` and friends)."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.ops import math_ops
from ferroflow.ops._op_util import as_list_or_tensor, make, to_int_tensor, type_attr


def _seed_attrs(seed):
    s1, s2 = random_seed.get_seed(seed)
    return {"seed": int(s1 or 0), "seed2": int(s2 or 0)}


def _shape_tensor(shape):
    return to_int_tensor(as_list_or_tensor(shape), "shape")


def _float_op(op_type, shape, dtype, seed):
    dims = _shape_tensor(shape)
    return make(op_type, [dims], dict(_seed_attrs(seed), dtype=type_attr(dtype)))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples: ``mean + stddev * N(0, 1)``."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "random_normal", [shape, mean, stddev]) as scope:
        dims = _shape_tensor(shape)
        m = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        s = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _float_op("RandomStandardNormal", dims, dtype, seed)
        return math_ops.add(rnd * s, m, name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples redrawn beyond two standard deviations."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "truncated_normal", [shape, mean, stddev]) as scope:
        dims = _shape_tensor(shape)
        m = ops.convert_to_tensor(mean, dtype=dtype, name="mean")
        s = ops.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _float_op("TruncatedNormal", dims, dtype, seed)
        return math_ops.add(rnd * s, m, name=scope)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform samples in ``[minval, maxval)`` (``maxval`` defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer and maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {dtype}")
    with ops.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        # TensorFlow's graph: the shape first; no min/max constants for the default [0, 1) (Python ints 0 and 1),
        # only a scaling Mul when minval is 0, else (rnd * (max - min)) + min.
        dims = _shape_tensor(shape)
        if maxval is None:
            maxval = 1
        minval_is_zero = isinstance(minval, int) and minval == 0
        maxval_is_one = isinstance(maxval, int) and maxval == 1
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            lo = ops.convert_to_tensor(minval, dtype=dtype, name="min")
            hi = ops.convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return make("RandomUniformInt", [dims, lo, hi], _seed_attrs(seed), scope)
        rnd = _float_op("RandomUniform", dims, dtype, seed)
        if minval_is_zero:
            return rnd if maxval_is_one else math_ops.multiply(rnd, hi)
        return math_ops.add(rnd * (hi - lo), lo, name=scope)


def random_shuffle(value, seed=None, name=None):
    """Shuffles along the first dimension."""
    x = ops.convert_to_tensor(value, name="value")
    return make("RandomShuffle", [x], _seed_attrs(seed), name)


def random_crop(value, size, seed=None, name=None):
    """A ``size`` slice of ``value`` at a uniformly drawn offset (TF's draw: int32 offsets mod the slack)."""
    with ops.name_scope(name, "random_crop", [value, size]) as scope:
        from ferroflow.ops import array_ops, control_flow_ops

        value = ops.convert_to_tensor(value, name="value")
        size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = control_flow_ops.Assert(
            math_ops.reduce_all(math_ops.greater_equal(shape, size)),
            ["Need value.shape >= size, got ", shape, size],
            summarize=1000,
        )
        shape = control_flow_ops.with_dependencies([check], shape)
        limit = math_ops.add(math_ops.subtract(shape, size), 1)
        offset = math_ops.floormod(
            random_uniform(array_ops.shape(shape), dtype=dtypes.int32, maxval=dtypes.int32.max, seed=seed),
            limit,
        )
        return array_ops.slice(value, offset, size, name=scope)
