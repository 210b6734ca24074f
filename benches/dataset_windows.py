"""Windows, buckets and sets, side by side with TensorFlow.

    python benches/dataset_windows.py [--tf-python PY] [--repeat N]

The same TF1 graph code runs under ferroflow and under TensorFlow's ``tf.compat.v1`` (graph mode), each in its
own process:

  bucket  20,000 int64 sequences of 1-60 values -> bucket_by_sequence_length(boundaries 8/16/32, batch 32,
          padded) -> every batch pulled: sequences per second (the NMT tutorial's bucketing).
  window  range(20,000) -> window(64, shift=1) -> flat_map(batch(64)) -> every window pulled: windows per
          second (the time-series tutorial's sliding windows).
  sets    tf.sets.intersection of two dense [2,000, 100] int64 tensors (values 0-199) fed to placeholders,
          one Session.run: seconds.

Each figure is the median of ``--repeat`` timed runs after a warm-up. ``--tf-python`` names the interpreter
with TensorFlow (default: this one); its column is absent when TensorFlow does not import.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

N_SEQ = 20000
N_RANGE = 20000


def _pull_all(tf, sess, ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    n = 0
    while True:
        try:
            sess.run(nxt)
            n += 1
        except tf.errors.OutOfRangeError:
            return n


def _timed(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def worker(which, repeat):
    if which == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
    else:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))
        import ferroflow as tf
    lengths = np.random.RandomState(0).randint(1, 61, N_SEQ).astype(np.int64)
    out = {}

    def bucket():
        with tf.Graph().as_default():
            ds = tf.data.Dataset.from_tensor_slices(lengths).map(lambda n: tf.fill(tf.reshape(n, [1]), n))
            ds = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [8, 16, 32], [32, 32, 32, 32])
            with tf.Session() as sess:
                _pull_all(tf, sess, ds)

    out["bucket"] = N_SEQ / _timed(bucket, repeat)

    def window():
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(N_RANGE).window(64, shift=1).flat_map(lambda w: w.batch(64))
            with tf.Session() as sess:
                return _pull_all(tf, sess, ds)

    out["window"] = N_RANGE / _timed(window, repeat)
    rs = np.random.RandomState(1)
    a, b = rs.randint(0, 200, [2000, 100]), rs.randint(0, 200, [2000, 100])
    with tf.Graph().as_default():
        # Placeholders: TensorFlow would fold the op over constants before the timed runs.
        pa, pb = tf.placeholder(tf.int64, [None, 100]), tf.placeholder(tf.int64, [None, 100])
        st = tf.sets.intersection(pa, pb)
        with tf.Session() as sess:
            out["sets"] = _timed(lambda: sess.run(st, {pa: a, pb: b}), repeat)
    print(json.dumps(out))


def _fmt(v, unit, higher):
    if v is None:
        return ""
    return f"{v:,.0f} {unit}" if higher else f"{v * 1000:.1f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tf-python", default=sys.executable)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--worker", choices=["ferroflow", "tf"])
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.repeat)
        return
    results = {}
    for which, py in (("ferroflow", sys.executable), ("tf", args.tf_python)):
        run = subprocess.run([py, __file__, "--worker", which, "--repeat", str(args.repeat)], capture_output=True,
                             text=True)
        if run.returncode != 0:
            print(f"{which}: failed\n{run.stderr[-2000:]}", file=sys.stderr)
            continue
        results[which] = json.loads(run.stdout.strip().splitlines()[-1])
    ff, tf = results.get("ferroflow", {}), results.get("tf", {})
    rows = [("bucket", "sequences/s", True), ("window", "windows/s", True), ("sets", "s per run", False)]
    print("| benchmark | ferroflow | TensorFlow 2.21 | ratio |")
    print("|---|---|---|---|")
    for key, unit, higher in rows:
        a, b = ff.get(key), tf.get(key)
        ratio = "" if a is None or b is None else f"{(a / b if higher else b / a):.2f}x"
        print(f"| {key} | {_fmt(a, unit, higher)} | {_fmt(b, unit, higher)} | {ratio} |")


if __name__ == "__main__":
    main()
