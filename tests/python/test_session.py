"""Session.run: fetch structures, feeds, errors, defaults, threads."""

import collections
import threading

import numpy as np
import pytest

import ferroflow as tf


def test_fetch_structures_are_rebuilt():
    a = tf.constant(1.0)
    b = tf.constant([2, 3])
    noop = tf.no_op()
    Pair = collections.namedtuple("Pair", ["x", "y"])
    with tf.Session() as sess:
        out = sess.run({"a": a, "pair": Pair(a, [b, noop]), "t": (b,)})
    assert out["a"] == 1.0 and isinstance(out["a"], np.float32)
    assert isinstance(out["pair"], Pair)
    np.testing.assert_array_equal(out["pair"].y[0], [2, 3])
    assert out["pair"].y[1] is None
    assert isinstance(out["t"], tuple)


def test_fetch_by_name_and_operation_returns_none():
    x = tf.constant([1.0, 2.0], name="x")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run("x:0"), [1.0, 2.0])
        assert sess.run(x.op) is None
        assert sess.run("x") is None
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            sess.run("nope:0")


def test_feeds_by_tensor_and_name_with_tf_conversion():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    i = tf.placeholder(tf.int32, [], name="i")
    y = x * 2.0
    with tf.Session() as sess:
        out = sess.run(y, {x: np.array([[1.5, 2.5]], dtype=np.float64)})
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, [[3.0, 5.0]])
        np.testing.assert_array_equal(sess.run(y, {"x:0": [[1, 2]]}), [[2.0, 4.0]])
        assert sess.run(i + 1, {i: np.uint8(7)}) == 8


def test_feeding_any_tensor_replaces_its_value():
    a = tf.constant(2.0)
    b = a * 3.0
    c = b + 1.0
    with tf.Session() as sess:
        assert sess.run(c, {b: 10.0}) == 11.0
        assert sess.run(c) == 7.0


def test_control_dependency_on_a_fed_placeholder_holds():
    # TensorFlow's feed rewrite hands a fed placeholder's control edges to the
    # feed; any other fed op keeps its control edges and still runs.
    p = tf.placeholder(tf.float32, [])
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)
    with tf.control_dependencies([p]):
        after_p = tf.constant(2.0) * 3.0
    with tf.control_dependencies([bump]):
        after_bump = tf.constant(1.0) + 1.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after_p, {p: 1.0}) == 6.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder"):
            sess.run(after_p)
        assert sess.run(after_bump, {bump: 10.0}) == 2.0
        assert sess.run(v) == 1.0


def test_constants_and_variable_reads_bound_into_the_plan():
    # The executor binds constants and variables into their consumers when a
    # plan is compiled; feeds must still replace them, reads must still see
    # every assignment, and traced runs must agree with plain ones.
    a = tf.constant(2.0)
    twice = a + a
    v = tf.Variable(1.0)
    read = tf.identity(v)
    both = tf.stack([twice, read, tf.stop_gradient(read) * 10.0])
    bump = tf.assign_add(v, 1.0)
    trace = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Variable"):
            sess.run(read)
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(both), [4.0, 1.0, 10.0])
        np.testing.assert_array_equal(sess.run(both, {a: 5.0}), [10.0, 1.0, 10.0])
        # Running the fed constant's op as well must not undo the feed.
        np.testing.assert_array_equal(sess.run([both, a.op], {a: 5.0})[0], [10.0, 1.0, 10.0])
        sess.run(bump)
        np.testing.assert_array_equal(sess.run(both), [4.0, 2.0, 20.0])
        np.testing.assert_array_equal(sess.run(both, options=trace), [4.0, 2.0, 20.0])
        assert sess.run([a, read, twice]) == [2.0, 2.0, 4.0]


def test_constants_lent_to_kernels_stay_unchanged():
    # A kernel sees the plan's constants as lent inputs. Kernels that take an
    # input to reuse its buffer (Assign, AssignAdd, the activation gradients)
    # must get a shared handle, so the constant is the same on the next run.
    c = tf.constant([1.0, -2.0, 3.0])
    v = tf.Variable([0.0, 0.0, 0.0])
    set_v = tf.assign(v, c)
    bump = tf.assign_add(v, c)
    (relu_grad,) = tf.gradients(tf.nn.relu(c), c, grad_ys=c)
    with tf.Session() as sess:
        sess.run(set_v)
        sess.run(bump)
        np.testing.assert_array_equal(sess.run(v), [2.0, -4.0, 6.0])
        np.testing.assert_array_equal(sess.run(c), [1.0, -2.0, 3.0])
        for _ in range(2):
            np.testing.assert_array_equal(sess.run(relu_grad), [1.0, 0.0, 3.0])
        np.testing.assert_array_equal(sess.run(c), [1.0, -2.0, 3.0])


def test_op_fetch_errors_and_closed_session():
    # `Session.run(op)` with nothing else takes a shorter path; its errors
    # must look the same as the general path's.
    v = tf.Variable(1.0, name="late")
    bump = tf.assign_add(v, 1.0).op
    sess = tf.Session()
    with pytest.raises(tf.errors.FailedPreconditionError, match="late") as info:
        sess.run(bump)
    assert info.value.op is bump
    sess.run(v.initializer)
    assert sess.run(bump) is None
    assert sess.run(v) == 2.0
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(bump)


def test_single_fetch_with_feeds_takes_arrays_as_they_are_and_converts_the_rest():
    # One op or one tensor with a feed_dict (a training step) skips building a fetch structure, and arrays
    # already of the placeholder's dtype are handed over as they are; everything else still converts.
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    flag = tf.placeholder(tf.bool, [], name="flag")
    other = tf.placeholder(tf.float32, [], name="other")
    v = tf.Variable(0.0)
    step = tf.assign_add(v, tf.reduce_sum(x) * tf.cast(flag, tf.float32)).op
    needs_other = tf.assign_add(v, other).op
    y = x * 2.0
    batch = np.arange(8, dtype=np.float32).reshape(4, 2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(step, {x: batch, flag: np.bool_(True)}) is None
        assert sess.run(v) == 28.0
        sess.run(step, {x: batch.astype(np.float64), flag: False})
        assert sess.run(v) == 28.0
        sess.run(step, {"x:0": [[1, 2]], flag: np.array(True)})
        assert sess.run(v) == 31.0
        # A strided view of the right dtype is fed as it is.
        wide = np.arange(16, dtype=np.float32).reshape(4, 4)
        np.testing.assert_array_equal(sess.run(y, {x: wide[:, ::2]}), wide[:, ::2] * 2.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="other") as info:
            sess.run(needs_other, {x: batch})
        assert info.value.op is other.op
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(step, {x: np.zeros(3, np.float32), flag: True})
        with pytest.raises(TypeError):
            sess.run(step, {x: batch, flag: tf.constant(True)})


def test_remembered_fetch_lists_keep_their_structure_and_checks():
    # Flat lists/tuples of graph elements reuse their fetch structure from one run to the next; the result
    # type, the items and a later prevent_fetching must still be honoured.
    v = tf.Variable(1.0)
    bump = tf.assign_add(v, 1.0)
    doubled = v * 2.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        for expected in (2.0, 3.0):
            assert sess.run([bump.op]) == [None]
            assert sess.run([doubled, v.op], {}) == [2.0 * expected, None]
        assert sess.run((doubled, v.op)) == (6.0, None)
        assert isinstance(sess.run((doubled, v.op)), tuple)
        assert sess.run([doubled, doubled]) == [6.0, 6.0]
        assert len(sess._fetch_plans) == 4
        # Same items in a new list object: the remembered structure, the same answers.
        assert sess.run(list([doubled, doubled])) == [6.0, 6.0]
        assert len(sess._fetch_plans) == 4
        tf.get_default_graph().prevent_fetching(bump.op)
        with pytest.raises(ValueError, match="marked as not fetchable"):
            sess.run([bump.op])
        assert sess.run([doubled]) == [6.0]


def test_missing_feed_wrong_shape_and_wrong_type():
    x = tf.placeholder(tf.float32, [None, 3], name="inp")
    y = tf.identity(x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder tensor 'inp'"):
            sess.run(y)
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\) for Tensor 'inp:0', which has shape '\(\?, 3\)'"):
            sess.run(y, {x: [1.0, 2.0]})
        with pytest.raises(TypeError):
            sess.run(y, {x: tf.constant([[1.0, 2.0, 3.0]])})
        with pytest.raises((ValueError, TypeError)):
            sess.run(y, {x: [["a", "b", "c"]]})


def test_error_carries_the_failing_operation():
    x = tf.placeholder(tf.float32, name="needs_feed")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(x + 1.0)
    assert info.value.op is x.op
    assert info.value.error_code == tf.errors.INVALID_ARGUMENT


def test_other_graph_closed_session_and_unfeedable():
    g = tf.Graph()
    with g.as_default():
        foreign = tf.constant(1.0)
    local = tf.constant(2.0)
    sess = tf.Session()
    with pytest.raises(ValueError, match="is not an element of this graph"):
        sess.run(foreign)
    with pytest.raises(ValueError, match="is not an element of this graph"):
        sess.run(foreign.op)
    tf.get_default_graph().prevent_feeding(local)
    with pytest.raises(ValueError, match="may not be fed"):
        sess.run(local, {local: 3.0})
    # Fetching an op runs it and gives None, unless it was marked unfetchable
    # (for a tensor: its op), through every fetch path.
    v = tf.Variable(1.0)
    bump = v.assign_add(1.0).op
    sess.run(v.initializer)
    assert sess.run(bump) is None and sess.run(v) == 2.0
    tf.get_default_graph().prevent_fetching(bump)
    for fetch in (bump, bump.outputs[0], [bump]):
        with pytest.raises(ValueError, match="marked as not fetchable"):
            sess.run(fetch)
    assert sess.run(v) == 2.0
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(local)


def test_default_session_eval_run_and_interactive():
    v = tf.Variable(3.0, name="v")
    total = v * 2.0
    with tf.Session() as sess:
        assert tf.get_default_session() is sess
        v.initializer.run()
        assert total.eval() == 6.0
        assert v.eval() == 3.0
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session"):
        total.eval()
    isess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is isess
        tf.global_variables_initializer().run()
        assert total.eval() == 6.0
    finally:
        isess.close()
    assert tf.get_default_session() is None


def test_session_on_explicit_graph():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(5)
    with tf.Session(graph=g) as sess:
        assert sess.graph is g
        assert sess.run(c) == 5
        assert tf.get_default_graph() is g


def test_make_callable_compiles_once_and_runs():
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(x * x)
    with tf.Session() as sess:
        f = sess.make_callable([y, x], feed_list=[x])
        out = f(np.array([3.0, 4.0]))
        assert out[0] == 25.0
        np.testing.assert_array_equal(out[1], [3.0, 4.0])
        with pytest.raises(TypeError):
            f()


def test_concurrent_runs_from_threads():
    v = tf.Variable(0, dtype=tf.int64)
    inc = tf.assign_add(v, tf.constant(1, tf.int64))
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(200):
                sess.run(inc.op)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 800


def test_fetched_arrays_do_not_alias_variables():
    v = tf.Variable(np.zeros(4, np.float32))
    inc = v.assign_add(np.ones(4, np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(inc)
        np.testing.assert_array_equal(before, np.zeros(4))
        before[:] = 100.0
        np.testing.assert_array_equal(sess.run(v), np.ones(4))


def test_strings_and_bool_round_trip():
    s = tf.placeholder(tf.string, [None])
    b = tf.placeholder(tf.bool, [2])
    with tf.Session() as sess:
        out = sess.run([s, tf.logical_not(b)], {s: ["a", b"bc"], b: [True, False]})
    assert list(out[0]) == [b"a", b"bc"]
    np.testing.assert_array_equal(out[1], [False, True])


def test_list_devices():
    with tf.Session() as sess:
        devices = sess.list_devices()
    assert any("CPU" in d.name for d in devices)


def test_feed_dict_tuple_keys_are_flattened():
    # char-rnn's sampler feeds {model.initial_state: state}: a tuple of LSTMStateTuples as one key with the
    # state fetched by the previous run as its value (TensorFlow's nest.flatten_dict_items).
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3) for _ in range(2)])
    init = cell.zero_state(1, tf.float32)
    total = tf.add_n([tf.reduce_sum(t) for t in tf.nest.flatten(init)])
    state = tuple(tf.nn.rnn_cell.LSTMStateTuple(np.full((1, 3), i + 1.0), np.full((1, 3), 10.0)) for i in range(2))
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    with tf.Session() as sess:
        assert sess.run(total, {init: state}) == pytest.approx(3 * (1 + 10 + 2 + 10))
        assert sess.run(a + b, {(a, b): (1.0, 2.0)}) == 3.0
        assert sess.run(a + b, {(a, (b,)): [5.0, [6.0]]}) == 11.0
        with pytest.raises(ValueError, match="Key had 2 elements, but value had 1 elements"):
            sess.run(a + b, {(a, b): 1.0})
        with pytest.raises(ValueError, match="is not unique"):
            sess.run(a + b, {(a, b): (1.0, 2.0), a: 3.0})
