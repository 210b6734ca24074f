"""Sparse-tensor benchmarks, side by side with TensorFlow.

    python benches/sparse.py [--quick] [--tf-python PY]

The same TF1 graph code runs under ferroflow and under TensorFlow's ``tf.compat.v1`` (graph mode), each
in its own process (``--tf-python`` names the interpreter with TensorFlow, default this one):

  embedding  a training step through tf.nn.embedding_lookup_sparse (combiner "mean", weighted): params
             [100000, 64], a batch of 1024 rows with 20 ids each, loss = sum(y^2), SGD; ms per step.
  matmul     tf.sparse.sparse_dense_matmul of a [4096, 65536] SparseTensor with 262144 entries by a
             dense [65536, 64] matrix; ms per run.
  reorder    tf.sparse.reorder of 1,000,000 shuffled entries of a [1000, 1000000] tensor; ms per run.
  to_dense   tf.sparse.to_dense of 1,000,000 ordered entries into [1000, 4096]; ms per run.

The sparse inputs are variables (no feed cost, nothing constant-folded); every figure is the median of
several timed runs after a warm-up, and the results of ferroflow and TensorFlow are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def med(fn, repeat):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e3


def distinct(r, n, high):
    """``n`` distinct ints in [0, high) (``choice(replace=False)`` would permute all of them)."""
    draw = n + 16
    while True:
        out = np.unique(r.randint(0, high, draw, dtype=np.int64))
        if len(out) >= n:
            return r.permutation(out)[:n]
        draw *= 2


def inputs(quick):
    r = np.random.RandomState(0)
    batch, per_row, vocab, dim = (256 if quick else 1024), 20, 100_000, 64
    emb_ind = np.array([[b, k] for b in range(batch) for k in range(per_row)], np.int64)
    emb_ids = r.randint(0, vocab, len(emb_ind)).astype(np.int64)
    emb_w = r.uniform(0.1, 1.0, len(emb_ind)).astype(np.float32)
    params = (r.standard_normal((vocab, dim)) * 0.01).astype(np.float32)
    nnz = 65_536 if quick else 262_144
    flat = np.sort(distinct(r, nnz, 4096 * 65536))
    mm_ind = np.stack([flat // 65536, flat % 65536], 1).astype(np.int64)
    mm_val = r.standard_normal(nnz).astype(np.float32)
    mm_b = r.standard_normal((65536, 64)).astype(np.float32)
    n = 250_000 if quick else 1_000_000
    flat = distinct(r, n, 1000 * 1_000_000)
    ro_ind = np.stack([flat // 1_000_000, flat % 1_000_000], 1).astype(np.int64)
    flat = np.sort(distinct(r, n, 1000 * 4096))
    td_ind = np.stack([flat // 4096, flat % 4096], 1).astype(np.int64)
    return dict(emb=(emb_ind, emb_ids, emb_w, params, batch), mm=(mm_ind, mm_val, mm_b),
                ro=(ro_ind, r.standard_normal(n).astype(np.float32)), td=(td_ind, r.standard_normal(n).astype(np.float32)))


def run(framework, quick):
    if framework == "tf":
        import tensorflow as tf2

        tf = tf2.compat.v1
        tf.disable_v2_behavior()
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
        import ferroflow as tf
    data = inputs(quick)
    repeat = 5 if quick else 10
    out, checks = {}, {}

    emb_ind, emb_ids, emb_w, params0, batch = data["emb"]
    g = tf.Graph()
    with g.as_default():
        params = tf.Variable(params0)
        shape = np.array([batch, 20], np.int64)
        ind = tf.Variable(emb_ind, trainable=False)
        ids = tf.SparseTensor(ind, tf.Variable(emb_ids, trainable=False), shape)
        w = tf.SparseTensor(ind, tf.Variable(emb_w, trainable=False), shape)
        y = tf.nn.embedding_lookup_sparse(params, ids, w, combiner="mean")
        loss = tf.reduce_sum(y * y)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            checks["embedding_loss"] = float(sess.run(loss))
            out["embedding"] = med(lambda: sess.run(step), repeat)

    def live(x):
        # A variable, not a constant: TensorFlow's graph optimizer folds constant expressions (and
        # unfed placeholders with defaults) once, before the first run.
        return tf.Variable(x, trainable=False)

    for key, build in (
        ("matmul", lambda: tf.sparse.sparse_dense_matmul(
            tf.SparseTensor(live(data["mm"][0]), live(data["mm"][1]), [4096, 65536]), live(data["mm"][2]))),
        ("reorder", lambda: tf.sparse.reorder(
            tf.SparseTensor(live(data["ro"][0]), live(data["ro"][1]), [1000, 1_000_000])).values),
        ("to_dense", lambda: tf.sparse.to_dense(
            tf.SparseTensor(live(data["td"][0]), live(data["td"][1]), [1000, 4096]))),
    ):
        g = tf.Graph()
        with g.as_default():
            t = build()
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                checks[key] = float(np.sum(np.abs(sess.run(t))))
                out[key] = med(lambda t=t, sess=sess: sess.run(t), repeat)
    return {"ms": out, "checks": checks}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tf-python", default=sys.executable)
    ap.add_argument("--worker", choices=["ferroflow", "tf"])
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(run(args.worker, args.quick)))
        return
    results = {}
    for fw, py in (("ferroflow", sys.executable), ("tf", args.tf_python)):
        cmd = [py, __file__, "--worker", fw] + (["--quick"] if args.quick else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{fw}: not available ({p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode})")
            continue
        results[fw] = json.loads(p.stdout.strip().splitlines()[-1])
    names = ["embedding", "matmul", "reorder", "to_dense"]
    print(f"{'benchmark':<12}" + "".join(f"{fw + ' ms':>16}" for fw in results))
    for n in names:
        print(f"{n:<12}" + "".join(f"{results[fw]['ms'][n]:>16.2f}" for fw in results))
    if len(results) == 2:
        a, b = results["ferroflow"]["checks"], results["tf"]["checks"]
        for k in a:
            ok = abs(a[k] - b[k]) <= 1e-3 * max(1.0, abs(b[k]))
            print(f"check {k}: ferroflow {a[k]:.6g} tf {b[k]:.6g} {'agree' if ok else 'DIFFER'}")


if __name__ == "__main__":
    main()
