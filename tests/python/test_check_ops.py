"""tf.debugging: assertions, rank/shape/dtype checks and numeric checks, with TF1 graph semantics.

Expected messages were checked against TensorFlow (tf.compat.v1 in graph mode) while writing
these tests; the tests themselves only need numpy.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferroflow as tf
from _optest import normal_floats

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def run_error(fetch, feed=None):
    """The message of the InvalidArgumentError running ``fetch`` raises."""
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(fetch, feed)
    return info.value.message


# -- element-wise binary assertions --------------------------------------------

BINARY = [
    (tf.debugging.assert_equal, "==", np.equal),
    (tf.debugging.assert_none_equal, "!=", np.not_equal),
    (tf.debugging.assert_less, "<", np.less),
    (tf.debugging.assert_less_equal, "<=", np.less_equal),
    (tf.debugging.assert_greater, ">", np.greater),
    (tf.debugging.assert_greater_equal, ">=", np.greater_equal),
]


@pytest.mark.parametrize("fn, sym, np_fn", BINARY, ids=[b[1] for b in BINARY])
@FEW
@given(data=st.data())
def test_binary_assert_fails_at_run_time_exactly_when_numpy_says(fn, sym, np_fn, data):
    tf.reset_default_graph()
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=4))
    # y is broadcast against x: either x's shape or a single row.
    y_shape = data.draw(st.sampled_from([shape, shape[-1:], ()]))
    xs = data.draw(hnp.arrays(np.int32, shape, elements=st.integers(-2, 2)))
    ys = data.draw(hnp.arrays(np.int32, y_shape, elements=st.integers(-2, 2)))
    x = tf.placeholder(tf.int32, None, name="x")
    y = tf.placeholder(tf.int32, None, name="y")
    check = fn(x, y, message="custom message")
    assert check.type == "Assert"
    if np.all(np_fn(xs, ys)):
        run(check, {x: xs, y: ys})
    else:
        msg = run_error(check, {x: xs, y: ys})
        assert "custom message" in msg
        assert f"Condition x {sym} y did not hold element-wise:" in msg
        assert "x (x:0) = " in msg and "y (y:0) = " in msg


@pytest.mark.parametrize("fn, sym, np_fn", BINARY, ids=[b[1] for b in BINARY])
def test_binary_assert_on_constants_is_decided_at_construction(fn, sym, np_fn):
    a, b = np.array([1, 2], np.int32), np.array([1, 3], np.int32)
    # Pick the order that fails, then the one that passes (none of the six holds both ways).
    bad, good = ((a, b), (b, a)) if not np.all(np_fn(a, b)) else ((b, a), (a, b))
    if np.all(np_fn(*good)):
        assert fn(tf.constant(good[0]), tf.constant(good[1])).type == "Assert"
    x, y = tf.constant(bad[0], name="xc"), tf.constant(bad[1], name="yc")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn(x, y, message="static")
    lines = info.value.message.split("\n")
    assert lines[0] == "static"
    assert lines[1] == f"Condition x {sym} y did not hold element-wise:"
    assert lines[2] == "x (xc:0) = "
    assert lines[3] == str(bad[0])
    assert lines[4] == "y (yc:0) = "
    assert lines[5] == str(bad[1])


def test_binary_assert_names_and_python_values():
    check = tf.assert_equal(tf.constant([1, 2]), [1, 2])
    assert check.name == "assert_equal_1/Assert/Assert"  # TF 2.21's names (see the test below)
    assert tf.assert_less(1, 2, name="mine").name == "mine/Assert/Assert"
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"y \(assert_equal_3/y:0\) = \n1"):
        tf.assert_equal(tf.constant([1, 2]), 1)


def test_binary_assert_type_and_shape_errors():
    with pytest.raises(
        TypeError, match="Input 'y' of 'Equal' Op has type float32 that does not match type int32"
    ):
        tf.assert_equal(tf.constant([1, 2]), 1.5)
    with pytest.raises(ValueError):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))


def test_binary_assert_custom_data_and_summarize():
    x = tf.placeholder(tf.float32, None, name="x")
    y = tf.placeholder(tf.float32, None, name="y")
    check = tf.assert_less(x, y, data=["my data", x], summarize=5, message="pre")
    feed = {x: np.arange(1, 7, dtype=np.float32), y: np.array([2, 3, 4, 5, 6, 6], np.float32)}
    msg = run_error(check, feed)
    assert "pre" in msg and "my data" in msg
    assert "Condition" not in msg
    assert "1 2 3 4 5..." in msg  # summarize=5 shows five values
    msg = run_error(tf.assert_less(x, y), feed)
    assert "1 2 3..." in msg and "1 2 3 4" not in msg  # the default shows three


def test_assert_as_control_dependency_guards_a_computation():
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.control_dependencies([tf.debugging.assert_non_negative(x)]):
        out = tf.sqrt(x)
    np.testing.assert_allclose(run(out, {x: [4.0, 9.0]}), [2.0, 3.0])
    msg = run_error(out, {x: [4.0, -9.0]})
    assert "Condition x >= 0 did not hold element-wise:" in msg


# -- unary assertions ----------------------------------------------------------

UNARY = [
    (tf.debugging.assert_positive, ">", lambda v: v > 0),
    (tf.debugging.assert_negative, "<", lambda v: v < 0),
    (tf.debugging.assert_non_negative, ">=", lambda v: v >= 0),
    (tf.debugging.assert_non_positive, "<=", lambda v: v <= 0),
]


@pytest.mark.parametrize("fn, sym, pred", UNARY, ids=[u[1] for u in UNARY])
@pytest.mark.parametrize("values", [[1.0, 2.0], [-1.0, -3.0], [0.0, 1.0], [0.0, -1.0], [-1.0, 1.0], []])
def test_unary_assert_at_run_time(fn, sym, pred, values):
    x = tf.placeholder(tf.float32, [None], name="x")
    check = fn(x, message="msg")
    feed = {x: np.array(values, np.float32)}
    if np.all(pred(np.array(values))):
        run(check, feed)
    else:
        msg = run_error(check, feed)
        assert "[msg.  ]" in msg
        assert f"Condition x {sym} 0 did not hold element-wise:" in msg
        assert "x (x:0) = " in msg


@pytest.mark.parametrize("fn, sym, pred", UNARY, ids=[u[1] for u in UNARY])
def test_unary_assert_on_constants_is_decided_at_construction(fn, sym, pred):
    good = np.array([1, 2]) if pred(1) else np.array([-1, -2])
    bad = -good
    assert fn(tf.constant(good)).type == "Assert"
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn(tf.constant(bad, name="c"), message="mm")
    assert info.value.message.split("\n") == [
        "mm.  ",
        f"Condition x {sym} 0 did not hold element-wise:",
        "x (c:0) = ",
        str(bad),
    ]


def test_unary_assert_op_names_and_string_input():
    assert tf.assert_positive(tf.constant([1.0])).name == "assert_positive/assert_less/Assert/Assert"
    with pytest.raises(TypeError):
        tf.assert_positive(tf.constant(["a"]))


# -- assert_near -----------------------------------------------------------------


@FEW
@given(
    xs=hnp.arrays(np.float64, 4, elements=normal_floats(-10, 10)),
    noise=hnp.arrays(np.float64, 4, elements=normal_floats(-0.5, 0.5)),
    rtol=st.sampled_from([0.0, 0.01, 0.1]),
    atol=st.sampled_from([0.0, 0.01, 0.2]),
)
def test_assert_near_uses_abs_diff_less_than_atol_plus_rtol_abs_y(xs, noise, rtol, atol):
    tf.reset_default_graph()
    ys = xs + noise
    x = tf.placeholder(tf.float64, [4], name="x")
    y = tf.placeholder(tf.float64, [4], name="y")
    check = tf.debugging.assert_near(x, y, rtol=rtol, atol=atol, message="near")
    if np.all(np.abs(xs - ys) < atol + rtol * np.abs(ys)):
        run(check, {x: xs, y: ys})
    else:
        msg = run_error(check, {x: xs, y: ys})
        assert "near.  " in msg
        assert "x and y not equal to tolerance rtol = " in msg
        assert "x (x:0) = " in msg and "y (y:0) = " in msg


def test_assert_near_default_tolerance_is_ten_eps_of_the_dtype():
    eps32 = float(np.finfo(np.float32).eps)
    x = tf.placeholder(tf.float32, [1])
    check = tf.assert_near(x, tf.constant([1.0]))
    run(check, {x: [1.0 + 5 * eps32]})
    run_error(check, {x: [1.0 + 40 * eps32]})
    # float64's eps is far smaller: the same offset fails there.
    x64 = tf.placeholder(tf.float64, [1])
    run_error(tf.assert_near(x64, tf.constant([1.0], tf.float64)), {x64: [1.0 + 5 * eps32]})


def test_assert_near_is_not_decided_statically():
    # Like TensorFlow: no construction-time check, the failure comes at run time.
    check = tf.assert_near(tf.constant([1.0]), tf.constant([2.0]))
    run_error(check)


# -- ranks -------------------------------------------------------------------------


def test_assert_rank_static():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    ok = tf.assert_rank(x, 2)
    assert ok.type == "NoOp" and ok.name == "assert_rank/static_checks_determined_all_ok"
    with pytest.raises(
        ValueError, match=r"^m\.  Tensor x:0 must have rank 3\.  Received rank 2, shape \(2, 3\)$"
    ):
        tf.assert_rank(x, 3, message="m")
    with pytest.raises(TypeError, match="must be of type tf.int32; got tf.int64"):
        tf.assert_rank(x, tf.constant(2, tf.int64))
    with pytest.raises(ValueError, match="Rank must be a scalar"):
        tf.assert_rank(x, [2])


def test_assert_rank_dynamic():
    x = tf.placeholder(tf.float32, None, name="x")
    check = tf.assert_rank(x, 2)
    assert check.type == "Assert"
    run(check, {x: np.zeros([2, 5])})
    msg = run_error(check, {x: [1.0, 2.0]})
    assert "Tensor x:0 must have rank" in msg and "Received shape: " in msg
    r = tf.placeholder(tf.int32, None, name="r")
    check = tf.assert_rank(x, r)
    run(check, {x: [1.0], r: 1})
    assert "Rank must be a scalar. Received rank: " in run_error(check, {x: [1.0], r: [1]})


def test_assert_rank_at_least():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    assert tf.assert_rank_at_least(x, 1).type == "NoOp"
    assert tf.assert_rank_at_least(x, 2).type == "NoOp"
    with pytest.raises(
        ValueError, match=r"^Tensor x:0 must have rank at least 3\.  Received rank 2, shape \(2, 3\)$"
    ):
        tf.assert_rank_at_least(x, 3)
    d = tf.placeholder(tf.float32, None, name="d")
    check = tf.assert_rank_at_least(d, 2)
    run(check, {d: np.zeros([1, 1, 1])})
    assert "Tensor d:0 must have rank at least" in run_error(check, {d: [1.0]})


def test_assert_rank_in():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    assert tf.assert_rank_in(x, [0, 2]).type == "NoOp"
    with pytest.raises(ValueError, match=r"^m\.  Tensor x:0 must have rank in \(0, 1\)\.  Received rank 2"):
        tf.assert_rank_in(x, (0, 1), message="m")
    d = tf.placeholder(tf.float32, None, name="d")
    check = tf.assert_rank_in(d, [0, 2])
    run(check, {d: 1.0})
    run(check, {d: [[1.0]]})
    assert "Tensor d:0 must have rank in" in run_error(check, {d: [1.0]})


# -- static dtype and shape checks -----------------------------------------------------


def test_assert_integer_and_assert_type():
    i = tf.constant([1, 2], name="i")
    f = tf.placeholder(tf.float32, name="x")
    assert tf.assert_integer(i).type == "NoOp"
    with pytest.raises(
        TypeError,
        match=r"""^m\.  Expected "x" to be integer type\.  Found: x:0 of dtype <dtype: 'float32'>$""",
    ):
        tf.assert_integer(f, message="m")
    assert tf.assert_type(f, tf.float32).name == "assert_type/statically_determined_correct_type"
    assert tf.assert_type(f, "float32").type == "NoOp"
    with pytest.raises(TypeError, match=r"^m\.  x:0 must be of type tf\.int32; got tf\.float32$"):
        tf.assert_type(f, tf.int32, message="m")


def test_assert_scalar():
    s = tf.constant(1.0)
    assert tf.assert_scalar(s) is s
    converted = tf.assert_scalar(3)
    assert isinstance(converted, tf.Tensor) and run(converted) == 3
    with pytest.raises(ValueError, match=r"^m\.  Expected scalar shape for x:0, saw shape: \(2, 3\)\.$"):
        tf.assert_scalar(tf.placeholder(tf.float32, [2, 3], name="x"), message="m")
    with pytest.raises(ValueError, match="saw shape: <unknown>"):
        tf.assert_scalar(tf.placeholder(tf.float32))


def test_assert_same_float_dtype():
    f32 = tf.constant(1.0, name="a")
    f64 = tf.constant(1.0, tf.float64, name="b")
    assert tf.assert_same_float_dtype() == tf.float32
    assert tf.assert_same_float_dtype([f64, None, f64]) == tf.float64
    assert tf.assert_same_float_dtype(None, tf.float16) == tf.float16
    with pytest.raises(
        ValueError,
        match=r"^b:0, type=<dtype: 'float64'>, must be of the same type \(<dtype: 'float32'>\) as a:0\.$",
    ):
        tf.assert_same_float_dtype([f32, f64])
    with pytest.raises(
        ValueError, match=r"^a:0, type=<dtype: 'float32'>, must be of the same type \(<dtype: 'float64'>\)\.$"
    ):
        tf.assert_same_float_dtype([f32], tf.float64)
    with pytest.raises(ValueError, match="Expected floating point type, got <dtype: 'int32'>."):
        tf.assert_same_float_dtype([tf.constant(1)])


def test_assert_proper_iterable():
    for ok in ([1, 2], (tf.constant(1),), {"a": 1}, set(), iter([])):
        tf.assert_proper_iterable(ok)
    for bad in (tf.constant([1, 2]), np.zeros(2), "abc", b"abc"):
        with pytest.raises(TypeError, match='to be a "proper" iterable'):
            tf.assert_proper_iterable(bad)
    with pytest.raises(TypeError, match='Expected argument "values" to be iterable'):
        tf.assert_proper_iterable(3)


def test_is_numeric_tensor():
    for dt in (
        tf.float16,
        tf.float32,
        tf.float64,
        tf.bfloat16,
        tf.int8,
        tf.int32,
        tf.int64,
        tf.uint8,
        tf.uint16,
    ):
        assert tf.is_numeric_tensor(tf.placeholder(dt))
    assert not tf.is_numeric_tensor(tf.placeholder(tf.bool))
    assert not tf.is_numeric_tensor(tf.placeholder(tf.string))
    assert not tf.is_numeric_tensor(np.zeros(2))
    assert not tf.is_numeric_tensor(1.0)


# -- assert_shapes -------------------------------------------------------------------------


def test_assert_shapes_static_pass_and_failures():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.placeholder(tf.float32, [3], name="y")
    s = tf.constant(1.0)
    ok = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("Q",)), (s, ()), (x, (2, None)), (x, (".", 3))])
    assert ok.type == "NoOp"
    assert tf.debugging.assert_shapes({x: (..., 3), y: ("*", "Q"), s: None}).type == "NoOp"
    assert tf.debugging.assert_shapes([(x, tf.TensorShape([2, 3]))]).type == "NoOp"
    cases = [
        (
            [(x, ("N", "N"))],
            r"^Specified by tensor x:0 dimension 0\.  Tensor x:0 dimension 1 must have size 2\.  "
            r"Received size 3, shape \(2, 3\)$",
        ),
        (
            [(x, (2, 4))],
            r"^m\.  Specified explicitly\.  Tensor x:0 dimension 1 must have size 4\.  Received size 3",
        ),
        ([(x, ("a", "b", "c"))], r"^Tensor x:0 must have rank 3\.  Received rank 2, shape \(2, 3\)$"),
        ([(x, ("a", "*"))], r"^Tensor x:0 specified shape index 1\.  Symbol `\.\.\.` or `\*`"),
        ([(x, 3)], r"^Tensor x:0\.  Specified shape must be an iterable\."),
        ([(x, ("N", "Q")), (y, ("N",))], r"Tensor y:0 dimension 0 must have size 2\.  Received size 3"),
        ([(y, ())], r"Tensor y:0 dimension 0 must have size 1\.  Received size 3"),
        ([(x, (..., 2))], r"Tensor x:0 dimension -1 must have size 2\.  Received size 3"),
    ]
    for shapes, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            tf.debugging.assert_shapes(shapes, message="m" if pattern.startswith("^m") else None)


def test_assert_shapes_dynamic():
    x = tf.placeholder(tf.float32, None, name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    check = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N",))])
    run(check, {x: np.zeros([2, 3]), y: np.zeros([2])})
    msg = run_error(check, {x: np.zeros([2, 3]), y: np.zeros([3])})
    assert "Specified by tensor x:0 dimension 0" in msg and "Tensor y:0 dimension" in msg
    assert "Tensor x:0 must have rank" in run_error(check, {x: np.zeros([2, 3, 4]), y: np.zeros([2])})

    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, None, name="x")
    y = tf.placeholder(tf.float32, None, name="y")
    check = tf.debugging.assert_shapes([(x, ("*", 3)), (y, ())])
    run(check, {x: np.zeros([2, 3]), y: 1.0})
    run(check, {x: np.zeros([5, 2, 3]), y: [1.0]})
    assert "Tensor x:0 dimension" in run_error(check, {x: np.zeros([2, 2]), y: 1.0})
    assert "Tensor y:0 dimension" in run_error(check, {x: np.zeros([2, 3]), y: [1.0, 2.0]})


# -- monotonicity ----------------------------------------------------------------------------


@FEW
@given(
    values=hnp.arrays(
        np.int32,
        hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
        elements=st.integers(-3, 3),
    )
)
def test_is_non_decreasing_and_strictly_increasing_match_numpy(values):
    tf.reset_default_graph()
    x = tf.placeholder(tf.int32, None)
    flat_diff = np.diff(values.reshape(-1))
    got = run([tf.is_non_decreasing(x), tf.is_strictly_increasing(x)], {x: values})
    assert list(got) == [bool(np.all(flat_diff >= 0)), bool(np.all(flat_diff > 0))]


def test_monotonic_rejects_non_numeric():
    with pytest.raises(TypeError, match="Expected x to be numeric"):
        tf.is_non_decreasing(tf.constant(["a", "b"]))
    with pytest.raises(TypeError, match="Expected x to be numeric"):
        tf.debugging.is_strictly_increasing(tf.constant([True]))


# -- NaN and Inf --------------------------------------------------------------------------------


def test_check_numerics():
    x = tf.placeholder(tf.float32, [None], name="x")
    checked = tf.debugging.check_numerics(x, "cn")
    assert checked.op.type == "CheckNumerics" and checked.op.get_attr("message") == b"cn"
    np.testing.assert_array_equal(run(checked, {x: [1.0, -2.0]}), [1.0, -2.0])
    assert "cn : Tensor had NaN values" in run_error(checked, {x: [1.0, np.nan]})
    assert "cn : Tensor had Inf values" in run_error(checked, {x: [-np.inf, 1.0]})
    with pytest.raises(TypeError, match="Expected string for argument 'message'"):
        tf.check_numerics(x, None)


def test_verify_tensor_all_finite_and_its_aliases():
    x = tf.placeholder(tf.float64, [None], name="x")
    for out in (
        tf.verify_tensor_all_finite(x, "vf"),
        tf.verify_tensor_all_finite(x=x, message="vf"),
        tf.debugging.assert_all_finite(t=x, msg="vf"),
    ):
        assert out.dtype == tf.float64
        np.testing.assert_array_equal(run(out, {x: [1.0, 2.0]}), [1.0, 2.0])
        assert "vf : Tensor had NaN values" in run_error(out, {x: [np.nan]})
    assert out.name.startswith("VerifyFinite_2/")
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.verify_tensor_all_finite(t=x, x=x, msg="a")


def test_add_check_numerics_ops_checks_every_float_tensor_but_not_variables():
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    tf.log(x * v, name="out")
    counter = tf.placeholder(tf.int32, name="ints")  # not floating: left alone
    del counter
    check = tf.add_check_numerics_ops()
    checks = [op for op in tf.get_default_graph().get_operations() if op.type == "CheckNumerics"]
    messages = sorted(op.get_attr("message").decode() for op in checks)
    assert "out:0" in messages and "x:0" in messages and "v/read:0" in messages
    # Reference outputs (the variable and its Assign) are not read by a check.
    assert "v:0" not in messages and "v/Assign:0" not in messages and "ints:0" not in messages
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, [3.0, 4.0]))
        sess.run(check, {x: [1.0, 1.0]})
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])  # running the checks did not re-initialise v
        with pytest.raises(tf.errors.InvalidArgumentError, match="out:0 : Tensor had (NaN|Inf) values"):
            sess.run(check, {x: [0.0, 1.0]})


def test_namespaces_export_the_same_functions():
    import ferroflow.compat.v1 as v1
    from ferroflow.ops import check_ops

    for name in check_ops.__all__:
        assert getattr(tf.debugging, name) is getattr(check_ops, name)
        assert getattr(v1.debugging, name) is getattr(check_ops, name)
    for name in (
        "assert_equal",
        "assert_rank",
        "check_numerics",
        "verify_tensor_all_finite",
        "add_check_numerics_ops",
    ):
        assert getattr(tf, name) is getattr(check_ops, name)


def test_assert_equal_ops_live_in_the_second_assert_equal_scope():
    # TensorFlow 2.21 opens an "assert_equal" scope to short-circuit `x is y` before _binary_assert opens its
    # own, so a fresh graph's check is "assert_equal_1/..." (seen in the debugging program's error message,
    # which names "assert_equal_1/y:0"); an explicit name gets the same "_1".
    x = tf.placeholder(tf.int32, [None])
    assert tf.assert_equal(tf.shape(x)[0], 3).name == "assert_equal_1/Assert/Assert"
    assert tf.debugging.assert_equal(x, x).name == "assert_equal_2/NoOp"
    assert tf.assert_equal(x, 2, name="mine").name == "mine_1/Assert/Assert"
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"y \(mine_1/y:0\) = \] \[2\]"):
            sess.run(tf.get_default_graph().get_operation_by_name("mine_1/Assert/Assert"), {x: [1]})
