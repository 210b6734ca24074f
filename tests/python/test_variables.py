"""Variables, get_variable / variable_scope, initializers, assign and scatter ops."""

import numpy as np
import pytest

import ferroflow as tf


def test_variable_ops_are_named_like_tensorflow():
    v = tf.Variable([1.0, 2.0], name="w")
    assert v.name == "w:0"
    assert v.op.name == "w" and v.op.type == "VariableV2"
    assert v.initializer.name == "w/Assign"
    assert v.value().name == "w/read:0"
    assert v.initial_value.op.name == "w/initial_value"
    assert v.shape.as_list() == [2] and v.dtype == tf.as_dtype("float32_ref") and v.graph is tf.get_default_graph()
    v2 = tf.Variable(0, name="w")
    assert v2.name == "w_1:0"
    assert tf.global_variables() == [v, v2]
    assert tf.trainable_variables() == [v, v2]
    local = tf.Variable(0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.local_variables() == [local] and local not in tf.trainable_variables()


def test_uninitialized_read_names_the_variable():
    v = tf.Variable(1.0, name="weights")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights"):
            sess.run(v + 1.0)
        assert not sess.run(tf.is_variable_initialized(v))
        sess.run(tf.variables_initializer([v]))
        assert sess.run(tf.is_variable_initialized(v))


def test_assign_family_and_load():
    v = tf.Variable(np.arange(4, dtype=np.float32))
    a = v.assign([4.0, 3.0, 2.0, 1.0])
    add = tf.assign_add(v, [1.0, 1.0, 1.0, 1.0])
    sub = v.assign_sub(tf.constant([0.5, 0.5, 0.5, 0.5]))
    upd = tf.scatter_update(v, [0, 2], [9.0, 8.0])
    sadd = tf.scatter_add(v, [1, 1], [1.0, 2.0])
    ssub = tf.scatter_sub(v, [3], [10.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(a), [4, 3, 2, 1])
        np.testing.assert_array_equal(sess.run(add), [5, 4, 3, 2])
        np.testing.assert_array_equal(sess.run(sub), [4.5, 3.5, 2.5, 1.5])
        np.testing.assert_array_equal(sess.run(upd), [9, 3.5, 8, 1.5])
        np.testing.assert_array_equal(sess.run(sadd), [9, 6.5, 8, 1.5])
        np.testing.assert_array_equal(sess.run(ssub), [9, 6.5, 8, -8.5])
        v.load([1.0, 1.0, 1.0, 1.0], sess)
        np.testing.assert_array_equal(v.eval(sess), [1, 1, 1, 1])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 7 is not in \[0, 4\)"):
            sess.run(tf.scatter_update(v, [7], [0.0]))
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0])


def test_assign_validate_shape_false_allows_reshaping():
    v = tf.Variable([1, 2, 3], validate_shape=False)
    grow = tf.assign(v, [1, 2, 3, 4, 5], validate_shape=False)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(grow), [1, 2, 3, 4, 5])


def test_variable_arithmetic_and_conversion():
    v = tf.Variable(2.0)
    y = v * 3.0 + 1.0
    z = -v
    idx = tf.Variable([[1, 2], [3, 4]])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(y) == 7.0 and sess.run(z) == -2.0
        assert sess.run(idx[1, 0]) == 3


def test_report_uninitialized_and_initializers():
    a = tf.Variable(1, name="a")
    tf.Variable(2, name="b")
    with tf.Session() as sess:
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"a", b"b"]
        sess.run(a.initializer)
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"b"]
        sess.run(tf.initialize_all_variables())
        assert list(sess.run(tf.report_uninitialized_variables())) == []


def test_callable_initial_value_and_initialized_value():
    v = tf.Variable(lambda: tf.ones([2, 2]), name="ones")
    assert v.initial_value.op.name.startswith("ones/Initializer/")
    w = tf.Variable(v.initialized_value() * 2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), 2 * np.ones((2, 2)))


def test_get_variable_scopes_and_reuse():
    with tf.variable_scope("dense"):
        k = tf.get_variable("kernel", [3, 4])
        b = tf.get_variable("bias", [4], initializer=tf.zeros_initializer())
        assert tf.get_variable_scope().name == "dense"
    assert k.name == "dense/kernel:0" and b.name == "dense/bias:0"
    assert k.initializer.name == "dense/kernel/Assign"
    with pytest.raises(ValueError, match="already exists, disallowed"):
        with tf.variable_scope("dense"):
            tf.get_variable("kernel", [3, 4])
    with tf.variable_scope("dense", reuse=True):
        assert tf.get_variable("kernel", [3, 4]) is k
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("other", [1])
        with pytest.raises(ValueError, match="Trying to share variable dense/kernel"):
            tf.get_variable("kernel", [4, 4])
    with tf.variable_scope("dense", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("kernel", [3, 4]) is k
        fresh = tf.get_variable("fresh", [1])
    assert fresh.name == "dense/fresh:0"
    with tf.variable_scope("dense") as scope:
        scope.reuse_variables()
        assert tf.get_variable("bias") is b


def test_default_names_and_scope_objects():
    with tf.variable_scope(None, default_name="dense"):
        a = tf.get_variable("w", [1])
    with tf.variable_scope(None, default_name="dense"):
        b = tf.get_variable("w", [1])
    assert a.name == "dense/w:0" and b.name == "dense_1/w:0"
    with tf.variable_scope("outer") as outer:
        pass
    with tf.variable_scope(outer):
        c = tf.get_variable("v", [1])
        op = tf.constant(1.0, name="op")
    assert c.name == "outer/v:0"
    assert op.op.name.startswith("outer")
    with tf.variable_scope("x"):
        with tf.variable_scope("y"):
            d = tf.get_variable("z", [1])
            e = tf.constant(0, name="c")
    assert d.name == "x/y/z:0" and e.op.name == "x/y/c"


def test_scope_initializer_dtype_and_regularizer():
    reg = lambda w: tf.reduce_sum(tf.square(w))  # noqa: E731
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.5), regularizer=reg):
        v = tf.get_variable("v", [2])
        i = tf.get_variable("i", [2], dtype=tf.int32, initializer=tf.zeros_initializer())
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [0.5, 0.5])
        assert sess.run(losses[0]) == 0.5
        assert sess.run(i).dtype == np.int32


def test_get_variable_from_value_and_local():
    v = tf.get_variable("from_value", initializer=tf.constant([1, 2, 3]))
    assert v.dtype.base_dtype == tf.int32 and v.shape.as_list() == [3]
    with pytest.raises(ValueError, match="do not specify shape"):
        tf.get_variable("bad", [3], initializer=tf.constant([1, 2, 3]))
    loc = tf.get_local_variable("counter", [], dtype=tf.int64, initializer=tf.zeros_initializer())
    assert loc in tf.local_variables() and loc not in tf.trainable_variables()


def test_initializers_statistics_and_determinism():
    tf.set_random_seed(1234)
    shape = [300, 200]
    inits = {
        "glorot_uniform": tf.glorot_uniform_initializer(),
        "glorot_normal": tf.glorot_normal_initializer(),
        "truncated": tf.truncated_normal_initializer(stddev=0.1),
        "normal": tf.random_normal_initializer(mean=1.0, stddev=2.0),
        "uniform": tf.random_uniform_initializer(-1.0, 3.0),
        "vs": tf.variance_scaling_initializer(scale=2.0, mode="fan_in", distribution="uniform"),
        "ortho": tf.orthogonal_initializer(),
    }
    vs = {k: tf.get_variable(k, shape, initializer=i) for k, i in inits.items()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(vs)
    limit = np.sqrt(6.0 / (300 + 200))
    assert np.abs(out["glorot_uniform"]).max() <= limit
    assert abs(out["glorot_uniform"].std() - limit / np.sqrt(3)) < 0.01 * limit * 5
    assert abs(out["glorot_normal"].std() - np.sqrt(2.0 / 500)) < 0.005
    assert np.abs(out["truncated"]).max() <= 0.2 + 1e-6
    assert abs(out["normal"].mean() - 1.0) < 0.05 and abs(out["normal"].std() - 2.0) < 0.05
    assert out["uniform"].min() >= -1.0 and out["uniform"].max() < 3.0
    vs_limit = np.sqrt(3 * 2.0 / 300)
    assert np.abs(out["vs"]).max() <= vs_limit
    q = out["ortho"]
    np.testing.assert_allclose(q.T @ q, np.eye(200), atol=1e-4)
    # Same graph-level seed, same graph: same numbers.
    tf.reset_default_graph()
    tf.set_random_seed(1234)
    again = {k: tf.get_variable(k, shape, initializer=i) for k, i in inits.items()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(again["glorot_uniform"]), out["glorot_uniform"])


def test_initializer_errors():
    with pytest.raises(ValueError, match="floating"):
        tf.random_normal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(mode="bogus")
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    c = tf.constant_initializer([1, 2, 3, 4])
    v = tf.get_variable("c", [2, 2], initializer=c)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v), [[1, 2], [3, 4]])


def test_assert_variables_initialized_fails_with_the_read_error():
    # TensorFlow stacks the variables' ranks, read from each variable: an uninitialized one fails with the
    # read's FailedPreconditionError (programs catch that class), and the default list includes local variables.
    tf.Variable(1.0, name="a")
    b = tf.Variable([2.0, 3.0], name="b")
    tf.Variable(tf.zeros([2, 2]), name="loc", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    check = tf.assert_variables_initialized()
    only_b = tf.assert_variables_initialized([b])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value loc"):
            sess.run(check)
        sess.run(tf.local_variables_initializer())
        np.testing.assert_array_equal(sess.run(check), [0, 1, 2])
        assert sess.run(only_b) == 1
    assert tf.assert_variables_initialized([]) is None


def _make_w():
    return tf.get_variable("w", [1])


def test_duplicate_variable_error_says_where_the_first_was_defined():
    # TF 2.21's message ends with " Originally defined at:" and the user's frames (innermost first, at most
    # five, no source lines) of the first variable's creation (the Variables guide's duplicate conv_relu).
    first_line = _make_w.__code__.co_firstlineno + 1
    _make_w()
    with pytest.raises(ValueError) as info:
        _make_w()
    message = str(info.value)
    head, _, frames = message.partition(" Originally defined at:\n\n")
    assert head == ("Variable w already exists, disallowed. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in VarScope?")
    lines = frames.splitlines()
    assert lines[0] == f'  File "{__file__}", line {first_line}, in _make_w'
    assert "in test_duplicate_variable_error_says_where_the_first_was_defined" in lines[1]
    assert 1 < len(lines) <= 5 and all(line.startswith("  File ") for line in lines)
    assert "ferroflow" + "/ops" not in frames


def test_get_variable_regularizer_ops_are_named_as_in_tensorflow():
    # TF 2.21 calls a get_variable regularizer once outside any scope (to test for None) before building the
    # collected loss under "<name>/Regularizer/": the first "mul" of the graph is that throwaway call's.
    v = tf.get_variable("e", initializer=tf.constant([[1.0, 2.0]]), regularizer=lambda t: 0.5 * tf.nn.l2_loss(t))
    names = [o.name for o in tf.get_default_graph().get_operations() if "mul" in o.name]
    assert names == ["mul/x", "mul", "e/Regularizer/mul/x", "e/Regularizer/mul"]
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.op.name == "e/Regularizer/mul" and (v * 2.0).op.name == "mul_1"
    tf.get_variable("f", [1], regularizer=lambda t: None)
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(loss) == 1.25


def test_reference_variables_report_a_ref_dtype_as_tf1_does():
    # TF 2.21 compat.v1 with v2 behaviour disabled: a RefVariable's dtype is 'float32_ref', its reads are float32,
    # and a ref dtype passed where an element type is wanted means its base type.
    v = tf.Variable([1.0, 2.0], name="v")
    g = tf.get_variable("g", [2])
    i = tf.Variable(3, name="i")
    assert repr(v.dtype) == "tf.float32_ref" and str(v.dtype) == "<dtype: 'float32_ref'>"
    assert v.dtype.base_dtype == tf.float32 and v.dtype != tf.float32 and v.dtype.is_floating
    assert g.dtype.name == "float32_ref" and i.dtype.name == "int32_ref"
    assert tf.train.get_or_create_global_step().dtype.name == "int64_ref"
    assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32_ref>"
    assert v.value().dtype == tf.float32 and v.read_value().dtype == tf.float32 and (v + 1).dtype == tf.float32
    assert tf.as_dtype("float32_ref") == v.dtype and tf.float32.is_compatible_with(v.dtype)
    built = [tf.zeros([2], dtype=v.dtype), tf.cast(i, v.dtype), tf.placeholder(v.dtype, [2]),
             tf.constant(1.0, dtype=v.dtype), tf.zeros_like(v, dtype=v.dtype),
             tf.get_variable("q", [2], dtype=v.dtype).value(), tf.random_normal([2], dtype=v.dtype)]
    assert [t.dtype.name for t in built] == ["float32"] * len(built)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(tf.cast(i, v.dtype)) == 3.0
