"""Random-number ops: ferroflow vs TensorFlow 2.21 (and NumPy for reference), side by side.

    python benches/rng.py [--repeat 7] [--tf-python /work/tfvenv/bin/python]

Cases (each call fetches a scalar reduction of the op's output, so the output is made in full but only a scalar
crosses into Python):

* ``stateless_normal`` of 10M float32 (``tf.random.stateless_normal([10_000_000], seed=seed)`` with the seed fed, so TensorFlow cannot fold it: Philox4x32-10
  and Box-Muller, TensorFlow's values bit for bit);
* ``categorical`` of [512, 10000] float32 logits, 1 sample per row (``tf.random.categorical``; the logits live in
  a variable, so nothing is fed per call).

TensorFlow runs in a child process (``--tf-python``, skipped when absent). NumPy's ``default_rng().standard_normal``
(a different generator) is printed for scale only. Figures are medians after a warm-up.
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

N_NORMAL = 10_000_000
BATCH, CLASSES = 512, 10_000


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure_graph(tf, repeat):
    """{case: seconds} for ``tf`` (ferroflow, or TensorFlow's compat.v1)."""
    logits = np.random.default_rng(0).standard_normal((BATCH, CLASSES), dtype=np.float32)
    g = tf.Graph()
    with g.as_default():
        # The seed is fed, so no graph optimizer can fold the (pure) op into a constant.
        seed = tf.placeholder(tf.int32, [2])
        normal = tf.reduce_sum(tf.random.stateless_normal([N_NORMAL], seed=seed))
        pl = tf.placeholder(tf.float32, logits.shape)
        vl = tf.Variable(pl, trainable=False)
        cat = tf.reduce_sum(tf.random.categorical(vl, 1, seed=3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer(), {pl: logits})
            return {
                "stateless_normal": timeit(lambda: sess.run(normal, {seed: [1, 2]}), repeat),
                "categorical": timeit(lambda: sess.run(cat), repeat),
            }


def measure_numpy(repeat):
    rng = np.random.default_rng(0)
    return {"stateless_normal": timeit(lambda: rng.standard_normal(N_NORMAL, dtype=np.float32).sum(), repeat)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--worker", choices=["tf"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker == "tf":
        import tensorflow as tf

        tf1 = tf.compat.v1
        tf1.disable_eager_execution()
        print(json.dumps(measure_graph(tf1, args.repeat)))
        return
    import ferroflow

    ours = measure_graph(ferroflow, args.repeat)
    theirs = {}
    if os.path.exists(args.tf_python):
        out = subprocess.run([args.tf_python, __file__, "--worker", "tf", "--repeat", str(args.repeat)],
                             capture_output=True, text=True, check=True)
        theirs = json.loads(out.stdout.strip().splitlines()[-1])
    ref = measure_numpy(args.repeat)
    print(f"{'case':<20}{'ferroflow':>12}{'TensorFlow':>12}{'TF/ff':>8}{'NumPy':>12}")
    for case, t in ours.items():
        tt = theirs.get(case)
        nt = ref.get(case)
        print(f"{case:<20}{t * 1e3:>10.1f}ms"
              + (f"{tt * 1e3:>10.1f}ms{tt / t:>7.2f}x" if tt else f"{'-':>12}{'-':>8}")
              + (f"{nt * 1e3:>10.1f}ms" if nt else f"{'-':>12}"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
