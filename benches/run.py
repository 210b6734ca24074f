"""ferroflow benchmarks, side by side with NumPy, TensorFlow and PyTorch.

    python benches/run.py [--quick] [--only overhead,matmul,elementwise]

TensorFlow (``tensorflow-cpu``) and PyTorch columns appear when those
packages import in the same interpreter; otherwise they are skipped.
Every figure is the median of several timed repetitions after a warm-up.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def timeit(fn, repeat, number):
    """Median seconds per call over ``repeat`` batches of ``number`` calls."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def cold_timeit(fn, calls):
    """Median seconds per call of ``fn`` run right after 48 MB of unrelated memory traffic (a NumPy add over
    16 MB arrays, untimed), which leaves the caches holding none of the caller's code or data: what each
    training step's runtime overhead costs after an update that streamed the model's parameters."""
    a = np.ones(1 << 22, np.float32)
    b = np.ones_like(a)
    c = np.empty_like(a)
    fn()
    samples = []
    for _ in range(calls):
        np.add(a, b, out=c)
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def try_import(name):
    try:
        return __import__(name)
    except Exception:  # pragma: no cover - optional
        return None


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
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


# -- Session.run overhead ----------------------------------------------------


def overhead_ferroflow(repeat, number):
    import ferroflow as tf

    out = {}
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        x = tf.placeholder(tf.float32, [1])
        ident = tf.identity(x)
        v = tf.Variable(0.0)
        inc = tf.assign_add(v, 1.0)
        sess = tf.Session()
        sess.run(v.initializer)
        feed = {x: np.ones(1, np.float32)}
        out["fetch a constant"] = timeit(lambda: sess.run(c), repeat, number)
        out["feed [1] placeholder, fetch identity"] = timeit(lambda: sess.run(ident, feed), repeat, number)
        out["assign_add on a scalar variable"] = timeit(lambda: sess.run(inc.op), repeat, number)
        out["assign_add, caches cold (48 MB traffic)"] = cold_timeit(lambda: sess.run(inc.op), repeat * 200)
        sess.close()
    return out


def overhead_tensorflow(tf, repeat, number):
    out = {}
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        x = tf.compat.v1.placeholder(tf.float32, [1])
        ident = tf.identity(x)
        v = tf.compat.v1.Variable(0.0)
        inc = tf.compat.v1.assign_add(v, 1.0)
        sess = tf.compat.v1.Session(graph=g)
        sess.run(v.initializer)
        feed = {x: np.ones(1, np.float32)}
        out["fetch a constant"] = timeit(lambda: sess.run(c), repeat, number)
        out["feed [1] placeholder, fetch identity"] = timeit(lambda: sess.run(ident, feed), repeat, number)
        out["assign_add on a scalar variable"] = timeit(lambda: sess.run(inc.op), repeat, number)
        out["assign_add, caches cold (48 MB traffic)"] = cold_timeit(lambda: sess.run(inc.op), repeat * 200)
        sess.close()
    return out


# -- kernels -------------------------------------------------------------------


def kernel_cases(n_elem, mat):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n_elem, dtype=np.float32)
    b = rng.standard_normal(n_elem, dtype=np.float32)
    ma = rng.standard_normal((mat, mat), dtype=np.float32)
    mb = rng.standard_normal((mat, mat), dtype=np.float32)
    return a, b, ma, mb


def kernels_ferroflow(data, repeat, number):
    import ferroflow as tf

    a, b, ma, mb = data
    out = {}
    g = tf.Graph()
    with g.as_default():
        # Variables, not constants: TensorFlow would fold constant inputs away.
        ta, tb, tma, tmb = [tf.Variable(x) for x in (a, b, ma, mb)]
        add, mul, red = ta + tb, ta * tb, tf.reduce_sum(ta)
        mm = tf.matmul(tma, tmb)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["matmul"] = timeit(lambda: sess.run(mm), repeat, number)
            out["add"] = timeit(lambda: sess.run(add), repeat, number)
            out["multiply"] = timeit(lambda: sess.run(mul), repeat, number)
            out["reduce_sum"] = timeit(lambda: sess.run(red), repeat, number)
            np.testing.assert_allclose(sess.run(red), a.astype(np.float64).sum(), rtol=1e-3)
    return out


def kernels_numpy(data, repeat, number):
    a, b, ma, mb = data
    return {
        "matmul": timeit(lambda: ma @ mb, repeat, number),
        "add": timeit(lambda: a + b, repeat, number),
        "multiply": timeit(lambda: a * b, repeat, number),
        "reduce_sum": timeit(lambda: a.sum(), repeat, number),
    }


def kernels_tensorflow(tf, data, repeat, number):
    a, b, ma, mb = data
    out = {}
    g = tf.Graph()
    with g.as_default():
        ta, tb, tma, tmb = [tf.compat.v1.Variable(x) for x in (a, b, ma, mb)]
        add, mul, red = ta + tb, ta * tb, tf.reduce_sum(ta)
        mm = tf.matmul(tma, tmb)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            out["matmul"] = timeit(lambda: sess.run(mm), repeat, number)
            out["add"] = timeit(lambda: sess.run(add), repeat, number)
            out["multiply"] = timeit(lambda: sess.run(mul), repeat, number)
            out["reduce_sum"] = timeit(lambda: sess.run(red), repeat, number)
    return out


def kernels_torch(torch, data, repeat, number):
    a, b, ma, mb = [torch.from_numpy(x) for x in data]
    return {
        "matmul": timeit(lambda: (ma @ mb).numpy(), repeat, number),
        "add": timeit(lambda: (a + b).numpy(), repeat, number),
        "multiply": timeit(lambda: (a * b).numpy(), repeat, number),
        "reduce_sum": timeit(lambda: a.sum().item(), repeat, number),
    }


def stream_triad_gbs(n_elem, repeat):
    """STREAM-style triad (a = b + s*c) bandwidth in GB/s, NumPy in place."""
    b = np.ones(n_elem, np.float32)
    c = np.ones(n_elem, np.float32)
    a = np.empty_like(b)

    def triad():
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)

    t = timeit(triad, repeat, 1)
    # multiply reads c and writes a; add reads a and b and writes a: 5 passes of 4 bytes.
    return 5 * 4 * n_elem / t / 1e9


def fmt_us(t):
    return f"{t * 1e6:9.1f} us"


def fmt_ms(t):
    return f"{t * 1e3:8.2f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--only", default="overhead,kernels", help="comma-separated groups")
    args = parser.parse_args()
    groups = set(args.only.split(","))
    tf = try_import("tensorflow")
    if tf is not None:
        tf.compat.v1.disable_eager_execution()
    torch = try_import("torch")
    print(f"machine: {machine()}")
    print(f"TensorFlow: {getattr(tf, '__version__', 'absent')}, PyTorch: {getattr(torch, '__version__', 'absent')}")
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"ferroflow commit: {rev or 'unknown'}\n")

    if "overhead" in groups:
        rep, num = (5, 200) if args.quick else (15, 2000)
        ff = overhead_ferroflow(rep, num)
        tfo = overhead_tensorflow(tf, rep, num) if tf else {}
        print("Session.run overhead (per call; lower is better)")
        print(f"  {'case':40s} {'ferroflow':>12s} {'TensorFlow':>12s} {'TF/ff':>8s}")
        for k, v in ff.items():
            t = tfo.get(k)
            ratio = f"{t / v:8.1f}x" if t else "       -"
            print(f"  {k:40s} {fmt_us(v)} {fmt_us(t) if t else '           -'} {ratio}")
        print()

    if "kernels" in groups:
        n_elem = 1 << 24
        mat = 1024
        rep, num = (3, 2) if args.quick else (9, 5)
        data = kernel_cases(n_elem, mat)
        ff = kernels_ferroflow(data, rep, num)
        npy = kernels_numpy(data, rep, num)
        tfk = kernels_tensorflow(tf, data, rep, num) if tf else {}
        tor = kernels_torch(torch, data, rep, num) if torch else {}
        print(f"Kernels (matmul {mat}x{mat} f32; elementwise/reduce on {n_elem:,} f32), time per run")
        print(f"  {'op':12s} {'ferroflow':>11s} {'NumPy':>11s} {'TF':>11s} {'PyTorch':>11s} {'ff vs NumPy':>12s} {'ff vs TF':>9s}")
        for k in ff:
            t_tf, t_to = tfk.get(k), tor.get(k)
            print(
                f"  {k:12s} {fmt_ms(ff[k])} {fmt_ms(npy[k])} {fmt_ms(t_tf) if t_tf else '          -'} "
                f"{fmt_ms(t_to) if t_to else '          -'} {npy[k] / ff[k]:11.2f}x "
                f"{(t_tf / ff[k]) if t_tf else float('nan'):8.2f}x"
            )
        gflops = 2 * mat**3 / ff["matmul"] / 1e9
        print(f"  ferroflow matmul: {gflops:.1f} GFLOP/s; NumPy: {2 * mat**3 / npy['matmul'] / 1e9:.1f} GFLOP/s")
        print(f"  ferroflow add: {3 * 4 * n_elem / ff['add'] / 1e9:.1f} GB/s moved; "
              f"STREAM-style triad (NumPy): {stream_triad_gbs(n_elem, rep):.1f} GB/s")
        print("  (ratios > 1 mean ferroflow is faster)")


if __name__ == "__main__":
    main()
