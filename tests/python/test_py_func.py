"""tf.py_func / numpy_function / py_function: Python functions as graph ops (behaviour checked against TF 2.21)."""

import numpy as np
import pytest

import ferroflow as tf


def run(*fetches):
    with tf.Session() as sess:
        return sess.run(list(fetches) if len(fetches) > 1 else fetches[0])


def test_py_func_values_and_static_info():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(lambda v: v * 2, [x], tf.float32)
    assert y.op.type == "PyFunc" and y.dtype == tf.float32 and y.shape.ndims is None
    assert y.op.get_attr("token").startswith(b"pyfunc_") or str(y.op.get_attr("token")).startswith("pyfunc_")
    np.testing.assert_array_equal(run(y), [2.0, 4.0])
    assert tf.py_func(lambda: np.int64(1), [], tf.int64, stateful=False).op.type == "PyFuncStateless"
    assert tf.numpy_function(lambda v: v + 1, [x], tf.float32).op.type == "PyFunc"


def test_arguments_are_numpy_values_as_tf_passes_them():
    seen = []

    def show(*args):
        seen.extend(args)
        return np.int64(0)

    ins = [tf.constant(1.5), tf.constant([1, 2]), tf.constant("a"), tf.constant(["a", "b"]), tf.constant(True)]
    run(tf.py_func(show, ins, tf.int64))
    f, ints, s, strs, b = seen
    assert isinstance(f, np.float32) and f == 1.5
    assert isinstance(ints, np.ndarray) and ints.dtype == np.int32 and list(ints) == [1, 2]
    assert s == b"a"
    assert strs.dtype == object and list(strs) == [b"a", b"b"]
    assert isinstance(b, np.bool_) and b


def test_multiple_and_string_outputs():
    x = tf.constant([1.0, 2.0])
    a, total = tf.py_func(lambda v: [v, v.sum()], [x], [tf.float32, tf.float32])
    va, vt = run(a, total)
    np.testing.assert_array_equal(va, [1.0, 2.0])
    assert vt == 3.0
    assert run(tf.py_func(lambda: "héllo", [], tf.string)) == "héllo".encode()
    p, q = tf.py_func(lambda: ["a", "bb"], [], [tf.string, tf.string])
    assert run(p, q) == [b"a", b"bb"]
    assert list(run(tf.py_func(lambda: np.array(["a", "bb"]), [], tf.string))) == [b"a", b"bb"]
    assert run(tf.py_func(lambda: True, [], tf.bool))
    op = tf.py_func(lambda v: None, [x], [])
    assert isinstance(op, tf.Operation)
    run(op)


def test_wrong_result_dtype_or_count_is_invalid_argument():
    x = tf.constant([1.0, 2.0])
    cases = [
        (tf.py_func(lambda v: v.astype(np.float64), [x], tf.float32), "is double, but expects float"),
        (tf.py_func(lambda v: 3.5, [x], tf.float32), "is double, but expects float"),
        (tf.py_func(lambda: 2, [], tf.int32), "is int64, but expects int32"),
        (tf.py_func(lambda v: [v], [x], [tf.float32, tf.float32]), "returns 1 values, but expects to see 2 values"),
        (tf.py_func(lambda v: [1, 2], [x], tf.int32), "returns 2 values, but expects to see 1 values"),
        (tf.py_func(lambda: None, [], tf.int32), "returns 0 values, but expects to see 1 values"),
    ]
    for t, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            run(t)


@pytest.mark.parametrize(
    "exc, cls",
    [
        (ValueError("bad value"), tf.errors.InvalidArgumentError),
        (TypeError("bad type"), tf.errors.InvalidArgumentError),
        (ZeroDivisionError("division by zero"), tf.errors.UnknownError),
        (NotImplementedError("later"), tf.errors.UnimplementedError),
        (MemoryError("full"), tf.errors.ResourceExhaustedError),
    ],
)
def test_exceptions_map_to_tf_error_classes(exc, cls):
    def boom(v):
        raise exc

    t = tf.py_func(boom, [tf.constant(1.0)], tf.float32)
    with pytest.raises(cls, match=type(exc).__name__):
        run(t)


def test_py_func_has_no_gradient():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(lambda v: v * 2, [x], tf.float32)
    assert tf.gradients(y, x) == [None]


def test_py_func_state_and_many_calls():
    calls = []
    x = tf.placeholder(tf.float32, [None])
    y = tf.py_func(lambda v: (calls.append(len(v)), v + 1)[1], [x], tf.float32)
    with tf.Session() as sess:
        for n in range(1, 6):
            np.testing.assert_array_equal(sess.run(y, {x: np.arange(n, dtype=np.float32)}), np.arange(n) + 1)
    assert calls == [1, 2, 3, 4, 5]


def test_py_func_in_a_training_step_with_dataset_style_labels():
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable([[1.0], [2.0]])
    labels = tf.py_func(lambda a: (a.sum(axis=1, keepdims=True) > 1).astype(np.float32), [x], tf.float32)
    labels.set_shape([None, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - labels))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {x: [[1.0, 1.0], [0.1, 0.2]]})
        for _ in range(20):
            sess.run(step, {x: [[1.0, 1.0], [0.1, 0.2]]})
        assert sess.run(loss, {x: [[1.0, 1.0], [0.1, 0.2]]}) < before / 4


def test_py_function_gets_eager_like_values():
    x = tf.constant([1.0, 2.0])
    y = tf.py_function(lambda v: v.numpy() * 3, [x], tf.float32)
    assert y.op.type == "EagerPyFunc"
    np.testing.assert_array_equal(run(y), [3.0, 6.0])
    # results convert to Tout when no precision kind is lost; tf ops in the function run at once
    assert run(tf.py_function(lambda: 2.0, [], tf.float32)) == 2.0
    assert run(tf.py_function(lambda: tf.constant(2.0) * 3, [], tf.float32)) == 6.0
    assert run(tf.py_function(lambda v: tf.reduce_sum(v), [x], tf.float32)) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot convert 2.0 to EagerTensor of dtype int32"):
        run(tf.py_function(lambda: 2.0, [], tf.int32))


def test_functions_are_released_with_their_graph():
    import gc

    from ferroflow.ops import script_ops

    g = tf.Graph()
    with g.as_default():
        t = tf.py_func(lambda: np.float32(1), [], tf.float32)
    token = t.op.get_attr("token")
    token = token.decode() if isinstance(token, bytes) else token
    assert token in script_ops._FUNCS
    del g, t
    gc.collect()
    assert token not in script_ops._FUNCS


def _double(i):
    return np.float32(i) * 2


def _mapped(i):
    x = tf.py_func(_double, [i], tf.float32)
    x.set_shape([])
    return x


def test_py_func_in_a_dataset_map_outlives_the_traced_function_graph():
    # The map function's graph is dropped after tracing; its callback must live as long as the graph that runs
    # it (TF keeps py_funcs on the outermost graph). Before: "callback pyfunc_N is not found" once gc ran.
    import gc

    nxt = tf.data.Dataset.range(3).map(_mapped, num_parallel_calls=2).make_one_shot_iterator().get_next()
    gc.collect()
    with tf.Session() as sess:
        assert [float(sess.run(nxt)) for _ in range(3)] == [0.0, 2.0, 4.0]
