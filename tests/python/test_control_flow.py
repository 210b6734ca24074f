"""tf.cond, tf.case, tf.while_loop, TensorArray, map_fn/scan/fold and dynamic_rnn: behaviour,
errors and finite-difference gradients. Values against TensorFlow are in test_control_flow_golden.py;
the error messages here are TensorFlow 2.21's (tf.compat.v1), as observed."""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.framework import errors


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


# -- cond -----------------------------------------------------------------------------------

def test_cond_runs_only_the_taken_branch_side_effects():
    p = tf.placeholder(tf.bool, [])
    v = tf.Variable(0.0)
    w = tf.Variable(0.0)

    def bump(var, by):
        def fn():
            with tf.control_dependencies([tf.assign_add(var, by)]):
                return tf.constant(1.0)
        return fn

    out = tf.cond(p, bump(v, 1.0), bump(w, 10.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for taken in [True, True, False, True]:
            sess.run(out, {p: taken})
        assert sess.run([v, w]) == [3.0, 10.0]


def test_cond_errors_match_tensorflow():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="'pred' must not be a Python bool."):
        tf.cond(True, lambda: x, lambda: x)
    with pytest.raises(TypeError, match="Input 'pred' of 'If' Op has type float32 that does not match expected type of bool."):
        tf.cond(tf.constant(1.0), lambda: x, lambda: x)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.cond(tf.constant([True, False]), lambda: x, lambda: x)
    with pytest.raises(ValueError, match="Outputs of 'true_fn' and 'false_fn' must have the same type"):
        tf.cond(tf.constant(True), lambda: x, lambda: tf.constant(1))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.cond(tf.constant(True), lambda: (x, x), lambda: x)
    with pytest.raises(ValueError, match="'true_fn' must have a return value."):
        tf.cond(tf.constant(True), lambda: None, lambda: x)
    with pytest.raises(TypeError, match="cond\\(\\): 'true_fn' and 'fn1' may not be set simultaneously."):
        tf.cond(tf.constant(True), lambda: x, lambda: x, fn1=lambda: x)
    with pytest.raises(TypeError, match="'true_fn' must be callable."):
        tf.cond(tf.constant(True), x, lambda: x)


def test_cond_gradient_flows_only_through_the_taken_branch():
    p = tf.placeholder(tf.bool, [])
    a = tf.Variable(2.0)
    b = tf.Variable(3.0)
    y = tf.cond(p, lambda: a * a, lambda: b * b * b)
    ga, gb = tf.gradients(y, [a, b])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([ga, gb], {p: True}) == [4.0, 0.0]
        assert sess.run([ga, gb], {p: False}) == [0.0, 27.0]


def test_case_without_default_asserts_that_a_predicate_holds():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 10, lambda: tf.constant(1))])
    with tf.Session() as sess:
        assert sess.run(out, {x: -5}) == -1
        assert sess.run(out, {x: 50}) == 1
        with pytest.raises(errors.InvalidArgumentError, match="None of conditions evaluated as True"):
            sess.run(out, {x: 5})


def test_case_exclusive_with_default_rejects_two_true_predicates():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(x < 5, lambda: tf.constant(1)), (x < 10, lambda: tf.constant(2))],
                  default=lambda: tf.constant(0), exclusive=True)
    with tf.Session() as sess:
        assert sess.run(out, {x: 7}) == 2
        assert sess.run(out, {x: 70}) == 0
        with pytest.raises(errors.InvalidArgumentError, match="exclusive=True: more than 1 conditions"):
            sess.run(out, {x: 1})


def test_switch_case_errors():
    with pytest.raises(TypeError, match="'branch_index' must be an integer Tensor, got <dtype: 'float32'>"):
        tf.switch_case(tf.constant(1.0), [lambda: tf.constant(1)])
    with pytest.raises(ValueError, match="contiguous range of \\[0 to 2\\) but found \\{0,2\\}"):
        tf.switch_case(tf.constant(1), {0: lambda: tf.constant(1), 2: lambda: tf.constant(2)})
    with pytest.raises(ValueError, match="Must provide at least one item in 'branch_fns'"):
        tf.switch_case(tf.constant(1), [])


# -- while_loop -------------------------------------------------------------------------------

def test_while_loop_errors_match_tensorflow():
    with pytest.raises(TypeError, match="'cond' must be callable."):
        tf.while_loop(1, lambda i: i, [0])
    with pytest.raises(ValueError, match="'loop_vars' must be provided."):
        tf.while_loop(lambda: True, lambda: (), [])
    ones = tf.ones([2], name="ones")
    with pytest.raises(ValueError, match=r"Input tensor 'ones:0' enters the loop with shape \(2,\), but has shape "
                                         r"\(4,\) after one iteration. To allow the shape to vary"):
        tf.while_loop(lambda x: tf.reduce_sum(x) < 10, lambda x: tf.concat([x, x], 0), [ones])
    with pytest.raises(TypeError, match="enters the loop with dtype int32, but has dtype float32"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [0])


def test_shape_invariant_lets_a_loop_variable_grow():
    x0 = tf.ones([1])
    x = tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x * 2], 0), [x0],
                      shape_invariants=[tf.TensorShape([None])])
    assert x.shape.as_list() == [None]
    np.testing.assert_array_equal(run(x), [1, 2, 2, 4, 2, 4, 4, 8])


def test_variable_assigned_in_a_loop_body_counts_iterations():
    v = tf.Variable(0)
    n = tf.placeholder(tf.int32, [])

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1)]):
            return i + 1

    out = tf.while_loop(lambda i: i < n, body, [0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {n: 7}) == 7
        assert sess.run(v) == 7
        assert sess.run(out, {n: 0}) == 0
        assert sess.run(v) == 7


def test_body_reads_a_variable_afresh_each_iteration():
    v = tf.Variable(1.0)

    def body(i, acc):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1, acc + v.read_value()

    _, acc = tf.while_loop(lambda i, a: i < 3, body, [0, 0.0])
    assert run(acc) == 2.0 + 3.0 + 4.0


def test_variables_created_in_a_body_live_in_the_outer_graph_and_train():
    x = tf.constant(np.ones([2, 3], np.float32))

    def body(i, h):
        w = tf.get_variable("w", [3, 3], initializer=tf.constant_initializer(0.1))
        return i + 1, tf.tanh(tf.matmul(h, w))

    _, h = tf.while_loop(lambda i, h: i < 4, body, [0, x])
    assert [v.name for v in tf.global_variables()] == ["w:0"]
    assert tf.global_variables()[0].graph is tf.get_default_graph()
    loss = tf.reduce_sum(h * h)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss)
        for _ in range(3):
            sess.run(train)
        assert sess.run(loss) < before


def test_maximum_iterations_and_back_prop_false():
    x = tf.Variable(2.0)
    # A tuple of loop_vars for a body returning a tuple: with maximum_iterations TF compares the two containers.
    n, y = tf.while_loop(lambda i, y: True, lambda i, y: (i + 1, y * x), (0, 1.0), maximum_iterations=5)
    assert tf.gradients(tf.while_loop(lambda y: y < 100.0, lambda y: y * x, [x], back_prop=False), x) == [None]
    g = tf.gradients(y, x)[0]
    assert run([n, y, g]) == [5, 32.0, 80.0]


def test_nested_loops_with_gradient():
    x = tf.placeholder(tf.float64, [])

    def outer(i, acc):
        inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a * x), [0, tf.constant(1.0, tf.float64)])[1]
        return i + 1, acc + inner

    _, total = tf.while_loop(lambda i, acc: i < 4, outer, [0, tf.constant(0.0, tf.float64)])
    g = tf.gradients(total, x)[0]
    xv = 1.5
    val, grad = run([total, g], {x: xv})
    assert val == pytest.approx(sum(xv**k for k in range(4)))
    assert grad == pytest.approx(sum(k * xv ** (k - 1) for k in range(1, 4)))


def test_long_loop_runs_in_the_engine():
    i, s = tf.while_loop(lambda i, s: i < 200000, lambda i, s: (i + 1, s + tf.cast(i, tf.float64)),
                         [0, tf.constant(0.0, tf.float64)])
    assert run([i, s]) == [200000, float(sum(range(200000)))]


# -- finite-difference gradients --------------------------------------------------------------

def _gradient_error(build, shape, seed=0):
    x = tf.placeholder(tf.float64, shape)
    y = build(x)
    x0 = np.random.RandomState(seed).uniform(-1, 1, shape)
    init = [tf.global_variables_initializer()]
    with tf.Session() as sess:
        sess.run(init)
        y_shape = list(sess.run(tf.shape(y), {x: x0}))
        return tf.test.compute_gradient_error(x, shape, y, y_shape, x_init_value=x0, init_targets=init)


def test_finite_difference_gradients_of_control_flow():
    w0 = np.random.RandomState(1).uniform(-0.5, 0.5, [3, 3])

    def rnn(x):
        w = tf.constant(w0)
        return tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + x)),
                             [0, x])[1]

    cases = {
        "cond": lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * x, lambda: x * x * x),
        "while": rnn,
        "map_fn": lambda x: tf.map_fn(lambda r: tf.reduce_sum(tf.exp(r) * r), x),
        "scan": lambda x: tf.scan(lambda a, r: tf.tanh(a * r + r), x),
        "foldr": lambda x: tf.foldr(lambda a, r: a * r + tf.sin(r), x),
        # Index 0 twice: TF1 refuses that unless the array keeps elements after reads.
        "tensor_array": lambda x: tf.TensorArray(tf.float64, size=3, clear_after_read=False).unstack(x).gather(
            [2, 0, 0]) * 2.0,
    }
    for name, build in cases.items():
        with tf.Graph().as_default():
            assert _gradient_error(build, [3, 3]) < 1e-5, name


def test_finite_difference_gradient_of_dynamic_rnn_lstm():
    def lstm(x):
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=tf.float64)
        return tf.concat([tf.reshape(out, [2, -1]), state.c], 1)

    assert _gradient_error(lstm, [2, 3, 2]) < 1e-5


# -- TensorArray ---------------------------------------------------------------------------

def test_tensor_array_errors_name_the_index():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(errors.InvalidArgumentError, match="Could not read from TensorArray index 0.  Furthermore, "
                                                          "the element shape is not fully defined"):
        run(ta.read(0))
    # Once the element shape is known, an element never written reads as zeros (as in TensorFlow).
    fresh = tf.TensorArray(tf.float32, size=2)
    np.testing.assert_array_equal(run(fresh.write(1, [1.0, 2.0]).stack()), [[0, 0], [1, 2]])
    w = ta.write(0, 1.0)
    with pytest.raises(errors.InvalidArgumentError, match="index 0 because it has already been written to"):
        run(w.write(0, 2.0).stack())
    with pytest.raises(errors.InvalidArgumentError, match="Tried to read from index 5 but array size is: 2"):
        run(w.read(5))
    with pytest.raises(errors.InvalidArgumentError, match="Tried to write to index 2 but array is not resizeable"):
        run(w.write(2, 3.0).stack())
    with pytest.raises(ValueError, match="Argument `size` must be provided if handle is not provided."):
        tf.TensorArray(tf.float32)


def test_tensor_array_dynamic_size_grows_in_a_loop():
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    _, ta = tf.while_loop(lambda i, ta: i < 6, lambda i, ta: (i + 1, ta.write(i, i * i)), [0, ta])
    out, size = run([ta.stack(), ta.size()])
    np.testing.assert_array_equal(out, [0, 1, 4, 9, 16, 25])
    assert size == 6


def test_tensor_array_concat_and_split():
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False)
    ta = ta.split(np.arange(6, dtype=np.float32), [1, 2, 3])
    np.testing.assert_array_equal(run(ta.read(2)), [3, 4, 5])
    np.testing.assert_array_equal(run(ta.concat()), np.arange(6))


# -- graphs with control flow: export, import, keep training -------------------------------------

def test_meta_graph_with_dynamic_rnn_restores_and_trains_identically(tmp_path):
    xv = np.random.RandomState(0).randn(3, 5, 2).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [3, 5, 2], name="x")
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        out, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=[5, 2, 4], dtype=tf.float32)
        loss = tf.reduce_sum(out * out, name="loss")
        train = tf.train.AdamOptimizer(0.05).minimize(loss, name="train")
        return x, loss, train

    x, loss, train = build()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: xv})
        path = saver.save(sess, str(tmp_path / "model"))
        expected = []
        for _ in range(3):
            expected.append(sess.run(loss, {x: xv}))
            sess.run(train, {x: xv})
    with tf.Graph().as_default() as g:
        restorer = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            restorer.restore(sess, path)
            got = []
            for _ in range(3):
                got.append(sess.run("loss:0", {"x:0": xv}))
                sess.run(g.get_operation_by_name("train"), {"x:0": xv})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_raw_rnn_reproduces_dynamic_rnn():
    T, B, D, H = 5, 3, 2, 4
    xv = np.random.RandomState(3).randn(T, B, D).astype(np.float32)
    lengths = np.array([5, 2, 0], np.int32)
    inputs = tf.constant(xv)
    seq = tf.constant(lengths)
    cell = tf.nn.rnn_cell.BasicLSTMCell(H)
    inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(inputs)

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit = cell_output
        state = cell.zero_state(B, tf.float32) if cell_output is None else cell_state
        finished = time >= seq
        next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([B, D]), lambda: inputs_ta.read(time))
        return finished, next_input, state, emit, None

    emit_ta, final_state, loop_state = tf.nn.raw_rnn(cell, loop_fn)
    assert loop_state is None
    raw_out = emit_ta.stack()
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        dyn_out, dyn_state = tf.nn.dynamic_rnn(cell, inputs, sequence_length=seq, dtype=tf.float32, time_major=True)
    a, b, sa, sb = run([raw_out, dyn_out, final_state.h, dyn_state.h])
    np.testing.assert_allclose(a, b[: a.shape[0]], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sa, sb, rtol=1e-6, atol=1e-7)
    assert a.shape[0] == 5


def test_gradient_through_random_ops_uses_the_forward_draw():
    # The classic TF1 pattern: dropout only when training. The gradient must use the mask the
    # forward pass drew, in a branch and in a loop body alike (the forward op keeps it).
    x = tf.placeholder(tf.float32, [2000])
    training = tf.placeholder(tf.bool, [])
    w = tf.Variable(np.full(2000, 1.5, np.float32))
    y = tf.cond(training, lambda: tf.nn.dropout(x * w, rate=0.5), lambda: x * w)
    gw = tf.gradients(tf.reduce_sum(y), w)[0]
    _, z = tf.while_loop(lambda i, z: i < 2, lambda i, z: (i + 1, tf.nn.dropout(z * w, rate=0.5)), [0, x])
    gz = tf.gradients(tf.reduce_sum(z), w)[0]
    xv = np.ones(2000, np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv, g = sess.run([y, gw], {x: xv, training: True})
        np.testing.assert_allclose(g, yv / 1.5, rtol=1e-6)  # dy/dw = y / w wherever the mask kept x
        assert 0.4 < np.mean(g == 0) < 0.6
        yv, g = sess.run([y, gw], {x: xv, training: False})
        np.testing.assert_allclose(g, xv, rtol=1e-6)
        zv, g = sess.run([z, gz], {x: xv})
        np.testing.assert_allclose(g, 2 * zv / 1.5, rtol=1e-6)  # z = m1 m2 x w^2 * 4


def test_graph_def_function_library_uses_tensorflow_names():
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    w = tf.constant(np.eye(2, dtype=np.float32))
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.matmul(x, w), lambda: x)
    gd = tf.get_default_graph().as_graph_def()
    cond_op = [n for n in gd.node if n.op == "If"][0]
    assert cond_op.attr["then_branch"].func.name == "cond_true"
    assert cond_op.attr["Tcond"].type == tf.bool.as_datatype_enum
    then_fn = [f for f in gd.library.function if f.signature.name == "cond_true"][0]
    assert [a.name for a in then_fn.signature.input_arg] == ["arg_0", "arg_1"]
    matmul = [n for n in then_fn.node_def if n.op == "MatMul"][0]
    assert matmul.attr["T"].type == tf.float32.as_datatype_enum
    assert then_fn.ret["output_0"] == matmul.name + ":product:0"
    # And back: the imported graph computes the same (tf.import_graph_def is issue 23's; its core here).
    from ferroflow.framework.meta_graph import import_graph_def_nodes

    with tf.Graph().as_default():
        import_graph_def_nodes(gd)
        with tf.Session() as sess:
            out = sess.run(y.name, {"x:0": np.ones([2, 2], np.float32)})
    np.testing.assert_array_equal(out, np.ones([2, 2]))


def test_defun_defines_a_function_called_by_ops_with_gradients(tmp_path):
    from ferroflow.framework import function

    w = tf.Variable(2.0, name="w")

    @function.Defun(tf.float32, tf.float32)
    def scaled_sum(x, y):
        return x * y + w  # w is captured: an extra argument of the function

    a = tf.placeholder(tf.float32, [], name="a")
    z = tf.identity(scaled_sum(a, 3.0) + scaled_sum(a, a), name="z")
    ga, gw = tf.gradients(z, [a, w])
    assert z.op.inputs[0].op.inputs[0].op.type == "PartitionedCall"
    assert tf.get_default_graph()._native.function_names().count("scaled_sum") == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([z, ga, gw], {a: 1.5}) == [10.75, 6.0, 2.0]
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run("z:0", {"a:0": 2.0}) == 2.0 * 3.0 + 2.0 + 4.0 + 2.0
    with pytest.raises(NotImplementedError, match="grad_func"):
        function.Defun(tf.float32, grad_func=lambda op, g: g)


def test_while_loop_container_types_are_checked_as_tensorflow_checks_them():
    # TF 2.21: the outermost containers may differ (list in, tuple out: the result is the body's container),
    # nested ones may not (TypeError); with
    # maximum_iterations the loop vars sit one level down, so a list of loop_vars and a tuple from the body
    # is a TypeError too, as is a one-element list returned for a one-element list (ValueError).
    i, x = tf.constant(0), tf.constant(1.0)
    out = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), [i, x])
    assert isinstance(out, tuple) and len(out) == 2
    out = tf.while_loop(lambda i, x: i < 3, lambda i, x: [i + 1, x * 2], (i, x))
    assert isinstance(out, list) and len(out) == 2
    tf.while_loop(lambda i, x: i < 3, lambda i, x: [i + 1, x * 2], [i, x], maximum_iterations=5)
    tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (i, x), maximum_iterations=5)
    with pytest.raises(TypeError, match="same nested structure"):
        tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), [i, x], maximum_iterations=5)
    with pytest.raises(TypeError, match="same nested structure"):
        tf.while_loop(lambda i, x: i < 3, lambda i, x: [i + 1, x * 2], (i, x), maximum_iterations=5)
    with pytest.raises(TypeError, match="same nested structure"):
        tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, [p[0] * 2, p[1]]), (i, (x, x)))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [i], maximum_iterations=5)
    with tf.Session() as sess:
        r = tf.while_loop(lambda i, x: i < 10, lambda i, x: (i + 1, x * 2), (i, x), maximum_iterations=4)
        assert sess.run(r) == (4, 16.0)


def test_gradient_through_a_cond_reading_a_captured_tensor_array():
    # raw_rnn's loop_fn reads the inputs' TensorArray inside a tf.cond: the If's gradient for that captured
    # flow is a list (TF: a float flow), summed with the other reads' gradients.
    v_in = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(v_in * 1.0)
    x0 = tf.Variable([1.0, 1.0])

    def body(t, acc):
        read = tf.cond(t < 2, lambda: ta.read(t), lambda: ta.read(t) * 2.0) + ta.read(t)
        return t + 1, acc + read * x0

    _, total = tf.while_loop(lambda t, acc: t < 3, body, (tf.constant(0), tf.zeros([2])))
    g_x0, g_in = tf.gradients(tf.reduce_sum(total), [x0, v_in])
    got_total, got_x0, got_in = run([total, g_x0, g_in])
    np.testing.assert_allclose(got_total, [16.0, 23.0])
    np.testing.assert_allclose(got_x0, [16.0, 23.0])
    np.testing.assert_allclose(got_in, [[2.0, 2.0], [2.0, 2.0], [3.0, 3.0]])


def test_gradients_inside_a_loop_body_with_respect_to_outer_variables():
    # MAML's inner step in map_fn: tf.gradients in the body of tensors of the enclosing graph (a
    # variable, a constant), then the outer gradient through that inner one (second order).
    w = tf.Variable([0.5, -1.5])
    c = tf.constant(3.0)
    xs = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], np.float32)

    def per_task(x):
        inner = tf.reduce_sum(tf.square(w * x)) + c * c
        g_w, g_c = tf.gradients(inner, [w, c])
        fast = w - 0.1 * g_w
        return tf.reduce_sum(fast * x) + 0.0 * g_c, g_c

    outs, g_cs = tf.map_fn(per_task, tf.constant(xs), dtype=(tf.float32, tf.float32))
    outer = tf.gradients(tf.reduce_sum(outs), w)[0]
    got_outs, got_gc, got_outer = run([outs, g_cs, outer])
    w0 = np.array([0.5, -1.5], np.float32)
    np.testing.assert_allclose(got_outs, ((w0 - 0.2 * xs**2 * w0) * xs).sum(1), rtol=1e-6)
    np.testing.assert_allclose(got_gc, [6.0, 6.0, 6.0])
    np.testing.assert_allclose(got_outer, ((1 - 0.2 * xs**2) * xs).sum(0), rtol=1e-6)


def test_while_loop_results_are_named_exit_as_tf1_names_them():
    # TF 2.21 compat.v1 (v1 control flow): <loop>/Exit, <loop>/Exit_1, ... numbered over the flattened loop
    # variables (a TensorArray's flow included), fetchable by name.
    i, x = tf.constant(0), tf.constant(1.0)
    ta = tf.TensorArray(tf.float32, size=3)
    r = tf.while_loop(lambda i, ta, x: i < 3, lambda i, ta, x: (i + 1, ta.write(i, x), x * 2), [i, ta, x])
    assert [r[0].name, r[2].name] == ["while/Exit:0", "while/Exit_2:0"]
    s = tf.while_loop(lambda k: k < 5, lambda k: k + 2, [i], name="loop")
    assert s.name == "loop/Exit:0"
    m = tf.while_loop(lambda k: k < 5, lambda k: k + 2, [i], maximum_iterations=1, back_prop=False)
    assert m.name == "while_1/Exit_1:0"
    g = tf.get_default_graph()
    got = run([g.get_tensor_by_name("while/Exit_2:0"), g.get_tensor_by_name("loop/Exit:0"), r[1].stack(), m])
    assert got[0] == 8.0 and got[1] == 6 and got[2].tolist() == [1.0, 2.0, 4.0] and got[3] == 2


def test_raw_rnn_emit_structure_is_per_batch_entry():
    # TF1: emit_structure gives each emitted value's shape without the batch dimension; a finished entry
    # emits zeros of [batch] + that shape.
    lengths = tf.constant([1, 3])
    cell = tf.nn.rnn_cell.BasicRNNCell(2)

    def loop_fn(time, cell_output, cell_state, loop_state):
        finished = time >= lengths
        if cell_output is None:
            return finished, tf.ones([2, 2]), cell.zero_state(2, tf.float32), tf.zeros([2]), None
        emit = tf.fill([2, 2], tf.cast(time, tf.float32))
        return finished, tf.ones([2, 2]), cell_state, emit, None

    emit_ta, _, _ = tf.nn.raw_rnn(cell, loop_fn)
    got = run(emit_ta.stack())
    assert got.shape == (3, 2, 2)
    np.testing.assert_array_equal(got[:, 0, 0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(got[:, 1, 1], [1.0, 2.0, 3.0])
