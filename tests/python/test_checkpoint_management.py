"""The ``checkpoint`` state file, checkpoint existence/removal, checkpoints_iterator and CheckpointManager."""

import os
import shutil

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.training import checkpoint_management as cm


def _touch_checkpoint(prefix, meta=True):
    for suffix in [".index", ".data-00000-of-00001"] + ([".meta"] if meta else []):
        with open(prefix + suffix, "wb") as f:
            f.write(b"x")


# -- the state file ---------------------------------------------------------------


def test_state_file_text_is_tensorflows(tmp_path):
    d = str(tmp_path)
    cm.update_checkpoint_state(d, os.path.join(d, "ckpt-3"), [os.path.join(d, "ckpt-2")],
                               all_model_checkpoint_timestamps=[1795301709.083236, 1795301709.093584],
                               last_preserved_timestamp=1795301707.0)
    # Absolute save_dir: absolute paths stay absolute.
    assert (tmp_path / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{d}/ckpt-3"\n'
        f'all_model_checkpoint_paths: "{d}/ckpt-2"\n'
        f'all_model_checkpoint_paths: "{d}/ckpt-3"\n'
        "all_model_checkpoint_timestamps: 1795301709.083236\n"
        "all_model_checkpoint_timestamps: 1795301709.093584\n"
        "last_preserved_timestamp: 1795301707.0\n"
    )
    assert [p for p in os.listdir(d) if p != "checkpoint"] == []  # no temporary file left behind


def test_relative_save_dir_writes_paths_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("run")
    cm.update_checkpoint_state("run", "run/model-3", ["run/model-2", "run/model-3"])
    assert (tmp_path / "run" / "checkpoint").read_text() == (
        'model_checkpoint_path: "model-3"\nall_model_checkpoint_paths: "model-2"\n'
        'all_model_checkpoint_paths: "model-3"\n'
    )
    state = cm.get_checkpoint_state("run")
    assert state.model_checkpoint_path == "run/model-3"
    assert list(state.all_model_checkpoint_paths) == ["run/model-2", "run/model-3"]


def test_generate_state_proto_appends_the_model_path_and_checks_timestamps():
    s = cm.generate_checkpoint_state_proto("/d", "/d/b", ["/d/a"])
    assert list(s.all_model_checkpoint_paths) == ["/d/a", "/d/b"]
    s = cm.generate_checkpoint_state_proto("/d", "/d/b")
    assert list(s.all_model_checkpoint_paths) == ["/d/b"]
    with pytest.raises(ValueError, match="timestamps"):
        cm.generate_checkpoint_state_proto("/d", "/d/b", ["/d/a", "/d/b"], all_model_checkpoint_timestamps=[1.0])


def test_state_path_may_not_be_the_state_file(tmp_path):
    with pytest.raises(RuntimeError, match="conflicts"):
        cm.update_checkpoint_state(str(tmp_path), str(tmp_path / "checkpoint"))


def test_reads_tensorflows_state_file(fixtures, tmp_path):
    src = fixtures / "checkpoints" / "max_to_keep" / "ckpt"
    dst = tmp_path / "moved"
    shutil.copytree(src, dst)
    state = cm.get_checkpoint_state(str(dst))
    names = sorted({p.split(".index")[0] for p in os.listdir(dst) if p.endswith(".index")})
    assert list(state.all_model_checkpoint_paths) == [str(dst / n) for n in names]
    assert tf.train.latest_checkpoint(str(dst)) == str(dst / names[-1])
    assert tf.train.get_checkpoint_state is cm.get_checkpoint_state


def test_missing_garbage_empty_and_dangling_states(tmp_path, caplog):
    d = str(tmp_path)
    assert cm.get_checkpoint_state(d) is None
    assert cm.latest_checkpoint(d) is None
    (tmp_path / "checkpoint").write_text("this is { not a state")
    assert cm.get_checkpoint_state(d) is None
    (tmp_path / "checkpoint").write_text('all_model_checkpoint_paths: "x"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state"):
        cm.get_checkpoint_state(d)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone"\n')
    assert cm.latest_checkpoint(d) is None  # the state names a checkpoint whose files are missing
    _touch_checkpoint(str(tmp_path / "gone"))
    assert cm.latest_checkpoint(d) == str(tmp_path / "gone")
    (tmp_path / "other").write_text('model_checkpoint_path: "gone"\n')
    assert cm.latest_checkpoint(d, latest_filename="other") == str(tmp_path / "gone")


def test_exists_mtimes_and_remove(tmp_path):
    p = str(tmp_path / "model-7")
    assert not cm.checkpoint_exists(p)
    _touch_checkpoint(p)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model-7"\n')
    assert cm.checkpoint_exists(p)
    os.utime(p + ".index", (1234567.0, 1234567.0))
    assert cm.get_checkpoint_mtimes([p, str(tmp_path / "none")]) == [1234567.0]
    assert cm.meta_graph_filename("a/model.ckpt-100-?????-of-00005") == "a/model.ckpt-100.meta"
    cm.remove_checkpoint(p)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"]  # the state file is not touched
    cm.remove_checkpoint(p)  # already gone: no error


def test_checkpoints_iterator_yields_new_checkpoints_then_times_out(tmp_path):
    d = str(tmp_path)
    _touch_checkpoint(str(tmp_path / "m-1"))
    cm.update_checkpoint_state(d, str(tmp_path / "m-1"))
    it = cm.checkpoints_iterator(d, timeout=0.3)
    assert next(it) == str(tmp_path / "m-1")
    _touch_checkpoint(str(tmp_path / "m-2"))
    cm.update_checkpoint_state(d, str(tmp_path / "m-2"))
    assert next(it) == str(tmp_path / "m-2")
    with pytest.raises(StopIteration):
        next(it)
    calls = []

    def timeout_fn():
        calls.append(1)
        return len(calls) >= 2

    assert list(cm.checkpoints_iterator(d, timeout=0.1, timeout_fn=timeout_fn)) == [str(tmp_path / "m-2")]
    assert len(calls) == 2


# -- CheckpointManager ---------------------------------------------------------------


class _Recorder:
    """A checkpointable with TensorFlow's write/save_counter interface; writes files without a graph."""

    def __init__(self):
        self.save_counter = 0
        self.written = []

    def _increment_save_counter(self, session=None):
        self.save_counter += 1
        return self.save_counter

    def write(self, file_prefix, session=None):
        _touch_checkpoint(file_prefix, meta=False)
        self.written.append(file_prefix)
        return file_prefix

    def restore(self, path):
        self.restored = path


class _Clock:
    def __init__(self, t):
        self.t = t

    def time(self):
        return self.t

    def sleep(self, s):
        self.t += s


def test_manager_numbers_keeps_and_deletes(tmp_path):
    ckpt = _Recorder()
    d = str(tmp_path / "mgr")  # created on the first save
    m = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
    assert m.latest_checkpoint is None and m.checkpoints == []
    paths = [m.save() for _ in range(4)]
    assert paths == [os.path.join(d, f"ckpt-{i}") for i in range(1, 5)]
    assert m.checkpoints == paths[2:]
    assert sorted(os.listdir(d)) == ["checkpoint", "ckpt-3.data-00000-of-00001", "ckpt-3.index",
                                      "ckpt-4.data-00000-of-00001", "ckpt-4.index"]
    text = (tmp_path / "mgr" / "checkpoint").read_text().splitlines()
    assert text[:3] == ['model_checkpoint_path: "ckpt-4"', 'all_model_checkpoint_paths: "ckpt-3"',
                        'all_model_checkpoint_paths: "ckpt-4"']
    assert [t.split(":")[0] for t in text[3:]] == ["all_model_checkpoint_timestamps"] * 2 + ["last_preserved_timestamp"]
    assert m.save(checkpoint_number=10) == os.path.join(d, "ckpt-10")
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "ckpt-10")

    # A new manager over the same directory takes over the recorded checkpoints.
    again = tf.train.CheckpointManager(_Recorder(), d, max_to_keep=2)
    assert again.checkpoints == [os.path.join(d, "ckpt-4"), os.path.join(d, "ckpt-10")]
    assert again.latest_checkpoint == os.path.join(d, "ckpt-10")
    assert again.restore_or_initialize() == os.path.join(d, "ckpt-10")
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.CheckpointManager(ckpt, d, max_to_keep=0)


def test_manager_max_to_keep_none_keeps_everything(tmp_path):
    m = tf.train.CheckpointManager(_Recorder(), str(tmp_path), max_to_keep=None, checkpoint_name="model")
    for _ in range(4):
        m.save()
    assert len(m.checkpoints) == 4
    assert sum(p.endswith(".index") for p in os.listdir(tmp_path)) == 4


def test_manager_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = _Clock(2_000_000.0)
    monkeypatch.setattr(cm, "time", clock)
    m = tf.train.CheckpointManager(_Recorder(), str(tmp_path), max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    for _ in range(6):
        m.save()
        clock.t += 1500.0  # 25 minutes
    # Saves at 0, 25, 50, 75, 100, 125 min. Falling off: 0 (kept? 0 - 60 < 0: no), 25 (no), 50 (no),
    # 75 (75 - 60 >= 0: kept, preserved from 75), 100 (no: 100 - 60 < 75).
    kept = sorted(int(p.split("-")[1].split(".")[0]) for p in os.listdir(tmp_path) if p.endswith(".index"))
    assert kept == [4, 6]
    assert m.checkpoints == [str(tmp_path / "ckpt-6")]
    state = cm.get_checkpoint_state(str(tmp_path))
    assert state.last_preserved_timestamp == 2_000_000.0 + 3 * 1500.0


def test_manager_checkpoint_interval_and_init_fn(tmp_path):
    step = {"v": 0}

    class Step:
        def numpy(self):
            return step["v"]

    with pytest.raises(ValueError, match="step_counter"):
        tf.train.CheckpointManager(_Recorder(), str(tmp_path), 3, checkpoint_interval=2)
    m = tf.train.CheckpointManager(_Recorder(), str(tmp_path), 3, step_counter=Step(), checkpoint_interval=2)
    saved = []
    for s in range(6):
        step["v"] = s
        saved.append(m.save())
    assert [os.path.basename(p) if p else None for p in saved] == ["ckpt-0", None, "ckpt-2", None, "ckpt-4", None]
    called = []
    fresh = tf.train.CheckpointManager(_Recorder(), str(tmp_path / "empty"), 3, init_fn=lambda: called.append(1))
    assert fresh.restore_or_initialize() is None and called == [1]


def test_manager_with_object_based_checkpoint(tmp_path):
    from ferroflow.training.tracking import Checkpoint

    v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
    ckpt = Checkpoint(v=v)
    m = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = []
        for i in range(3):
            sess.run(v.assign(np.full(3, i, np.float32)))
            paths.append(m.save(session=sess))
        assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]
        assert not os.path.exists(paths[0] + ".index")
        np.testing.assert_array_equal(tf.train.load_checkpoint(paths[1]).get_tensor("v/.ATTRIBUTES/VARIABLE_VALUE"),
                                      [1, 1, 1])
        assert tf.train.latest_checkpoint(str(tmp_path)) == paths[2]
        ckpt.restore(paths[1]).run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(v), [1, 1, 1])


def test_manager_argument_order_matches_tensorflow():
    import inspect

    assert list(inspect.signature(tf.train.CheckpointManager.__init__).parameters)[1:] == [
        "checkpoint", "directory", "max_to_keep", "keep_checkpoint_every_n_hours", "checkpoint_name",
        "step_counter", "checkpoint_interval", "init_fn", "last_checkpoint_step",
    ]


def test_manager_save_options_run_write_callbacks(tmp_path):
    seen = []
    options = tf.train.CheckpointOptions(experimental_write_callbacks=[seen.append, lambda: seen.append("no-arg")])
    assert options.experimental_io_device is None and not options.enable_async
    m = tf.train.CheckpointManager(_Recorder(), str(tmp_path), max_to_keep=1)
    path = m.save(options=options)
    assert seen == [path, "no-arg"]
    # Async requests are honoured synchronously: the files exist as soon as save returns.
    m.save(options=tf.train.CheckpointOptions(enable_async=True))
    assert os.path.exists(m.latest_checkpoint + ".index")
    with pytest.raises(TypeError, match="experimental_write_callbacks"):
        tf.train.CheckpointOptions(experimental_write_callbacks=["not callable"])
