"""Depthwise convolution (MobileNet v1's layers), conv2d_transpose, conv3d and fused batch norm, ferroflow vs
TensorFlow 2.21.

    python benches/nn_layers.py [--quick] [--tf-python /work/tfvenv/bin/python]

Each case builds the same ``tf.compat.v1`` graph in ferroflow (this interpreter) and in TensorFlow (a child
process running ``--tf-python``, skipped when it is absent): inputs are variables, and the timed call fetches
the sum of the op's output (and of each gradient), so no feed or large fetch copies are timed and no graph
optimizer can prune the work. Figures are medians
of several repetitions after a warm-up; GFLOP/s counts 2 flops per multiply-add of the forward (3x that for
forward + backward), GB/s the bytes each pass must move (x, y and for the gradient dy and dx).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# (name, input NHWC, kernel size, stride): MobileNet v1 224's depthwise layers at batch 8.
DEPTHWISE = [
    ("dw 112x112x32 s1", [8, 112, 112, 32], 3, 1),
    ("dw 112x112x64 s2", [8, 112, 112, 64], 3, 2),
    ("dw 56x56x128 s1", [8, 56, 56, 128], 3, 1),
    ("dw 28x28x256 s1", [8, 28, 28, 256], 3, 1),
    ("dw 14x14x512 s1", [8, 14, 14, 512], 3, 1),
    ("dw 7x7x1024 s1", [8, 7, 7, 1024], 3, 1),
]
BATCH_NORM = [("fbn 64x56x56x64", [64, 56, 56, 64])]
# (name, input NHWC, kernel size, stride, output channels): conv2d_transpose at the upsampling layers of a
# MobileNet-shaped decoder (batch 8), and conv3d (NDHWC input, kernel, stride, output channels).
TRANSPOSE = [
    ("tconv 7x7x1024->14 s2", [8, 7, 7, 1024], 3, 2, 512),
    ("tconv 14x14x512->28 s2", [8, 14, 14, 512], 3, 2, 256),
    ("tconv 28x28x256->56 s2", [8, 28, 28, 256], 3, 2, 128),
]
CONV3D = [("conv3d 16x28x28x32", [4, 16, 28, 28, 32], 3, 1, 64)]


def timeit(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure(tf, quick):
    """{case: (forward seconds, forward+backward seconds)} for the module ``tf`` (tf.compat.v1 style)."""
    repeat = 3 if quick else 7
    out = {}
    cases = DEPTHWISE[:2] + BATCH_NORM + TRANSPOSE[:1] if quick else DEPTHWISE + BATCH_NORM + TRANSPOSE + CONV3D
    for name, shape, *rest in cases:
        g = tf.Graph()
        with g.as_default():
            x = tf.Variable(tf.random_normal(shape), name="x")
            if len(rest) == 3 and len(shape) == 4:
                k, s, oc = rest
                n, h, w_, c = shape
                w = tf.Variable(tf.random_normal([k, k, oc, c]) * 0.05, name="w")
                y = tf.nn.conv2d_transpose(x, w, [n, h * s, w_ * s, oc], [1, s, s, 1], "SAME")
                params = [x, w]
            elif len(rest) == 3:
                k, s, oc = rest
                w = tf.Variable(tf.random_normal([k, k, k, shape[4], oc]) * 0.05, name="w")
                y = tf.nn.conv3d(x, w, [1, s, s, s, 1], "SAME")
                params = [x, w]
            elif rest:
                k, s = rest
                w = tf.Variable(tf.random_normal([k, k, shape[3], 1]), name="w")
                y = tf.nn.depthwise_conv2d(x, w, [1, s, s, 1], "SAME")
                params = [x, w]
            else:
                scale = tf.Variable(tf.ones([shape[3]]))
                offset = tf.Variable(tf.zeros([shape[3]]))
                y = tf.nn.fused_batch_norm(x, scale, offset)[0]
                params = [x, scale, offset]
            grads = tf.gradients(y, params, grad_ys=tf.ones_like(y))
            # Fetching a sum of each result keeps graph optimizers (TensorFlow's grappler) from pruning the
            # ops; the reductions cost the same in both.
            fwd = tf.reduce_sum(y)
            bwd = tf.add_n([tf.reduce_sum(gr) for gr in grads] + [fwd])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                tf_ = timeit(lambda op=fwd: sess.run(op), repeat)
                tb = timeit(lambda op=bwd: sess.run(op), repeat)
        out[name] = (tf_, tb)
    return out


def rates(name, shape, rest, t_f, t_b):
    if len(rest) == 3:
        k, s, oc = rest
        macs = 1.0 * k ** (len(shape) - 2) * shape[-1] * oc
        for d in shape[:-1]:
            macs *= d
        # conv2d_transpose: every input pixel meets every tap once; conv3d (stride 1, SAME): every output voxel.
        flops = 2.0 * macs
        return f"{flops / t_f / 1e9:6.2f} GFLOP/s fwd, {3 * flops / t_b / 1e9:6.2f} fwd+bwd"
    if rest:
        k, s = rest
        n, h, w, c = shape
        oh, ow = -(-h // s), -(-w // s)
        flops = 2.0 * n * oh * ow * c * k * k
        return f"{flops / t_f / 1e9:6.2f} GFLOP/s fwd, {3 * flops / t_b / 1e9:6.2f} fwd+bwd"
    elems = 1
    for d in shape:
        elems *= d
    # forward: read x twice (stats) + once (normalize), write y; backward: fwd + read x, dy twice, write dx
    fwd_bytes = 4.0 * elems * 4
    bwd_bytes = fwd_bytes + 4.0 * elems * 5
    return f"{fwd_bytes / t_f / 1e9:6.2f} GB/s fwd, {bwd_bytes / t_b / 1e9:6.2f} fwd+bwd"


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
        print(json.dumps(measure(tf1, a.quick)))
        return
    import ferroflow.compat.v1 as ff

    ours = measure(ff, a.quick)
    theirs = {}
    if a.tf_python and os.path.exists(a.tf_python):
        cmd = [a.tf_python, __file__, "--worker", "tf"] + (["--quick"] if a.quick else [])
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode == 0:
            theirs = json.loads(res.stdout.strip().splitlines()[-1])
        else:
            print("TensorFlow run failed:", res.stderr[-2000:], file=sys.stderr)
    print(f"{'case':<24} {'ferroflow fwd':>13} {'TF fwd':>9} {'ratio':>6} {'ff fwd+bwd':>11} {'TF fwd+bwd':>11}"
          f" {'ratio':>6}  ferroflow rates")
    for name, shape, *rest in DEPTHWISE + BATCH_NORM + TRANSPOSE + CONV3D:
        if name not in ours:
            continue
        f, b = ours[name]
        tf_f, tf_b = theirs.get(name, (float("nan"), float("nan")))
        print(f"{name:<24} {f * 1e3:10.2f} ms {tf_f * 1e3:6.2f} ms {tf_f / f:5.2f}x {b * 1e3:8.2f} ms "
              f"{tf_b * 1e3:8.2f} ms {tf_b / b:5.2f}x  {rates(name, shape, rest, f, b)}")


if __name__ == "__main__":
    main()
