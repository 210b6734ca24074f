"""examples/mnist_replica.py under ferroflow: in one process, and as real ps/worker processes on
127.0.0.1 once ``tf.train.Server`` runs (until then the cluster tests skip, when the ps process
reports UnimplementedError). Children are killed by pid; every wait has a hard timeout.
"""

import os
import pathlib
import re
import socket
import subprocess
import sys
import time

import pytest

import ferroflow
from _cluster_util import free_ports

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mnist_replica.py"
FINAL = re.compile(r"final loss (\d+\.\d+), accuracy (\d+\.\d+)")


def env():
    e = dict(os.environ)
    # The ferroflow this test imported (an installed wheel in CI, the source tree in development).
    package_parent = os.path.dirname(os.path.dirname(ferroflow.__file__))
    e["PYTHONPATH"] = package_parent + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("TF_CONFIG", None)
    for k in ("FERROFLOW_CLUSTER_TOKEN", "FERROFLOW_CLUSTER_TOKEN_FILE"):
        e.pop(k, None)
    return e


def run_example(args, timeout=60):
    proc = subprocess.run([sys.executable, str(EXAMPLE), *args], env=env(), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def final_of(out):
    m = FINAL.search(out)
    assert m, out
    return float(m.group(1)), float(m.group(2))


def test_single_process_trains():
    out = run_example(["--train_steps=150", "--log_every=50"])
    assert "worker 0: chief, async training of 150 global steps, 1 worker(s), master ''" in out
    assert "global step 150" in out
    loss, accuracy = final_of(out)
    assert 0.7 < accuracy < 1.0 and loss < 1.0  # the synthetic classes are learnable, not trivially


def test_flags_pick_the_task_and_the_chief():
    spec = {"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]}
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import mnist_replica
    finally:
        sys.path.pop(0)
    flags = mnist_replica.parse_args(["--ps_hosts=127.0.0.1:1", "--worker_hosts=127.0.0.1:2,127.0.0.1:3",
                                      "--job_name=worker", "--task_index=1"])
    assert mnist_replica.resolve_cluster(flags) == (spec, "worker", 1)
    assert mnist_replica.is_chief_task(spec, "worker", 0) and not mnist_replica.is_chief_task(spec, "worker", 1)
    assert mnist_replica.is_chief_task({"chief": ["c:1"], "worker": ["w:1"]}, "chief", 0)
    assert not mnist_replica.is_chief_task({"chief": ["c:1"], "worker": ["w:1"]}, "worker", 0)
    assert not mnist_replica.is_chief_task(spec, "ps", 0)


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def run_cluster(n_workers, extra, timeout=120):
    ps_port, *worker_ports = free_ports(1 + n_workers)
    common = [f"--ps_hosts=127.0.0.1:{ps_port}",
              "--worker_hosts=" + ",".join(f"127.0.0.1:{p}" for p in worker_ports), *extra]
    procs = []
    try:
        ps = subprocess.Popen([sys.executable, str(EXAMPLE), *common, "--job_name=ps", "--task_index=0"],
                              env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        procs.append(ps)
        # Wait until the ps listens (failing if it exits).
        start = time.time()
        while not listening(ps_port):
            if ps.poll() is not None:
                out = ps.stdout.read()
                raise AssertionError(f"ps exited with {ps.returncode}:\n{out}")
            assert time.time() - start < 30, "the ps did not listen within 30 s"
            time.sleep(0.05)
        workers = [subprocess.Popen([sys.executable, str(EXAMPLE), *common, "--job_name=worker", f"--task_index={i}"],
                                    env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    cwd=ROOT) for i in range(n_workers)]
        procs.extend(workers)
        outs = []
        deadline = time.time() + timeout
        for w in workers:
            out, _ = w.communicate(timeout=max(1.0, deadline - time.time()))
            assert w.returncode == 0, out
            outs.append(out)
        return outs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


def test_one_ps_one_worker_equals_single_process():
    (out,) = run_cluster(1, ["--train_steps=100", "--log_every=1000"])
    assert "global step 100" in out
    assert final_of(out) == final_of(run_example(["--train_steps=100", "--log_every=1000"]))


@pytest.mark.slow
@pytest.mark.parametrize("mode", [[], ["--sync_replicas"]], ids=["async", "sync"])
def test_one_ps_two_workers(mode):
    outs = run_cluster(2, ["--train_steps=200", "--log_every=1000", *mode], timeout=240)
    for out in outs:
        # Asynchronous workers each finish the step they are in: up to one step per worker past 200.
        assert any(f"global step {s}" in out for s in (200, 201, 202)), out
        assert final_of(out)[1] > 0.7
