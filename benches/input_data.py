"""tf.data benchmarks, side by side with TensorFlow.

    python benches/input_data.py [--quick] [--only parse,raw,mlp] [--tf-python PY]

The same TF1 code runs under ferroflow and under TensorFlow's ``tf.compat.v1`` (graph mode), each in
its own process, over the same files:

  parse  TFRecord files of tf.train.Examples (10 FixedLen features: 5 float32 [4] and 5 int64 [];
         one VarLen int64 of 0-15 values; one 1 KB bytes feature) -> TFRecordDataset -> batch(256)
         -> map(parse_example, num_parallel_calls=AUTOTUNE) -> prefetch(AUTOTUNE) -> get_next:
         examples per second through a whole epoch (TensorFlow's best settings for this pipeline:
         parallel map, AUTOTUNE, prefetch).
  raw    the same files -> TFRecordDataset -> batch(256) -> get_next: the rate of reading the raw
         records alone, the ceiling for "parse".
  mlp    an MLP 784-512-512-10 (ReLU, softmax cross-entropy, SGD) trained with batch 128, fed by
         tf.data (from_tensor_slices -> repeat -> batch -> prefetch -> one-shot iterator) and by
         feed_dict of the same arrays; steps per second.

Every figure is the median of several timed repetitions after a warm-up. ``--tf-python`` names the
interpreter with TensorFlow (default: this one); its column is absent when TensorFlow does not import.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from _input_examples import NUM_FILES, machine, spec, write_records  # noqa: E402

BATCH = 256
MLP_BATCH = 128
MLP_STEPS = 50


def med(fn, repeat):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def epoch_time(tf, session, build, repeat):
    """Seconds to pull every batch of one epoch (a fresh initializable iterator run each time)."""
    g = tf.Graph()
    with g.as_default():
        ds = build()
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        with session(g) as sess:
            counted = []

            def one_epoch():
                sess.run(it.initializer)
                n = 0
                try:
                    while True:
                        sess.run(nxt)
                        n += 1
                except tf.errors.OutOfRangeError:
                    counted.append(n)

            t = med(one_epoch, repeat)
    return t, counted[-1]


def mlp(tf, session, quick):
    rng = np.random.RandomState(0)
    n = MLP_BATCH * 20
    xs = rng.rand(n, 784).astype(np.float32)
    ys = rng.randint(0, 10, n).astype(np.int64)

    def model(x, y):
        init = tf.glorot_uniform_initializer(seed=1)
        h = x
        for i, units in enumerate((512, 512)):
            w = tf.get_variable(f"w{i}", [h.shape[1], units], initializer=init)
            b = tf.get_variable(f"b{i}", [units], initializer=tf.zeros_initializer())
            h = tf.nn.relu(tf.matmul(h, w) + b)
        w = tf.get_variable("wo", [512, 10], initializer=init)
        logits = tf.matmul(h, w)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        return tf.train.GradientDescentOptimizer(0.01).minimize(loss)

    out = {}
    repeat = 3 if quick else 5
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensor_slices((xs, ys)).repeat().batch(MLP_BATCH).prefetch(2)
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        train = model(x, y)
        with session(g) as sess:
            sess.run(tf.global_variables_initializer())

            def steps():
                for _ in range(MLP_STEPS):
                    sess.run(train)

            out["data"] = med(steps, repeat) / MLP_STEPS
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        train = model(x, y)
        batches = [(xs[i:i + MLP_BATCH], ys[i:i + MLP_BATCH]) for i in range(0, n, MLP_BATCH)]
        with session(g) as sess:
            sess.run(tf.global_variables_initializer())

            def steps():
                for i in range(MLP_STEPS):
                    bx, by = batches[i % len(batches)]
                    sess.run(train, {x: bx, y: by})

            out["feed"] = med(steps, repeat) / MLP_STEPS
    return out


def run_cases(tf, session, cases, paths, quick):
    out = {}
    repeat = 3 if quick else 5
    auto = tf.data.experimental.AUTOTUNE
    for case in cases:
        try:
            if case == "parse":
                def build():
                    return (tf.data.TFRecordDataset(paths).batch(BATCH)
                            .map(lambda s: tf.io.parse_example(s, spec(tf)), num_parallel_calls=auto)
                            .prefetch(auto))
            elif case == "raw":
                def build():
                    return tf.data.TFRecordDataset(paths).batch(BATCH)
            elif case == "mlp":
                out[case] = mlp(tf, session, quick)
                continue
            else:
                raise ValueError(case)
            t, batches = epoch_time(tf, session, build, repeat)
            out[case] = {"seconds": t, "batches": batches}
        except Exception as e:  # report, don't crash
            out[case] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
    return out


def worker(framework, cases, paths, quick):
    if framework == "ferroflow":
        import ferroflow as tf

        out = {"version": tf.__version__}
        out.update(run_cases(tf, lambda g: tf.Session(graph=g), cases, paths, quick))
    else:
        try:
            import tensorflow as mod
        except Exception:
            print(json.dumps(None))
            return
        v1 = mod.compat.v1
        v1.disable_eager_execution()
        v1.logging.set_verbosity(v1.logging.ERROR)
        out = {"version": mod.__version__}
        out.update(run_cases(v1, lambda g: v1.Session(graph=g), cases, paths, quick))
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="parse,raw,mlp")
    parser.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    parser.add_argument("--examples", type=int, default=None, help="examples written (default 40960, quick 10240)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--paths", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = [c for c in args.only.split(",") if c]
    if args.worker:
        worker(args.worker, cases, args.paths.split(","), args.quick)
        return

    print(f"machine: {machine()}")
    num = args.examples or (10240 if args.quick else 40960)
    with tempfile.TemporaryDirectory(prefix="ff-input-bench-") as d:
        paths, num = write_records(d, num)
        size = sum(os.path.getsize(p) for p in paths)
        print(f"data: {num:,} Examples in {NUM_FILES} TFRecord files, {size / 1e6:.1f} MB (page cache warm)")
        res = {}
        for fw, py in (("ferroflow", sys.executable), ("tensorflow", args.tf_python)):
            cmd = [py, os.path.abspath(__file__), "--worker", fw, "--only", ",".join(cases), "--paths", ",".join(paths)]
            cmd += ["--quick"] if args.quick else []
            proc = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
            res[fw] = json.loads(lines[-1]) if lines else None
            if proc.returncode != 0:
                print(f"{fw}: worker failed ({(proc.stderr.strip().splitlines() or ['?'])[-1]})")
    ff, tfr = res["ferroflow"], res["tensorflow"]
    print(f"ferroflow: {ff.get('version') if ff else 'absent'}, TensorFlow: {tfr.get('version') if tfr else 'absent'}")
    print("\nRates: median, higher is better. ff/TF: ferroflow's rate over TensorFlow's.")
    print(f"  {'case':58s} {'unit':12s} {'ferroflow':>11s} {'TF':>11s} {'ff/TF':>7s}")

    def rate(r, case):
        v = (r or {}).get(case) or {}
        if "seconds" not in v:
            return None, v.get("error")
        return num / v["seconds"], None

    labels = {
        "parse": "TFRecord -> batch 256 -> parse_example (12 features) -> prefetch",
        "raw": "TFRecord -> batch 256 (raw records)",
    }
    for case in ("parse", "raw"):
        if case not in cases:
            continue
        (f, fe), (t, te) = rate(ff, case), rate(tfr, case)
        cell = lambda v: f"{v:11,.0f}" if v else f"{'-':>11s}"  # noqa: E731
        ratio = f"{f / t:6.2f}x" if f and t else f"{'-':>7s}"
        print(f"  {labels[case]:58s} {'examples/s':12s} {cell(f)} {cell(t)} {ratio}")
        for who, err in (("ferroflow", fe), ("TensorFlow", te)):
            if err:
                print(f"    {who}: {err}")
    if "mlp" in cases:
        for who, r in (("ferroflow", ff), ("TensorFlow", tfr)):
            m = (r or {}).get("mlp") or {}
            if "data" in m:
                print(
                    f"  MLP 784-512-512-10 b{MLP_BATCH} SGD, {who:10s}: tf.data {1 / m['data']:8.1f} steps/s, "
                    f"feed_dict {1 / m['feed']:8.1f} steps/s (tf.data/feed {m['feed'] / m['data']:.2f}x)"
                )
            elif m:
                print(f"  MLP, {who}: {m.get('error')}")


if __name__ == "__main__":
    main()
