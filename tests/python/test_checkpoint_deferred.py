"""tf.train.Checkpoint restore-on-create in graph mode: objects created after ``restore()`` still get their values.

TensorFlow's documented graph-building flow calls ``checkpoint.restore(...)``
before ``optimizer.minimize(...)`` creates the slot and beta-power variables,
then ``status.assert_consumed()`` and ``status.initialize_or_restore(session)``:
the restore ops grow as dependencies are added. (Checked against TF 2.21:
assert_consumed fails before minimize, naming beta1_power, and passes after;
assert_existing_objects_matched passes before minimize.)
"""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.training.tracking import AutoTrackable


class Model:
    """A plain Python object holding variables."""


LR, B1, B2, EPS = 0.1, 0.9, 0.999, 1e-8


def _train_and_save(tmp_path, steps=3):
    """Adam on loss = sum(w * w) for ``steps`` steps; returns the checkpoint path and every variable's value."""
    model = Model()
    model.w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdamOptimizer(LR)
    train = opt.minimize(tf.reduce_sum(model.w * model.w))
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        path = ckpt.save(str(tmp_path / "ck"), sess)
        values = {
            "w": sess.run(model.w),
            "m": sess.run(opt.get_slot(model.w, "m")),
            "v": sess.run(opt.get_slot(model.w, "v")),
            "beta1_power": sess.run(opt._get_non_slot_variable("beta1_power")),
            "beta2_power": sess.run(opt._get_non_slot_variable("beta2_power")),
        }
    tf.reset_default_graph()
    return path, values


def _adam_step(s):
    """One TF1 Adam step of loss = sum(w * w) from state ``s`` (numpy, float32)."""
    g = 2.0 * s["w"]
    m = B1 * s["m"] + (1 - B1) * g
    v = B2 * s["v"] + (1 - B2) * g * g
    lr_t = LR * np.sqrt(1 - s["beta2_power"]) / (1 - s["beta1_power"])
    return {"w": s["w"] - lr_t * m / (np.sqrt(v) + EPS), "m": m, "v": v,
            "beta1_power": s["beta1_power"] * B1, "beta2_power": s["beta2_power"] * B2}


def _state(sess, w, opt):
    return {"w": sess.run(w), "m": sess.run(opt.get_slot(w, "m")), "v": sess.run(opt.get_slot(w, "v")),
            "beta1_power": sess.run(opt._get_non_slot_variable("beta1_power")),
            "beta2_power": sess.run(opt._get_non_slot_variable("beta2_power"))}


def _assert_state(got, want, exact=True):
    for k in want:
        if exact:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)
        else:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, err_msg=k)  # float32 rounding of the update order


def test_optimizer_slots_created_after_restore(tmp_path):
    """The seeds' graph-building example: restore, then minimize, then initialize_or_restore."""
    path, saved = _train_and_save(tmp_path)
    model = Model()
    model.w = tf.Variable([0.0, 0.0], name="w")
    opt = tf.train.AdamOptimizer(LR)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(path)
    # The optimizer's variables do not exist yet: the checkpoint is not consumed, existing objects are matched.
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint .*beta1_power"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    train = opt.minimize(tf.reduce_sum(model.w * model.w))
    status.assert_consumed()
    tf.get_default_graph().finalize()  # the restore ops were made when the slots were created
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        _assert_state(_state(sess, model.w, opt), saved)
        assert sess.run(ckpt.save_counter) == 1
        sess.run(train)
        _assert_state(_state(sess, model.w, opt), _adam_step(saved), exact=False)


def test_run_restore_ops_after_global_initializer(tmp_path):
    """Variables and slots created after restore() take the checkpoint's values over their initializers."""
    path, saved = _train_and_save(tmp_path)
    model = AutoTrackable()
    opt = tf.train.AdamOptimizer(LR)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(path)
    model.w = tf.Variable([0.0, 0.0], name="w")  # attribute assigned after restore()
    train = opt.minimize(tf.reduce_sum(model.w * model.w))
    status.assert_consumed()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(model.w), [0.0, 0.0])
        status.run_restore_ops(sess)
        _assert_state(_state(sess, model.w, opt), saved)
        sess.run(train)
        _assert_state(_state(sess, model.w, opt), _adam_step(saved), exact=False)


def test_plain_objects_and_checkpoint_attributes_matched_late(tmp_path):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(7, dtype=tf.int64, name="b")
    inner = Model()
    inner.b = b
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Checkpoint(a=a, inner=inner).save(str(tmp_path / "c"), sess)
    tf.reset_default_graph()

    ckpt = tf.train.Checkpoint()
    status = ckpt.restore(path)
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint .*a/\.ATTRIBUTES"):
        status.assert_consumed()
    ckpt.a = tf.Variable([0.0, 0.0], name="a2")  # a Checkpoint attribute, matched by name "a"
    ckpt.inner = Model()  # a plain object: its attributes are looked at again by the status
    ckpt.inner.b = tf.Variable(0, dtype=tf.int64, name="b2")
    extra = tf.Variable([5.0], name="extra")
    ckpt.inner.extra = extra
    with pytest.raises(AssertionError, match="Object not assigned a value from checkpoint .*extra"):
        status.assert_existing_objects_matched()
    del ckpt.inner.extra
    status.assert_consumed()
    with tf.Session() as sess:
        sess.run(extra.initializer)
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(ckpt.a), [1.0, 2.0])
        assert sess.run(ckpt.inner.b) == 7


def test_name_based_checkpoint_restores_slots_created_later(tmp_path):
    """A Saver checkpoint matches by name when the status runs, so slots made after restore() are included."""
    w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdamOptimizer(LR)
    train = opt.minimize(tf.reduce_sum(w * w))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        saved = _state(sess, w, opt)
        path = saver.save(sess, str(tmp_path / "model"))
    tf.reset_default_graph()

    model = Model()
    model.w = tf.Variable([0.0, 0.0], name="w")
    opt = tf.train.AdamOptimizer(LR)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    status = ckpt.restore(path)
    opt.minimize(tf.reduce_sum(model.w * model.w))
    status.assert_existing_objects_matched()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        _assert_state(_state(sess, model.w, opt), saved)


def test_restore_none_initializes_objects_created_later():
    model = Model()
    ckpt = tf.train.Checkpoint(model=model)
    status = ckpt.restore(None)
    model.v = tf.Variable([3.0], name="v")
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(model.v), [3.0])
        assert sess.run(ckpt.save_counter) == 0


def test_late_variable_of_wrong_shape_names_it(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = tf.train.Checkpoint(w=w).save(str(tmp_path / "c"), sess)
    tf.reset_default_graph()
    ckpt = tf.train.Checkpoint()
    status = ckpt.restore(path)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Restoring w3 from w/\.ATTRIBUTES.*\(3,\)"):
        ckpt.w = tf.Variable([0.0, 0.0, 0.0], name="w3")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Restoring w3"):  # still mismatched
        status.assert_consumed()
    ckpt.w = tf.Variable([0.0, 0.0], name="w2")
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(ckpt.w), [1.0, 2.0])
