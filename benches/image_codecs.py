"""decode_jpeg benchmark: ferroflow against TensorFlow and Pillow, side by side.

    python benches/image_codecs.py [--quick] [--tf-python PY]

Decodes the same JPEG files (tests/fixtures/image_codecs/bench_224x224.jpg
and bench_1024x768.jpg, baseline 4:2:0, quality 90, written by
tools/make_image_codec_fixtures.py) to RGB uint8 arrays, one image per call:

* ferroflow: ``tf.io.decode_jpeg`` (TF's default attributes) on a string
  placeholder, one ``Session.run`` per image;
* TensorFlow 2.21: the same graph through ``tf.compat.v1`` (``--tf-python``
  names the interpreter with TensorFlow);
* Pillow: ``Image.open(...).convert("RGB")`` then ``np.asarray`` (libjpeg-turbo
  with its own defaults: accurate IDCT), what a user would write instead.

Each runs in its own process. Reported: images per second (median of
several timed repetitions after a warm-up), CPU time per image, and a
checksum of the pixels (ferroflow's and TensorFlow's must agree: same IDCT
and upsampling).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["bench_224x224.jpg", "bench_1024x768.jpg"]


def load(name):
    with open(os.path.join(HERE, "..", "tests", "fixtures", "image_codecs", name), "rb") as f:
        return f.read()


def timed(fn, quick, budget):
    """Median seconds per call, median CPU seconds per call, last result."""
    out = fn()
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-6)
    number = max(1, int(budget / one / (3 if quick else 7)))
    times, cpu = [], []
    for _ in range(3 if quick else 7):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            out = fn()
        times.append((time.perf_counter() - t0) / number)
        cpu.append((time.process_time() - c0) / number)
    return statistics.median(times), statistics.median(cpu), out


def worker(framework, quick):
    budget = 0.5 if quick else 2.0
    results = {}
    if framework == "pillow":
        import PIL
        from PIL import Image

        version = f"Pillow {PIL.__version__}"
        for name in FILES:
            data = load(name)
            sec, cpu, img = timed(lambda d=data: np.asarray(Image.open(io.BytesIO(d)).convert("RGB")), quick, budget)
            results[name] = {"sec": sec, "cpu": cpu, "shape": list(img.shape), "check": int(img.sum(dtype=np.int64))}
    else:
        if framework == "tensorflow":
            import tensorflow as tf0

            tf = tf0.compat.v1
            tf.disable_eager_execution()
            version = f"TensorFlow {tf0.__version__}"
        else:
            import ferroflow as tf

            version = "ferroflow"
        g = tf.Graph()
        with g.as_default():
            ph = tf.placeholder(tf.string, [])
            out = tf.io.decode_jpeg(ph, channels=3)
            with tf.Session() as sess:
                for name in FILES:
                    data = load(name)
                    sec, cpu, img = timed(lambda d=data: sess.run(out, {ph: d}), quick, budget)
                    results[name] = {
                        "sec": sec,
                        "cpu": cpu,
                        "shape": list(img.shape),
                        "check": int(img.sum(dtype=np.int64)),
                    }
    print(json.dumps({"version": version, "results": results}))


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
    p.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    p.add_argument("--pillow-python", default=sys.executable, help="interpreter with Pillow")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.worker, args.quick)
        return
    print(f"machine: {machine()}")
    print("decode_jpeg, one image per call, RGB uint8 out")
    res = {}
    for fw, py in (("ferroflow", sys.executable), ("tensorflow", args.tf_python), ("pillow", args.pillow_python)):
        cmd = [py, os.path.abspath(__file__), "--worker", fw]
        if args.quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        res[fw] = json.loads(lines[-1]) if lines else None
        if res[fw] is None:
            print(f"  {fw}: failed\n{proc.stderr[-2000:]}")
    print(f"{'image':<22}{'framework':<22}{'images/s':>12}{'ms/image':>11}{'cpu ms':>9}  time vs ff  checksum")
    for name in FILES:
        base = res["ferroflow"]["results"][name]["sec"] if res.get("ferroflow") else None
        for fw in ("ferroflow", "tensorflow", "pillow"):
            if not res.get(fw):
                continue
            r = res[fw]["results"][name]
            ratio = f"{r['sec'] / base:10.2f}x" if base else ""
            print(
                f"{name:<22}{res[fw]['version']:<22}{1 / r['sec']:12.1f}{r['sec'] * 1e3:11.3f}"
                f"{r['cpu'] * 1e3:9.3f}  {ratio:>11}  {r['check']}"
            )
    if res.get("ferroflow") and res.get("tensorflow"):
        same = all(
            res["ferroflow"]["results"][n]["check"] == res["tensorflow"]["results"][n]["check"] for n in FILES
        )
        print(f"ferroflow's pixels {'equal' if same else 'DIFFER FROM'} TensorFlow's (checksums)")


if __name__ == "__main__":
    main()
