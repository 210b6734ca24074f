"""CPU mixed precision (issue 21): an MLP 784-2048-2048-10, batch 256, one SGD training step, in float32
and with the bfloat16 rewrite (ConfigProto rewrite_options.auto_mixed_precision_onednn_bfloat16 = ON),
in ferroflow and TensorFlow 2.21 (oneDNN) in the same run; plus a microbenchmark of a bare
256x2048 @ 2048x2048 product in float32 and bfloat16 (the peak each library reaches on this CPU).

    python benches/mixed_precision.py [--repeat 7] [--steps 5]

TFLOP/s counts 2*m*k*n per product: forward 3 products, backward 5 (the first layer's input gradient
is not computed). Each figure is the median over repeats of --steps steps; the load average is printed.
TensorFlow runs in this process after ferroflow (import ferroflow first, as the tools do).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

DIMS = [784, 2048, 2048, 10]
BATCH = 256


def step_flops():
    fwd = sum(2 * BATCH * a * b for a, b in zip(DIMS, DIMS[1:]))
    bwd_w = fwd  # a weight gradient per layer
    bwd_x = sum(2 * BATCH * a * b for a, b in zip(DIMS[1:-1], DIMS[2:]))  # input gradients, not the first
    return fwd + bwd_w + bwd_x


def med(fn, repeat, number):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def mlp_step(tf, rewriter_config_pb2, bf16, repeat, steps):
    tf1 = tf.compat.v1 if hasattr(tf, "compat") and hasattr(tf.compat, "v1") else tf
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, DIMS[0])).astype(np.float32)
    y = np.eye(DIMS[-1], dtype=np.float32)[rng.integers(0, DIMS[-1], BATCH)]
    g = tf1.Graph()
    with g.as_default():
        xp = tf1.placeholder(tf.float32, x.shape)
        yp = tf1.placeholder(tf.float32, y.shape)
        h = xp
        for i, (a, b) in enumerate(zip(DIMS, DIMS[1:])):
            w = tf1.get_variable(f"w{i}", initializer=(rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32))
            c = tf1.get_variable(f"b{i}", initializer=np.zeros(b, np.float32))
            h = tf.nn.bias_add(tf.matmul(h, w), c)
            if i < len(DIMS) - 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yp, logits=h))
        train = tf1.train.GradientDescentOptimizer(0.01).minimize(loss)
        cfg = tf1.ConfigProto()
        if bf16:
            cfg.graph_options.rewrite_options.auto_mixed_precision_onednn_bfloat16 = rewriter_config_pb2.RewriterConfig.ON
        s = tf1.Session(graph=g, config=cfg)
        s.run(tf1.global_variables_initializer())
        t = med(lambda: s.run(train, {xp: x, yp: y}), repeat, steps)
        s.close()
    return t


def product(tf, dtype, repeat, steps):
    tf1 = tf.compat.v1 if hasattr(tf, "compat") and hasattr(tf.compat, "v1") else tf
    rng = np.random.default_rng(1)
    g = tf1.Graph()
    with g.as_default():
        a = tf1.placeholder(tf.float32, (BATCH, 2048))
        b = tf1.get_variable("b", initializer=rng.standard_normal((2048, 2048)).astype(np.float32))
        ac, bc = tf.cast(a, dtype), tf.cast(b, dtype)
        bc = tf.identity(bc)
        # The operands are converted once, outside the timed product: cache them in variables.
        av = tf1.get_variable("av", initializer=tf.zeros((BATCH, 2048), dtype), dtype=dtype)
        bv = tf1.get_variable("bv", initializer=tf.zeros((2048, 2048), dtype), dtype=dtype)
        setup = tf.group(tf1.assign(av, ac), tf1.assign(bv, bc))
        c = tf.reduce_sum(tf.cast(tf.matmul(av, bv)[:1, :1], tf.float32))
        s = tf1.Session(graph=g)
        s.run(tf1.global_variables_initializer())
        s.run(setup, {a: rng.standard_normal((BATCH, 2048)).astype(np.float32)})
        t = med(lambda: s.run(c), repeat, steps)
        s.close()
    return 2 * BATCH * 2048 * 2048 / t / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    import ferroflow as ff
    from ferroflow.core.protobuf import rewriter_config_pb2 as ff_rc

    rows = []
    flags = open("/proc/cpuinfo").read().split()
    hw = [f for f in ("avx512_bf16", "amx_bf16", "avx512_fp16") if f in flags]
    print(f"CPU bf16 instructions: {hw or 'none'} (ferroflow's bf16 products use vdpbf16ps with avx512_bf16, "
          f"else float32 on widened copies); FERROFLOW_BF16_GEMM={os.environ.get('FERROFLOW_BF16_GEMM', '')!r}")
    for name, tf, rc in [("ferroflow", ff, ff_rc), ("tensorflow", None, None)]:
        if tf is None:
            import tensorflow as tf
            from tensorflow.core.protobuf import rewriter_config_pb2 as rc
        peak32 = product(tf, tf.float32, args.repeat, args.steps)
        peak16 = product(tf, tf.bfloat16, args.repeat, args.steps)
        t32 = mlp_step(tf, rc, False, args.repeat, args.steps)
        t16 = mlp_step(tf, rc, True, args.repeat, args.steps)
        rows.append((name, peak32, peak16, t32, t16))
    fl = step_flops()
    print(f"step: {fl / 1e9:.2f} GFLOP")
    print(f"{'':10} {'f32 peak':>9} {'bf16 peak':>9} {'f32 step':>9} {'bf16 step':>9} {'f32 TF/s':>8} {'bf16 TF/s':>9}")
    for name, p32, p16, t32, t16 in rows:
        print(f"{name:10} {p32:9.3f} {p16:9.3f} {t32 * 1e3:7.1f}ms {t16 * 1e3:7.1f}ms {fl / t32 / 1e12:8.3f} "
              f"{fl / t16 / 1e12:9.3f}")
    (_, _, _, f32, f16), (_, _, _, tf32, tf16) = rows
    print(f"ferroflow bf16 vs own f32: {f32 / f16:.2f}x; vs TF bf16: {tf16 / f16:.2f}x; vs TF f32: {tf32 / f16:.2f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
