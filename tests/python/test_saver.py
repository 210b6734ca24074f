"""tf.train.Saver: the save/restore graph, round trips, TensorFlow's checkpoints, retention, errors."""

import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.training import saver as saver_mod


def _manifest(fixtures, case):
    return json.loads((fixtures / "checkpoints" / case / "list_variables.json").read_text())


def _prefix(fixtures, case):
    return str(fixtures / "checkpoints" / case / _manifest(fixtures, case)["checkpoint_prefix"])


def _values(fixtures, case):
    return np.load(fixtures / "checkpoints" / case / "values.npz")


def _ops(prefix="save/"):
    return {op.name: op for op in tf.get_default_graph().get_operations() if op.name.startswith(prefix)}


# -- the graph ----------------------------------------------------------------


def test_graph_has_tensorflows_save_and_restore_ops():
    w = tf.Variable(np.zeros([2, 3], np.float32), name="w")
    b = tf.Variable(np.int64(1), name="b")
    s = tf.train.Saver()
    d = s.as_saver_def()
    assert d.filename_tensor_name == "save/Const:0"
    assert d.save_tensor_name == "save/control_dependency:0"
    assert d.restore_op_name == "save/restore_all"
    assert d.version == tf.train.SaverDef.V2
    assert d.max_to_keep == 5 and d.keep_checkpoint_every_n_hours == 10000.0 and not d.sharded
    o = _ops()
    assert o["save/filename/input"].type == "Const"
    assert o["save/filename"].type == "PlaceholderWithDefault"
    assert o["save/Const"].type == "PlaceholderWithDefault"
    assert o["save/Const"].inputs[0].op is o["save/filename"]
    save = o["save/SaveV2"]
    assert save.type == "SaveV2"
    assert [t.op.name for t in save.inputs] == [
        "save/Const", "save/SaveV2/tensor_names", "save/SaveV2/shape_and_slices", "b", "w",
    ]
    assert o["save/control_dependency"].control_inputs == [save]
    assert o["save/RestoreV2"].type == "RestoreV2"
    assert {o["save/Assign"].inputs[0].op.name, o["save/Assign_1"].inputs[0].op.name} == {"b", "w"}
    assert set(o["save/restore_all"].control_inputs) == {o["save/Assign"], o["save/Assign_1"]}
    # A Saver is not put in the SAVERS collection by itself (as in TensorFlow).
    assert tf.get_collection(tf.GraphKeys.SAVERS) == []
    # A second Saver gets its own scope.
    s2 = tf.train.Saver([w])
    assert s2.as_saver_def().restore_op_name == "save_1/restore_all"
    del b


def test_sharded_graph_uses_sharded_filename_and_merge():
    tf.Variable(np.zeros([2], np.float32), name="a")
    s = tf.train.Saver(sharded=True)
    d = s.as_saver_def()
    assert d.sharded
    assert d.save_tensor_name == "save/Identity:0"
    o = _ops()
    for name, typ in [("save/StaticRegexFullMatch", "StaticRegexFullMatch"), ("save/StringJoin", "StringJoin"),
                      ("save/num_shards", "Const"), ("save/ShardedFilename", "ShardedFilename"),
                      ("save/SaveV2", "SaveV2"), ("save/MergeV2Checkpoints", "MergeV2Checkpoints"),
                      ("save/restore_shard", "NoOp"), ("save/restore_all", "NoOp")]:
        assert o[name].type == typ, name
    assert o["save/SaveV2"].inputs[0].op is o["save/ShardedFilename"]


def test_sharded_save_writes_merged_checkpoint_and_no_temp_dir(tmp_path):
    a = tf.Variable(np.arange(4, dtype=np.float32), name="a")
    s = tf.train.Saver(sharded=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = s.save(sess, str(tmp_path / "model"), global_step=7)
        assert path == str(tmp_path / "model-7")
        assert sorted(os.listdir(tmp_path)) == [
            "checkpoint", "model-7.data-00000-of-00001", "model-7.index", "model-7.meta",
        ]
        sess.run(a.assign(np.zeros(4, np.float32)))
        s.restore(sess, path)
        np.testing.assert_array_equal(sess.run(a), np.arange(4, dtype=np.float32))


def test_empty_saver_with_allow_empty_returns_none(tmp_path):
    # What MonitoredSession's Scaffold builds by default.
    s = tf.train.Saver(sharded=True, allow_empty=True)
    with tf.Session() as sess:
        assert s.save(sess, str(tmp_path / "model")) is None
        assert s.restore(sess, str(tmp_path / "model")) is None
    assert not (tmp_path / "checkpoint").exists()
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()


def test_defer_build():
    with pytest.raises(ValueError, match="cannot be deferred"):
        tf.train.Saver([tf.Variable(1.0)], defer_build=True)
    s = tf.train.Saver(defer_build=True)
    with tf.Session() as sess, pytest.raises(RuntimeError, match="build"):
        s.save(sess, "/tmp/never")
    assert not _ops()
    s.build()
    assert s.as_saver_def().restore_op_name == "save/restore_all"


# -- round trips ----------------------------------------------------------------


def _mlp(sizes, seed=0):
    rng = np.random.default_rng(seed)
    x = tf.placeholder(tf.float32, [None, sizes[0]], name="x")
    y = tf.placeholder(tf.float32, [None, sizes[-1]], name="y")
    h = x
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        with tf.variable_scope("dense" if i == 0 else f"dense_{i}"):
            k = tf.get_variable("kernel", [n_in, n_out],
                                initializer=tf.constant_initializer(rng.normal(size=[n_in, n_out]).astype(np.float32)))
            b = tf.get_variable("bias", [n_out], initializer=tf.zeros_initializer())
        h = tf.matmul(h, k) + b
        if i < len(sizes) - 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.square(h - y))
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
    return x, y, train


def _batches(sizes, n, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=[5, sizes[0]]).astype(np.float32), rng.normal(size=[5, sizes[-1]]).astype(np.float32))
            for _ in range(n)]


def test_trained_model_with_adam_slots_round_trips(tmp_path):
    sizes = [4, 3, 2]
    batches = _batches(sizes, 5)
    x, y, train = _mlp(sizes)
    saver = tf.train.Saver()
    keys = sorted(v.op.name for v in tf.global_variables())
    assert "dense/kernel/Adam" in keys and "dense/kernel/Adam_1" in keys and "beta1_power" in keys
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for bx, by in batches[:3]:
            sess.run(train, {x: bx, y: by})
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=tf.train.get_global_step())
        assert path == str(tmp_path / "model.ckpt-3")
        for bx, by in batches[3:]:
            sess.run(train, {x: bx, y: by})
        expected = {v.op.name: sess.run(v) for v in tf.global_variables()}
    reader = tf.train.load_checkpoint(path)
    assert sorted(reader.get_variable_to_shape_map()) == keys

    with tf.Graph().as_default():
        x, y, train = _mlp(sizes, seed=99)  # other initial values: everything must come from the checkpoint
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            assert sess.run(tf.train.get_global_step()) == 3
            for bx, by in batches[3:]:
                sess.run(train, {x: bx, y: by})
            for v in tf.global_variables():
                np.testing.assert_array_equal(sess.run(v), expected[v.op.name], err_msg=v.op.name)


def test_restores_tensorflows_adam_model_exactly(fixtures):
    m = _manifest(fixtures, "adam_model")
    kernels = sorted((v for v in m["variables"] if v["name"].endswith("/kernel")), key=lambda v: v["name"])
    sizes = [kernels[0]["shape"][0]] + [k["shape"][1] for k in kernels]
    _mlp(sizes)
    saver = tf.train.Saver()
    assert sorted(v.op.name for v in tf.global_variables()) == sorted(v["name"] for v in m["variables"])
    values = _values(fixtures, "adam_model")
    with tf.Session() as sess:
        saver.restore(sess, _prefix(fixtures, "adam_model"))
        by_name = {v.op.name: v for v in tf.global_variables()}
        for var in m["variables"]:
            got = sess.run(by_name[var["name"]])
            want = values[var["npz_key"]]
            assert got.dtype == want.dtype, var["name"]
            np.testing.assert_array_equal(got, want, err_msg=var["name"])


def _vars_from_manifest(fixtures, case):
    m = _manifest(fixtures, case)
    values = _values(fixtures, case)
    return {v["name"]: tf.Variable(values[v["npz_key"]], name=f"v{i}") for i, v in enumerate(m["variables"])}


@pytest.mark.parametrize("case", ["adam_model"])
def test_saved_files_are_byte_identical_to_tensorflows(fixtures, tmp_path, case):
    var_list = _vars_from_manifest(fixtures, case)
    saver = tf.train.Saver(var_list)
    theirs = _prefix(fixtures, case)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ours = saver.save(sess, str(tmp_path / os.path.basename(theirs)), write_meta_graph=False)
    for suffix in [".index", ".data-00000-of-00001"]:
        assert open(ours + suffix, "rb").read() == open(theirs + suffix, "rb").read(), suffix


def _partitioned_parts(fixtures):
    from ferroflow.ops.variables import Variable

    m = _manifest(fixtures, "partitioned")
    parts_meta = json.loads(m["partitions"]) if isinstance(m["partitions"], str) else m["partitions"]
    parts = []
    for p in parts_meta:
        v = tf.Variable(np.zeros(p["var_shape"], np.float32), name=p["variable"])
        full = next(x["shape"] for x in m["variables"] if x["name"] == p["full_name"])
        v._set_save_slice_info(Variable.SaveSliceInfo(p["full_name"], full, p["var_offset"], p["var_shape"]))
        assert v._get_save_slice_info().spec == p["save_slice_info_spec"]
        parts.append(v)
    return m, parts


def test_partitioned_variable_parts_restore_and_save_as_slices(fixtures, tmp_path):
    m, parts = _partitioned_parts(fixtures)
    others = {v["name"]: tf.Variable(np.zeros(v["shape"], np.float32), name=v["name"])
              for v in m["variables"] if v["name"] != parts[0]._get_save_slice_info().full_name}
    saver = tf.train.Saver(parts + list(others.values()))
    spec_op = _ops()["save/SaveV2/shape_and_slices"]
    values = _values(fixtures, "partitioned")
    full_name = parts[0]._get_save_slice_info().full_name
    full_var = next(v for v in m["variables"] if v["name"] == full_name)
    with tf.Session() as sess:
        specs = sess.run(spec_op.outputs[0])
        assert sorted(s.decode() for s in specs if s) == sorted(p._get_save_slice_info().spec for p in parts)
        saver.restore(sess, _prefix(fixtures, "partitioned"))
        whole = values[full_var["npz_key"]]
        for p in parts:
            info = p._get_save_slice_info()
            sl = tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape))
            np.testing.assert_array_equal(sess.run(p), whole[sl])
        for name, v in others.items():
            npz = next(x["npz_key"] for x in m["variables"] if x["name"] == name)
            np.testing.assert_array_equal(sess.run(v), values[npz])
        ours = saver.save(sess, str(tmp_path / "model.ckpt"), write_meta_graph=False)
    theirs = _prefix(fixtures, "partitioned")
    for suffix in [".index", ".data-00000-of-00001"]:
        assert open(ours + suffix, "rb").read() == open(theirs + suffix, "rb").read(), suffix


def test_partitioned_variable_object_in_var_list(tmp_path):
    parts = [tf.Variable(np.full([2, 3], i, np.float32), name=f"pv/part_{i}") for i in range(2)]
    from ferroflow.ops.variables import Variable

    for i, p in enumerate(parts):
        p._set_save_slice_info(Variable.SaveSliceInfo("pv", [4, 3], [2 * i, 0], [2, 3]))

    class Partitioned:  # the interface Saver relies on
        name = "pv"

        def _get_variable_list(self):
            return list(parts)

    saver = tf.train.Saver([Partitioned()])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    got = tf.train.load_checkpoint(path).get_tensor("pv")
    np.testing.assert_array_equal(got, np.repeat([0.0, 1.0], 6).reshape(4, 3).astype(np.float32))


def test_sharded_checkpoint_from_tensorflow_restores(fixtures):
    m = _manifest(fixtures, "sharded")
    values = _values(fixtures, "sharded")
    var_list = {v["name"]: tf.Variable(np.zeros(v["shape"], tf.as_dtype(v["dtype"]).as_numpy_dtype), name=f"v{i}")
                for i, v in enumerate(m["variables"])}
    saver = tf.train.Saver(var_list, sharded=True)
    with tf.Session() as sess:
        saver.restore(sess, _prefix(fixtures, "sharded"))
        for v in m["variables"]:
            np.testing.assert_array_equal(sess.run(var_list[v["name"]]), values[v["npz_key"]])


# -- var_list forms, reshape ------------------------------------------------------


def test_var_list_dict_renames(tmp_path):
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    saver = tf.train.Saver({"some/other/name": v})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("some/other/name", [3])]
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros(3, np.float32), name="w")
        saver = tf.train.Saver({"some/other/name": w})
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), [0, 1, 2])


def test_duplicate_names_rejected():
    a = tf.Variable(1.0, name="a")
    with pytest.raises(ValueError, match="same name"):
        tf.train.Saver([a, a])


def test_reshape_restores_into_another_shape_with_same_size(tmp_path):
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros([3, 2], np.float32), name="v")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                tf.train.Saver().restore(sess, path)
        msg = str(e.value)
        assert "v" in msg and "[3, 2]" in msg and "[2, 3]" in msg
        saver = tf.train.Saver(reshape=True)
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v), np.arange(6, dtype=np.float32).reshape(3, 2))


def test_restore_errors_name_the_variable_and_key(tmp_path):
    v = tf.Variable(np.zeros([2], np.float32), name="present")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        tf.Variable(np.zeros([2], np.float32), name="present")
        tf.Variable(np.zeros([2], np.float32), name="absent_var")
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="absent_var"):
            tf.train.Saver().restore(sess, path)
    with tf.Graph().as_default():
        tf.Variable(np.zeros([2], np.int32), name="present")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="present"):
            tf.train.Saver().restore(sess, path)
    with tf.Graph().as_default():
        tf.Variable(np.zeros([5], np.float32), name="present")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as e:
            tf.train.Saver().restore(sess, path)
        assert "present" in str(e.value) and "[5]" in str(e.value) and "[2]" in str(e.value)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nothing_here"))
        with pytest.raises(ValueError, match="None"):
            saver.restore(sess, None)
    del v


def test_save_into_missing_directory_fails(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "no" / "such" / "m"))
        with pytest.raises(ValueError, match="latest_filename"):
            saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")


# -- bookkeeping -----------------------------------------------------------------


def test_max_to_keep_matches_tensorflow(fixtures, tmp_path):
    m = _manifest(fixtures, "max_to_keep")
    kept = m["kept_checkpoints"]
    ckpt_dir = tmp_path / "ckpt"
    ckpt_dir.mkdir()
    w = tf.Variable(np.zeros(3, np.float32), name="w")
    gs = tf.Variable(np.int64(0), name="global_step")
    bump = w.assign_add(np.ones(3, np.float32))
    steps = [int(b.rsplit("-", 1)[1]) for b in m["save_returned_basenames"]]
    saver = tf.train.Saver(max_to_keep=len(kept), save_relative_paths=True)
    prefix = m["save_returned_basenames"][0].rsplit("-", 1)[0]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            returned = []
            for s in steps:
                sess.run(bump)
                gs.load(s, sess)
                returned.append(saver.save(sess, f"ckpt/{prefix}", global_step=s))
    finally:
        os.chdir(cwd)
    assert [os.path.basename(p) for p in returned] == m["save_returned_basenames"]
    assert [os.path.basename(p) for p in saver.last_checkpoints] == m["saver_last_checkpoints_basenames"]
    assert (ckpt_dir / "checkpoint").read_text() == m["checkpoint_state_file_text"]
    assert sorted(os.listdir(ckpt_dir)) == sorted(m["tf_files"])
    assert os.path.basename(tf.train.latest_checkpoint(str(ckpt_dir))) == m["latest_checkpoint_basename"]
    for name, vals in m["values_in_kept_checkpoints"].items():
        r = tf.train.load_checkpoint(str(ckpt_dir / name))
        np.testing.assert_array_equal(r.get_tensor("w"), vals["w"])
        assert r.get_tensor("global_step") == vals["global_step"]


class _Clock:
    def __init__(self, t):
        self.t = t

    def time(self):
        return self.t

    def sleep(self, s):
        self.t += s


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = _Clock(1_000_000.0)
    monkeypatch.setattr(saver_mod, "time", clock)
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=1.0)
    base = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(8):
            saver.save(sess, base, global_step=step, write_meta_graph=False)
            clock.t += 1200.0  # 20 minutes per save
    # saves at t0 + 0, 20, 40, ..., 140 minutes: the first checkpoint older than the next
    # preservation time (t0 + 60 min) that falls off the list is kept: the one at 80 min (step 4).
    exists = [tf.train.checkpoint_exists(f"{base}-{s}") for s in range(8)]
    assert exists == [False, False, False, False, True, False, True, True]
    assert saver.last_checkpoints == [f"{base}-6", f"{base}-7"]


def test_last_checkpoints_setters_and_recover(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i, write_meta_graph=False) for i in range(2)]
    fresh = tf.train.Saver(max_to_keep=2)
    assert fresh.last_checkpoints == []
    fresh.recover_last_checkpoints(paths + [str(tmp_path / "missing")])
    assert fresh.last_checkpoints == paths
    fresh.set_last_checkpoints(["a", "b"])
    assert fresh.last_checkpoints == ["a", "b"]
    fresh.set_last_checkpoints_with_time([("c", 1.0)])
    assert fresh.last_checkpoints == ["c"]
    with pytest.raises(TypeError):
        fresh.set_last_checkpoints("a")


def test_pad_step_number_and_relative_paths(tmp_path):
    v = tf.Variable(np.arange(2, dtype=np.float32), name="v")
    saver = tf.train.Saver(pad_step_number=True, save_relative_paths=True)
    d = tmp_path / "run"
    d.mkdir()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(d / "model"), global_step=3)
    assert path == str(d / "model-00000003")
    assert (d / "checkpoint").read_text() == (
        'model_checkpoint_path: "model-00000003"\nall_model_checkpoint_paths: "model-00000003"\n'
    )
    moved = tmp_path / "moved"
    os.rename(d, moved)
    latest = tf.train.latest_checkpoint(str(moved))
    assert latest == str(moved / "model-00000003")
    with tf.Session() as sess:
        saver.restore(sess, latest)
        np.testing.assert_array_equal(sess.run(v), [0, 1])


def test_absolute_paths_by_default(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "model"), write_state=True)
    assert f'model_checkpoint_path: "{tmp_path}/model"' in (tmp_path / "checkpoint").read_text()


def test_to_proto_from_proto_reuses_ops(tmp_path):
    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    saver = tf.train.Saver()
    proto = saver.to_proto()
    assert proto.restore_op_name == "save/restore_all"
    n_ops = len(tf.get_default_graph().get_operations())
    again = tf.train.Saver.from_proto(proto)
    assert len(tf.get_default_graph().get_operations()) == n_ops
    assert saver.to_proto(export_scope="elsewhere") is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = again.save(sess, str(tmp_path / "m"))
        sess.run(v.assign([9.0, 9.0, 9.0]))
        again.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [0, 1, 2])
    with pytest.raises(ValueError, match="saver_def"):
        tf.train.Saver(saver_def=tf.train.SaverDef())


def test_saver_argument_order_matches_tensorflow():
    import inspect

    params = list(inspect.signature(tf.train.Saver.__init__).parameters)[1:]
    assert params == [
        "var_list", "reshape", "sharded", "max_to_keep", "keep_checkpoint_every_n_hours", "name",
        "restore_sequentially", "saver_def", "builder", "defer_build", "allow_empty", "write_version",
        "pad_step_number", "save_relative_paths", "filename",
    ]
    assert tf.compat.v1.train.Saver is tf.train.Saver
