"""while_loops over scalars run as register code (crates/runtime/src/kernels/scalar_loop.rs):
their results must be bit-identical to the same loop run through the plans, which the loop over
shape-[1] tensors below does (a non-scalar variable keeps a loop on the plans), and to numpy."""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.framework import errors


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def both_ways(cond, body, init, dtypes):
    """Runs the loop on scalars and on shape-[1] tensors; returns both results as arrays."""
    scalars = tf.while_loop(cond, body, [tf.constant(v, dt) for v, dt in zip(init, dtypes)])
    vectors = tf.while_loop(lambda *a: tf.reshape(cond(*a), []), body,
                            [tf.constant([v], dt) for v, dt in zip(init, dtypes)])
    with tf.Session() as sess:
        a, b = sess.run([scalars, vectors])
    return [np.asarray(x) for x in a], [np.asarray(x)[0] for x in b]


def assert_bits_equal(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        assert x.tobytes() == y.tobytes(), (x, y)


def test_float_recurrence_matches_the_plan_path_and_numpy():
    def body(i, x):
        return i + 1, x * 0.999 + 0.001

    a, b = both_ways(lambda i, x: i < 1000, body, [0, 0.5], [tf.int32, tf.float32])
    assert_bits_equal(a, b)
    x = np.float32(0.5)
    for _ in range(1000):
        x = x * np.float32(0.999) + np.float32(0.001)
    assert a[0] == 1000 and a[1] == x


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_ops_wrap_floor_and_compare_as_the_kernels_do(dtype):
    def body(i, x, y, flag):
        x2 = x * 7 - 3
        y2 = tf.maximum(tf.floormod(x2, 5) - tf.floordiv(y, 3), tf.minimum(-y, x2 // 11))
        y2 = tf.abs(y2) + tf.square(i) - tf.negative(i)
        flag2 = tf.logical_or(tf.logical_and(flag, x2 > y2), tf.logical_not(tf.equal(i % 3, 0)))
        return i + 1, x2, y2, flag2

    a, b = both_ways(lambda i, *_: i < 60, body, [0, 1, -5, True], [dtype, dtype, dtype, tf.bool])
    assert_bits_equal(a, b)
    # Overflow wraps: 7**60 does not fit.
    expect = 1
    for _ in range(60):
        expect = expect * 7 - 3
    bits = 32 if dtype == tf.int32 else 64
    wrapped = (expect + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    assert int(a[1]) == wrapped


def test_float64_special_values_and_division():
    def body(i, x, y):
        z = tf.truediv(x, y) - tf.floordiv(x, 3.0) + tf.floormod(x, -2.5)
        return i + 1, tf.maximum(z, x - 100.0), y - 1.0

    a, b = both_ways(lambda i, x, y: i < 12, body, [0, 3.0, 4.0], [tf.int32, tf.float64, tf.float64])
    assert_bits_equal(a, b)
    assert a[2] == -8.0  # y passed through zero: x / 0 gave an infinity on the way


def test_pass_through_and_identity_variables_keep_their_value():
    out = tf.while_loop(
        lambda i, flag, keep: tf.logical_and(i < 3, flag),
        lambda i, flag, keep: (i + 1, flag, tf.identity(keep)),
        [tf.constant(0), tf.constant(True), tf.constant(-7, tf.int64)],
    )
    with tf.Session() as sess:
        i, flag, keep = sess.run(out)
    assert (i, flag, keep) == (3, True, -7)
    assert np.asarray(keep).dtype == np.int64


def test_maximum_iterations_and_fed_bounds():
    n = tf.placeholder(tf.int32, [])
    out = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)),
                        (tf.constant(0), tf.constant(0.0)), maximum_iterations=50)
    with tf.Session() as sess:
        assert sess.run(out, {n: 10})[1] == 45.0
        i, s = sess.run(out, {n: 1000})
    assert i == 50 and s == sum(range(50))


def test_integer_division_by_zero_fails_naming_the_op():
    out = tf.while_loop(lambda i, x: i < 10, lambda i, x: (i + 1, x // (3 - i)),
                        [tf.constant(0), tf.constant(100)])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero") as e:
            sess.run(out)
    assert "floordiv" in str(e.value)


def test_loop_with_a_non_scalar_op_still_runs_on_the_plans():
    # tanh is not compiled into register code (its vectorized kernel need not match libm);
    # the loop must still give the kernel's result.
    out = tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, tf.tanh(x) + 1.0),
                        [tf.constant(0), tf.constant(0.25)])
    vec = tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, tf.tanh(x) + 1.0),
                        [tf.constant(0), tf.constant([0.25])])
    with tf.Session() as sess:
        (_, a), (_, b) = sess.run([out, vec])
    assert np.float32(a).tobytes() == np.float32(b[0]).tobytes()


def test_gradient_of_a_scalar_loop_still_records_its_iterations():
    x = tf.constant(1.5)
    _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), [tf.constant(0), x])
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        yv, gv = sess.run([y, g])
    assert yv == pytest.approx(1.5**5) and gv == pytest.approx(5 * 1.5**4)
