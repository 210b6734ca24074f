"""Parameter-server benchmarks on loopback, ferroflow side by side with TensorFlow 2.21's gRPC runtime.

    python benches/distributed.py [--backend tf|ferroflow|both] [--rounds N] [--quick]
                                  [--tf-python PY] [--ferroflow-ps python|server] [--json FILE]

Every case is a TF1 between-graph program (``tf.compat.v1`` after ``disable_v2_behavior()`` for
TensorFlow, ``ferroflow.compat.v1`` for ferroflow) run by real processes on 127.0.0.1: one ps
task and one or two worker tasks, each a ``tf.train.Server`` on a free port, the worker driving
``tf.Session(server.target)`` with device filters ``["/job:ps", "/job:worker/task:i"]``.

  pull     a 64 MiB float32 variable on the ps, ``reduce_sum`` of it on the worker, the scalar
           fetched: the transfer ps -> worker dominates; GB/s (1 GB = 1e9 bytes).
  push     ``ps_var.assign(worker_var)`` of 64 MiB, running the assign op only (nothing
           fetched back): worker -> ps; GB/s.
  mlp1     MLP 784-512-512-10, batch 128, Adam, variables placed by ``replica_device_setter``
           (1 ps), a fed NumPy batch per step, 1 worker; steps/s.
  mlp2     the same with 2 workers training asynchronously; steps/s of both workers together,
           counted over one common time window.
  scalar   ``ps_counter.assign_add(1.0)`` run from the worker, the new value fetched;
           microseconds per step.
  cold     seconds from spawning the ps and the worker to the worker's first finished MLP step
           (variables initialized, one step run), and the same from the end of the worker's
           ``import``.
  raw TCP  the baseline, in the same run: two Python processes move 64 MiB over a 127.0.0.1 TCP
           socket (``sendall`` of one buffer, ``recv_into`` a preallocated one, a one-byte ack);
           GB/s.

Each round starts fresh processes for every backend in turn (TF, ferroflow, raw TCP), so the
backends interleave and see the same machine load; the table shows medians over all samples of
all rounds with their range. Children are killed by pid when a round ends or overruns its hard
timeout. ``--ferroflow-ps server`` runs the ferroflow ps as ``python -m ferroflow server`` (the
standalone server) instead of a Python ``tf.train.Server(...).join()``. The load average is
printed before and after: the figures are only comparable between runs on a similar load.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_TF_PYTHON = "/work/tfvenv/bin/python"

NBYTES = 64 << 20  # 64 MiB
NFLOATS = NBYTES // 4
BATCH = 128
CASES = ("mlp1", "pull", "push", "scalar", "mlp2")
ROUND_TIMEOUT_S = 420.0


# --------------------------------------------------------------------------------------------
# Child side: ps task, workers, raw TCP.
# --------------------------------------------------------------------------------------------


def import_backend(backend):
    """``tf.compat.v1`` of TensorFlow or ferroflow, in TF1 graph mode."""
    if backend == "tf":
        import tensorflow.compat.v1 as tf
    else:
        import ferroflow.compat.v1 as tf
    tf.disable_v2_behavior()
    return tf


def run_ps(args):
    tf = import_backend(args.backend)
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    server.join()


def wait_for_file(path, timeout):
    deadline = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {path}")
        time.sleep(0.01)


class Worker:
    """One worker task: its server, and a session on its own master per benchmark graph."""

    def __init__(self, args, tf):
        self.args, self.tf, self.index = args, tf, args.task_index
        cluster = tf.train.ClusterSpec(json.loads(args.cluster))
        self.server = tf.train.Server(cluster, job_name="worker", task_index=self.index)
        self.config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{self.index}"])
        self.device = f"/job:worker/task:{self.index}"
        rng = np.random.default_rng(self.index)
        self.x = rng.standard_normal((BATCH, 784)).astype(np.float32)
        self.y = rng.integers(0, 10, BATCH).astype(np.int64)

    def session(self, graph):
        return self.tf.Session(self.server.target, graph=graph, config=self.config)

    def mlp(self, scope):
        """The MLP graph under ``scope``: (graph, train op, placeholders, init op, uninitialized-report op)."""
        tf = self.tf
        graph = tf.Graph()
        with graph.as_default():
            with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device=self.device)):
                with tf.variable_scope(scope):
                    x = tf.placeholder(tf.float32, [BATCH, 784], name="x")
                    y = tf.placeholder(tf.int64, [BATCH], name="y")
                    h = dense(tf, x, 512, "h1", tf.nn.relu)
                    h = dense(tf, h, 512, "h2", tf.nn.relu)
                    logits = dense(tf, h, 10, "logits")
                    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
                    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
                    init = tf.global_variables_initializer()
                    uninit = tf.report_uninitialized_variables()
        return graph, train, x, y, init, uninit

    def run_mlp(self, scope, n_workers, results, cold_t0=None):
        graph, train, x, y, init, uninit = self.mlp(scope)
        feed = {x: self.x, y: self.y}
        d = self.args.tmp
        with self.session(graph) as sess:
            if self.index == 0:
                sess.run(init)
            else:
                while len(sess.run(uninit)):
                    time.sleep(0.05)
            sess.run(train, feed)
            if cold_t0 is not None:
                now = time.time()
                results["cold"] = [now - cold_t0]
                results["cold_after_import"] = [now - self.args.import_done]
            # A common measuring window for all workers: 1 s after the last of them is ready.
            open(os.path.join(d, f"{scope}_ready_{self.index}"), "w").close()
            ready = [os.path.join(d, f"{scope}_ready_{i}") for i in range(n_workers)]
            for path in ready:
                wait_for_file(path, 120)
            start = max(os.stat(p).st_mtime for p in ready) + 1.0
            end = start + self.args.duration
            while time.time() < start:
                sess.run(train, feed)
            steps = 0
            while True:
                sess.run(train, feed)
                if time.time() > end:
                    break
                steps += 1
            results[scope] = [steps / self.args.duration]

    def run_pull(self, results):
        tf = self.tf
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.ones([NFLOATS], tf.float32), name="pull_var")
            with tf.device(self.device):
                total = tf.reduce_sum(v)
            init = tf.global_variables_initializer()
        with self.session(graph) as sess:
            sess.run(init)
            got = sess.run(total)
            if abs(float(got) - NFLOATS) > 1e-3 * NFLOATS:
                raise AssertionError(f"pull: sum of the ps variable is {got}, expected {NFLOATS}")
            results["pull"] = [NBYTES / 1e9 / t for t in timed(lambda: sess.run(total), self.args.reps)]

    def run_push(self, results):
        tf = self.tf
        graph = tf.Graph()
        with graph.as_default():
            with tf.device(self.device):
                src = tf.Variable(tf.ones([NFLOATS], tf.float32), name="push_src")
            with tf.device("/job:ps/task:0"):
                dst = tf.Variable(tf.zeros([NFLOATS], tf.float32), name="push_dst")
                push = tf.assign(dst, src).op
                check = tf.reduce_sum(dst)
            init = tf.global_variables_initializer()
        with self.session(graph) as sess:
            sess.run(init)
            sess.run(push)
            got = sess.run(check)
            if abs(float(got) - NFLOATS) > 1e-3 * NFLOATS:
                raise AssertionError(f"push: sum of the ps variable is {got} after the assign, expected {NFLOATS}")
            results["push"] = [NBYTES / 1e9 / t for t in timed(lambda: sess.run(push), self.args.reps)]

    def run_scalar(self, results):
        tf = self.tf
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                counter = tf.Variable(0.0, name="counter")
                inc = tf.assign_add(counter, 1.0)
            init = tf.global_variables_initializer()
        n = self.args.scalar_steps
        with self.session(graph) as sess:
            sess.run(init)
            for _ in range(20):
                sess.run(inc)
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(n):
                    sess.run(inc)
                samples.append((time.perf_counter() - t0) / n * 1e6)
            if float(sess.run(counter.value())) != 20 + 5 * n:
                raise AssertionError("scalar: the ps counter does not count the steps run")
            results["scalar"] = samples


def dense(tf, x, units, name, activation=None):
    """A fully connected layer from get_variable (tf.layers needs Keras 2 under TensorFlow 2.21)."""
    with tf.variable_scope(name):
        w = tf.get_variable("kernel", [int(x.shape[-1]), units], initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
    y = tf.matmul(x, w) + b
    return activation(y) if activation else y


def timed(fn, reps):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def run_worker(args):
    tf = import_backend(args.backend)
    args.import_done = time.time()
    worker = Worker(args, tf)
    results = {}
    cases = args.cases.split(",")
    if args.task_index == 0:
        cold_t0 = args.t0
        if "mlp1" in cases:
            worker.run_mlp("mlp1", 1, results, cold_t0=cold_t0)
        for case in ("pull", "push", "scalar"):
            if case in cases:
                getattr(worker, f"run_{case}")(results)
        if "mlp2" in cases:
            open(os.path.join(args.tmp, "start_worker_1"), "w").close()
            worker.run_mlp("mlp2", 2, results)
    else:
        worker.run_mlp("mlp2", 2, results)
    path = os.path.join(args.tmp, f"results_{args.task_index}.json")
    with open(path + ".part", "w") as f:
        json.dump(results, f)
    os.replace(path + ".part", path)
    sys.stdout.flush()
    os._exit(0)  # skip the servers' shutdown: the parent kills the ps anyway


def run_tcp_recv(args):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.port))
    srv.listen(1)
    open(os.path.join(args.tmp, "tcp_listening"), "w").close()
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(NBYTES)
    view = memoryview(buf)
    while True:
        header = conn.recv(8, socket.MSG_WAITALL)
        if len(header) < 8:
            break
        size = int.from_bytes(header, "little")
        got = 0
        while got < size:
            n = conn.recv_into(view[got:size])
            if n == 0:
                raise ConnectionError("sender closed mid-transfer")
            got += n
        conn.sendall(b"k")
    conn.close()


def run_tcp_send(args):
    wait_for_file(os.path.join(args.tmp, "tcp_listening"), 30)
    payload = np.ones(NFLOATS, np.float32).tobytes()
    sock = socket.create_connection(("127.0.0.1", args.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    header = NBYTES.to_bytes(8, "little")
    samples = []
    for i in range(args.reps + 1):
        t0 = time.perf_counter()
        sock.sendall(header)
        sock.sendall(payload)
        if sock.recv(1) != b"k":
            raise ConnectionError("receiver did not acknowledge")
        if i:  # the first transfer warms up the socket buffers
            samples.append(NBYTES / 1e9 / (time.perf_counter() - t0))
    sock.close()
    with open(os.path.join(args.tmp, "results_tcp.json"), "w") as f:
        json.dump({"tcp": samples}, f)


# --------------------------------------------------------------------------------------------
# Parent side: rounds, processes, table.
# --------------------------------------------------------------------------------------------


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Children:
    """Child processes of one round, each logging to its own file, killed by pid at the end."""

    def __init__(self, tmp):
        self.tmp, self.procs = tmp, {}

    def start(self, name, cmd, env):
        log = open(os.path.join(self.tmp, f"{name}.log"), "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        log.close()

    def kill_all(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def log_tail(self, name, lines=15):
        try:
            with open(os.path.join(self.tmp, f"{name}.log")) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


def child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_cluster_round(backend, python, args):
    """One fresh ps + worker 0 (+ worker 1 for mlp2); the samples of every case, or None."""
    me = os.path.abspath(__file__)
    ps_port, w0_port, w1_port = free_ports(3)
    cluster = json.dumps({"ps": [f"127.0.0.1:{ps_port}"],
                          "worker": [f"127.0.0.1:{w0_port}", f"127.0.0.1:{w1_port}"]})
    env = child_env()
    with tempfile.TemporaryDirectory(prefix="ffbench-") as tmp:
        kids = Children(tmp)
        common = ["--backend", backend, "--cluster", cluster, "--tmp", tmp, "--cases", ",".join(args.cases),
                  "--duration", str(args.duration), "--reps", str(args.reps),
                  "--scalar-steps", str(args.scalar_steps)]
        t0 = time.time()
        try:
            if backend == "ferroflow" and args.ferroflow_ps == "server":
                kids.start("ps", [python, "-m", "ferroflow", "server", "--cluster", cluster,
                                  "--job", "ps", "--task", "0"], env)
            else:
                kids.start("ps", [python, me, "--child", "ps"] + common, env)
            kids.start("worker0", [python, me, "--child", "worker", "--task-index", "0", "--t0", repr(t0)]
                       + common, env)
            deadline = t0 + ROUND_TIMEOUT_S
            want = ["results_0.json"]
            w1_started = False
            while True:
                if "mlp2" in args.cases and not w1_started and os.path.exists(os.path.join(tmp, "start_worker_1")):
                    # Started only now, so that its import and startup do not load the cold-start case.
                    kids.start("worker1", [python, me, "--child", "worker", "--task-index", "1"] + common, env)
                    want.append("results_1.json")
                    w1_started = True
                if all(os.path.exists(os.path.join(tmp, w)) for w in want) and (
                        w1_started or "mlp2" not in args.cases):
                    break
                for name, proc in kids.procs.items():
                    if name != "ps" and proc.poll() not in (None, 0):
                        raise RuntimeError(f"{backend} {name} exited with status {proc.returncode}:\n"
                                           + kids.log_tail(name))
                if kids.procs["ps"].poll() is not None:
                    raise RuntimeError(f"{backend} ps exited with status {kids.procs['ps'].returncode}:\n"
                                       + kids.log_tail("ps"))
                if time.time() > deadline:
                    raise RuntimeError(f"{backend} round overran {ROUND_TIMEOUT_S:.0f} s; worker 0 log:\n"
                                       + kids.log_tail("worker0"))
                time.sleep(0.05)
            samples = {}
            for w in want:
                with open(os.path.join(tmp, w)) as f:
                    for case, values in json.load(f).items():
                        samples.setdefault(case, []).extend(values)
            if "mlp2" in samples:  # the two workers' rates over the same window add up
                samples["mlp2"] = [sum(samples["mlp2"])]
            return samples
        except RuntimeError as e:
            print(f"  {e}", file=sys.stderr)
            return None
        finally:
            kids.kill_all()


def run_tcp_round(args):
    me = os.path.abspath(__file__)
    (port,) = free_ports(1)
    env = child_env()
    with tempfile.TemporaryDirectory(prefix="ffbench-") as tmp:
        kids = Children(tmp)
        common = ["--tmp", tmp, "--port", str(port), "--reps", str(args.reps)]
        try:
            kids.start("recv", [sys.executable, me, "--child", "tcp_recv"] + common, env)
            kids.start("send", [sys.executable, me, "--child", "tcp_send"] + common, env)
            try:
                rc = kids.procs["send"].wait(timeout=120)
            except subprocess.TimeoutExpired:
                print("  raw TCP round overran 120 s", file=sys.stderr)
                return None
            if rc != 0:
                print(f"  raw TCP sender failed:\n{kids.log_tail('send')}", file=sys.stderr)
                return None
            with open(os.path.join(tmp, "results_tcp.json")) as f:
                return json.load(f)
        finally:
            kids.kill_all()


ROWS = [  # key, label, unit, higher is better
    ("pull", "64 MiB variable pull (ps -> worker)", "GB/s", True),
    ("push", "64 MiB variable push (worker -> ps)", "GB/s", True),
    ("mlp1", "MLP 784-512-512-10 b128 Adam, 1 ps + 1 worker", "steps/s", True),
    ("mlp2", "MLP 784-512-512-10 b128 Adam, 1 ps + 2 workers (async)", "steps/s", True),
    ("scalar", "scalar assign_add on the ps from a worker", "µs/step", False),
    ("cold", "cold start: spawn -> first MLP step done", "s", False),
    ("cold_after_import", "cold start after the worker's import", "s", False),
]


def summary(values):
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def fmt(stat, unit):
    if stat is None:
        return "-"
    med, lo, hi = stat
    digits = 0 if unit in ("µs/step",) else (1 if unit == "steps/s" else 2)
    return f"{med:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def table(samples, backends):
    tcp = summary(samples.get("tcp", {}).get("tcp", []))
    head = ["case", "unit"] + [{"tf": "TF 2.21", "ferroflow": "ferroflow"}[b] for b in backends]
    if len(backends) == 2:
        head.append("ferroflow vs TF")
    head.append("vs raw TCP")
    lines = [f"raw TCP loopback baseline, 64 MiB between two Python processes: {fmt(tcp, 'GB/s')} GB/s", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, label, unit, higher in ROWS:
        stats = {b: summary(samples.get(b, {}).get(key, [])) for b in backends}
        if all(s is None for s in stats.values()):
            continue
        row = [label, unit] + [fmt(stats[b], unit) for b in backends]
        if len(backends) == 2:
            tf_s, ff_s = stats["tf"], stats["ferroflow"]
            if tf_s and ff_s:
                speedup = ff_s[0] / tf_s[0] if higher else tf_s[0] / ff_s[0]
                row.append(f"{speedup:.2f}x {'faster' if speedup >= 1 else 'slower'}")
            else:
                row.append("-")
        if unit == "GB/s" and tcp:
            row.append(", ".join(f"{ {'tf': 'TF', 'ferroflow': 'ff'}[b]} {stats[b][0] / tcp[0]:.2f}"
                                 for b in backends if stats[b]))
        else:
            row.append("")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def load():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=["tf", "ferroflow", "both"], default="both")
    p.add_argument("--rounds", type=int, default=3, help="fresh clusters per backend (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="1 round, shorter windows")
    p.add_argument("--cases", default=",".join(CASES), help="subset of " + ",".join(CASES))
    p.add_argument("--duration", type=float, default=3.0, help="seconds of each MLP measuring window")
    p.add_argument("--reps", type=int, default=5, help="timed 64 MiB transfers per round")
    p.add_argument("--scalar-steps", type=int, default=200, help="steps per scalar sample (5 samples a round)")
    p.add_argument("--tf-python", default=DEFAULT_TF_PYTHON if os.path.exists(DEFAULT_TF_PYTHON) else sys.executable,
                   help="interpreter with TensorFlow (default: %(default)s)")
    p.add_argument("--ferroflow-ps", choices=["python", "server"], default="python",
                   help="ferroflow ps as tf.train.Server(...).join() or as `python -m ferroflow server`")
    p.add_argument("--json", default=None, help="also write every sample to this file")
    # Internal: what a child process is.
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--cluster", help=argparse.SUPPRESS)
    p.add_argument("--task-index", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--tmp", help=argparse.SUPPRESS)
    p.add_argument("--t0", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.duration, args.reps, args.scalar_steps = 1, 2.0, 3, 100
    return args


def main(argv=None):
    args = parse_args(argv)
    role = args.child
    if role:
        {"ps": run_ps, "worker": run_worker, "tcp_recv": run_tcp_recv, "tcp_send": run_tcp_send}[role](args)
        return 0
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        raise SystemExit(f"--cases: unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    backends = ["tf", "ferroflow"] if args.backend == "both" else [args.backend]
    pythons = {"tf": args.tf_python, "ferroflow": sys.executable}
    print(f"before: {load()}")
    samples = {b: {} for b in backends + ["tcp"]}
    for r in range(args.rounds):
        for backend in backends:
            t = time.time()
            got = run_cluster_round(backend, pythons[backend], args)
            print(f"round {r + 1}/{args.rounds} {backend}: {'ok' if got else 'FAILED'} in {time.time() - t:.1f} s",
                  file=sys.stderr)
            for case, values in (got or {}).items():
                samples[backend].setdefault(case, []).extend(values)
        got = run_tcp_round(args)
        for case, values in (got or {}).items():
            samples["tcp"].setdefault(case, []).extend(values)
    print(f"after: {load()}")
    print()
    print(table(samples, backends))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(samples, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
