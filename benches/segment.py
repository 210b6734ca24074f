"""segment_sum and unsorted_segment_sum over 10M rows: ferroflow vs TensorFlow 2.21 vs NumPy.

    python benches/segment.py [--rows 10000000] [--cols 8] [--segments 100000] [--tf-python /work/tfvenv/bin/python]

The data ([rows, cols] float32, standard normal) and int32 ids (sorted for ``segment_sum``, uniform random
for ``unsorted_segment_sum``; seed 0) live in variables in ferroflow and in TensorFlow (a child process
running ``--tf-python``, skipped when absent), so nothing is fed per call; each timed call fetches the sum of
the segment output (a [segments, cols] pass, small next to the input), so no graph optimizer can skip the
work. NumPy runs ``np.add.reduceat`` (given the segment starts, computed outside the timing) and
``np.add.at``. Figures are medians of several repetitions after a warm-up; GB/s counts the bytes each call
must move: data + ids + output.
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


def make_inputs(rows, cols, segments):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((rows, cols), dtype=np.float32)
    uids = rng.integers(0, segments, rows, dtype=np.int32)
    sids = np.sort(uids)
    return data, sids, uids


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure_graph(tf, rows, cols, segments, repeat):
    """{case: seconds} for ``tf`` (ferroflow, or TensorFlow's compat.v1)."""
    data, sids, uids = make_inputs(rows, cols, segments)
    g = tf.Graph()
    with g.as_default():
        pd = tf.placeholder(tf.float32, data.shape)
        ps = tf.placeholder(tf.int32, sids.shape)
        pu = tf.placeholder(tf.int32, uids.shape)
        vd = tf.Variable(pd, trainable=False)
        vs = tf.Variable(ps, trainable=False)
        vu = tf.Variable(pu, trainable=False)
        seg = tf.reduce_sum(tf.math.segment_sum(vd, vs))
        useg = tf.reduce_sum(tf.math.unsorted_segment_sum(vd, vu, segments))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer(), {pd: data, ps: sids, pu: uids})
            return {
                "segment_sum": timeit(lambda: sess.run(seg), repeat),
                "unsorted_segment_sum": timeit(lambda: sess.run(useg), repeat),
            }


def measure_numpy(rows, cols, segments, repeat):
    data, sids, uids = make_inputs(rows, cols, segments)
    starts = np.flatnonzero(np.r_[True, sids[1:] != sids[:-1]])

    def unsorted():
        out = np.zeros((segments, cols), np.float32)
        np.add.at(out, uids, data)
        return out

    return {
        "segment_sum": timeit(lambda: np.add.reduceat(data, starts, axis=0), repeat),
        "unsorted_segment_sum": timeit(unsorted, max(1, repeat // 2)),
    }


def child(args):
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    print(json.dumps(measure_graph(tf1, args.rows, args.cols, args.segments, args.repeat)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--cols", type=int, default=8)
    ap.add_argument("--segments", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import ferroflow as ff

    results = {"ferroflow": measure_graph(ff, args.rows, args.cols, args.segments, args.repeat)}
    if os.path.exists(args.tf_python):
        cmd = [args.tf_python, os.path.abspath(__file__), "--child", "--rows", str(args.rows), "--cols",
               str(args.cols), "--segments", str(args.segments), "--repeat", str(args.repeat)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results["tensorflow"] = json.loads(out.stdout.strip().splitlines()[-1])
    results["numpy"] = measure_numpy(args.rows, args.cols, args.segments, args.repeat)

    nbytes = args.rows * args.cols * 4 + args.rows * 4 + args.segments * args.cols * 4
    print(f"[{args.rows}, {args.cols}] float32, {args.segments} segments, int32 ids; "
          f"{nbytes / 1e6:.0f} MB per call; numpy {np.__version__}")
    print(f"{'op':<22}" + "".join(f"{k:>22}" for k in results) + f"{'vs faster other':>18}")
    for case in ("segment_sum", "unsorted_segment_sum"):
        row = f"{case:<22}"
        for k in results:
            s = results[k][case]
            row += f"{s * 1e3:>10.1f} ms {nbytes / s / 1e9:>6.2f} GB/s"
        others = [results[k][case] for k in results if k != "ferroflow"]
        row += f"{min(others) / results['ferroflow'][case]:>17.2f}x"
        print(row)


if __name__ == "__main__":
    main()
