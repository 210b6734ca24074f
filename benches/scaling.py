"""Training throughput against thread count, side by side with PyTorch and TensorFlow.

    python benches/scaling.py [--threads 1,2,4] [--frameworks ferroflow,torch,tf]
                              [--ferroflow-bin target/release/examples/scaling]
                              [--seconds 2] [--busy N] [--tf-python PATH] [--torch-python PATH]

Three training steps with Adam on fixed data, the same in every framework:
an MLP 784-512-512-10 at batch 128 and 512 (``mlp128``, ``mlp512``) and a
small convnet at batch 64 (``conv64``: 5x5 convolutions of 32 and 64
channels, each with ReLU and 2x2 max pooling, then dense 3136-256-10). Each
(framework, thread count) runs in its own process, so every library sizes its
thread pool once: ferroflow through ``RAYON_NUM_THREADS``, PyTorch through
``torch.set_num_threads``, TensorFlow through ``intra_op_parallelism_threads``
(and ``inter_op_parallelism_threads``). ``gemm`` is the machine's f32 GEMM
rate at that thread count (a 2048-cube product through each framework's matmul).

``--ferroflow-bin`` adds the Rust facade's figures (``crates/ferroflow/
examples/scaling.rs``, built with ``cargo build --release --example scaling
-p ferroflow``): on machines where the Python wheel is not installed, the
sweep still compares the engine with PyTorch. ``--busy N`` keeps N processes
spinning on the CPU during the sweep (the "other work holds some cores"
case). The default thread counts are 1, 2, 4, ... up to the CPUs this process
may use (its affinity mask), and that count itself.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import time

MODELS = ["mlp128", "mlp512", "conv64"]
MLP_SIZES = [784, 512, 512, 10]
LINE = re.compile(r"^(\S+)\s+(\S+)\s+threads\s+(\d+)\s+([\d.]+) steps/s\s+([\d.]+) GFLOP/s")


def mlp_flops(batch):
    fwd = sum(2.0 * batch * a * b for a, b in zip(MLP_SIZES, MLP_SIZES[1:]))
    # No input gradient for the first layer.
    return 3 * fwd - 2.0 * batch * MLP_SIZES[0] * MLP_SIZES[1]


def conv_flops(batch):
    convs = [2.0 * batch * 28 * 28 * 25 * 1 * 32, 2.0 * batch * 14 * 14 * 25 * 32 * 64]
    dense = [2.0 * batch * 3136 * 256, 2.0 * batch * 256 * 10]
    return 3 * (sum(convs) + sum(dense)) - convs[0]


FLOPS = {"mlp128": mlp_flops(128), "mlp512": mlp_flops(512), "conv64": conv_flops(64)}
BATCH = {"mlp128": 128, "mlp512": 512, "conv64": 64}


def rate(step, seconds):
    for _ in range(3):
        step()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds or n < 3:
        step()
        n += 1
    return n / (time.perf_counter() - t0)


def graph_model(tf, name, rng):
    """Builds the model in a TF1-style graph; returns (train_op, loss)."""
    import numpy as np

    batch = BATCH[name]
    labels = tf.constant(rng.integers(0, 10, batch).astype(np.int32))

    def dense(h, fan_in, fan_out, relu):
        limit = (6.0 / (fan_in + fan_out)) ** 0.5
        w = tf.Variable(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        b = tf.Variable(np.zeros(fan_out, np.float32))
        h = tf.matmul(h, w) + b
        return tf.nn.relu(h) if relu else h

    if name.startswith("mlp"):
        h = tf.constant(rng.uniform(-1, 1, (batch, 784)).astype(np.float32))
        for i, (a, b) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
            h = dense(h, a, b, i + 2 < len(MLP_SIZES))
    else:
        h = tf.constant(rng.uniform(-1, 1, (batch, 28, 28, 1)).astype(np.float32))
        for cin, cout in [(1, 32), (32, 64)]:
            limit = (6.0 / ((cin + cout) * 25)) ** 0.5
            w = tf.Variable(rng.uniform(-limit, limit, (5, 5, cin, cout)).astype(np.float32))
            b = tf.Variable(np.zeros(cout, np.float32))
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), b))
            h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        h = tf.reshape(h, [batch, 3136])
        h = dense(h, 3136, 256, True)
        h = dense(h, 256, 10, False)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
    return tf.train.AdamOptimizer(1e-3).minimize(loss), loss


def child_graph(framework, threads, models, seconds):
    import numpy as np

    if framework == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    else:
        import ferroflow as tf

        config = None
    for name in models:
        if name == "gemm":
            with tf.Graph().as_default():
                a = tf.Variable(np.random.default_rng(0).standard_normal((2048, 2048), np.float32))
                product = tf.matmul(a, a).op  # run as a target: nothing copied out
                with tf.Session(config=config) as sess:
                    sess.run(a.initializer)
                    per_s = rate(lambda s=sess, p=product: s.run(p), seconds)
            report(framework, name, threads, per_s, 2.0 * 2048**3)
            continue
        rng = np.random.default_rng(42)
        with tf.Graph().as_default():
            train, loss = graph_model(tf, name, rng)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                per_s = rate(lambda s=sess, t=train: s.run(t), seconds)
                assert np.isfinite(sess.run(loss))
        report(framework, name, threads, per_s, FLOPS[name])


def child_torch(threads, models, seconds):
    import torch
    from torch import nn

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    for name in models:
        if name == "gemm":
            a = torch.randn(2048, 2048)
            report("torch", name, threads, rate(lambda a=a: a @ a, seconds), 2.0 * 2048**3)
            continue
        batch = BATCH[name]
        if name.startswith("mlp"):
            layers = []
            for i, (a, b) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
                layers.append(nn.Linear(a, b))
                if i + 2 < len(MLP_SIZES):
                    layers.append(nn.ReLU())
            model = nn.Sequential(*layers)
            x = torch.rand(batch, 784) * 2 - 1
        else:
            model = nn.Sequential(
                nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                nn.Flatten(), nn.Linear(3136, 256), nn.ReLU(), nn.Linear(256, 10),
            )  # fmt: skip
            x = torch.rand(batch, 1, 28, 28) * 2 - 1
        y = torch.randint(0, 10, (batch,))
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        lossf = nn.CrossEntropyLoss()

        def step(opt=opt, lossf=lossf, model=model, x=x, y=y):
            opt.zero_grad(set_to_none=True)
            lossf(model(x), y).backward()
            opt.step()

        report("torch", name, threads, rate(step, seconds), FLOPS[name])


def report(framework, name, threads, per_s, flops):
    print(
        f"{framework} {name:<7} threads {threads:>3}  {per_s:9.1f} steps/s  {per_s * flops / 1e9:7.1f} GFLOP/s",
        flush=True,
    )


def spin():
    while True:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--threads", help="comma-separated thread counts")
    ap.add_argument("--frameworks", default="ferroflow,torch,tf")
    ap.add_argument("--models", default=",".join(MODELS + ["gemm"]))
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--busy", type=int, default=0, help="spinning processes during the sweep")
    ap.add_argument(
        "--ferroflow-bin",
        action="append",
        default=[],
        help="a build of the Rust scaling example, measured too (repeatable; labelled by file name)",
    )
    ap.add_argument("--tf-python", default=sys.executable, help="interpreter that has tensorflow")
    ap.add_argument("--torch-python", default=sys.executable, help="interpreter that has torch")
    args = ap.parse_args()
    models = args.models.split(",")
    if args.child:
        framework, threads = args.child.split(":")
        if framework == "torch":
            child_torch(int(threads), models, args.seconds)
        else:
            child_graph(framework, int(threads), models, args.seconds)
        return
    cpus = len(os.sched_getaffinity(0))
    if args.threads:
        counts = [int(t) for t in args.threads.split(",")]
    else:
        counts = [1 << i for i in range(cpus.bit_length()) if 1 << i < cpus] + [cpus]
    hogs = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for h in hogs:
        h.start()
    print(f"# {cpus} CPUs usable; {args.busy} busy processes; thread counts {counts}", flush=True)
    results = {}

    def collect(cmd, env=None):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            print(line, flush=True)
            m = LINE.match(line)
            if m:
                results[(m[1], m[2], int(m[3]))] = (float(m[4]), float(m[5]))
        if proc.returncode != 0:
            print(f"# {cmd[0]} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)

    try:
        for t in counts:
            for binary in args.ferroflow_bin:
                label = "ferroflow-rust" if len(args.ferroflow_bin) == 1 else os.path.basename(binary)
                cmd = [
                    binary,
                    "--threads",
                    str(t),
                    "--models",
                    args.models,
                    "--seconds",
                    str(args.seconds),
                    "--label",
                    label,
                ]
                collect(cmd)
            for fw in args.frameworks.split(","):
                if not fw:
                    continue
                python = {"tf": args.tf_python, "torch": args.torch_python}.get(fw, sys.executable)
                env = dict(os.environ, RAYON_NUM_THREADS=str(t), OMP_NUM_THREADS=str(t))
                cmd = [
                    python,
                    __file__,
                    "--child",
                    f"{fw}:{t}",
                    "--models",
                    args.models,
                    "--seconds",
                    str(args.seconds),
                ]
                collect(cmd, env)
    finally:
        for h in hogs:
            h.kill()
    summarize(results, counts, models)


def summarize(results, counts, models):
    frameworks = sorted({k[0] for k in results})
    print(
        "\n| model | threads | "
        + " | ".join(f"{f} steps/s" for f in frameworks)
        + " | "
        + " | ".join(f"{f}/torch" for f in frameworks if f != "torch")
        + " |"
    )
    print("|---" * (2 + 2 * len(frameworks) - ("torch" in frameworks)) + "|")
    for name in models:
        for t in counts:
            row = [results.get((f, name, t)) for f in frameworks]
            torch = results.get(("torch", name, t))
            cells = [f"{r[0]:.1f}" if r else "-" for r in row]
            ratios = [
                f"{r[0] / torch[0]:.2f}" if r and torch else "-"
                for f, r in zip(frameworks, row)
                if f != "torch"
            ]
            print(f"| {name} | {t} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
