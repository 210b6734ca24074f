"""Math ops against numpy: elementwise (with broadcasting, every dtype), reductions, matmul, casts,
Tensor operators, static shape inference and error cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferroflow as tf
from _optest import (
    FEW,
    FLOATS,
    INTS,
    NUMERIC,
    PROPS,
    SIGNED_INTS,
    arrays,
    as_dtype_values,
    assert_close,
    assume_feedable,
    fetch_dtype,
    np_dtype,
    round_bf16,
    run,
)

# ---------------------------------------------------------------------------------------------
# Elementwise binary ops with broadcasting
# ---------------------------------------------------------------------------------------------


def _in_dtype(f, dtype):
    """numpy reference of a one-rounding op: compute in ``dtype`` (bfloat16: float32, then round)."""

    def g(*args):
        if dtype == "bfloat16":
            return round_bf16(f(*[np.asarray(a, np.float32) for a in args]))
        with np.errstate(all="ignore"):
            return np.asarray(f(*[np.asarray(a, np_dtype(dtype)) for a in args])).astype(np_dtype(dtype))

    return g


def _floor_div(x, y):
    if x.dtype.kind in "iu":
        return np.floor_divide(x, y)
    return np.floor(np.true_divide(x, y))


def _bf16_floordiv(x, y):
    # TensorFlow floors the quotient after rounding it to the half type.
    return np.floor(round_bf16(np.true_divide(np.float32(x), np.float32(y))))


def _truediv_ref(dtype):
    target = {"int8": np.float32, "uint8": np.float32, "int16": np.float32, "uint16": np.float32,
              "int32": np.float64, "int64": np.float64}.get(dtype)
    if target is not None:
        return lambda x, y: np.true_divide(x.astype(target), y.astype(target))
    return _in_dtype(np.true_divide, dtype)


# name -> (ferroflow function, numpy reference factory(dtype), dtypes, x element kwargs, y element kwargs)
BINARY = {
    "add": (tf.add, lambda d: _in_dtype(np.add, d), NUMERIC, {}, {}),
    "subtract": (tf.subtract, lambda d: _in_dtype(np.subtract, d), NUMERIC, {}, {}),
    "multiply": (tf.multiply, lambda d: _in_dtype(np.multiply, d), NUMERIC, {}, {}),
    "divide": (tf.divide, _truediv_ref, NUMERIC, {}, {"nonzero": True}),
    "truediv": (tf.truediv, _truediv_ref, NUMERIC, {}, {"nonzero": True}),
    "floordiv": (tf.floordiv, lambda d: _bf16_floordiv if d == "bfloat16" else _in_dtype(_floor_div, d), NUMERIC,
                 {}, {"nonzero": True}),
    "mod": (tf.mod, lambda d: _in_dtype(np.mod, d), NUMERIC, {}, {"nonzero": True}),
    "pow_float": (tf.pow, lambda d: _in_dtype(np.power, d), FLOATS, {"positive": True, "hi": 4}, {"lo": -3, "hi": 3}),
    "pow_int": (tf.pow, lambda d: _in_dtype(np.power, d), SIGNED_INTS, {"lo": -3, "hi": 3}, {"lo": 0, "hi": 3}),
    "maximum": (tf.maximum, lambda d: _in_dtype(np.maximum, d), NUMERIC, {}, {}),
    "minimum": (tf.minimum, lambda d: _in_dtype(np.minimum, d), NUMERIC, {}, {}),
    "equal": (tf.equal, lambda d: np.equal, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
    "not_equal": (tf.not_equal, lambda d: np.not_equal, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
    "less": (tf.less, lambda d: np.less, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
    "less_equal": (tf.less_equal, lambda d: np.less_equal, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
    "greater": (tf.greater, lambda d: np.greater, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
    "greater_equal": (tf.greater_equal, lambda d: np.greater_equal, NUMERIC, {"lo": -2, "hi": 2}, {"lo": -2, "hi": 2}),
}

BINARY_OUT_DTYPE = {
    "equal": "bool", "not_equal": "bool", "less": "bool", "less_equal": "bool", "greater": "bool",
    "greater_equal": "bool",
}


@pytest.mark.parametrize("op", sorted(BINARY))
@PROPS
@given(data=st.data())
def test_binary_broadcast_matches_numpy(op, data):
    fn, ref, dts, xkw, ykw = BINARY[op]
    dtype = data.draw(st.sampled_from(dts), label="dtype")
    (sx, sy), out_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
    x = data.draw(arrays(dtype, sx, **xkw), label="x")
    y = data.draw(arrays(dtype, sy, **ykw), label="y")
    assume_feedable(dtype, x, y)
    # Sometimes hide dims from the static shapes: inference must stay compatible, values unchanged.
    hide = data.draw(st.sampled_from([False, False, "dims", "rank"]), label="hide")
    with tf.Graph().as_default():
        if hide == "rank":
            px, py = tf.placeholder(dtype), tf.placeholder(dtype, sy)
        elif hide == "dims":
            px = tf.placeholder(dtype, [None if data.draw(st.booleans()) else d for d in sx])
            py = tf.placeholder(dtype, [None if data.draw(st.booleans()) else d for d in sy])
        else:
            px, py = tf.placeholder(dtype, sx), tf.placeholder(dtype, sy)
        out = fn(px, py)
        if hide:
            assert out.shape.is_compatible_with(out_shape)
        else:
            assert tuple(out.shape.as_list()) == tuple(out_shape)
        if op in BINARY_OUT_DTYPE:
            assert out.dtype == tf.bool
        elif op in ("divide", "truediv") and dtype in INTS:
            assert out.dtype == (tf.float32 if dtype in ("int8", "uint8", "int16", "uint16") else tf.float64)
        else:
            assert out.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            got = s.run(out, {px: x, py: y})
    expected = ref(dtype)(x, y)
    if op == "mod" and dtype in FLOATS:
        # fmod-based results may land on either side of a multiple of y after rounding.
        tol = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
        assert_close(got, expected, dtype, rtol=tol, atol=tol * 10)
    elif op in BINARY_OUT_DTYPE:
        np.testing.assert_array_equal(got, expected)
    elif op in ("divide", "truediv") and dtype in INTS:
        assert_close(got, expected, "float64", rtol=1e-6)
    else:
        assert_close(got, expected, dtype)


@pytest.mark.parametrize("op", ["logical_and", "logical_or"])
@FEW
@given(data=st.data())
def test_logical_binary_broadcast(op, data):
    (sx, sy), out_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    x = data.draw(hnp.arrays(np.bool_, sx))
    y = data.draw(hnp.arrays(np.bool_, sy))
    fn = getattr(tf, op)
    got = run(lambda p: fn(p["x"], p["y"]), {"x": (tf.bool, sx, x), "y": (tf.bool, sy, y)})
    np.testing.assert_array_equal(got, getattr(np, op)(x, y))
    with tf.Graph().as_default():
        assert fn(tf.placeholder(tf.bool, sx), tf.placeholder(tf.bool, sy)).shape.as_list() == list(out_shape)


def test_logical_not_and_xor():
    x = np.array([True, False, True, False])
    y = np.array([True, True, False, False])
    got = run(lambda: [tf.logical_not(x), tf.logical_xor(x, y)])
    np.testing.assert_array_equal(got[0], ~x)
    np.testing.assert_array_equal(got[1], x ^ y)


def test_equality_on_bool_and_string():
    got = run(lambda: [
        tf.equal(tf.constant(["a", "bc", ""]), "bc"),
        tf.not_equal(tf.constant(["a", "bc"]), tf.constant([["a"], ["x"]])),
        tf.equal(tf.constant([True, False]), True),
    ])
    np.testing.assert_array_equal(got[0], [False, True, False])
    np.testing.assert_array_equal(got[1], [[False, True], [True, True]])
    np.testing.assert_array_equal(got[2], [True, False])


def test_add_concatenates_strings_with_broadcasting():
    with tf.Graph().as_default():
        a = tf.constant(["a", "bc"])
        outs = [tf.add(a, "x"), a + tf.constant([["1"], ["2"]]), "p" + a]
        assert outs[1].shape.as_list() == [2, 2]
        with tf.Session() as s:
            got = s.run(outs)
        with pytest.raises(TypeError):
            a - "x"
    np.testing.assert_array_equal(got[0], np.array([b"ax", b"bcx"], dtype=object))
    np.testing.assert_array_equal(got[1], np.array([[b"a1", b"bc1"], [b"a2", b"bc2"]], dtype=object))
    np.testing.assert_array_equal(got[2], np.array([b"pa", b"pbc"], dtype=object))


def test_integer_division_semantics_follow_python():
    x = np.array([7, -7, 7, -7, 0], np.int32)
    y = np.array([2, 2, -2, -2, 3], np.int32)
    got = run(lambda: [tf.floordiv(x, y), tf.mod(x, y), tf.truncatemod(x, y), x // tf.constant(y)])
    np.testing.assert_array_equal(got[0], x // y)
    np.testing.assert_array_equal(got[1], x % y)
    np.testing.assert_array_equal(got[2], np.fmod(x, y))
    np.testing.assert_array_equal(got[3], x // y)


def test_half_floordiv_floors_the_rounded_quotient():
    # -1 / 0.2 is -5.0012 in float32 but rounds to -5 in float16/bfloat16 first (TensorFlow's order).
    for dtype in ("float16", "bfloat16"):
        got = run(lambda d=dtype: tf.floordiv(tf.constant([-1.0], d), tf.constant([0.2], d)))
        assert got[0] == -5.0, dtype


def test_float_floordiv_and_mod_signs():
    x = np.array([7.5, -7.5, 7.5, -7.5], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    got = run(lambda: [tf.floordiv(x, y), tf.mod(x, y)])
    np.testing.assert_array_equal(got[0], np.floor(x / y))
    np.testing.assert_array_equal(got[1], np.mod(x, y))


@pytest.mark.parametrize("dtype", SIGNED_INTS + ["uint8", "uint16"])
@pytest.mark.parametrize("fn", [tf.floordiv, tf.mod], ids=["floordiv", "mod"])
def test_integer_division_by_zero_is_invalid_argument(dtype, fn):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [3])
        y = tf.placeholder(dtype, [3])
        out = fn(x, y)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
                s.run(out, {x: np.array([1, 2, 3]), y: np.array([1, 0, 1])})


@pytest.mark.parametrize("fn", [tf.floordiv, tf.mod, tf.truncatemod], ids=["floordiv", "mod", "truncatemod"])
def test_an_empty_integer_quotient_ignores_a_zero_divisor(fn):
    # TF 2.21 returns the empty result; only non-empty results check the divisor.
    got = run(lambda: [fn(tf.zeros([0], tf.int32), tf.constant(0))])
    assert got[0].shape == (0,) and got[0].dtype == np.int32


def test_float_division_by_zero_gives_inf():
    got = run(lambda: [tf.divide(tf.constant([1.0, -1.0, 0.0]), 0.0), tf.floordiv(1.0, tf.constant(0.0))])
    assert got[0][0] == np.inf and got[0][1] == -np.inf and np.isnan(got[0][2])
    assert got[1] == np.inf


def test_integer_pow_negative_exponent_is_invalid_argument():
    with tf.Graph().as_default():
        out = tf.pow(tf.constant([2, 3]), tf.constant([1, -1]))
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
                s.run(out)


def test_binary_broadcast_with_partially_known_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert (x + tf.ones([3])).shape.as_list() == [None, 3]
        assert (x * tf.ones([4, 1, 1])).shape.as_list() == [4, None, 3]
        assert tf.maximum(x, tf.placeholder(tf.float32, [None, 1])).shape.as_list() == [None, 3]
        assert tf.add(x, tf.placeholder(tf.float32)).shape.ndims is None
        y = tf.placeholder(tf.float32, [5, None])
        assert tf.subtract(x, y).shape.as_list() == [5, 3]
        got = run(lambda p: p["x"] + p["y"], {"x": (tf.float32, [None, 3], np.ones((2, 3))),
                                              "y": (tf.float32, [2, None], np.ones((2, 1)))})
        np.testing.assert_array_equal(got, np.full((2, 3), 2.0, np.float32))


@pytest.mark.parametrize("fn", [tf.add, tf.multiply, tf.maximum, tf.less, tf.floordiv, tf.pow])
def test_binary_incompatible_shapes_raise_value_error_naming_op_and_shapes(fn):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as e:
            fn(tf.ones([2, 3]), tf.ones([4]), name="bad_op")
        msg = str(e.value)
        assert "bad_op" in msg
        assert "[2,3]" in msg and "[4]" in msg


def test_binary_runtime_incompatible_shapes_raise_invalid_argument():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        y = tf.placeholder(tf.float32, [None])
        out = x + y
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {x: np.ones(2), y: np.ones(3)})


@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.equal, tf.less, tf.pow])
def test_binary_dtype_mismatch_raises_type_error(fn):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="int32"):
            fn(tf.ones([3]), tf.ones([3], tf.int32))


def test_operator_dtype_mismatch_raises_type_error():
    with tf.Graph().as_default():
        a = tf.ones([3])
        b = tf.ones([3], tf.int32)
        for f in (lambda: a + b, lambda: a - b, lambda: a * b, lambda: a < b):
            with pytest.raises(TypeError):
                f()
        with pytest.raises(TypeError):
            tf.logical_and(tf.ones([2]), tf.ones([2]))


# ---------------------------------------------------------------------------------------------
# Elementwise unary ops
# ---------------------------------------------------------------------------------------------


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _round_half_even(x):
    return np.round(x)


# name -> (ferroflow function, numpy reference on float64, dtypes, element kwargs, exact-in-dtype)
UNARY = {
    "negative": (tf.negative, np.negative, FLOATS + SIGNED_INTS, {}, True),
    "abs": (tf.abs, np.abs, FLOATS + SIGNED_INTS, {}, True),
    "sign": (tf.sign, np.sign, FLOATS + SIGNED_INTS, {}, True),
    "square": (tf.square, np.square, NUMERIC, {"lo": -5, "hi": 5}, True),
    "sqrt": (tf.sqrt, np.sqrt, FLOATS, {"lo": 0, "hi": 100}, False),
    "rsqrt": (tf.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, {"positive": True, "hi": 100}, False),
    "exp": (tf.exp, np.exp, FLOATS, {"lo": -5, "hi": 5}, False),
    "log": (tf.log, np.log, FLOATS, {"positive": True, "hi": 100}, False),
    "log1p": (tf.log1p, np.log1p, FLOATS, {"lo": -0.5, "hi": 10}, False),
    "expm1": (tf.expm1, np.expm1, FLOATS, {"lo": -5, "hi": 5}, False),
    "sin": (tf.sin, np.sin, FLOATS, {}, False),
    "cos": (tf.cos, np.cos, FLOATS, {}, False),
    "tanh": (tf.tanh, np.tanh, FLOATS, {}, False),
    "sigmoid": (tf.sigmoid, _sigmoid, FLOATS, {}, False),
    "floor": (tf.floor, np.floor, FLOATS, {}, True),
    "ceil": (tf.ceil, np.ceil, FLOATS, {}, True),
    "round": (tf.round, _round_half_even, FLOATS + INTS, {}, True),
    "reciprocal": (tf.reciprocal, np.reciprocal, FLOATS, {"nonzero": True}, False),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@PROPS
@given(data=st.data())
def test_unary_matches_numpy(op, data):
    fn, ref, dts, kw, exact = UNARY[op]
    dtype = data.draw(st.sampled_from(dts), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, max_side=4), label="shape")
    x = data.draw(arrays(dtype, shape, **kw), label="x")
    assume_feedable(dtype, x)
    with tf.Graph().as_default():
        px = tf.placeholder(dtype, shape)
        out = fn(px)
        assert out.shape.as_list() == list(shape)
        assert out.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            got = s.run(out, {px: x})
    if exact:
        expected = _in_dtype(ref, dtype)(x)
        assert_close(got, expected, dtype, rtol=0 if dtype != "bfloat16" else 1e-2, atol=0)
    else:
        expected = as_dtype_values(ref(x.astype(np.float64)), dtype)
        rtol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6, "float64": 1e-12}[dtype]
        assert_close(got, expected, dtype, rtol=rtol, atol=rtol)


def test_round_is_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 0.0], np.float32)
    for dtype in FLOATS:
        got = run(lambda p: tf.round(p["x"]), {"x": (dtype, [8], x)})  # noqa: B023 - run() calls it at once
        np.testing.assert_array_equal(got, np.round(x))


def test_sign_of_zero_and_abs_of_int_min_wraps():
    got = run(lambda: [tf.sign(tf.constant([-0.0, 0.0, -3.0, 2.0])), tf.abs(tf.constant([-128, 5], tf.int8))])
    np.testing.assert_array_equal(got[0], [0.0, 0.0, -1.0, 1.0])
    np.testing.assert_array_equal(got[1], np.array([-128, 5], np.int8))


@pytest.mark.parametrize("fn", [tf.sqrt, tf.rsqrt, tf.exp, tf.log, tf.log1p, tf.expm1, tf.sin, tf.cos, tf.tanh,
                                tf.sigmoid, tf.floor, tf.ceil])
def test_float_unary_ops_reject_integers(fn):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="int32"):
            fn(tf.constant([1, 2]))


@pytest.mark.parametrize("fn", [tf.negative, tf.abs, tf.sign])
def test_signed_unary_ops_reject_unsigned_and_bool(fn):
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            fn(tf.constant([True]))
        with pytest.raises(TypeError, match="uint8"):
            fn(tf.constant([1], tf.uint8))


def test_unary_shape_inference_keeps_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        for fn in (tf.exp, tf.abs, tf.negative, tf.sigmoid, tf.round, tf.square):
            assert fn(x).shape.as_list() == [None, 3]
        assert tf.exp(tf.placeholder(tf.float32)).shape.ndims is None


def test_logical_not_rejects_numbers():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.logical_not(tf.constant([1.0]))


# ---------------------------------------------------------------------------------------------
# where / select
# ---------------------------------------------------------------------------------------------


@FEW
@given(data=st.data())
def test_where_v2_broadcasts_condition_x_and_y(data):
    (sc, sx, sy), out_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    dtype = data.draw(st.sampled_from(["float32", "int32", "float64", "int64"]))
    c = data.draw(hnp.arrays(np.bool_, sc))
    x = data.draw(arrays(dtype, sx))
    y = data.draw(arrays(dtype, sy))
    with tf.Graph().as_default():
        out = tf.where_v2(tf.placeholder_with_default(c, sc), tf.constant(x), tf.constant(y))
        assert out.shape.as_list() == list(out_shape)
        with tf.Session() as s:
            got = s.run(out)
    np.testing.assert_array_equal(got, np.where(c, x, y))


def test_where_v1_same_shape_and_row_selector():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = -x
    c = np.array([[True, False, True], [False, False, True]])
    got = run(lambda: [tf.where(c, x, y), tf.where([True, False], x, y)])
    np.testing.assert_array_equal(got[0], np.where(c, x, y))
    np.testing.assert_array_equal(got[1], np.stack([x[0], y[1]]))


def test_where_v1_rejects_broadcasting():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.where(tf.constant([[True, False]]), tf.ones([3, 2]), tf.zeros([3, 2]))
        with pytest.raises(ValueError):
            tf.where(tf.constant([True, False]), tf.ones([2, 3]), tf.zeros([3]))
        with pytest.raises(TypeError):
            tf.where(tf.constant([1, 0]), tf.ones([2]), tf.zeros([2]))
        with pytest.raises(TypeError):
            tf.where(tf.constant([True, False]), tf.ones([2]), tf.zeros([2], tf.int32))
        with pytest.raises(ValueError):
            tf.where_v2(tf.constant([True, False, True]), tf.ones([2]), tf.zeros([2]))


def test_where_coordinates_form():
    c = np.array([[True, False, True], [False, False, True]])
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [None, 3])
        out1 = tf.where(p)
        out2 = tf.where_v2(p)
        assert out1.dtype == tf.int64
        assert out1.shape.as_list() == [None, 2]
        with tf.Session() as s:
            got1, got2 = s.run([out1, out2], {p: c})
    np.testing.assert_array_equal(got1, np.argwhere(c))
    np.testing.assert_array_equal(got2, np.argwhere(c))
    got = run(lambda: tf.where(tf.constant([0.0, 2.0, 0.0, -1.0]) > 0))
    np.testing.assert_array_equal(got, [[1]])


# ---------------------------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------------------------

CAST_DTYPES = ["bool"] + NUMERIC


@PROPS
@given(data=st.data())
def test_cast_between_all_dtypes(data):
    src = data.draw(st.sampled_from(CAST_DTYPES), label="src")
    dst = data.draw(st.sampled_from(CAST_DTYPES), label="dst")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    if src == "bool":
        x = data.draw(hnp.arrays(np.bool_, shape))
    else:
        # Values every destination can hold: float -> int truncates, out-of-range is undefined in TF.
        lo = 0 if dst.startswith("uint") or src.startswith("uint") else -100
        x = data.draw(arrays(src, shape, lo=lo, hi=100))
        assume_feedable(src, x)
    with tf.Graph().as_default():
        p = tf.placeholder(src, shape)
        out = tf.cast(p, dst)
        assert out.dtype == tf.as_dtype(dst)
        assert out.shape.as_list() == list(shape)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    if dst == "bool":
        expected = x != 0
    elif dst == "bfloat16":
        expected = round_bf16(x.astype(np.float32))
    elif np.dtype(np_dtype(dst)).kind in "iu" and x.dtype.kind == "f":
        expected = np.trunc(x).astype(np_dtype(dst))
    else:
        expected = x.astype(np_dtype(dst))
    assert got.dtype == fetch_dtype(dst)
    np.testing.assert_array_equal(got, expected)


def test_cast_integer_wraps_and_float_truncates():
    got = run(lambda: [
        tf.cast(tf.constant([300, -1]), tf.uint8),
        tf.cast(tf.constant([-1], tf.int32), tf.uint16),
        tf.cast(tf.constant([1.7, -1.7, 0.5]), tf.int32),
        tf.cast(tf.constant([1.7, -1.7, 0.0]), tf.bool),
        tf.cast(tf.constant([True, False]), tf.float32),
    ])
    np.testing.assert_array_equal(got[0], [44, 255])
    np.testing.assert_array_equal(got[1], [65535])
    np.testing.assert_array_equal(got[2], [1, -1, 0])
    np.testing.assert_array_equal(got[3], [True, True, False])
    np.testing.assert_array_equal(got[4], [1.0, 0.0])


def test_bfloat16_and_float16_storage_round_trip():
    x = np.array([1.0, 3.14159, 257.0, 1e10, -2.5e-3, 65504.0, 70000.0], np.float32)
    got = run(lambda: [tf.cast(tf.cast(x, tf.bfloat16), tf.float32), tf.cast(tf.cast(x, tf.float16), tf.float32)])
    np.testing.assert_array_equal(got[0], round_bf16(x))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got[1], x.astype(np.float16).astype(np.float32))
    # bfloat16 constants and placeholders hold bfloat16 values.
    v = np.array([1.0, 3.14159, 257.0], np.float32)
    got = run(lambda p: [p["b"] + p["b"], tf.constant(v, tf.bfloat16)], {"b": (tf.bfloat16, [3], v)})
    np.testing.assert_array_equal(got[0], 2 * round_bf16(v))
    np.testing.assert_array_equal(got[1], round_bf16(v))




def test_bfloat16_scalar_feed():
    got = run(lambda p: p["x"] + p["x"], {"x": (tf.bfloat16, [], np.float32(1.5))})
    assert float(got) == 3.0


def test_bfloat16_tensor_times_python_scalar():
    got = run(lambda p: p["x"] * 2.0, {"x": (tf.bfloat16, [2], np.float32([1.5, 2.0]))})
    np.testing.assert_array_equal(got, [3.0, 4.0])


def test_cast_same_dtype_is_identity_and_aliases():
    with tf.Graph().as_default():
        x = tf.constant([1.5, -2.5])
        assert tf.cast(x, tf.float32) is x
        assert tf.to_float(tf.constant([1, 2])).dtype == tf.float32
        assert tf.to_int32(x).dtype == tf.int32
        assert tf.to_int64(x).dtype == tf.int64
        assert tf.to_double(x).dtype == tf.float64
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(tf.to_int32(x)), [1, -2])
            np.testing.assert_array_equal(s.run(tf.to_int64(x)), [1, -2])
            np.testing.assert_array_equal(s.run(tf.to_float(tf.constant([3], tf.int64))), [3.0])


def test_cast_of_string_is_unimplemented():
    with tf.Graph().as_default():
        out = tf.cast(tf.constant(["1"]), tf.int32)
        with tf.Session() as s:
            with pytest.raises(tf.errors.UnimplementedError):
                s.run(out)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

REDUCE = {
    "reduce_sum": (tf.reduce_sum, np.sum, NUMERIC),
    "reduce_mean": (tf.reduce_mean, None, NUMERIC),
    "reduce_max": (tf.reduce_max, np.max, NUMERIC),
    "reduce_min": (tf.reduce_min, np.min, NUMERIC),
    "reduce_prod": (tf.reduce_prod, np.prod, NUMERIC),
    "reduce_any": (tf.reduce_any, np.any, ["bool"]),
    "reduce_all": (tf.reduce_all, np.all, ["bool"]),
}


def _np_reduce(op, x, axis, keepdims, dtype):
    if op == "reduce_mean":
        if x.dtype.kind in "iu":
            # TensorFlow sums narrow integers without overflow and truncates toward zero.
            s = np.sum(x.astype(np.int64), axis=axis, keepdims=keepdims)
            n = x.size // max(np.asarray(s).size, 1) if x.size else 1
            return (np.sign(s) * (np.abs(s) // n)).astype(x.dtype)
        return np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims)
    f = REDUCE[op][1]
    if x.dtype.kind in "iu" and op in ("reduce_sum", "reduce_prod"):
        return f(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
    if x.dtype.kind == "f" and op in ("reduce_sum", "reduce_prod"):
        return f(x.astype(np.float64), axis=axis, keepdims=keepdims)
    return f(x, axis=axis, keepdims=keepdims)


@st.composite
def _axes(draw, rank):
    kind = draw(st.sampled_from(["none", "int", "list"]))
    if kind == "none" or rank == 0:
        return None
    if kind == "int":
        return draw(st.integers(-rank, rank - 1))
    ax = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    return [a - rank if draw(st.booleans()) else a for a in ax]


@pytest.mark.parametrize("op", sorted(REDUCE))
@PROPS
@given(data=st.data())
def test_reductions_match_numpy(op, data):
    fn, _, dts = REDUCE[op]
    dtype = data.draw(st.sampled_from(dts), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4), label="shape")
    if dtype == "bool":
        x = data.draw(hnp.arrays(np.bool_, shape))
    elif op == "reduce_prod":
        x = data.draw(arrays(dtype, shape, lo=-2, hi=2))
    else:
        x = data.draw(arrays(dtype, shape))
    assume_feedable(dtype, x)
    axis = data.draw(_axes(len(shape)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = np.asarray(_np_reduce(op, x, np_axis, keepdims, dtype))
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        out = fn(p, axis=axis, keepdims=keepdims)
        assert out.dtype == tf.as_dtype(dtype)
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    if dtype in FLOATS:
        rtol = {"float16": 1e-2, "bfloat16": 4e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
        scale = np.max(np.abs(x)) if x.size else 1.0
        if op == "reduce_prod":
            scale = 1.0
        n = max(x.size, 1)
        assert_close(got, as_dtype_values(expected, dtype) if op in ("reduce_max", "reduce_min") else expected,
                     dtype, rtol=rtol, atol=rtol * scale * n)
    else:
        np.testing.assert_array_equal(got, expected.astype(np_dtype(dtype)))


def test_reduction_tf1_aliases_keep_dims_and_reduction_indices():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    with tf.Graph().as_default():
        outs = [
            tf.reduce_sum(x, reduction_indices=[1], keep_dims=True),
            tf.reduce_mean(x, reduction_indices=2),
            tf.reduce_max(x, axis=0, keep_dims=True),
            tf.reduce_min(x, 1, True),
            tf.reduce_prod(x / 10, [0, 2], keep_dims=False),
            tf.reduce_any(x > 20, reduction_indices=[0, 1, 2], keep_dims=True),
            tf.reduce_all(x >= 0, keep_dims=True),
        ]
        assert [o.shape.as_list() for o in outs] == [[2, 1, 4], [2, 3], [1, 3, 4], [2, 1, 4], [3], [1, 1, 1],
                                                     [1, 1, 1]]
        with pytest.raises(ValueError):
            tf.reduce_sum(x, axis=0, reduction_indices=0)
        with pytest.raises(ValueError):
            tf.reduce_sum(x, keepdims=True, keep_dims=True)
        with tf.Session() as s:
            got = s.run(outs)
    np.testing.assert_allclose(got[0], x.sum(1, keepdims=True))
    np.testing.assert_allclose(got[1], x.mean(2))
    np.testing.assert_allclose(got[2], x.max(0, keepdims=True))
    np.testing.assert_allclose(got[3], x.min(1, keepdims=True))
    np.testing.assert_allclose(got[4], (x / 10).prod((0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(got[5], [[[True]]])
    np.testing.assert_array_equal(got[6], [[[True]]])


def test_integer_mean_accumulates_wide_and_truncates():
    got = run(lambda: [
        tf.reduce_mean(tf.fill([32], tf.constant(4, tf.int8))),
        tf.reduce_mean(tf.constant([[100, 100], [100, 100]], tf.int8), 1),
        tf.reduce_mean(tf.fill([3], tf.constant(2 ** 30, tf.int32))),
        tf.reduce_mean(tf.constant([200, 200], tf.uint8)),
        tf.reduce_mean(tf.constant([1, 2, 2, -1, -4])),
        tf.reduce_mean(tf.constant([-3, -4])),
    ])
    assert got[0] == 4
    np.testing.assert_array_equal(got[1], [100, 100])
    assert got[2] == 2 ** 30 and got[3] == 200 and got[4] == 0 and got[5] == -3


def test_reductions_over_empty_axes_give_identities():
    with tf.Graph().as_default():
        z = tf.zeros([0, 3])
        outs = [tf.reduce_sum(z, 0), tf.reduce_max(z, 0), tf.reduce_min(z, 0), tf.reduce_prod(z, 0),
                tf.reduce_mean(z, 0), tf.reduce_max(tf.zeros([0, 2], tf.int32), 0),
                tf.reduce_min(tf.zeros([0, 2], tf.uint8), 0), tf.reduce_all(tf.zeros([0, 2], tf.bool), 0),
                tf.reduce_any(tf.zeros([0, 2], tf.bool), 0)]
        with tf.Session() as s:
            got = s.run(outs)
    np.testing.assert_array_equal(got[0], [0, 0, 0])
    np.testing.assert_array_equal(got[1], [-np.inf] * 3)
    np.testing.assert_array_equal(got[2], [np.inf] * 3)
    np.testing.assert_array_equal(got[3], [1, 1, 1])
    assert np.all(np.isnan(got[4]))
    np.testing.assert_array_equal(got[5], [np.iinfo(np.int32).min] * 2)
    np.testing.assert_array_equal(got[6], [255, 255])
    np.testing.assert_array_equal(got[7], [True, True])
    np.testing.assert_array_equal(got[8], [False, False])


def test_reduction_shape_inference_with_unknown_dims_and_axes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.reduce_sum(x, 1).shape.as_list() == [None]
        assert tf.reduce_sum(x, 0).shape.as_list() == [3]
        assert tf.reduce_sum(x, 1, keepdims=True).shape.as_list() == [None, 1]
        assert tf.reduce_sum(x).shape.as_list() == []
        axis = tf.placeholder(tf.int32, [1])
        assert tf.reduce_sum(x, axis, keepdims=True).shape.as_list() == [None, None]
        assert tf.reduce_sum(x, axis).shape.ndims is None
        got = run(lambda p: tf.reduce_mean(p["x"], p["a"]), {"x": (tf.float32, [None, 3], np.ones((2, 3))),
                                                             "a": (tf.int32, [1], [1])})
        np.testing.assert_array_equal(got, [1.0, 1.0])


def test_reduction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="reduction dimension"):
            tf.reduce_sum(tf.ones([2, 3]), 2)
        with pytest.raises(ValueError):
            tf.reduce_mean(tf.ones([2, 3]), -3)
        with pytest.raises(TypeError):
            tf.reduce_any(tf.constant([1]))
        with pytest.raises(TypeError):
            tf.reduce_sum(tf.constant([True]))
        with pytest.raises(TypeError):
            tf.reduce_sum(tf.ones([2]), axis=tf.constant(0.0))
        x = tf.placeholder(tf.float32, [None, None])
        a = tf.placeholder(tf.int32, [])
        out = tf.reduce_sum(x, a)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {x: np.ones((2, 2)), a: 5})


# ---------------------------------------------------------------------------------------------
# argmax / argmin, cumsum, add_n, clip_by_value
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@PROPS
@given(data=st.data())
def test_argmax_argmin_match_numpy(op, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape, lo=-3, hi=3))  # small range: many ties, the first index wins
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    out_type = data.draw(st.sampled_from([None, tf.int32, tf.int64]))
    with tf.Graph().as_default():
        p = tf.placeholder(dtype, shape)
        out = getattr(tf, op)(p, axis) if out_type is None else getattr(tf, op)(p, axis, output_type=out_type)
        assert out.dtype == (out_type or tf.int64)
        expected = getattr(np, op)(x, axis=axis)
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as s:
            got = s.run(out, {p: x})
    np.testing.assert_array_equal(got, expected)


def test_argmax_tf1_dimension_alias_default_axis_and_errors():
    x = np.array([[1, 5, 2], [7, 0, 7]], np.float32)
    with tf.Graph().as_default():
        outs = [tf.argmax(x, dimension=1), tf.argmin(x), tf.arg_max(x, 1), tf.arg_min(x, 0)]
        with pytest.raises(ValueError):
            tf.argmax(x, 2)
        p = tf.placeholder(tf.float32, [None, 3])
        assert tf.argmax(p, 1).shape.as_list() == [None]
        assert tf.argmax(p, tf.placeholder(tf.int32, [])).shape.as_list() == [None]
        empty = tf.argmax(tf.placeholder(tf.float32, [None, 3]), 0)
        with tf.Session() as s:
            got = s.run(outs)
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(empty, {empty.op.inputs[0]: np.zeros((0, 3), np.float32)})
    np.testing.assert_array_equal(got[0], [1, 0])
    np.testing.assert_array_equal(got[1], [0, 1, 0])
    np.testing.assert_array_equal(got[2], [1, 0])
    np.testing.assert_array_equal(got[3], [0, 1, 0])


@PROPS
@given(data=st.data())
def test_cumsum_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32", "int64", "int8", "uint8"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    x = data.draw(arrays(dtype, shape, lo=-5, hi=5))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    exclusive = data.draw(st.booleans())
    reverse = data.draw(st.booleans())
    got = run(lambda p: tf.cumsum(p["x"], axis, exclusive=exclusive, reverse=reverse), {"x": (dtype, shape, x)})
    y = np.flip(x, axis) if reverse else x
    c = np.cumsum(y, axis=axis, dtype=x.dtype)
    if exclusive:
        c = c - y
    expected = np.flip(c, axis) if reverse else c
    assert_close(got, expected, dtype)


def test_cumsum_shape_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.cumsum(x, 1).shape.as_list() == [None, 3]
        # As TensorFlow, an axis out of range is the kernel's error, at run time (test_op_sweep's cumsum cases).
        bad = tf.cumsum(x, 2)
        with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError):
            s.run(bad, {x: np.zeros((1, 3), np.float32)})
        with pytest.raises(TypeError):
            tf.cumsum(tf.constant([True]))


@FEW
@given(data=st.data())
def test_add_n_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64", "int32", "int64"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    n = data.draw(st.integers(1, 5))
    xs = [data.draw(arrays(dtype, shape)) for _ in range(n)]
    got = run(lambda: tf.add_n([tf.constant(v) for v in xs]))
    expected = xs[0].copy()
    for v in xs[1:]:
        expected = expected + v
    assert_close(got, expected, dtype, rtol=1e-2 if dtype == "float16" else None)


def test_add_n_shapes_and_errors():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3])
        b = tf.placeholder(tf.float32, [2, None])
        assert tf.add_n([a, b]).shape.as_list() == [2, 3]
        assert tf.add_n([tf.ones([2]), tf.placeholder(tf.float32)]).shape.as_list() == [2]
        with pytest.raises(ValueError) as e:
            tf.add_n([tf.ones([2]), tf.ones([3])], name="sum_them")
        assert "sum_them" in str(e.value) and "[2]" in str(e.value) and "[3]" in str(e.value)
        with pytest.raises(TypeError):
            tf.add_n([tf.ones([2]), tf.ones([2], tf.int32)])
        with pytest.raises(ValueError):
            tf.add_n([])


def test_clip_by_value_scalar_and_tensor_bounds():
    x = np.array([[1.0, 5.0, 10.0], [-3.0, 0.0, 3.0]], np.float32)
    lo = np.array([2.0, 3.0, -1.0], np.float32)
    got = run(lambda: [tf.clip_by_value(x, 0.0, 4.0), tf.clip_by_value(x, lo, 4.0),
                       tf.clip_by_value(tf.constant([1, 5, 10]), 2, 8)])
    np.testing.assert_array_equal(got[0], np.clip(x, 0.0, 4.0))
    np.testing.assert_array_equal(got[1], np.maximum(np.minimum(x, 4.0), lo))
    np.testing.assert_array_equal(got[2], [2, 5, 8])
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3])
        assert tf.clip_by_value(p, 0.0, 1.0).shape.as_list() == [None, 3]
        with pytest.raises(ValueError):
            tf.clip_by_value(tf.constant([1.0, 5.0, 10.0]), [[2.0, 3.0, 4.0]], 8.0)


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------

MATMUL_DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64"]


@PROPS
@given(data=st.data())
def test_matmul_2d_with_transposes(data):
    dtype = data.draw(st.sampled_from(MATMUL_DTYPES))
    m, k, n = data.draw(st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)))
    ta, tb = data.draw(st.booleans()), data.draw(st.booleans())
    a = data.draw(arrays(dtype, (k, m) if ta else (m, k), lo=-3, hi=3))
    b = data.draw(arrays(dtype, (n, k) if tb else (k, n), lo=-3, hi=3))
    with tf.Graph().as_default():
        pa = tf.placeholder(dtype, a.shape)
        pb = tf.placeholder(dtype, b.shape)
        out = tf.matmul(pa, pb, transpose_a=ta, transpose_b=tb)
        assert out.shape.as_list() == [m, n]
        assert out.dtype == tf.as_dtype(dtype)
        with tf.Session() as s:
            got = s.run(out, {pa: a, pb: b})
    a2 = a.T if ta else a
    b2 = b.T if tb else b
    expected = a2.astype(np.float64) @ b2.astype(np.float64)
    rtol = {"float16": 1e-2, "bfloat16": 4e-2}.get(dtype, 1e-6)
    assert_close(got, as_dtype_values(expected, dtype), dtype, rtol=rtol, atol=rtol * 9 * k)


@PROPS
@given(data=st.data())
def test_batched_matmul_broadcasts_batch_dims(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32"]))
    (ba, bb), batch = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3))
    m, k, n = data.draw(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)))
    ta, tb = data.draw(st.booleans()), data.draw(st.booleans())
    if len(ba) + len(bb) == 0:
        ba = (2,)
        batch = (2,)
    a = data.draw(arrays(dtype, ba + ((k, m) if ta else (m, k)), lo=-3, hi=3))
    b = data.draw(arrays(dtype, bb + ((n, k) if tb else (k, n)), lo=-3, hi=3))
    with tf.Graph().as_default():
        pa = tf.placeholder(dtype, a.shape)
        pb = tf.placeholder(dtype, b.shape)
        out = tf.matmul(pa, pb, transpose_a=ta, transpose_b=tb)
        assert out.shape.as_list() == list(batch) + [m, n]
        with tf.Session() as s:
            got = s.run(out, {pa: a, pb: b})
    a2 = np.swapaxes(a, -1, -2) if ta else a
    b2 = np.swapaxes(b, -1, -2) if tb else b
    assert_close(got, np.matmul(a2, b2), dtype)


def test_matmul_shape_inference_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        assert tf.matmul(x, tf.ones([4, 2])).shape.as_list() == [None, 2]
        assert tf.matmul(tf.ones([2, 4]), x, transpose_b=True).shape.as_list() == [2, None]
        assert tf.matmul(tf.placeholder(tf.float32, [None, None, 4]), tf.ones([4, 2])).shape.as_list() == [
            None, None, 2]
        with pytest.raises(ValueError) as e:
            tf.matmul(tf.ones([2, 3]), tf.ones([4, 3]), name="mm")
        assert "mm" in str(e.value) and "[2,3]" in str(e.value) and "[4,3]" in str(e.value)
        with pytest.raises(ValueError):
            tf.matmul(tf.ones([2, 3, 4]), tf.ones([5, 4, 2]))
        with pytest.raises(ValueError):
            tf.matmul(tf.ones([4]), tf.ones([4, 2]))
        with pytest.raises(TypeError):
            tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))
        with pytest.raises(TypeError):
            tf.matmul(tf.ones([2, 2], tf.int8), tf.ones([2, 2], tf.int8))
        a = tf.placeholder(tf.float32, [None, None])
        out = tf.matmul(a, a)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {a: np.ones((2, 3))})


# ---------------------------------------------------------------------------------------------
# Tensor operators
# ---------------------------------------------------------------------------------------------


def test_tensor_arithmetic_operators():
    xv = np.array([[1.5, -2.0, 3.0], [4.0, -5.5, 6.0]], np.float32)
    yv = np.array([2.0, 3.0, -4.0], np.float32)
    with tf.Graph().as_default():
        x = tf.constant(xv)
        y = tf.constant(yv)
        outs = [x + y, x - y, x * y, x / y, x // y, x % y, x ** 2, abs(x) ** y, -x, abs(x),
                2.0 + x, 2.0 - x, 2.0 * x, 2.0 / x, 7.0 // y, 7.0 % y, 2.0 ** y, x @ tf.transpose(x)]
        assert [o.dtype for o in outs] == [tf.float32] * len(outs)
        with tf.Session() as s:
            got = s.run(outs)
    expected = [xv + yv, xv - yv, xv * yv, xv / yv, np.floor(xv / yv), np.mod(xv, yv), xv ** 2,
                np.abs(xv) ** yv, -xv, np.abs(xv), 2 + xv, 2 - xv, 2 * xv, 2 / xv, np.floor(7 / yv),
                np.mod(7, yv), 2 ** yv, xv @ xv.T]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.astype(np.float32), rtol=1e-6)


def test_tensor_integer_operators():
    xv = np.array([7, -7, 9, 0], np.int32)
    yv = np.array([2, 2, -4, 3], np.int32)
    with tf.Graph().as_default():
        x = tf.constant(xv)
        y = tf.constant(yv)
        outs = [x // y, x % y, x / y, x ** 2, -x, abs(x), 10 // y, x * 3, x / 2]
        assert outs[2].dtype == tf.float64
        assert outs[8].dtype == tf.float64
        with tf.Session() as s:
            got = s.run(outs)
    expected = [xv // yv, xv % yv, xv / yv, xv ** 2, -xv, np.abs(xv), 10 // yv, xv * 3, xv / 2]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    with tf.Graph().as_default():
        out = tf.constant(xv) // tf.constant([1, 0, 1, 1])
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out)


def test_tensor_comparison_and_logical_operators():
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Graph().as_default():
        x = tf.constant(xv)
        a = x > 1.5
        b = x <= 2.0
        outs = [x < 2.0, x <= 2.0, x > 2.0, x >= 2.0, a & b, a | b, ~a, a ^ b, 2.0 < x]
        assert all(o.dtype == tf.bool for o in outs)
        with tf.Session() as s:
            got = s.run(outs)
    av, bv = xv > 1.5, xv <= 2.0
    expected = [xv < 2, xv <= 2, xv > 2, xv >= 2, av & bv, av | bv, ~av, av ^ bv, 2 < xv]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_operators_convert_python_values_to_the_tensor_dtype():
    with tf.Graph().as_default():
        x = tf.constant([1, 2], tf.int64)
        assert (x + 1).dtype == tf.int64
        assert (1 + x).dtype == tf.int64
        h = tf.constant([1.0], tf.float16)
        assert (h * 2.5).dtype == tf.float16
        assert (x + np.array([1, 2])).dtype == tf.int64
        with pytest.raises((TypeError, ValueError)):
            _ = x + 1.5
        with pytest.raises(TypeError):
            _ = tf.constant([1.0]) + tf.constant([1], tf.int32)
        assert (tf.constant([1.0]) == tf.constant([1.0])) is False  # identity comparison, like TF1


def test_operator_shapes_follow_broadcasting():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1, 3])
        y = tf.placeholder(tf.float32, [4, 1])
        for out in (x + y, x - y, x * y, x / y, x // y, x % y, x ** y, x < y):
            assert out.shape.as_list() == [None, 4, 3]
        with pytest.raises(ValueError):
            _ = x + tf.ones([2])


# ---------------------------------------------------------------------------------------------
# numpy feeds are converted like TensorFlow converts them
# ---------------------------------------------------------------------------------------------


def test_numpy_feeds_are_converted_to_the_placeholder_dtype():
    with tf.Graph().as_default():
        f = tf.placeholder(tf.float32, [None])
        i = tf.placeholder(tf.int32, [None])
        h = tf.placeholder(tf.float16, [2])
        b = tf.placeholder(tf.bool, [2])
        outs = [f * 1, i * 1, h * 1, tf.logical_not(b)]
        with tf.Session() as s:
            got = s.run(outs, {f: np.array([1.1, 2.5], np.float64), i: np.array([1, 255], np.uint8),
                               h: [0.1, 2.0], b: np.array([1, 0])})
    assert got[0].dtype == np.float32
    np.testing.assert_array_equal(got[0], np.array([1.1, 2.5], np.float32))
    assert got[1].dtype == np.int32
    np.testing.assert_array_equal(got[1], [1, 255])
    assert got[2].dtype == np.float16
    np.testing.assert_array_equal(got[2], np.array([0.1, 2.0], np.float16))
    np.testing.assert_array_equal(got[3], [False, True])


def test_feeds_of_python_scalars_and_lists():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.placeholder(tf.int64, [2, 2])
        with tf.Session() as s:
            a, b = s.run([x + 1, y * 2], {x: 2, y: [[1, 2], [3, 4]]})
    assert a == 3.0 and a.dtype == np.float32
    np.testing.assert_array_equal(b, [[2, 4], [6, 8]])
    assert b.dtype == np.int64


def test_feed_of_wrong_shape_is_rejected():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with tf.Session() as s:
            with pytest.raises(ValueError):
                s.run(x * 1, {x: np.ones((2, 4))})


# ---------------------------------------------------------------------------------------------
# Large tensors: past the kernels' parallel threshold (65536 elements), with ragged chunk tails
# ---------------------------------------------------------------------------------------------


def test_large_elementwise_broadcast_and_in_place_paths():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(301, 257)).astype(np.float32)
    b = rng.normal(size=(257,)).astype(np.float32)
    c = rng.normal(size=(301, 1)).astype(np.float32)
    with tf.Graph().as_default():
        pa, pb, pc = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape), tf.placeholder(
            tf.float32, c.shape)
        e = tf.exp(pa * 0.1)  # an intermediate the next op may overwrite in place
        outs = [pa + pb, pc - pa, e * pb, pb / (e + 1.0), tf.maximum(pa, pc), tf.cast(pa > pb, tf.int32),
                tf.sigmoid(pa), tf.cast(pa * 100, tf.int16), tf.where(pa > 0, pa, pc * pb), pa, e]
        with tf.Session() as s:
            got = s.run(outs, {pa: a, pb: b, pc: c})
    ee = np.exp(a * np.float32(0.1))
    expected = [a + b, c - a, ee * b, b / (ee + 1), np.maximum(a, c), (a > b).astype(np.int32),
                1 / (1 + np.exp(-a.astype(np.float64))), np.trunc(a * 100).astype(np.int16),
                np.where(a > 0, a, c * b), a, ee]
    for i, (g, x) in enumerate(zip(got, expected)):
        assert g.shape == x.shape, i
        np.testing.assert_allclose(g, x, rtol=2e-6, atol=1e-6, err_msg=str(i))


@pytest.mark.parametrize("axis", [None, 0, 1, 2, [0, 2], [1, 2], -1])
def test_large_reductions(axis):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(37, 45, 41)).astype(np.float32)
    xi = rng.integers(-50, 50, size=x.shape).astype(np.int32)
    ax = tuple(axis) if isinstance(axis, list) else axis
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, x.shape)
        pi = tf.placeholder(tf.int32, x.shape)
        outs = [tf.reduce_sum(p, axis), tf.reduce_mean(p, axis), tf.reduce_max(p, axis), tf.reduce_min(p, axis),
                tf.reduce_sum(pi, axis), tf.reduce_mean(pi, axis), tf.reduce_any(p > 3.5, axis),
                tf.reduce_all(p > -4.5, axis)]
        if not isinstance(axis, list):
            outs.append(tf.argmax(p, 0 if axis is None else axis))
        with tf.Session() as s:
            got = s.run(outs, {p: x, pi: xi})
    x64 = x.astype(np.float64)
    n = x.size // np.sum(xi, ax).size if np.ndim(np.sum(xi, ax)) else x.size
    si = np.sum(xi.astype(np.int64), ax)
    expected = [np.sum(x64, ax), np.mean(x64, ax), np.max(x, ax), np.min(x, ax), np.sum(xi, ax),
                (np.sign(si) * (np.abs(si) // n)), np.any(x > 3.5, ax), np.all(x > -4.5, ax)]
    if not isinstance(axis, list):
        expected.append(np.argmax(x, 0 if axis is None else axis))
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-3 if i == 0 else 1e-5, err_msg=str(i))


def test_large_matmul_transpose_cumsum():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(190, 230)).astype(np.float32)
    b = rng.normal(size=(230, 170)).astype(np.float32)
    bb = rng.normal(size=(3, 130, 170)).astype(np.float64)
    with tf.Graph().as_default():
        outs = [tf.matmul(a, b), tf.matmul(b, a, transpose_a=True, transpose_b=True), tf.matmul(bb, b.T.astype(np.float64)),
                tf.transpose(tf.reshape(tf.constant(a), [19, 10, 230]), [2, 0, 1]), tf.cumsum(a, 0),
                tf.cumsum(a, 1, exclusive=True, reverse=True)]
        with tf.Session() as s:
            got = s.run(outs)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(got[0], a64 @ b64, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], (a64 @ b64).T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[2], bb @ b64.T, rtol=1e-10)
    np.testing.assert_array_equal(got[3], a.reshape(19, 10, 230).transpose(2, 0, 1))
    np.testing.assert_allclose(got[4], np.cumsum(a64, 0), rtol=1e-4, atol=1e-4)
    rev = np.flip(np.cumsum(np.flip(a64, 1), 1), 1) - a64
    np.testing.assert_allclose(got[5], rev, rtol=1e-4, atol=1e-4)


def test_integer_overflow_wraps_like_tensorflow():
    i8 = lambda v: tf.constant(v, tf.int8)  # noqa: E731
    got = run(lambda: [
        i8([127]) + i8([1]), tf.constant([0], tf.uint8) - tf.constant([1], tf.uint8),
        tf.constant([200], tf.uint8) * tf.constant([2], tf.uint8), i8([-128]) // i8([-1]),
        # (TruncateMod takes no int8 in TensorFlow.)
        tf.constant([-2 ** 31]) // tf.constant([-1]), i8([-128]) % i8([-1]),
        tf.negative(i8([-128])), tf.pow(i8([2]), i8([7])), tf.cumsum(i8([127, 1])),
        tf.reduce_sum(i8([100, 100, 100])), tf.reduce_prod(i8([-128, -1])),
    ])
    expected = [[-128], [255], [144], [-128], [-2 ** 31], [0], [-128], [-128], [127, -128], 44, -128]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_nan_and_inf_semantics():
    nan, inf = np.nan, np.inf
    got = run(lambda: [
        tf.sign(tf.constant([nan, -inf, inf])), tf.minimum(tf.constant([nan, 1.0]), tf.constant([1.0, nan])),
        tf.maximum(tf.constant([nan, 1.0]), tf.constant([1.0, nan])), tf.reduce_min(tf.constant([1.0, nan, 0.0])),
        tf.reduce_max(tf.constant([nan, 1.0])), tf.nn.relu(tf.constant([nan, -1.0])),
        tf.nn.relu6(tf.constant([nan, 7.0])), tf.clip_by_value(tf.constant([nan, 7.0]), 0.0, 1.0),
        tf.round(tf.constant([nan, inf, -0.5])), tf.cast(tf.constant([nan, inf, 0.0]), tf.bool),
        tf.cast(tf.constant([nan, 1e30]), tf.float16), tf.sqrt(tf.constant([-1.0])), tf.log(tf.constant([0.0, -1.0])),
        tf.pow(tf.constant([0.0, -2.0]), tf.constant([-1.0, 0.5])), tf.mod(tf.constant([5.0]), tf.constant([0.0])),
        tf.floordiv(tf.constant([5.0, -5.0, 0.0]), 0.0), tf.reciprocal(tf.constant([0.0, -0.0])),
        tf.rsqrt(tf.constant([0.0])), tf.nn.softplus(tf.constant([inf, -inf])),
        tf.sigmoid(tf.constant([inf, -inf, -100.0])), tf.abs(tf.constant([-0.0])),
    ])
    expected = [[nan, -1, 1], [nan, nan], [nan, nan], nan, nan, [nan, 0], [nan, 6], [nan, 1], [nan, inf, -0.0],
                [True, True, False], [nan, inf], [nan], [-inf, nan], [inf, nan], [nan], [inf, -inf, nan],
                [inf, -inf], [inf], [inf, 0], [1, 0, 0], [0.0]]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, np.asarray(e).astype(np.asarray(g).dtype), err_msg=str(i))
        e64 = np.asarray(e, np.float64)
        zeros = e64 == 0
        np.testing.assert_array_equal(np.signbit(np.asarray(g, np.float64))[zeros], np.signbit(e64)[zeros],
                                      err_msg=str(i))


def test_full_reduction_of_unknown_rank_is_a_scalar():
    # TF sets the static shape of a reduction over every axis (axis=None, no keepdims) to () even when the
    # input's rank is unknown (aymericdamien's linear_regression: reduce_sum(pow(pred - Y, 2)) of
    # placeholder("float")); keepdims or an explicit axis leave it unknown.
    x = tf.placeholder("float")
    for f in (tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod, tf.count_nonzero,
              tf.reduce_logsumexp):
        assert f(x).shape.as_list() == [], f
    assert tf.reduce_any(tf.placeholder(tf.bool)).shape.as_list() == []
    assert tf.reduce_sum(x, keepdims=True).shape.ndims is None
    assert tf.reduce_sum(x, 0).shape.ndims is None
    with tf.Session() as sess:
        assert sess.run(tf.reduce_sum(x), {x: [[1.0, 2.0], [3.0, 4.0]]}) == 10.0


def test_reduction_indices_are_named_as_tensorflow_names_them():
    # TF 2.21 makes a full reduction's indices before the op's name scope (graph_and_sessions' program:
    # reduce_sum(y, name="z") adds "Const", not "z/Const"); an explicit axis is converted inside it.
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.reduce_sum(x, name="z").op.inputs[1].op.name == "Const"
    assert tf.reduce_mean(x).op.inputs[1].op.name == "Const_1"
    assert tf.reduce_max(x, 1).op.inputs[1].op.name == "Max/reduction_indices"
    with tf.name_scope("outer"):
        assert tf.reduce_prod(x).op.inputs[1].op.name == "outer/Const"
    assert tf.reduce_sum(tf.placeholder(tf.float32)).op.inputs[1].op.name == "range"


def test_reflected_operators_name_the_converted_operand_x():
    # TF 2.21: t * 2.0 converts 2.0 as "mul/y", 2.0 * t as "mul/x" (r_binary_op_wrapper's promotion).
    t = tf.placeholder(tf.float32, [2])
    assert (t * 2.0).op.inputs[1].op.name == "mul/y"
    r = 2.0 - t
    assert r.op.type == "Sub" and r.op.inputs[0].op.name == "sub/x" and r.op.inputs[1] is t
    with tf.Session() as sess:
        assert sess.run(r, {t: [1.0, 3.0]}).tolist() == [1.0, -1.0]
