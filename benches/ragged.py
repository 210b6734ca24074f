"""Ragged tensor ops on a [rows, None] float32 RaggedTensor: ferroflow vs TensorFlow 2.21, side by side.

    python benches/ragged.py [--rows 100000] [--mean-length 20] [--repeat 7] [--tf-python /work/tfvenv/bin/python]

Row lengths are uniform random in [0, 2 * mean-length] (seed 0). The flat values, the row splits (int64), a
[rows, 1] column and the gather indices (half the rows, random) live in variables in ferroflow and in TensorFlow
(a child process running ``--tf-python``, skipped when absent), so nothing is fed per call. Each timed call
fetches one scalar (the sum of the result's values), so no optimizer can skip the work and no transfer is
timed. The cases: ``rt + column`` (broadcast of a [rows, 1] column against the rows), ``reduce_sum`` and
``reduce_mean`` over the rows' items (axis 1), ``to_tensor`` (RaggedTensorToTensor, padded to the longest
row), ``gather`` (RaggedGather of half the rows) and ``where`` (an item-by-item choice of two ragged tensors).
Figures are medians of ``--repeat`` calls after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

CASES = ("add_column", "reduce_sum_axis1", "reduce_mean_axis1", "to_tensor", "gather", "where")


def make_inputs(rows, mean_length):
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 2 * mean_length + 1, rows)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.standard_normal(int(splits[-1]), dtype=np.float32)
    column = rng.standard_normal((rows, 1), dtype=np.float32)
    picks = rng.integers(0, rows, rows // 2).astype(np.int64)
    return values, splits, column, picks


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure_graph(tf, rows, mean_length, repeat):
    """{case: seconds} for ``tf`` (ferroflow, or TensorFlow's compat.v1)."""
    values, splits, column, picks = make_inputs(rows, mean_length)
    g = tf.Graph()
    with g.as_default():
        feeds = {}

        def var(array):
            p = tf.placeholder(tf.as_dtype(array.dtype), array.shape)
            feeds[p] = array
            return tf.Variable(p, trainable=False)

        rt = tf.RaggedTensor.from_row_splits(var(values), var(splits))
        col, idx = var(column), var(picks)
        fetches = {
            "add_column": tf.reduce_sum((rt + col).flat_values),
            "reduce_sum_axis1": tf.reduce_sum(tf.reduce_sum(rt, axis=1)),
            "reduce_mean_axis1": tf.reduce_sum(tf.reduce_mean(rt, axis=1)),
            "to_tensor": tf.reduce_sum(rt.to_tensor()),
            "gather": tf.reduce_sum(tf.gather(rt, idx).flat_values),
            "where": tf.reduce_sum(tf.where(rt > 0.0, rt, rt * 2.0).flat_values),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer(), feeds)
            return {k: timeit(lambda t=t: sess.run(t), repeat) for k, t in fetches.items()}


def child(args):
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    print(json.dumps(measure_graph(tf1, args.rows, args.mean_length, args.repeat)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--mean-length", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import ferroflow as ff

    results = {"ferroflow": measure_graph(ff, args.rows, args.mean_length, args.repeat)}
    if os.path.exists(args.tf_python):
        cmd = [args.tf_python, os.path.abspath(__file__), "--child", "--rows", str(args.rows), "--mean-length",
               str(args.mean_length), "--repeat", str(args.repeat)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results["tensorflow"] = json.loads(out.stdout.strip().splitlines()[-1])
    values, _, _, _ = make_inputs(args.rows, args.mean_length)
    print(f"[{args.rows}, None] float32 RaggedTensor, {values.size} values (mean row length {args.mean_length})")
    print(f"{'op':<20}" + "".join(f"{k:>14}" for k in results) + f"{'TF / ferroflow':>16}")
    for case in CASES:
        row = f"{case:<20}" + "".join(f"{results[k][case] * 1e3:>11.2f} ms" for k in results)
        if "tensorflow" in results:
            row += f"{results['tensorflow'][case] / results['ferroflow'][case]:>15.2f}x"
        print(row)


if __name__ == "__main__":
    main()
