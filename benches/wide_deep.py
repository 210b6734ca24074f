"""Wide-and-deep training step with feature columns: ferroflow against TensorFlow 2.21, side by side.

    python benches/wide_deep.py [--quick] [--tf-python PY] [--profile]

A Criteo-shaped model, TF1 style: 13 numeric columns and 26 categorical string columns (13 with hash buckets
of 10,000, 13 with in-memory vocabularies of 1,000 entries plus 100 OOV buckets) parsed by ``parse_example``
from serialized ``tf.train.Example``s fed as a batch of 512 strings per step. The wide part is
``linear_model`` over the 26 categorical columns and 3 crosses (FTRL); the deep part is ``input_layer`` over
the numeric columns and a 16-dimensional ``embedding_column`` of every categorical column, then 256-128-64
ReLU layers (Adagrad). Reported: examples per second of full training steps (parse, forward, backward, both
optimizers' sparse updates), median of several repetitions, and the loss after the run (the two start from
different random weights, so losses only need to be of the same size). Each framework runs in its own
process with the same graph code; ``--tf-python`` names the interpreter with TensorFlow (default
/work/tfvenv/bin/python).
"""

from __future__ import annotations

import os
import sys

# benches/ holds a random.py benchmark, which would shadow the standard library's random module (imported by
# statistics, tempfile, ...) for a script run from this directory: drop the script's directory from the path.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

BATCH = 512
N_NUM = 13
N_HASH = 13
N_VOCAB = 13
HASH_BUCKETS = 10_000
VOCAB_SIZE = 1_000
OOV = 100
DIM = 16
HIDDEN = (256, 128, 64)
N_BATCHES = 8  # distinct batches cycled through


def make_batches(tf):
    """Serialized examples: numeric values, one token per categorical column (skewed, 5% out of vocabulary)."""
    rng = np.random.RandomState(0)
    batches = []
    for _ in range(N_BATCHES):
        batch = []
        for _ in range(BATCH):
            feats = {"label": tf.train.Feature(float_list=tf.train.FloatList(value=[float(rng.rand() < 0.3)]))}
            for i in range(N_NUM):
                feats[f"n{i}"] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(rng.lognormal())]))
            for i in range(N_HASH):
                tok = f"h{i}_{int(rng.zipf(1.3)) % 50_000}".encode()
                feats[f"h{i}"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[tok]))
            for i in range(N_VOCAB):
                k = int(rng.zipf(1.2)) % int(VOCAB_SIZE * 1.05)
                feats[f"v{i}"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"v{i}_{k}".encode()]))
            ex = tf.train.Example(features=tf.train.Features(feature=feats))
            batch.append(ex.SerializeToString())
        batches.append(batch)
    return batches


def build(tf, fc):
    numeric = [fc.numeric_column(f"n{i}") for i in range(N_NUM)]
    hashed = [fc.categorical_column_with_hash_bucket(f"h{i}", HASH_BUCKETS) for i in range(N_HASH)]
    vocab = [fc.categorical_column_with_vocabulary_list(f"v{i}", [f"v{i}_{k}" for k in range(VOCAB_SIZE)],
                                                        num_oov_buckets=OOV) for i in range(N_VOCAB)]
    crosses = [fc.crossed_column(["h0", "v0"], 100_000), fc.crossed_column(["h1", "h2"], 100_000),
               fc.crossed_column(["v1", "v2"], 100_000)]
    wide = hashed + vocab + crosses
    deep = numeric + [fc.embedding_column(c, DIM) for c in hashed + vocab]
    spec = fc.make_parse_example_spec(wide + deep + [fc.numeric_column("label")])
    serialized = tf.placeholder(tf.string, [None], name="serialized")
    features = tf.parse_example(serialized, features=spec)
    labels = features.pop("label")
    linear_logits = fc.linear_model(features, wide)
    net = fc.input_layer(features, deep)
    with tf.variable_scope("dnn"):
        for i, units in enumerate(HIDDEN):
            with tf.variable_scope(f"hiddenlayer_{i}"):
                w = tf.get_variable("kernel", [int(net.get_shape()[1]), units])
                b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
                net = tf.nn.relu(tf.nn.bias_add(tf.matmul(net, w), b))
        with tf.variable_scope("logits"):
            w = tf.get_variable("kernel", [HIDDEN[-1], 1])
            b = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
            dnn_logits = tf.nn.bias_add(tf.matmul(net, w), b)
    logits = linear_logits + dnn_logits
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    linear_vars = [v for v in tf.trainable_variables() if v.name.startswith("linear_model/")]
    deep_vars = [v for v in tf.trainable_variables() if not v.name.startswith("linear_model/")]
    train = tf.group(tf.train.FtrlOptimizer(0.05).minimize(loss, var_list=linear_vars),
                     tf.train.AdagradOptimizer(0.05).minimize(loss, var_list=deep_vars))
    return serialized, loss, train


def worker(which, quick):
    if which == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        version = tf.__version__
    else:
        import ferroflow as tf

        version = "ferroflow " + tf.__version__
    tf.set_random_seed(1)
    batches = make_batches(tf)
    t0 = time.perf_counter()
    serialized, loss, train = build(tf, tf.feature_column)
    steps = 10 if quick else 40
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        build_s = time.perf_counter() - t0
        for i in range(3):  # warm up (first runs compile the step)
            sess.run(train, {serialized: batches[i % N_BATCHES]})
        times = []
        for _ in range(3 if quick else 5):
            t0 = time.perf_counter()
            for i in range(steps):
                sess.run(train, {serialized: batches[i % N_BATCHES]})
            times.append(time.perf_counter() - t0)
        final_loss = float(np.mean([sess.run(loss, {serialized: b}) for b in batches]))
    best = statistics.median(times)
    return {"version": version, "build_s": build_s, "step_ms": 1e3 * best / steps,
            "examples_per_s": steps * BATCH / best, "loss": final_loss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--worker", choices=["ff", "tf"])
    ap.add_argument("--only", choices=["ff", "tf"])
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.quick)))
        return
    extra = ["--quick"] if args.quick else []
    results = {}
    for which, py in (("ff", sys.executable), ("tf", args.tf_python)):
        if args.only and which != args.only:
            continue
        out = subprocess.run([py, __file__, "--worker", which] + extra, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{which} failed:\n{out.stderr[-3000:]}", file=sys.stderr)
            continue
        if which == "ff" and os.environ.get("FERROFLOW_PROFILE"):
            print(out.stderr[-6000:], file=sys.stderr)
        results[which] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"wide & deep: {N_NUM} numeric + {N_HASH} hashed + {N_VOCAB} vocabulary columns, 3 crosses, "
          f"embeddings {DIM}, DNN {'-'.join(map(str, HIDDEN))}, batch {BATCH}, FTRL + Adagrad; "
          f"{platform.processor() or ''} {os.cpu_count()} CPUs")
    print(f"{'':28} {'build+init':>11} {'step':>10} {'examples/s':>12} {'loss':>8}")
    for r in results.values():
        print(f"{r['version']:28} {r['build_s']:10.2f}s {r['step_ms']:8.1f}ms {r['examples_per_s']:12.0f} "
              f"{r['loss']:8.4f}")
    if len(results) == 2:
        ff, tf = results["ff"], results["tf"]
        print(f"ferroflow / TensorFlow: {ff['examples_per_s'] / tf['examples_per_s']:.2f}x examples/s")


if __name__ == "__main__":
    main()
