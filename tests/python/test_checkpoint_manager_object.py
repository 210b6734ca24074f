"""tf.train.CheckpointManager over a real tf.train.Checkpoint in graph mode: numbering, retention, resuming."""

import os

import numpy as np

import ferroflow as tf


class Model:
    """A plain Python object holding variables."""


def _build():
    model = Model()
    model.w = tf.Variable([1.0, -2.0, 0.5], name="w")
    opt = tf.train.AdamOptimizer(0.05)
    return model, opt, tf.train.Checkpoint(model=model, optimizer=opt)


def _values(sess, model, opt):
    return {"w": sess.run(model.w), "m": sess.run(opt.get_slot(model.w, "m")),
            "v": sess.run(opt.get_slot(model.w, "v")),
            "beta1_power": sess.run(opt._get_non_slot_variable("beta1_power"))}


def test_manager_numbers_keeps_and_resumes_a_checkpoint(tmp_path):
    d = str(tmp_path / "run")
    model, opt, ckpt = _build()
    train = opt.minimize(tf.reduce_sum(tf.square(model.w - 3.0)))
    manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
    saved = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
            saved.append((manager.save(session=sess), _values(sess, model, opt)))
    paths = [p for p, _ in saved]
    assert paths == [os.path.join(d, f"ckpt-{i}") for i in (1, 2, 3)]
    assert manager.checkpoints == paths[1:]
    assert sorted(f for f in os.listdir(d) if f.endswith(".index")) == ["ckpt-2.index", "ckpt-3.index"]
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == paths[2]
    assert list(state.all_model_checkpoint_paths) == paths[1:]
    # Each kept file holds the values of its own save.
    for path, values in saved[1:]:
        reader = tf.train.load_checkpoint(path)
        np.testing.assert_array_equal(reader.get_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE"), values["w"])
        np.testing.assert_array_equal(
            reader.get_tensor("model/w/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"), values["m"])
        assert reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE") == int(path.rsplit("-", 1)[1])

    # A new program: a manager over the same directory finds the kept checkpoints; restore the latest before
    # minimize() creates the slots, as TF's docs show, then keep training and saving.
    tf.reset_default_graph()
    model, opt, ckpt = _build()
    manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
    assert manager.checkpoints == paths[1:] and manager.latest_checkpoint == paths[2]
    status = ckpt.restore(manager.latest_checkpoint)
    train = opt.minimize(tf.reduce_sum(tf.square(model.w - 3.0)))
    status.assert_consumed()
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        got = _values(sess, model, opt)
        for k, v in saved[2][1].items():
            np.testing.assert_array_equal(got[k], v, err_msg=k)
        assert sess.run(ckpt.save_counter) == 3
        sess.run(train)
        fourth = manager.save(session=sess)
    assert fourth == os.path.join(d, "ckpt-4")  # numbering continues from the restored save_counter
    assert manager.checkpoints == [paths[2], fourth]
    assert not os.path.exists(paths[1] + ".index")
    assert tf.train.latest_checkpoint(d) == fourth


def test_manager_on_an_empty_directory_initializes(tmp_path):
    model, opt, ckpt = _build()
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "empty"), max_to_keep=3)
    assert manager.latest_checkpoint is None
    status = ckpt.restore(manager.latest_checkpoint)  # None: initialize instead
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        np.testing.assert_array_equal(sess.run(model.w), [1.0, -2.0, 0.5])
        assert manager.save(session=sess) == str(tmp_path / "empty" / "ckpt-1")
