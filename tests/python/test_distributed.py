"""Distributed training over ferroflow's cluster runtime: tf.train.Server, Session("grpc://..."),
replica_device_setter placements, `ferroflow server` processes, tokens, the ps op allowlist,
health probes, and recovery after a ps is killed.

Servers bind 127.0.0.1 on free ports; child processes are killed by pid; every wait is bounded.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import ferroflow.compat.v1 as tf
from _cluster_util import cluster as _cluster


def _healthy(address, timeout=20.0):
    """Waits until a server answers its health probe."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://{address}/healthz", timeout=1) as r:
                return r.status, r.read().decode()
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"no server came up at {address}")


def _stop(*servers):
    for s in servers:
        s._native.stop()


class _Children:
    """Child processes, killed by pid at the end of the test."""

    def __init__(self):
        self.procs = []

    def server(self, cluster, job, task, *flags, env=None):
        cmd = [sys.executable, "-m", "ferroflow", "server", "--cluster", json.dumps(cluster), "--job", job,
               "--task", str(task), *flags]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, **(env or {})})
        self.procs.append(p)
        _healthy(cluster[job][task])
        return p

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@pytest.fixture
def children():
    c = _Children()
    yield c
    c.kill_all()


def _model(cluster):
    """A small regression model under replica_device_setter, trained with Adam."""
    with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(cluster) if cluster else None)):
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [4, 8], initializer=tf.random_normal_initializer(seed=1))
        v = tf.get_variable("v", [8, 1], initializer=tf.random_normal_initializer(seed=2))
        gs = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w)), v) - y))
        opt = tf.train.AdamOptimizer(0.05)
        train = opt.minimize(loss, global_step=gs)
    return x, y, loss, train, gs, opt


def _data():
    rng = np.random.RandomState(0)
    xs = rng.randn(32, 4).astype(np.float32)
    return xs, xs @ np.array([[1.0], [-2.0], [3.0], [0.5]], np.float32)


def _train(target, cluster, steps=20):
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x, y, loss, train, gs, opt = _model(cluster)
        xs, ys = _data()
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(steps)]
            names = [v.op.name for v in tf.global_variables()]
            return losses, dict(zip(names, sess.run(tf.global_variables())))


def test_one_worker_equals_the_single_process_run_bit_for_bit():
    cluster = _cluster()
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    local_losses, local_vars = _train("", None)
    losses, variables = _train(worker.target, cluster)
    assert losses == local_losses
    assert local_losses[-1] < local_losses[0] / 4
    assert sorted(variables) == sorted(local_vars)
    for name, value in local_vars.items():
        np.testing.assert_array_equal(variables[name], value, err_msg=name)
    _stop(ps, worker)


def test_variables_and_slots_live_on_the_ps():
    cluster = _cluster(ps=2)
    servers = [tf.train.Server(cluster, job_name="ps", task_index=i) for i in range(2)]
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Graph().as_default():
        x, y, loss, train, gs, opt = _model(cluster)
        w = [v for v in tf.global_variables() if v.op.name == "w"][0]
        devices = {v.op.name: v.device for v in tf.global_variables()}
        # Round robin over variable ops, slots and Adam's powers next to their variables.
        assert devices["w"] == "/job:ps/task:0"
        assert devices["v"] == "/job:ps/task:1"
        assert devices["w/Adam"] == devices["w/Adam_1"] == "/job:ps/task:0"
        assert devices["v/Adam"] == "/job:ps/task:1"
        assert train.device == "/job:ps/task:0" or train.device.startswith("/job:worker")
        xs, ys = _data()
        with tf.Session(worker.target) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: xs, y: ys})
            trained_w = sess.run(w)
    # Another client, another graph holding only the variable: the ps has it, by name.
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w2 = tf.get_variable("w", [4, 8])
        with tf.Session(servers[0].target) as sess:
            np.testing.assert_array_equal(sess.run(w2), trained_w)
    _stop(*servers, worker)


def test_a_node_on_a_task_outside_the_cluster_is_an_error():
    cluster = _cluster()
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:3"):
            c = tf.constant(1.0)
        with tf.Session(worker.target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="/job:ps/replica:0/task:3"):
                sess.run(c)
    _stop(worker)


def test_server_process_with_token_health_and_allowlist(children, tmp_path):
    cluster = _cluster()
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    children.server(cluster, "ps", 0, "--token-file", str(token), "--ps-allowlist")
    status, body = _healthy(cluster["ps"][0])
    assert status == 200 and "/job:ps" in body
    target = "grpc://" + cluster["ps"][0]
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            counter = tf.get_variable("counter", [], tf.int64, initializer=tf.zeros_initializer())
            bump = counter.assign_add(1)
        os.environ.pop("FERROFLOW_CLUSTER_TOKEN", None)
        with pytest.raises(tf.errors.UnauthenticatedError, match="token"):
            tf.Session(target)
        os.environ["FERROFLOW_CLUSTER_TOKEN"] = "wrong"
        try:
            with pytest.raises(tf.errors.UnauthenticatedError):
                tf.Session(target)
            os.environ["FERROFLOW_CLUSTER_TOKEN"] = "s3cret-token"
            with tf.Session(target) as sess:
                sess.run(counter.initializer)
                for _ in range(3):
                    sess.run(bump)
                assert sess.run(counter) == 3
                # The allowlist refuses a graph that writes a file on the ps (TF's server runs it).
                victim = tmp_path / "written_by_a_stranger"
                with tf.device("/job:ps/task:0"):
                    write = tf.io.write_file(str(victim), "pwned")
                with pytest.raises(tf.errors.PermissionDeniedError, match="WriteFile"):
                    sess.run(write)
                assert not victim.exists()
        finally:
            os.environ.pop("FERROFLOW_CLUSTER_TOKEN", None)


def test_server_listens_on_loopback_only_by_default(children):
    cluster = _cluster()
    children.server(cluster, "ps", 0)
    port = int(cluster["ps"][0].rsplit(":", 1)[1])
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    listening = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == port]
    assert listening == [f"0100007F:{port:04X}"], listening


def test_a_non_loopback_bind_without_authentication_refuses_to_start():
    cluster = _cluster()
    out = subprocess.run(
        [sys.executable, "-m", "ferroflow", "server", "--cluster", json.dumps(cluster), "--job", "ps", "--task", "0",
         "--bind", "0.0.0.0"],
        capture_output=True, text=True, timeout=60, env={k: v for k, v in os.environ.items()
                                                         if not k.startswith("FERROFLOW_")},
    )
    assert out.returncode == 2
    assert "without authentication" in out.stderr


def test_killed_ps_is_recovered_by_monitored_training_session(children, tmp_path):
    cluster = _cluster()
    ps = children.server(cluster, "ps", 0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Graph().as_default():
        x, y, loss, train, gs, opt = _model(cluster)
        xs, ys = _data()
        hooks = [tf.train.StopAtStepHook(last_step=30)]
        with tf.train.MonitoredTrainingSession(
                master=worker.target, is_chief=True, checkpoint_dir=str(tmp_path), hooks=hooks,
                save_checkpoint_steps=10, save_checkpoint_secs=None, save_summaries_steps=None,
                log_step_count_steps=None) as sess:
            steps = []
            killed = False
            while not sess.should_stop():
                _, step = sess.run([train, gs], {x: xs, y: ys})
                steps.append(step)
                if step == 15 and not killed:
                    killed = True
                    os.kill(ps.pid, signal.SIGKILL)
                    ps.wait(timeout=10)
                    ps = children.server(cluster, "ps", 0)
    # The step after the kill restarted from the checkpoint at step 10: nothing later was kept.
    assert steps[:16] == list(range(16))
    assert steps[16] == 10, steps
    assert steps[-1] >= 29
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("-30")
    _stop(worker)


def test_ps_exits_when_the_chief_is_done(children):
    cluster = _cluster()
    ps = children.server(cluster, "ps", 0, "--exit-when-chief-done")
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Graph().as_default():
        x, y, loss, train, gs, opt = _model(cluster)
        xs, ys = _data()
        with tf.train.MonitoredTrainingSession(master=worker.target, is_chief=True,
                                               hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
            while not sess.should_stop():
                sess.run(train, {x: xs, y: ys})
    assert ps.wait(timeout=10) == 0
    _stop(worker)


def test_server_command_takes_its_task_from_tf_config(children):
    cluster = _cluster(ps=1, workers=2)
    env = {"TF_CONFIG": json.dumps({"cluster": {**cluster, "evaluator": ["localhost:1"]},
                                    "task": {"type": "worker", "index": 1}, "environment": "cloud"})}
    p = subprocess.Popen([sys.executable, "-m", "ferroflow", "server"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env={**os.environ, **env})
    children.procs.append(p)
    status, body = _healthy(cluster["worker"][1])
    assert status == 200 and "/job:worker/replica:0/task:1" in body
