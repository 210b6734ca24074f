"""Convolution kernels side by side: ferroflow, TensorFlow and PyTorch at one thread count.

    python benches/conv.py [--threads 1] [--frameworks ferroflow,tf,torch]
                           [--tf-python PATH] [--torch-python PATH] [--seconds 0.7]

For each training-shaped 2-D convolution (NHWC in ferroflow and TensorFlow,
NCHW in PyTorch, f32, SAME padding) it times the forward product, the input
gradient and the filter gradient as separate ops and prints milliseconds and
GFLOP/s. Each framework runs in its own process with its thread pool sized
once (``RAYON_NUM_THREADS``, ``intra_op_parallelism_threads``,
``torch.set_num_threads``). ``FERROFLOW_DIRECT_CONV=0`` in the environment
turns ferroflow's direct AVX-512 kernels off (the im2col path). The Rust
kernels alone: ``cargo bench -p ferroflow-tensor --bench conv``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from scaling import rate  # benches/ is this script's sys.path[0]

# (input NHWC, filter HWIO, stride)
CASES = [
    ((64, 14, 14, 32), (5, 5, 32, 64), 1),
    ((64, 28, 28, 1), (5, 5, 1, 32), 1),
    ((32, 56, 56, 64), (3, 3, 64, 64), 1),
    ((32, 28, 28, 128), (3, 3, 128, 128), 1),
    ((32, 56, 56, 64), (3, 3, 64, 128), 2),
]


def per_call(fn, seconds):
    """Seconds per call of ``fn`` (the training sweep's timing loop)."""
    return 1.0 / rate(fn, seconds)


def flops(xs, ws, stride):
    oh, ow = -(-xs[1] // stride), -(-xs[2] // stride)
    return 2.0 * xs[0] * oh * ow * ws[0] * ws[1] * ws[2] * ws[3]


def child_graph(framework, threads, seconds):
    import numpy as np

    if framework == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
    else:
        import ferroflow as tf
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=1)
    rng = np.random.default_rng(0)
    for xs, ws, s in CASES:
        strides = [1, s, s, 1]
        with tf.Graph().as_default():
            x = tf.Variable(rng.standard_normal(xs).astype(np.float32))
            w = tf.Variable(rng.standard_normal(ws).astype(np.float32))
            y = tf.nn.conv2d(x, w, strides, "SAME")
            dy = tf.Variable(rng.standard_normal(y.shape.as_list()).astype(np.float32))
            ops = [
                y.op,
                tf.nn.conv2d_backprop_input(xs, w, dy, strides, "SAME").op,
                tf.nn.conv2d_backprop_filter(x, ws, dy, strides, "SAME").op,
            ]
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                times = [per_call(lambda op=op: sess.run(op), seconds) for op in ops]
        report(framework, threads, xs, ws, s, times)


def child_torch(threads, seconds):
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    for xs, ws, s in CASES:
        report("torch", threads, xs, ws, s, torch_times(torch, g, xs, ws, s, seconds))


def torch_times(torch, g, xs, ws, s, seconds):
    n, h, w_, c = xs
    kh, kw, ci, co = ws
    x = torch.randn(n, c, h, w_, generator=g)
    w = torch.randn(co, ci, kh, kw, generator=g)
    pad = kh // 2
    conv = torch.nn.functional.conv2d
    y = conv(x, w, stride=s, padding=pad)
    dy = torch.randn(y.shape, generator=g)
    grad = torch.nn.grad
    with torch.no_grad():
        return [
            per_call(lambda: conv(x, w, stride=s, padding=pad), seconds),
            per_call(lambda: grad.conv2d_input(x.shape, w, dy, stride=s, padding=pad), seconds),
            per_call(lambda: grad.conv2d_weight(x, w.shape, dy, stride=s, padding=pad), seconds),
        ]


def report(framework, threads, xs, ws, s, times):
    f = flops(xs, ws, s)
    cells = " | ".join(
        f"{name} {t * 1e3:7.2f} ms {f / t / 1e9:6.1f} GF/s" for name, t in zip(("fwd", "dx", "dw"), times)
    )
    print(f"{framework:<9} t{threads} x{list(xs)} w{list(ws)} s{s}  {cells}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--frameworks", default="ferroflow,tf,torch")
    ap.add_argument("--seconds", type=float, default=0.7)
    ap.add_argument("--tf-python", default=sys.executable, help="interpreter that has tensorflow")
    ap.add_argument("--torch-python", default=sys.executable, help="interpreter that has torch")
    args = ap.parse_args()
    if args.child:
        if args.child == "torch":
            child_torch(args.threads, args.seconds)
        else:
            child_graph(args.child, args.threads, args.seconds)
        return
    for fw in args.frameworks.split(","):
        python = {"tf": args.tf_python, "torch": args.torch_python}.get(fw, sys.executable)
        t = str(args.threads)
        env = dict(os.environ, RAYON_NUM_THREADS=t, OMP_NUM_THREADS=t)
        cmd = [python, __file__, "--child", fw, "--threads", t, "--seconds", str(args.seconds)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            print(f"# {fw} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)


if __name__ == "__main__":
    main()
