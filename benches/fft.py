"""FFTs (tf.signal): ferroflow vs TensorFlow 2.21 and NumPy (``numpy.fft``), in one run.

    python benches/fft.py [--quick] [--tf-python /work/tfvenv/bin/python]

ferroflow runs in this interpreter; TensorFlow and NumPy in a child process running ``--tf-python``
(skipped when it is absent). In ferroflow and TensorFlow the input is a variable and the timed call runs the
transform's op as a target (``sess.run(y.op)``: the op computes its output, nothing is fetched or copied out);
NumPy times ``np.fft.*`` on an array of the same dtype (NumPy 2 keeps complex64/float32 in single precision).
Figures are medians after a warm-up. GFLOP/s use the customary nominal count ``5 N log2 N`` per complex
transform of N points (half that for a real one), the same for every library, so the ratios are time ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# (name, signal function, input shape, dtype, fft_length or None)
CASES = [
    ("fft [512,4096] c64", "fft", [512, 4096], "complex64", None),
    ("ifft [512,4096] c64", "ifft", [512, 4096], "complex64", None),
    ("fft [512,4099] c64 prime", "fft", [512, 4099], "complex64", None),
    ("fft [256,4096] c128", "fft", [256, 4096], "complex128", None),
    ("rfft [256,16384] f32", "rfft", [256, 16384], "float32", None),
    ("irfft [256,8193] c64", "irfft", [256, 8193], "complex64", None),
    ("fft2d [16,512,512] c64", "fft2d", [16, 512, 512], "complex64", None),
    ("rfft2d [16,512,512] f32", "rfft2d", [16, 512, 512], "float32", None),
    ("fft3d [4,64,64,64] c64", "fft3d", [4, 64, 64, 64], "complex64", None),
]
QUICK = {"fft [512,4096] c64", "rfft [256,16384] f32", "fft2d [16,512,512] c64"}


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _input(np, shape, dtype):
    rs = np.random.RandomState(0)
    x = rs.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        x = x + 1j * rs.uniform(-1, 1, shape)
    return x.astype(dtype)


def _cases(quick):
    return [c for c in CASES if not quick or c[0] in QUICK]


def measure_graph(tf, quick):
    """{case: seconds} for the module ``tf`` (tf.compat.v1 style)."""
    import numpy as np

    repeat = 5 if quick else 15
    out = {}
    for name, fn, shape, dtype, length in _cases(quick):
        with tf.Graph().as_default():
            x = tf.Variable(_input(np, shape, dtype))
            f = getattr(tf.signal, fn)
            y = f(x) if length is None and fn.startswith(("fft", "ifft")) else f(x, fft_length=length)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out[name] = timeit(lambda y=y, sess=sess: sess.run(y.op), repeat)
    return out


def measure_numpy(quick):
    """{case: seconds} of ``numpy.fft``."""
    import numpy as np

    repeat = 5 if quick else 15
    fns = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft,
           "fft2d": np.fft.fft2, "rfft2d": np.fft.rfft2, "fft3d": lambda a: np.fft.fftn(a, axes=(-3, -2, -1))}
    out = {}
    for name, fn, shape, dtype, _ in _cases(quick):
        x = _input(np, shape, dtype)
        out[name] = timeit(lambda x=x, f=fns[fn]: f(x), repeat)
    return out


def gflops(name):
    for n_, fn, shape, _, _ in CASES:
        if n_ == name:
            rank = {"fft3d": 3}.get(fn, 2 if fn.endswith("2d") else 1)
            inner = shape[-rank:]
            if fn == "irfft":
                inner = inner[:-1] + [2 * (inner[-1] - 1)]
            points = math.prod(inner)
            batch = math.prod(shape[:-rank])
            work = 5.0 * points * math.log2(points) * batch
            return work / 2 if fn in ("rfft", "irfft", "rfft2d") else work
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
    print(f"{'case':<26} {'ferroflow':>10} {'GFLOP/s':>8} {'TF':>10} {'NumPy':>10} {'vs TF':>6} {'vs NumPy':>8} "
          f"{'vs best':>7}")
    for name in ours:
        f = ours[name]
        t = theirs["tf"].get(name, nan)
        n_ = theirs["np"].get(name, nan)
        best = min(v for v in (t, n_) if v == v) if any(v == v for v in (t, n_)) else nan
        print(f"{name:<26} {f * 1e3:7.2f} ms {gflops(name) / f / 1e9:8.1f} {t * 1e3:7.2f} ms {n_ * 1e3:7.2f} ms "
              f"{t / f:5.2f}x {n_ / f:7.2f}x {best / f:6.2f}x")


if __name__ == "__main__":
    main()
