"""Runs whose steps wait for each other (queues), side by side with TensorFlow.

    python benches/waiting_runs.py [--tf-python PY] [--runs N]

Per-`Session.run` time of: one dequeue from a filled queue; two dequeues from two filled queues in one run (two
waiting steps that do not depend on each other: ferroflow's executor runs them on its caller's thread unless one
really waits, crates/runtime/src/plan/waiting.rs); an enqueue and the dequeue it feeds in one run (the dequeue
waits for the enqueue when the executor starts it first); a loop of 10 dequeues fed by an enqueue_many of the
same run. Best of 5 batches; lower is better.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def cases(tf, runs):
    fill = [[1.0] * (12 * runs)]
    q1 = tf.FIFOQueue(-1, tf.float32, shapes=[])
    q2 = tf.FIFOQueue(-1, tf.float32, shapes=[])
    q3 = tf.FIFOQueue(-1, tf.float32, shapes=[])
    s = tf.Session()
    s.run([q1.enqueue_many(fill), q2.enqueue_many(fill)])
    loop = tf.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t + q3.dequeue()), [0, 0.0])
    out = {
        "one dequeue": q1.dequeue(),
        "two independent dequeues": [q1.dequeue(), q2.dequeue()],
        "dequeue + the enqueue feeding it": [q3.dequeue(), q3.enqueue(2.0)],
        "loop of 10 dequeues + enqueue_many(10)": [loop, q3.enqueue_many([[1.0] * 10])],
    }
    return s, out


def worker(framework, runs):
    if framework == "ferroflow":
        import ferroflow.compat.v1 as tf
    else:
        try:
            import tensorflow.compat.v1 as tf
        except Exception:
            print(json.dumps(None))
            return
        tf.disable_v2_behavior()
    s, out = cases(tf, runs)
    res = {}
    for name, fetch in out.items():
        s.run(fetch)
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(runs):
                s.run(fetch)
            best = min(best, (time.perf_counter() - t) / runs)
        res[name] = best
    print(json.dumps(res))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tf-python", default=sys.executable)
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(a.worker, a.runs)
        return
    res = {}
    for fw, py in (("ferroflow", sys.executable), ("tensorflow", a.tf_python)):
        proc = subprocess.run([py, os.path.abspath(__file__), "--worker", fw, "--runs", str(a.runs)],
                              capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
        res[fw] = json.loads(lines[-1]) if lines else None
        if proc.returncode != 0:
            print(f"{fw}: worker failed ({(proc.stderr.strip().splitlines() or ['?'])[-1]})")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print(f"{'case':42s} {'ferroflow':>11s} {'TF':>11s} {'TF/ff':>7s}")
    for name in (res["ferroflow"] or {}):
        f = res["ferroflow"][name]
        t = (res["tensorflow"] or {}).get(name)
        tcell = f"{t * 1e6:8.1f} us" if t else f"{'-':>11s}"
        ratio = f"{t / f:6.1f}x" if t else f"{'-':>7s}"
        print(f"{name:42s} {f * 1e6:8.1f} us {tcell} {ratio}")


if __name__ == "__main__":
    main()
