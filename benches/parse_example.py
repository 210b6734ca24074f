"""tf.parse_example micro-benchmark: ferroflow against TensorFlow, side by side.

    python benches/parse_example.py [--quick] [--batch 256] [--tf-python PY]

A batch of realistic serialized ``tf.train.Example``s (the spec of issue 17's pipeline
benchmark: 10 FixedLen features, 5 float32 and 5 int64; one VarLen int64 of 0-20 ids; one 1 KB
bytes feature) sits in the graph as a string constant; each ``Session.run`` parses it with
``tf.parse_example`` (TF 2.x's ``tf.compat.v1.parse_example``, the ``ParseExampleV2`` op in
both) and fetches every output. Reported: examples per second (median of several timed
repetitions after a warm-up) and ferroflow's speed over TensorFlow's. The examples are made by
a small protobuf encoder below, identically in both processes, and a checksum of the parsed
values is compared between them. Each framework runs in its own process; ``--tf-python`` names
the interpreter with TensorFlow (default: this one). CPU time (all threads of the process) is
reported next to wall time: on a shared, loaded machine it is the steadier of the two.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len(tag, body):
    return bytes([tag]) + _varint(len(body)) + body


def _feature(kind, values):
    if kind == "float":
        return _len(0x12, _len(0x0A, struct.pack(f"<{len(values)}f", *values)))
    if kind == "int64":
        return _len(0x1A, _len(0x0A, b"".join(_varint(v) for v in values)))
    return _len(0x0A, b"".join(_len(0x0A, v) for v in values))


def make_examples(n, seed=0):
    """n serialized Examples (features in key order, as protobuf's deterministic serialization)."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        feats = {}
        for j in range(5):
            feats[f"f{j}"] = ("float", [float(rng.randn())])
            feats[f"i{j}"] = ("int64", [int(rng.randint(-(10**9), 10**9))])
        feats["ids"] = ("int64", [int(x) for x in rng.randint(0, 10**6, size=rng.randint(0, 21))])
        feats["blob"] = ("bytes", [rng.bytes(1024)])
        body = b"".join(_len(0x0A, _len(0x0A, k.encode()) + _len(0x12, _feature(*feats[k]))) for k in sorted(feats))
        out.append(_len(0x0A, body))
    return out


def spec(tf):
    f = {f"f{j}": tf.io.FixedLenFeature([], tf.float32) for j in range(5)}
    f.update({f"i{j}": tf.io.FixedLenFeature([], tf.int64) for j in range(5)})
    f["ids"] = tf.io.VarLenFeature(tf.int64)
    f["blob"] = tf.io.FixedLenFeature([], tf.string)
    return f


def worker(framework, batch, quick):
    if framework == "tensorflow":
        import tensorflow as tf0

        tf = tf0.compat.v1
        tf.disable_eager_execution()
        version = tf0.__version__
    else:
        import ferroflow as tf

        version = "ferroflow"
    examples = np.array(make_examples(batch), dtype=object)
    g = tf.Graph()
    with g.as_default():
        ser = tf.constant(examples, dtype=tf.string)
        out = tf.parse_example(ser, spec(tf))
        with tf.Session() as sess:
            got = sess.run(out)
            check = float(sum(np.sum(got[f"f{j}"], dtype=np.float64) for j in range(5)))
            check += float(sum(int(np.sum(got[f"i{j}"])) % 1_000_003 for j in range(5)))
            check += float(np.sum(got["ids"].values) % 1_000_003) + float(sum(len(b) for b in got["blob"]))
            number = 20 if quick else 100
            repeat = 3 if quick else 7
            for _ in range(3):
                sess.run(out)
            times, cpu = [], []
            for _ in range(repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(number):
                    sess.run(out)
                times.append((time.perf_counter() - t0) / number)
                cpu.append((time.process_time() - c0) / number)
    sec = statistics.median(times)
    print(json.dumps({"version": version, "sec_per_batch": sec, "examples_per_s": batch / sec,
                      "best_sec": min(times), "cpu_sec_per_batch": statistics.median(cpu), "check": check}))


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.worker, args.batch, args.quick)
        return
    print(f"machine: {machine()}")
    print(f"parse_example of {args.batch} Examples (5 float + 5 int64 FixedLen, VarLen int64, 1 KB bytes)")
    res = {}
    for fw, py in (("ferroflow", sys.executable), ("tensorflow", args.tf_python)):
        cmd = [py, os.path.abspath(__file__), "--worker", fw, "--batch", str(args.batch)]
        if args.quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        res[fw] = json.loads(lines[-1]) if lines else None
        if res[fw] is None:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{fw}: worker failed ({tail})")
    for fw, r in res.items():
        if r:
            print(f"  {fw:<11} {r['version']:<10} {r['examples_per_s']:>12,.0f} examples/s"
                  f"  ({r['sec_per_batch'] * 1e3:.3f} ms per batch, best {r['best_sec'] * 1e3:.3f} ms;"
                  f" {r['cpu_sec_per_batch'] * 1e3:.3f} CPU-ms per batch, all threads)")
    f, t = res.get("ferroflow"), res.get("tensorflow")
    if f and t:
        print(f"  ferroflow / TensorFlow: {f['examples_per_s'] / t['examples_per_s']:.2f}x (median wall time), "
              f"{t['best_sec'] / f['best_sec']:.2f}x (best), {t['cpu_sec_per_batch'] / f['cpu_sec_per_batch']:.2f}x"
              " (CPU time)")
        same = abs(f["check"] - t["check"]) <= 1e-6 * max(1.0, abs(t["check"]))
        print(f"  parsed values agree: {'yes' if same else 'NO'} (checksums {f['check']:.6g} / {t['check']:.6g})")


if __name__ == "__main__":
    main()
