"""tf.einsum of common training contractions and Cholesky/SVD of 512x512 matrices: ferroflow vs TensorFlow 2.21
and NumPy/SciPy, in one run.

    python benches/linalg.py [--quick] [--tf-python /work/tfvenv/bin/python]

ferroflow runs in this interpreter; TensorFlow, NumPy and SciPy in a child process running ``--tf-python``
(skipped when it is absent). In ferroflow and TensorFlow the operands are variables and the timed call fetches
the sum of the result (so no feed or large fetch is timed and no graph optimizer prunes the work; the sum is
cheap next to each op). NumPy is ``np.einsum(..., optimize=True)``, ``np.linalg.cholesky``/``svd``; SciPy is
``scipy.linalg.cholesky``/``svd`` (``gesdd``). Figures are medians after a warm-up. GFLOP/s: einsum 2 flops per
multiply-add; Cholesky n^3/3; SVD with vectors a nominal 21 n^3 (Golub and Van Loan's R-SVD count for a square
matrix), values only 4 n^3 (bidiagonalization); the same count for every library, so the ratios are time
ratios.
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

# (name, equation, operand shapes) in float32.
EINSUM = [
    ("bij,bjk->bik", "bij,bjk->bik", [[32, 128, 128], [32, 128, 128]]),
    ("ij,jk->ik 512", "ij,jk->ik", [[512, 512], [512, 512]]),
    ("bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", [[8, 8, 128, 64], [8, 8, 128, 64]]),
    ("bhqk,bhkd->bhqd", "bhqk,bhkd->bhqd", [[8, 8, 128, 128], [8, 8, 128, 64]]),
    ("btd,dk->btk", "btd,dk->btk", [[32, 64, 256], [256, 512]]),
    ("bqhd,bkhd->bhqk", "bqhd,bkhd->bhqk", [[8, 128, 8, 64], [8, 128, 8, 64]]),
]
# (name, op, n, dtype)
FACTOR = [
    ("cholesky 512 f32", "cholesky", 512, "float32"),
    ("cholesky 512 f64", "cholesky", 512, "float64"),
    ("svd 512 f32", "svd", 512, "float32"),
    ("svd 512 f64", "svd", 512, "float64"),
    ("svd values 512 f64", "svdvals", 512, "float64"),
]


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _spd(np, n, dtype):
    rs = np.random.RandomState(0)
    a = rs.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def measure_graph(tf, quick):
    """{case: seconds} for the module ``tf`` (tf.compat.v1 style)."""
    import numpy as np

    repeat = 3 if quick else 9
    out = {}
    for name, eq, shapes in EINSUM[:2] if quick else EINSUM:
        with tf.Graph().as_default():
            xs = [tf.Variable(tf.random_normal(s), name=f"x{i}") for i, s in enumerate(shapes)]
            y = tf.reduce_sum(tf.einsum(eq, *xs))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out[name] = timeit(lambda y=y, sess=sess: sess.run(y), repeat)
    for name, op, n, dt in FACTOR[:1] if quick else FACTOR:
        with tf.Graph().as_default():
            a = tf.Variable(_spd(np, n, dt))
            if op == "cholesky":
                y = tf.reduce_sum(tf.cholesky(a))
            elif op == "svd":
                s, u, v = tf.svd(a)
                y = tf.reduce_sum(s) + tf.reduce_sum(u) + tf.reduce_sum(v)
            else:
                y = tf.reduce_sum(tf.svd(a, compute_uv=False))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out[name] = timeit(lambda y=y, sess=sess: sess.run(y), max(3, repeat // 2))
    return out


def measure_numpy(quick):
    """{case: {"numpy": s, "scipy": s}}."""
    import numpy as np
    import scipy.linalg as sl

    repeat = 3 if quick else 9
    out = {}
    rs = np.random.RandomState(1)
    for name, eq, shapes in EINSUM[:2] if quick else EINSUM:
        xs = [rs.standard_normal(s).astype(np.float32) for s in shapes]
        out[name] = {"numpy": timeit(lambda eq=eq, xs=xs: np.einsum(eq, *xs, optimize=True), repeat)}
    for name, op, n, dt in FACTOR[:1] if quick else FACTOR:
        a = _spd(np, n, dt)
        r = max(3, repeat // 2)
        if op == "cholesky":
            out[name] = {"numpy": timeit(lambda a=a: np.linalg.cholesky(a), r),
                         "scipy": timeit(lambda a=a: sl.cholesky(a, lower=True, check_finite=False), r)}
        elif op == "svd":
            out[name] = {"numpy": timeit(lambda a=a: np.linalg.svd(a, full_matrices=False), r),
                         "scipy": timeit(lambda a=a: sl.svd(a, full_matrices=False, check_finite=False), r)}
        else:
            out[name] = {"numpy": timeit(lambda a=a: np.linalg.svd(a, compute_uv=False), r),
                         "scipy": timeit(lambda a=a: sl.svd(a, compute_uv=False, check_finite=False), r)}
    return out


def flops(name):
    for n_, eq, shapes in EINSUM:
        if n_ == name:
            sizes = {}
            for sub, s in zip(eq.split("->")[0].split(","), shapes):
                sizes.update(zip(sub, s))
            total = 2.0
            for v in sizes.values():
                total *= v
            return total
    for n_, op, n, _ in FACTOR:
        if n_ == name:
            return {"cholesky": n ** 3 / 3.0, "svd": 21.0 * n ** 3, "svdvals": 4.0 * n ** 3}[op]
    raise KeyError(name)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    p.add_argument("--worker", choices=["tf"], help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker == "tf":
        import tensorflow as tensorflow

        tf1 = tensorflow.compat.v1
        tf1.disable_eager_execution()
        print(json.dumps({"tf": measure_graph(tf1, a.quick), "np": measure_numpy(a.quick)}))
        return
    import ferroflow.compat.v1 as ff

    ours = measure_graph(ff, a.quick)
    theirs = {"tf": {}, "np": {}}
    if a.tf_python and os.path.exists(a.tf_python):
        cmd = [a.tf_python, __file__, "--worker", "tf"] + (["--quick"] if a.quick else [])
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode == 0:
            theirs = json.loads(res.stdout.strip().splitlines()[-1])
        else:
            print("TensorFlow run failed:", res.stderr[-2000:], file=sys.stderr)
    nan = float("nan")
    print(f"{'case':<20} {'ferroflow':>10} {'GFLOP/s':>8} {'TF':>10} {'NumPy':>10} {'SciPy':>10} "
          f"{'vs TF':>6} {'vs best':>7}")
    for name in ours:
        f = ours[name]
        t = theirs["tf"].get(name, nan)
        npy = theirs["np"].get(name, {})
        n_, s_ = npy.get("numpy", nan), npy.get("scipy", nan)
        best = min(v for v in (t, n_, s_) if v == v) if any(v == v for v in (t, n_, s_)) else nan
        print(f"{name:<20} {f * 1e3:7.2f} ms {flops(name) / f / 1e9:8.1f} {t * 1e3:7.2f} ms {n_ * 1e3:7.2f} ms "
              f"{s_ * 1e3:7.2f} ms {t / f:5.2f}x {best / f:6.2f}x")


if __name__ == "__main__":
    main()
