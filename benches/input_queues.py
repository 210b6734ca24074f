"""Queue-based input pipeline benchmark, side by side with TensorFlow.

    python benches/input_queues.py [--quick] [--tf-python PY] [--examples N]

The same TF1 code runs under ferroflow and under TensorFlow's ``tf.compat.v1`` (graph mode), each in its own
process, over the same files (tf.train.Examples with 10 FixedLen features: 5 float32 [4] and 5 int64 []; one
VarLen int64 of 0-15 values; one 1 KB bytes feature):

  queues  string_input_producer(num_epochs=1) -> TFRecordReader -> parse_single_example -> shuffle_batch(128,
          capacity 2048, min_after_dequeue 512, num_threads=4, allow_smaller_final_batch) with queue runners,
          the main thread pulling batches until OutOfRangeError: examples per second through one epoch
          (graph built, session opened and runners started outside the timing).

Every figure is the median of several timed repetitions after a warm-up. ``--tf-python`` names the interpreter
with TensorFlow (default: this one); its column is absent when TensorFlow does not import.
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

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from _input_examples import NUM_FILES, machine, spec, write_records  # noqa: E402

BATCH = 128
THREADS = 4


def one_epoch(tf, paths):
    """Seconds to pull every batch of one epoch through the queue pipeline, and the examples seen."""
    g = tf.Graph()
    with g.as_default():
        files = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
        _, serialized = tf.TFRecordReader().read(files)
        example = tf.parse_single_example(serialized, spec(tf))
        batch = tf.train.shuffle_batch(example, BATCH, capacity=2048, min_after_dequeue=512, num_threads=THREADS,
                                       seed=1, allow_smaller_final_batch=True)
        size = tf.shape(batch["i0"])[0]
        with tf.Session(graph=g) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord=coord)
            n = 0
            t0 = time.perf_counter()
            try:
                while True:
                    _, k = sess.run([batch, size])
                    n += int(k)
            except tf.errors.OutOfRangeError:
                pass
            seconds = time.perf_counter() - t0
            coord.request_stop()
            coord.join(threads)
    return seconds, n


def worker(framework, paths, quick):
    if framework == "ferroflow":
        import ferroflow as tf

        out = {"version": tf.__version__}
    else:
        try:
            import tensorflow as mod
        except Exception:
            print(json.dumps(None))
            return
        tf = mod.compat.v1
        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        out = {"version": mod.__version__}
    try:
        one_epoch(tf, paths)  # warm-up
        runs = [one_epoch(tf, paths) for _ in range(3 if quick else 5)]
        out["queues"] = {"seconds": statistics.median(r[0] for r in runs), "examples": runs[-1][1]}
    except Exception as e:  # report, don't crash
        out["queues"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tf-python", default=sys.executable, help="interpreter with TensorFlow")
    parser.add_argument("--examples", type=int, default=None, help="examples written (default 40960, quick 10240)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--paths", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.paths.split(","), args.quick)
        return

    print(f"machine: {machine()}")
    num = args.examples or (10240 if args.quick else 40960)
    with tempfile.TemporaryDirectory(prefix="ff-queue-bench-") as d:
        paths, num = write_records(d, num)
        size = sum(os.path.getsize(p) for p in paths)
        print(f"data: {num:,} Examples in {NUM_FILES} TFRecord files, {size / 1e6:.1f} MB (page cache warm)")
        res = {}
        for fw, py in (("ferroflow", sys.executable), ("tensorflow", args.tf_python)):
            cmd = [py, os.path.abspath(__file__), "--worker", fw, "--paths", ",".join(paths)]
            cmd += ["--quick"] if args.quick else []
            proc = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") or ln == "null"]
            res[fw] = json.loads(lines[-1]) if lines else None
            if proc.returncode != 0:
                print(f"{fw}: worker failed ({(proc.stderr.strip().splitlines() or ['?'])[-1]})")
    ff, tfr = res["ferroflow"], res["tensorflow"]
    print(f"ferroflow: {ff.get('version') if ff else 'absent'}, TensorFlow: {tfr.get('version') if tfr else 'absent'}")
    print("\nRates: median, higher is better. ff/TF: ferroflow's rate over TensorFlow's.")
    print(f"  {'case':78s} {'unit':12s} {'ferroflow':>11s} {'TF':>11s} {'ff/TF':>7s}")

    def rate(r):
        v = (r or {}).get("queues") or {}
        if "seconds" not in v:
            return None, v.get("error"), None
        return v["examples"] / v["seconds"], None, v["examples"]

    (f, fe, fn), (t, te, tn) = rate(ff), rate(tfr)
    cell = lambda v: f"{v:11,.0f}" if v else f"{'-':>11s}"  # noqa: E731
    ratio = f"{f / t:6.2f}x" if f and t else f"{'-':>7s}"
    label = f"string_input_producer -> TFRecordReader -> parse_single_example -> shuffle_batch({BATCH}, {THREADS} thr)"
    print(f"  {label:78s} {'examples/s':12s} {cell(f)} {cell(t)} {ratio}")
    for who, err, n in (("ferroflow", fe, fn), ("TensorFlow", te, tn)):
        if err:
            print(f"    {who}: {err}")
        elif n is not None and n != num:
            print(f"    {who}: saw {n} examples of {num}")


if __name__ == "__main__":
    main()
