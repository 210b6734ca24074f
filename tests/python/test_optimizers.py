"""Optimizer API behaviour: errors, slots, global step, schedules, sparse updates."""

import numpy as np
import pytest

import ferroflow as tf


def _quadratic():
    w = tf.Variable([1.0, -2.0], name="w")
    b = tf.Variable(0.5, name="b")
    loss = tf.reduce_sum(tf.square(w)) + tf.square(b)
    return w, b, loss


def test_errors_match_tensorflow():
    w, b, loss = _quadratic()
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.GradientDescentOptimizer(0.1, name="")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="No gradients provided for any variable:"):
        opt.apply_gradients([(None, w), (None, b)])
    unrelated = tf.Variable(3.0, name="unrelated")
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your graph"):
        opt.minimize(loss, var_list=[unrelated])
    with pytest.raises(TypeError, match="not a tf.Variable"):
        opt.minimize(loss, var_list=[w.value()])
    with pytest.raises(ValueError, match="Invalid type tf.int32"):
        opt.minimize(tf.constant(1), var_list=[w])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        opt.minimize(loss, gate_gradients=7)
    with pytest.raises(ValueError, match="shape"):
        opt.apply_gradients([(tf.constant([1.0, 2.0, 3.0]), w)])
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power -?0?.?[0-9]+ needs to be negative or zero"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="No variables to optimize"):
        with tf.Graph().as_default():
            tf.train.AdamOptimizer().minimize(tf.constant(1.0))


def test_minimize_increments_global_step_and_records_train_op():
    w, b, loss = _quadratic()
    gs = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(loss, global_step=gs)
    # Like TF1, the train op is the increment's Operation: running it fetches None.
    assert isinstance(train, tf.Operation) and train.name == "Adam"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    assert opt.get_name() == "Adam"
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(w, "m").op.name == "w/Adam" and opt.get_slot(b, "v").op.name == "b/Adam_1"
    assert opt.get_slot(w, "nope") is None
    names = [v.op.name for v in opt.variables()]
    assert names == sorted(["beta1_power", "beta2_power", "w/Adam", "w/Adam_1", "b/Adam", "b/Adam_1"])
    assert all(not v.trainable for v in opt.variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for step in range(1, 4):
            assert sess.run(train) is None
            assert sess.run(gs) == step
        assert sess.run(gs) == 3
        assert sess.run(loss) < first


def test_var_list_defaults_to_trainable_and_none_gradients_are_skipped():
    w, b, loss = _quadratic()
    frozen = tf.Variable(5.0, trainable=False)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    gv = opt.compute_gradients(loss + frozen)
    assert [v for _, v in gv] == [w, b]
    extra = tf.Variable(1.0, name="extra")
    gv = opt.compute_gradients(loss, var_list=[w, extra])
    assert gv[1][0] is None
    train = opt.apply_gradients(gv)
    assert opt.get_slot(extra, "momentum") is None and opt.get_slot(w, "momentum") is not None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run(extra) == 1.0


def test_schedule_tensor_as_learning_rate_and_callables():
    x = tf.Variable(10.0)
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.5, gs, decay_steps=1, decay_rate=0.5, staircase=True)
    train = tf.train.GradientDescentOptimizer(lr).minimize(tf.square(x) / 2.0, global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = 10.0
        for k in range(4):
            sess.run(train)
            expected -= 0.5 * 0.5**k * expected
            assert abs(sess.run(x) - expected) < 1e-5
    y = tf.Variable(1.0)
    step = tf.train.AdamOptimizer(lambda: 0.1).minimize(tf.square(y))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        assert sess.run(y) < 1.0


def test_sparse_updates_touch_only_named_rows():
    table = tf.Variable(np.ones((5, 3), np.float32))
    ids = tf.constant([0, 3, 3])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
    for make in (lambda: tf.train.AdagradOptimizer(0.1), lambda: tf.train.MomentumOptimizer(0.1, 0.5),
                 lambda: tf.train.GradientDescentOptimizer(0.1), lambda: tf.train.FtrlOptimizer(0.1)):
        with tf.Graph().as_default():
            table = tf.Variable(np.ones((5, 3), np.float32))
            loss = tf.reduce_sum(tf.nn.embedding_lookup(table, tf.constant([0, 3, 3])))
            train = make().minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train)
                after = sess.run(table)
        np.testing.assert_array_equal(after[[1, 2, 4]], 1.0)
        assert np.all(after[[0, 3]] < 1.0)
    with tf.Graph().as_default():
        table = tf.Variable(np.ones((5, 3), np.float32))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, tf.constant([9])))
        train = tf.train.AdagradOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(train)


def test_uninitialized_slots_fail_with_the_variables_name():
    w, b, loss = _quadratic()
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run([w.initializer, b.initializer])
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value"):
            sess.run(train)


def test_float64_and_mixed_dtype_variables():
    w32 = tf.Variable([1.0, 2.0], dtype=tf.float32)
    w64 = tf.Variable([1.0, 2.0], dtype=tf.float64)
    loss = tf.reduce_sum(tf.square(w32)) + tf.cast(tf.reduce_sum(tf.square(w64)), tf.float32)
    train = tf.train.RMSPropOptimizer(0.01, centered=True, momentum=0.3).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        a, b = sess.run([w32, w64])
    assert b.dtype == np.float64
    np.testing.assert_allclose(a, b, rtol=1e-6)
    assert np.all(a < [1.0, 2.0])


def test_custom_optimizer_subclass_uses_apply_dense():
    class HalfStep(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "HalfStep")

        def _apply_dense(self, grad, var):
            return tf.assign_sub(var, grad * 0.5).op

    w = tf.Variable([4.0])
    train = HalfStep().minimize(tf.reduce_sum(w * 2.0))
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(train)
        assert sess.run(w)[0] == 3.0


def test_constraint_is_reapplied_after_dense_updates():
    w = tf.Variable([2.0, -3.0], constraint=lambda v: tf.clip_by_value(v, -1.0, 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w))
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [1.0, -1.0])


class _CountingOptimizer(tf.train.GradientDescentOptimizer):
    """Gradient descent with a non-slot step counter, to see where non-slot variables are created."""

    def __init__(self, own_scope):
        tf.train.Optimizer.__init__(self, False, "Counting", use_own_namescope_for_non_slot_vars=own_scope)
        self._learning_rate = 0.1
        self._learning_rate_tensor = None

    def _create_slots(self, var_list):
        self._create_non_slot_variable(0.0, "steps", min(var_list, key=lambda v: v.name))


@pytest.mark.parametrize("own_scope,expected", [(False, "outer/ns/steps"), (True, "outer/Counting/steps")])
def test_use_own_namescope_for_non_slot_vars(own_scope, expected):
    # Names as TF 2.21 gives them for the same program.
    w = tf.Variable(1.0, name="w")
    with tf.variable_scope("outer"), tf.name_scope("ns"):
        opt = _CountingOptimizer(own_scope)
        train = opt.minimize(w * w)
    assert sorted(v.op.name for v in tf.global_variables()) == [expected, "w"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run(w) == pytest.approx(0.8)


@pytest.mark.parametrize("own_scope,expected", [
    (False, ["outer/ns/beta1_power", "outer/ns/beta1_power_1", "outer/ns/beta2_power", "outer/ns/beta2_power_1"]),
    (True, ["outer/Adam/beta1_power", "outer/Adam/beta2_power", "outer/Adam_1/beta1_power", "outer/Adam_1/beta2_power"]),
])
def test_adam_beta_powers_in_own_namescope(own_scope, expected):
    # Two Adam optimizers built in the same scopes; names as TF 2.21 gives them.
    w = tf.Variable(1.0, name="w")
    with tf.variable_scope("outer"), tf.name_scope("ns"):
        for _ in range(2):
            tf.train.AdamOptimizer(use_own_namescope_for_non_slot_vars=own_scope).minimize(w * w)
    names = sorted(v.op.name for v in tf.global_variables())
    assert [n for n in names if "power" in n] == expected
    assert [n for n in names if "power" not in n] == ["outer/w/Adam", "outer/w/Adam_1", "outer/w/Adam_2",
                                                     "outer/w/Adam_3", "w"]


def _many_variables(rng):
    # Fifty variables small enough for one task each and two that are split
    # into chunks, with enough elements in all for the update to run on
    # every thread.
    sizes = [1000] * 50 + [20000, 9000]
    values = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    grads = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    vs = [tf.Variable(v) for v in values]
    gs = [tf.Variable(g, trainable=False) for g in grads]
    return values, grads, vs, gs


def test_many_small_and_large_variables_update_like_numpy():
    rng = np.random.default_rng(7)
    values, grads, vs, gs = _many_variables(rng)
    lr, mu = np.float32(0.1), np.float32(0.9)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train = opt.apply_gradients([(g.value(), v) for g, v in zip(gs, vs)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        accums = [np.zeros_like(v) for v in values]
        for _ in range(3):
            sess.run(train)
            for i, g in enumerate(grads):
                accums[i] = accums[i] * mu + g
                values[i] = values[i] - lr * accums[i]
        got = sess.run([v.value() for v in vs])
        slots = sess.run([opt.get_slot(v, "momentum") for v in vs])
    for want, have in zip(values, got):
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-7)
    for want, have in zip(accums, slots):
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-7)


def test_many_variables_report_the_uninitialized_slot_by_name():
    rng = np.random.default_rng(8)
    _, _, vs, gs = _many_variables(rng)
    opt = tf.train.AdagradOptimizer(0.1)
    train = opt.apply_gradients([(g.value(), v) for g, v in zip(gs, vs)])
    missing = opt.get_slot(vs[30], "accumulator")
    with tf.Session() as sess:
        sess.run([v.initializer for v in tf.global_variables() if v is not missing])
        with pytest.raises(tf.errors.FailedPreconditionError, match=f"uninitialized value {missing.op.name}"):
            sess.run(train)
