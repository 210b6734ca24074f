"""Nothing is lost when a saving process dies: SIGKILL at random points during repeated saves always
leaves a state file that parses and names a complete checkpoint from one save; damaged files give
DataLossError naming the file."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ferroflow as tf

# The child saves 3 variables of 1 MiB each, all set to the step number, plus the step, forever.
_CHILD = r"""
import sys
import numpy as np
import ferroflow as tf

ckpt_dir = sys.argv[1]
n = 1 << 18
values = [tf.placeholder(tf.float32, [n]) for _ in range(3)]
vs = [tf.Variable(np.zeros(n, np.float32), name=f"v{i}") for i in range(3)]
step = tf.Variable(np.int64(0), name="step")
step_in = tf.placeholder(tf.int64, [])
assign = tf.group(*[v.assign(x) for v, x in zip(vs, values)], step.assign(step_in))
saver = tf.train.Saver(max_to_keep=2)
latest = tf.train.latest_checkpoint(ckpt_dir)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    s = 0
    if latest:
        saver.restore(sess, latest)
        s = int(sess.run(step))
    print("ready", flush=True)
    while True:
        s += 1
        sess.run(assign, {**{x: np.full(n, s, np.float32) for x in values}, step_in: s})
        saver.save(sess, ckpt_dir + "/model", global_step=s)
"""


def _check_consistent(ckpt_dir):
    """The state file parses and its newest checkpoint holds one save's values; returns that step."""
    state = tf.train.get_checkpoint_state(ckpt_dir)
    if not os.path.exists(os.path.join(ckpt_dir, "checkpoint")):
        return 0
    assert state is not None, "the state file exists but does not parse"
    latest = tf.train.latest_checkpoint(ckpt_dir)
    assert latest is not None, f"the state names {state.model_checkpoint_path}, whose files are missing"
    reader = tf.train.load_checkpoint(latest)
    step = int(reader.get_tensor("step"))
    assert latest.endswith(f"-{step}")
    for i in range(3):
        v = reader.get_tensor(f"v{i}")
        assert v.shape == (1 << 18,)
        assert np.all(v == step), f"v{i} in {latest} is not all {step}"
    return step


def _kill_during_saves(tmp_path, kills):
    """Starts a saving child `kills` times, SIGKILLs it at a random moment and
    checks the directory after each kill."""
    rng = np.random.default_rng(20240521)
    ckpt_dir = str(tmp_path)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    last = 0
    deadline = time.monotonic() + 6 * kills
    for _ in range(kills):
        child = subprocess.Popen([sys.executable, "-c", _CHILD, ckpt_dir], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
        try:
            line = child.stdout.readline()
            assert line == b"ready\n", child.stderr.read().decode()
            time.sleep(float(rng.uniform(0.0, 0.25)))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        step = _check_consistent(ckpt_dir)
        assert step >= last, "a later kill lost progress that a state file had already recorded"
        last = step
        assert time.monotonic() < deadline
    assert last > 0
    # What is left restores through the Saver too.
    latest = tf.train.latest_checkpoint(ckpt_dir)
    vs = [tf.Variable(np.zeros(1 << 18, np.float32), name=f"v{i}") for i in range(3)]
    step = tf.Variable(np.int64(0), name="step")
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, latest)
        assert sess.run(step) == last
        assert all(np.all(sess.run(v) == last) for v in vs)


def test_sigkill_during_saves_never_loses_the_last_checkpoint(tmp_path):
    # Each kill costs a fresh process (about a second): 8 in the default run.
    _kill_during_saves(tmp_path, kills=8)


@pytest.mark.slow
def test_sigkill_during_saves_soak(tmp_path):
    _kill_during_saves(tmp_path, kills=60)


@pytest.fixture
def saved(tmp_path):
    v = tf.Variable(np.arange(1000, dtype=np.float32), name="v")
    w = tf.Variable(np.arange(10, dtype=np.int64), name="w")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    return saver, path, (v, w)


def _restore(saver, path):
    with tf.Session() as sess:
        saver.restore(sess, path)


@pytest.mark.parametrize("damage", ["truncate_index", "flip_index", "bad_magic", "truncate_data", "flip_data"])
def test_damaged_files_raise_data_loss_naming_the_file(saved, damage):
    saver, path, _ = saved
    index, data = path + ".index", path + ".data-00000-of-00001"
    target = index if "index" in damage or damage == "bad_magic" else data
    raw = bytearray(open(target, "rb").read())
    if damage.startswith("truncate"):
        raw = raw[: len(raw) // 2]
    elif damage == "bad_magic":
        raw[-8:] = b"\0" * 8
    else:
        raw[len(raw) // 3] ^= 0xFF
    open(target, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError) as e:
        _restore(saver, path)
    assert target in str(e.value)


def test_missing_data_shard_is_an_error_naming_the_file(saved):
    saver, path, _ = saved
    os.remove(path + ".data-00000-of-00001")
    with pytest.raises((tf.errors.NotFoundError, tf.errors.DataLossError)) as e:
        _restore(saver, path)
    assert path + ".data-00000-of-00001" in str(e.value)
