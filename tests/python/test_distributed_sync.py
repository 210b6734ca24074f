"""SyncReplicasOptimizer and the cluster session managers across real processes on 127.0.0.1.

A ps task (a ``ferroflow server`` process, or a ``tf.train.Server`` in this process) and worker processes
running ``_sync_worker.py``: each worker's k-th gradient is a one-hot vector of its own, so the mean
gradient of every update (recorded on the ps by the chief's sync op) says exactly which gradients it
averaged, and each worker logs the local step (the tag) of every gradient it pushed and the token it got
back. Ports are free ports, every wait is bounded, and child processes are killed by pid.
"""

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import ferroflow.compat.v1 as tf
from _cluster_util import cluster as _cluster
from _cluster_util import free_ports

WORKER = pathlib.Path(__file__).resolve().parent / "_sync_worker.py"
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mnist_replica.py"


def _read_log(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


class _Cluster:
    """The processes of one test: the ps and the workers, killed by pid at the end."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = []
        self.servers = []
        self.workers = {}

    def ps_process(self, cluster):
        """Starts the ps as a ``ferroflow server`` process (without waiting: the workers' connections retry)."""
        cmd = [sys.executable, "-m", "ferroflow", "server", "--cluster", json.dumps(cluster), "--job", "ps",
               "--task", "0"]
        self.procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def ps_here(self, cluster):
        """Starts the ps as a ``tf.train.Server`` in this process."""
        self.servers.append(tf.train.Server(cluster, job_name="ps", task_index=0))

    def log(self, index):
        return self.tmp / f"worker{index}.log"

    def worker(self, cluster, index, **spec):
        """Starts worker ``index`` (see _sync_worker.py for ``spec``)."""
        spec = {"cluster": cluster, "index": index, "log": str(self.log(index)), **spec}
        err = open(self.tmp / f"worker{index}.err", "w")  # noqa: SIM115 - the child writes it
        p = subprocess.Popen([sys.executable, str(WORKER), json.dumps(spec)], stdout=err, stderr=err)
        err.close()
        self.procs.append(p)
        self.workers[index] = p
        return p

    def wait_for(self, index, key, timeout=30.0):
        """Waits until worker ``index`` logs a record with ``key``; returns it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for rec in _read_log(self.log(index)):
                if key in rec:
                    return rec
            if self.workers[index].poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"worker {index} logged no {key!r}: {self.describe(index)}")

    def finish(self, indices, timeout=30.0):
        """Waits for the workers to exit; returns their exit codes."""
        end = time.monotonic() + timeout
        codes = {}
        for i in indices:
            try:
                codes[i] = self.workers[i].wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"worker {i} still runs after {timeout} s: {self.describe(i)}") from None
        return codes

    def describe(self, index):
        err = (self.tmp / f"worker{index}.err").read_text()[-2000:]
        return f"log {_read_log(self.log(index))[-5:]}, stderr {err}"

    def runs(self, index):
        return [r for r in _read_log(self.log(index)) if "k" in r]

    def kill(self, index):
        p = self.workers[index]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        for s in self.servers:
            s._native.stop()


@pytest.fixture
def procs(tmp_path):
    c = _Cluster(tmp_path)
    yield c
    c.close()


def _ps_state(cluster, dim):
    """What the ps holds after training: global step, w, tokens left, and the recorded updates."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.get_variable("w", [dim])
            gs = tf.get_variable("global_step", [], tf.int64)
            tokens = tf.FIFOQueue(-1, tf.int64, shapes=[[]], name="sync_token_q", shared_name="sync_token_q")
            recorded = tf.FIFOQueue(-1, [tf.int64, tf.float32], shapes=[[], [dim]], name="recorded",
                                    shared_name="recorded")
            n = tf.placeholder(tf.int32, [])
            take = recorded.dequeue_many(n)
        with tf.Session("grpc://" + cluster["ps"][0]) as sess:
            count = sess.run(recorded.size())
            steps, means = sess.run(take, {n: count})
            return {"gs": int(sess.run(gs)), "w": sess.run(w), "tokens_left": int(sess.run(tokens.size())),
                    "steps": steps.tolist(), "means": means}


def _check_updates(state, gradients, replicas_to_aggregate):
    """Every recorded update u (u = 1, 2, ...) raised the global step to u and is the MEAN of n >=
    ``replicas_to_aggregate`` distinct gradients, all computed at local step u - 1 (fresh), none used twice;
    ``w`` (zeros, learning rate 1) moved by the recorded means only. ``gradients`` maps a one-hot position to
    its tag. Returns the sizes of the updates and the positions used."""
    assert state["steps"] == list(range(1, len(state["steps"]) + 1))
    assert state["gs"] == len(state["steps"])  # the global step advances once per update
    sizes, used = [], set()
    for u, mean in enumerate(state["means"], start=1):
        taken = np.nonzero(mean)[0]
        sizes.append(len(taken))
        assert len(taken) >= replicas_to_aggregate, (u, taken)
        np.testing.assert_allclose(mean[taken], 1.0 / len(taken), rtol=1e-6)
        for c in taken:
            assert int(c) in gradients, f"update {u} used {c}, which no worker pushed"
            assert gradients[int(c)] == u - 1, f"update {u} used gradient {c} computed at step {gradients[int(c)]}"
            assert int(c) not in used
            used.add(int(c))
    np.testing.assert_allclose(state["w"], -state["means"].sum(axis=0), rtol=1e-6, atol=1e-7)
    return sizes, used


def _gradients(procs, indices, runs):
    """One-hot position -> tag, for every gradient the workers pushed (a run that returned)."""
    return {i * runs + r["k"]: r["tag"] for i in indices for r in procs.runs(i)}


def test_workers_before_the_ps_then_every_update_averages_exactly_two_fresh_gradients(procs):
    """2 workers, replicas_to_aggregate=2, no backup, no initial tokens, started before the ps.

    Both workers start first and the ps (a server in this process) comes up later: their connections
    retry, and the chief's first run (on the ps) waits for it. The non-chief's
    MonitoredTrainingSession(is_chief=False) finds the model not initialized (the chief holds back until
    the non-chief has said so), waits, and trains once the chief has initialized it. Then each token lets
    exactly one gradient through: every update averages exactly 2 fresh gradients, none is dropped, no
    token is left over, and both processes exit cleanly (the chief's sync thread still waits on the ps).
    """
    cluster = _cluster(workers=2)
    runs, target = 20, 8
    spec = {"replicas_to_aggregate": 2, "total_num_replicas": 2, "runs": runs, "target": target, "num_tokens": 0,
            "fast_wait": 0.1}
    procs.worker(cluster, 0, **spec, gate=[str(procs.log(1)), '"waiting"'])
    procs.worker(cluster, 1, **spec, linger_for=str(procs.log(0)))
    for i in range(2):
        procs.wait_for(i, "started")
    time.sleep(0.3)  # both are connecting by now
    assert procs.workers[0].poll() is None and procs.workers[1].poll() is None
    ps_started = time.time()
    procs.ps_here(cluster)
    assert procs.finish([0, 1]) == {0: 0, 1: 0}

    chief, worker = _read_log(procs.log(0)), _read_log(procs.log(1))
    answered = next(r for r in chief if "ps_answered" in r)
    assert answered["ps_answered"] is False and answered["t"] > ps_started
    waits = [r for r in worker if "waiting" in r]
    assert waits and "not initialized" in waits[0]["waiting"], worker
    assert procs.runs(1)[0]["tag"] == 0  # it joined before the first update

    state = _ps_state(cluster, 2 * runs)
    gradients = _gradients(procs, [0, 1], runs)
    sizes, used = _check_updates(state, gradients, 2)
    assert sizes == [2] * target
    assert used == set(gradients)  # nothing dropped
    assert state["tokens_left"] == 0  # 2 tokens per update, one taken per run
    for i in range(2):
        runs_i = procs.runs(i)
        tokens = [r["token"] for r in runs_i]
        assert tokens == sorted(tokens) and tokens[-1] == target
        assert [r["tag"] for r in runs_i[1:]] == tokens[:-1]  # a run's token is the next run's local step


def test_a_killed_backup_worker_does_not_stop_training(procs):
    """A ``ferroflow server`` ps and 3 workers, replicas_to_aggregate=2 (one backup), 2 initial tokens: the
    backup is killed holding a token after the second update; the other two reach the last step. Every
    update averages at least 2 fresh gradients, stale ones are dropped, and the tokens add up: 2 initial
    + 3 per update, one taken per run."""
    cluster = _cluster(workers=3)
    procs.ps_process(cluster)
    runs, target = 40, 8
    spec = {"replicas_to_aggregate": 2, "total_num_replicas": 3, "runs": runs, "target": target,
            "fast_wait": 0.1, "barrier": [str(procs.log(i)) for i in range(3)], "sleep_s": 0.005}
    for i in range(3):
        procs.worker(cluster, i, **spec, **({"park_at": 2} if i == 2 else {}))
    procs.wait_for(2, "parked")
    procs.kill(2)
    for i in range(2):
        procs.wait_for(i, "trained", timeout=20)
    state = _ps_state(cluster, 3 * runs)
    assert state["gs"] == target
    gradients = _gradients(procs, [0, 1, 2], runs)
    sizes, used = _check_updates(state, gradients, 2)
    dropped = set(gradients) - used
    assert dropped  # stale gradients were pushed and left out
    assert all(gradients[c] < target for c in dropped)
    assert procs.runs(2)[-1]["token"] >= 2  # the backup trained, then died holding a token
    assert any(gradients[c] >= 2 for c in used)  # updates went on without it
    taken = sum(len(procs.runs(i)) for i in range(3))
    assert state["tokens_left"] == 2 + 3 * target - taken


def test_too_few_live_workers_time_out_instead_of_hanging(procs):
    """replicas_to_aggregate=2 and total_num_replicas=2 but only the chief runs, without spare tokens: its
    first run pushes a gradient and waits for a token that no update will bring (the sync op waits for a
    second gradient); operation_timeout_in_ms ends it with DeadlineExceededError."""
    cluster = _cluster(workers=2)
    procs.ps_here(cluster)
    procs.worker(cluster, 0, replicas_to_aggregate=2, total_num_replicas=2, runs=5, target=5, num_tokens=0,
                 timeout_ms=1000)
    error = procs.wait_for(0, "error", timeout=20)
    assert error["error"] == "DeadlineExceededError", error
    assert procs.finish([0]) == {0: 3}
    assert procs.runs(0) == []
    session = next(r["session"] for r in _read_log(procs.log(0)) if "session" in r)
    assert 0.9 < error["t"] - session < 10


@pytest.mark.slow
def test_a_killed_token_holder_without_backups_times_out(procs):
    """2 workers, replicas_to_aggregate=2, no backup: the non-chief takes a token and is killed before it
    pushes its gradient. The chief's next run pushes one gradient and waits for a token no update will
    bring; operation_timeout_in_ms ends it with DeadlineExceededError."""
    cluster = _cluster(workers=2)
    procs.ps_here(cluster)
    spec = {"replicas_to_aggregate": 2, "total_num_replicas": 2, "runs": 20, "target": 100, "num_tokens": 0,
            "fast_wait": 0.1, "barrier": [str(procs.log(i)) for i in range(2)], "timeout_ms": 1500}
    procs.worker(cluster, 0, **spec)
    procs.worker(cluster, 1, **spec, park_at=3)
    held = procs.wait_for(1, "parked")["parked"]
    procs.kill(1)
    error = procs.wait_for(0, "error", timeout=15)
    assert error["error"] == "DeadlineExceededError", error
    assert procs.finish([0]) == {0: 3}
    # Its last good run took the other token of the step whose token the non-chief died holding.
    assert procs.runs(0)[-1]["token"] == held
    assert error["t"] - procs.runs(0)[-1]["t"] < 10


_BLOCKED_CLIENT = """
import sys
import ferroflow.compat.v1 as tf
with tf.device("/job:ps/task:0"):
    accum = tf.ConditionalAccumulator(tf.float32, shape=[1], shared_name="accum")
    queue = tf.FIFOQueue(-1, tf.int64, shapes=[[]], name="q", shared_name="q")
with tf.Session(sys.argv[1]) as sess:
    print("running", flush=True)
    sess.run([accum.take_grad(2), queue.dequeue()])
"""


def test_a_killed_clients_waiting_take_and_dequeue_take_nothing(procs):
    """A worker killed while it waits for a token (a dequeue on the ps), or a chief killed while its sync
    op waits in take_grad, must not take the token or the gradients that come later."""
    cluster = _cluster(workers=1)
    procs.ps_here(cluster)
    target = "grpc://" + cluster["ps"][0]
    child = subprocess.Popen([sys.executable, "-c", _BLOCKED_CLIENT, target], stdout=subprocess.PIPE, text=True)
    procs.procs.append(child)
    assert child.stdout.readline().strip() == "running"
    time.sleep(0.5)  # the step is waiting on the ps
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    time.sleep(0.2)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            accum = tf.ConditionalAccumulator(tf.float32, shape=[1], shared_name="accum")
            queue = tf.FIFOQueue(-1, tf.int64, shapes=[[]], name="q", shared_name="q")
        with tf.Session(target) as sess:
            sess.run(queue.enqueue_many([[7]]))
            for _ in range(2):
                sess.run(accum.apply_grad([1.0], local_step=0))
            time.sleep(0.2)
            assert (sess.run(queue.size()), sess.run(accum.num_accumulated())) == (1, 2)


def _listening(address):
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


# Runs examples/mnist_replica.py unchanged, except that a non-chief's wait_for_session looks again every
# 0.1 s instead of every 30 s (TensorFlow's recovery_wait_secs, which MonitoredTrainingSession does not
# expose): a non-chief that starts with the chief would otherwise sit out the first 30 s.
_RUN_EXAMPLE = """
import runpy, sys
sys.path.insert(0, {tests!r})
import _sync_worker
_sync_worker._fast_wait(0.1)
sys.argv = [{example!r}] + sys.argv[1:]
runpy.run_path({example!r}, run_name="__main__")
"""


@pytest.mark.slow
def test_mnist_replica_example_sync_replicas_over_a_cluster(tmp_path):
    """examples/mnist_replica.py --sync_replicas on 1 ps and 2 workers (processes started together): both
    workers train and finish at the last step."""
    ps_port, *worker_ports = free_ports(3)
    steps = 200
    common = [f"--ps_hosts=127.0.0.1:{ps_port}", "--worker_hosts=" + ",".join(f"127.0.0.1:{p}" for p in worker_ports),
              "--sync_replicas", f"--train_steps={steps}", "--log_every=1000"]
    run = _RUN_EXAMPLE.format(tests=str(WORKER.parent), example=str(EXAMPLE))
    c = _Cluster(tmp_path)
    try:
        def start(job, index, **kw):
            p = subprocess.Popen([sys.executable, "-c", run, *common, f"--job_name={job}", f"--task_index={index}"],
                                 **kw)
            c.procs.append(p)
            return p

        start("ps", 0, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        workers = [start("worker", i, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
        outs = [w.communicate(timeout=120)[0] for w in workers]
        for w, out in zip(workers, outs):
            assert w.returncode == 0, out
            local_steps, final_step = re.search(r"worker \d: (\d+) local steps in .* global step (\d+)", out).groups()
            assert int(local_steps) > 0 and int(final_step) >= steps, out
            assert "final loss" in out, out
    finally:
        c.close()
