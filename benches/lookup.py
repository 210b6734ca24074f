"""Lookup-table benchmark: ferroflow against TensorFlow 2.21, side by side.

    python benches/lookup.py [--quick] [--tf-python PY]

``index_table_from_tensor`` over a 1M-entry string vocabulary, then 10M lookups: ten ``Session.run``s of
``reduce_sum(table.lookup(queries))`` over a constant batch of 1M query strings (90% in the vocabulary,
10% not, in random order), so feeding and fetching cost nothing. Reported: the time to build and initialize
the table, lookups per second (median of several repetitions) and a checksum of the looked-up ids (the two
must agree). Each framework runs in its own process with the same graph code (``--tf-python`` names the
interpreter with TensorFlow; default /work/tfvenv/bin/python).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

VOCAB = 1_000_000
BATCH = 1_000_000
RUNS = 10  # 10 x 1M = 10M lookups per repetition


def data():
    rng = np.random.RandomState(0)
    vocab = np.array([f"tok{i * 7919 % 10_000_019:08d}" for i in range(VOCAB)], dtype=object)
    hits = vocab[rng.randint(0, VOCAB, size=BATCH * 9 // 10)]
    misses = np.array([f"oov{i}" for i in range(BATCH - hits.size)], dtype=object)
    queries = np.concatenate([hits, misses])
    rng.shuffle(queries)
    return vocab, queries


def worker(which, quick):
    if which == "tf":
        import tensorflow.compat.v1 as tf
        from tensorflow.python.ops import lookup_ops

        tf.disable_v2_behavior()
        version = tf.__version__
    else:
        import ferroflow as tf
        from ferroflow.ops import lookup_ops

        version = "ferroflow " + tf.__version__
    vocab, queries = data()
    t0 = time.perf_counter()
    table = lookup_ops.index_table_from_tensor(tf.constant(vocab), default_value=-1)
    total = tf.reduce_sum(table.lookup(tf.constant(queries)))
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        build = time.perf_counter() - t0
        checksum = int(sess.run(total))
        times = []
        for _ in range(2 if quick else 5):
            t0 = time.perf_counter()
            for _ in range(RUNS):
                sess.run(total)
            times.append(time.perf_counter() - t0)
    best = statistics.median(times)
    return {"version": version, "build_s": build, "lookup_s": best, "per_s": RUNS * BATCH / best,
            "checksum": checksum}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--worker", choices=["ff", "tf"])
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.quick)))
        return
    extra = ["--quick"] if args.quick else []
    results = {}
    for which, py in (("ff", sys.executable), ("tf", args.tf_python)):
        out = subprocess.run([py, __file__, "--worker", which] + extra, capture_output=True, text=True,
                             check=False)
        if out.returncode != 0:
            print(f"{which} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        results[which] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"lookup: {VOCAB:,}-entry string vocabulary, {RUNS} x {BATCH:,} lookups; {platform.processor() or ''} "
          f"{os.cpu_count()} CPUs")
    print(f"{'':28} {'build+init':>11} {'10M lookups':>12} {'lookups/s':>12}  checksum")
    for r in results.values():
        print(f"{r['version']:28} {r['build_s']:10.2f}s {r['lookup_s']:11.3f}s {r['per_s'] / 1e6:10.1f} M  "
              f"{r['checksum']}")
    if len(results) == 2:
        ff, tf = results["ff"], results["tf"]
        print(f"ferroflow / TensorFlow: lookups {tf['lookup_s'] / ff['lookup_s']:.2f}x, "
              f"build {tf['build_s'] / ff['build_s']:.2f}x; checksums {'agree' if ff['checksum'] == tf['checksum'] else 'DIFFER'}")


if __name__ == "__main__":
    main()
