"""tf.image benchmarks: ferroflow against TensorFlow (and Pillow), side by side in one run.

    python benches/image.py [--quick] [--tf-python PY] [--only resize,chain]

* ``resize``: ``tf.image.resize_bilinear`` of a ``[32, 256, 256, 3]`` float32 batch (held in a
  variable, so nothing is fed or constant-folded) to 224x224; batches per second.
* ``chain``: the training-input chain of the cifar10/ImageNet scripts over JPEG files on disk,
  through ``tf.data``: ``read_file -> decode_jpeg -> random_crop -> resize_images(224, bilinear) ->
  random_flip_left_right -> random_brightness -> random_contrast -> per_image_standardization``,
  ``map(num_parallel_calls=AUTOTUNE).batch(32)``; images per second over whole epochs. Pillow runs
  the same chain (open, crop, bilinear resize, flip, brightness/contrast, NumPy standardization),
  in one process and in a ``multiprocessing.Pool`` of one worker per core (what a user without
  TensorFlow would write).

The JPEGs (500x375, quality 90, 4:2:0, like ImageNet's) are made once with Pillow into a temporary
folder shared by every worker. Each framework runs in its own process; ``--tf-python`` names the
interpreter with TensorFlow (and Pillow for the Pillow rows; default: this one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

IMAGE_SIZE = (500, 375)  # width, height
CROP = 300
OUT = 224
BATCH = 32


def make_jpegs(folder, count):
    from PIL import Image

    rng = np.random.RandomState(0)
    paths = []
    for i in range(count):
        # Smooth gradients plus noise: compresses like a photograph, not like white noise.
        w, h = IMAGE_SIZE
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([(xx * (i + 1)) % 256, (yy * 2 + i * 7) % 256, ((xx + yy) // 2) % 256], -1)
        img = np.clip(base + rng.randint(-20, 20, size=base.shape), 0, 255).astype(np.uint8)
        path = os.path.join(folder, f"img{i:04d}.jpg")
        Image.fromarray(img).save(path, quality=90, subsampling=2)
        paths.append(path)
    return paths


def _tf_module(framework):
    if framework == "tensorflow":
        import tensorflow as tf0

        tf = tf0.compat.v1
        tf.disable_eager_execution()
        return tf, tf0.__version__
    import ferroflow as tf

    return tf, "ferroflow"


def _timed(fn, number, repeat):
    fn()
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
        cpu.append((time.process_time() - c0) / number)
    return statistics.median(times), min(times), statistics.median(cpu)


def bench_resize(framework, quick):
    tf, version = _tf_module(framework)
    g = tf.Graph()
    with g.as_default():
        init = tf.placeholder(tf.float32, [32, 256, 256, 3])
        v = tf.Variable(init, trainable=False)
        out = tf.image.resize_bilinear(v, [OUT, OUT])
        total = tf.reduce_sum(out)
        with tf.Session() as sess:
            x = np.random.RandomState(1).rand(32, 256, 256, 3).astype(np.float32)
            sess.run(v.initializer, {init: x})
            check = float(sess.run(total))
            med, best, cpu = _timed(lambda: sess.run(out.op), 3 if quick else 10, 3 if quick else 5)
    return {"version": version, "sec": med, "best": best, "cpu": cpu, "per_s": 1 / med, "check": check,
            "unit": "batches/s"}


def preprocess(tf, path):
    img = tf.image.decode_jpeg(tf.read_file(path), channels=3)
    img = tf.random_crop(img, [CROP, CROP, 3])
    img = tf.image.resize_images(img, [OUT, OUT])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_brightness(img, max_delta=63)
    img = tf.image.random_contrast(img, lower=0.2, upper=1.8)
    return tf.image.per_image_standardization(img)


def bench_chain(framework, quick, paths):
    tf, version = _tf_module(framework)
    epochs = 1 if quick else 3
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensor_slices(paths)
        ds = ds.map(lambda p: preprocess(tf, p), num_parallel_calls=tf.data.experimental.AUTOTUNE)
        ds = ds.batch(BATCH).repeat()
        batch = tf.data.make_one_shot_iterator(ds).get_next()
        steps = len(paths) // BATCH
        with tf.Session() as sess:
            first = sess.run(batch)
            assert first.shape == (BATCH, OUT, OUT, 3), first.shape
            med, best, cpu = _timed(lambda: [sess.run(batch) for _ in range(steps)], 1, epochs)
    n = steps * BATCH
    return {"version": version, "sec": med / n, "best": best / n, "cpu": cpu / n, "per_s": n / med,
            "check": float(np.abs(first).mean()), "unit": "images/s"}


def _pillow_one(path):
    from PIL import Image, ImageEnhance

    rng = np.random.default_rng(abs(hash(path)) % (2**32))
    img = Image.open(path).convert("RGB")
    w, h = img.size
    x, y = rng.integers(0, w - CROP + 1), rng.integers(0, h - CROP + 1)
    img = img.crop((x, y, x + CROP, y + CROP)).resize((OUT, OUT), Image.BILINEAR)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    img = ImageEnhance.Brightness(img).enhance(1 + rng.uniform(-0.25, 0.25))
    img = ImageEnhance.Contrast(img).enhance(rng.uniform(0.2, 1.8))
    a = np.asarray(img, dtype=np.float32)
    return (a - a.mean()) / max(a.std(), 1 / np.sqrt(a.size))


def bench_pillow(quick, paths, pool_size):
    import PIL

    epochs = 1 if quick else 3
    n = len(paths) // BATCH * BATCH
    if pool_size > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(pool_size) as pool:
            def run():
                for i in range(0, n, BATCH):
                    np.stack(pool.map(_pillow_one, paths[i:i + BATCH]))
            med, best, cpu = _timed(run, 1, epochs)
    else:
        def run():
            for i in range(0, n, BATCH):
                np.stack([_pillow_one(p) for p in paths[i:i + BATCH]])
        med, best, cpu = _timed(run, 1, epochs)
    return {"version": f"Pillow {PIL.__version__} x{pool_size}", "sec": med / n, "best": best / n, "cpu": cpu / n,
            "per_s": n / med, "check": 0.0, "unit": "images/s"}


def worker(args):
    if args.worker == "pillow":
        r = bench_pillow(args.quick, json.loads(args.paths), args.pool)
    elif args.bench == "resize":
        r = bench_resize(args.worker, args.quick)
    else:
        r = bench_chain(args.worker, args.quick, json.loads(args.paths))
    print(json.dumps(r))


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


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"    worker failed: {tail}")
        return None
    return json.loads(lines[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow (and Pillow)")
    p.add_argument("--only", default="resize,chain")
    p.add_argument("--images", type=int, default=256)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--bench", help=argparse.SUPPRESS)
    p.add_argument("--paths", help=argparse.SUPPRESS)
    p.add_argument("--pool", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    print(f"machine: {machine()}")
    me = os.path.abspath(__file__)
    quick = ["--quick"] if args.quick else []
    only = set(args.only.split(","))
    if "resize" in only:
        print("resize_bilinear [32,256,256,3] float32 -> 224x224")
        res = {}
        for fw, py in (("ferroflow", sys.executable), ("tensorflow", args.tf_python)):
            res[fw] = r = _run([py, me, "--worker", fw, "--bench", "resize", *quick])
            if r:
                print(f"  {fw:<11} {r['per_s']:8.1f} {r['unit']}  ({r['sec'] * 1e3:.2f} ms, best {r['best'] * 1e3:.2f} ms,"
                      f" {r['cpu'] * 1e3:.2f} CPU-ms)  checksum {r['check']:.6g}")
        if res["ferroflow"] and res["tensorflow"]:
            print(f"  ferroflow / TensorFlow: {res['tensorflow']['sec'] / res['ferroflow']['sec']:.2f}x (median), "
                  f"{res['tensorflow']['best'] / res['ferroflow']['best']:.2f}x (best)")
    if "chain" in only:
        with tempfile.TemporaryDirectory() as folder:
            paths = make_jpegs(folder, args.images)
            print(f"preprocessing chain over {len(paths)} JPEGs {IMAGE_SIZE[0]}x{IMAGE_SIZE[1]}, batch {BATCH}")
            res = {}
            runs = [("ferroflow", sys.executable, 1), ("tensorflow", args.tf_python, 1),
                    ("pillow", args.tf_python, 1), ("pillow", args.tf_python, os.cpu_count() or 1)]
            for fw, py, pool in runs:
                key = fw if fw != "pillow" else f"pillow x{pool}"
                res[key] = r = _run([py, me, "--worker", fw, "--bench", "chain", "--paths", json.dumps(paths),
                                     "--pool", str(pool), *quick])
                if r:
                    print(f"  {key:<11} {r['version']:<18} {r['per_s']:8.1f} {r['unit']}  "
                          f"({r['sec'] * 1e3:.2f} ms/image, best {r['best'] * 1e3:.2f}, {r['cpu'] * 1e3:.2f} CPU-ms)")
            f = res.get("ferroflow")
            for other in ("tensorflow", "pillow x1", f"pillow x{os.cpu_count() or 1}"):
                if f and res.get(other):
                    print(f"  ferroflow / {other}: {res[other]['sec'] / f['sec']:.2f}x (median), "
                          f"{res[other]['best'] / f['best']:.2f}x (best)")


if __name__ == "__main__":
    main()
