"""tf.train.init_from_checkpoint: every assignment_map form of TensorFlow's docs,
partitioned variables, and the errors."""

import json

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops._op_util import make_op


@pytest.fixture
def ckpt(tmp_path):
    """A checkpoint shaped like the docs' example, written with SaveV2; returns (prefix, values)."""
    rng = np.random.default_rng(7)
    values = {
        "old_scope_1/var1": rng.standard_normal((20, 2)).astype(np.float32),
        "old_scope_1/var2": rng.standard_normal((50, 4)).astype(np.float32),
        "old_scope_2/var3": rng.standard_normal((10, 6)).astype(np.float32),
        "old_scope_1/nested/var4": rng.integers(0, 100, (3,)).astype(np.int64),
        "top": rng.standard_normal((2, 2)).astype(np.float64),
    }
    prefix = str(tmp_path / "model.ckpt")
    names = sorted(values)
    with tf.Graph().as_default():
        save = make_op(
            "SaveV2",
            [tf.constant(prefix), tf.constant(names), tf.constant([""] * len(names))]
            + [tf.constant(values[n]) for n in names],
        )
        with tf.Session() as sess:
            sess.run(save)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt"\n')
    return prefix, values


def _run_init(variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(variables)


def _model():
    with tf.variable_scope("new_scope_1"):
        var1 = tf.get_variable("var1", shape=[20, 2], initializer=tf.zeros_initializer())
    with tf.variable_scope("new_scope_2"):
        var2 = tf.get_variable("var2", shape=[50, 4], initializer=tf.zeros_initializer())
        var3 = tf.get_variable("var3", shape=[10, 6], initializer=tf.zeros_initializer(),
                               partitioner=lambda shape, dtype: [3, 1])
    return var1, var2, var3


def test_scope_to_scope(ckpt):
    prefix, values = ckpt
    with tf.variable_scope("new"):
        a = tf.get_variable("var1", [20, 2], initializer=tf.zeros_initializer())
        b = tf.get_variable("var2", [50, 4], initializer=tf.zeros_initializer())
        c = tf.get_variable("nested/var4", [3], dtype=tf.int64, initializer=tf.zeros_initializer())
    other = tf.get_variable("other", [2], initializer=tf.ones_initializer())
    tf.train.init_from_checkpoint(prefix, {"old_scope_1/": "new/"})
    got = _run_init([a, b, c, other])
    np.testing.assert_array_equal(got[0], values["old_scope_1/var1"])
    np.testing.assert_array_equal(got[1], values["old_scope_1/var2"])
    np.testing.assert_array_equal(got[2], values["old_scope_1/nested/var4"])
    np.testing.assert_array_equal(got[3], [1.0, 1.0])  # outside the scope: untouched


def test_scope_without_trailing_slash_as_in_the_docs(ckpt):
    prefix, values = ckpt
    var1, _, _ = _model()
    tf.train.init_from_checkpoint(prefix, {"old_scope_1/": "new_scope_1"})
    np.testing.assert_array_equal(_run_init(var1), values["old_scope_1/var1"])


def test_root_to_scope_and_scope_to_root(ckpt, tmp_path):
    prefix, values = ckpt
    with tf.variable_scope("new"):
        top = tf.get_variable("top", [2, 2], dtype=tf.float64, initializer=tf.zeros_initializer())
    tf.train.init_from_checkpoint(prefix, {"/": "new/"})
    np.testing.assert_array_equal(_run_init(top), values["top"])

    tf.reset_default_graph()
    var1 = tf.get_variable("var1", [20, 2], initializer=tf.zeros_initializer())
    var2 = tf.get_variable("var2", [50, 4], initializer=tf.zeros_initializer())
    tf.train.init_from_checkpoint(str(tmp_path), {"old_scope_1/": "/"})  # a directory works too
    got = _run_init([var1, var2])
    np.testing.assert_array_equal(got[0], values["old_scope_1/var1"])
    np.testing.assert_array_equal(got[1], values["old_scope_1/var2"])


def test_name_to_name_and_name_to_variable(ckpt):
    prefix, values = ckpt
    var1, var2, _ = _model()
    plain = tf.Variable(tf.zeros([2, 2], tf.float64), name="plain")  # not from get_variable
    tf.train.init_from_checkpoint(prefix, {"old_scope_1/var1": "new_scope_1/var1", "old_scope_1/var2": var2,
                                           "top": plain})
    got = _run_init([var1, var2, plain])
    np.testing.assert_array_equal(got[0], values["old_scope_1/var1"])
    np.testing.assert_array_equal(got[1], values["old_scope_1/var2"])
    np.testing.assert_array_equal(got[2], values["top"])


@pytest.mark.parametrize("form", ["name", "list", "partitioned_variable", "scope"])
def test_partitioned_targets(ckpt, form):
    prefix, values = ckpt
    _, _, var3 = _model()
    target = {
        "name": {"old_scope_2/var3": "new_scope_2/var3"},
        "list": {"old_scope_2/var3": var3._get_variable_list()},
        "partitioned_variable": {"old_scope_2/var3": var3},
        "scope": {"old_scope_2/": "new_scope_2/"},
    }[form]
    if form == "scope":  # the scope also holds var2, which old_scope_2 lacks
        with pytest.raises(ValueError, match=r"Tensor old_scope_2/var2 \(var2 in old_scope_2/\) is not found"):
            tf.train.init_from_checkpoint(prefix, target)
        return
    tf.train.init_from_checkpoint(prefix, target)
    parts = _run_init(list(var3))
    full = values["old_scope_2/var3"]
    np.testing.assert_array_equal(np.concatenate(parts, axis=0), full)
    assert [p.shape for p in parts] == [(4, 6), (3, 6), (3, 6)]


def test_partitioned_golden_checkpoint(fixtures):
    """TF's own partitioned checkpoint loads into a variable partitioned differently."""
    m = json.loads((fixtures / "checkpoints" / "partitioned" / "list_variables.json").read_text())
    values = np.load(fixtures / "checkpoints" / "partitioned" / "values.npz")
    full_name = m["partitions"][0]["full_name"]
    shape = next(v["shape"] for v in m["variables"] if v["name"] == full_name)
    n = len(m["partitions"]) + 1
    pv = tf.get_variable("mine", shape, partitioner=tf.fixed_size_partitioner(n))
    whole = tf.get_variable("whole", shape)
    tf.train.init_from_checkpoint(str(fixtures / "checkpoints" / "partitioned" / "ckpt"), {full_name: pv})
    tf.train.init_from_checkpoint(str(fixtures / "checkpoints" / "partitioned" / "ckpt"), {full_name: whole})
    got_parts, got_whole = _run_init([list(pv), whole])
    np.testing.assert_array_equal(np.concatenate(got_parts), values[full_name])
    np.testing.assert_array_equal(got_whole, values[full_name])


def test_initializer_is_replaced_not_run_now(ckpt):
    prefix, values = ckpt
    v = tf.get_variable("v", [20, 2], initializer=tf.ones_initializer())
    tf.train.init_from_checkpoint(prefix, {"old_scope_1/var1": v})
    assert v.initializer.type == "Assign"
    assert v.initial_value.op.type == "RestoreV2"
    assert v.initial_value.get_shape().as_list() == [20, 2]
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v), values["old_scope_1/var1"])
        sess.run(v.assign(tf.zeros([20, 2])))
        sess.run(tf.variables_initializer([v]))  # re-running the initializer reloads
        np.testing.assert_array_equal(sess.run(v), values["old_scope_1/var1"])


def test_errors(ckpt):
    prefix, _ = ckpt
    var1, var2, var3 = _model()
    wrong = tf.get_variable("wrong", [3, 3])
    with pytest.raises(ValueError, match=r"Tensor old_scope_1/nope is not found in .* checkpoint"):
        tf.train.init_from_checkpoint(prefix, {"old_scope_1/nope": var1})
    with pytest.raises(ValueError, match=r"Shape of variable wrong:0 \(\(3, 3\)\) doesn't match with shape of "
                                         r"tensor old_scope_1/var1 \(\[20, 2\]\)"):
        tf.train.init_from_checkpoint(prefix, {"old_scope_1/var1": wrong})
    with pytest.raises(ValueError, match=r"new_scope_2/var3 .*\(10, 6\).*old_scope_1/var2 \(\[50, 4\]\)"):
        tf.train.init_from_checkpoint(prefix, {"old_scope_1/var2": var3})
    with pytest.raises(ValueError, match="should map to scope only"):
        tf.train.init_from_checkpoint(prefix, {"old_scope_1": "new_scope_1/"})
    with pytest.raises(ValueError, match=r"Tensor old_scope_1/missing \(missing in old_scope_1/\) is not found"):
        tf.get_variable("fresh/missing", [1])
        tf.train.init_from_checkpoint(prefix, {"old_scope_1/": "fresh/"})
    with pytest.raises(ValueError, match="matches no variable"):
        tf.train.init_from_checkpoint(prefix, {"old_scope_1/": "empty_scope/"})
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.init_from_checkpoint(str(_empty_dir(prefix)), {"old_scope_1/var1": var1})
    with pytest.raises(tf.errors.NotFoundError, match="absent"):
        tf.train.init_from_checkpoint(prefix + "absent", {"old_scope_1/var1": var1})


def _empty_dir(prefix):
    import pathlib

    d = pathlib.Path(prefix).parent / "empty"
    d.mkdir(exist_ok=True)
    return d


def test_dtype_mismatch_fails_when_run(ckpt):
    prefix, _ = ckpt
    v = tf.get_variable("v", [3], dtype=tf.int32, initializer=tf.zeros_initializer())
    tf.train.init_from_checkpoint(prefix, {"old_scope_1/nested/var4": v})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="old_scope_1/nested/var4"):
            sess.run(tf.global_variables_initializer())
