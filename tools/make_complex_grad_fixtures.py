"""Writes tests/fixtures/complex/grads.npz: complex gradients from TensorFlow 2.21 (graph mode, tf.compat.v1).

Run from the repository root: /work/tfvenv/bin/python tools/make_complex_grad_fixtures.py

For complex64 and complex128 inputs, each case stores the inputs, the op's
output and ``tf.gradients`` of it with respect to every input for a given
upstream gradient: Sqrt, Rsqrt, Tanh, Sigmoid, Reciprocal, SquaredDifference
(with broadcasting), Cumsum and Cumprod (every exclusive / reverse / axis
combination), and the gradient kernels SqrtGrad, RsqrtGrad, TanhGrad,
SigmoidGrad and ReciprocalGrad applied directly (TensorFlow's kernels
conjugate some of their inputs themselves) with their own gradients (second
derivatives). ``meta`` (JSON) lists the cases.
"""

import json
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "complex")
rng = np.random.default_rng(7)


def cplx(shape, dtype, scale=1.0):
    return (scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))).astype(dtype)


def main():
    arrays, meta = {}, []

    def add(op, dtype, attrs, inputs, fn):
        k = f"c{len(meta)}"
        with tf.Graph().as_default(), tf.Session() as s:
            xs = [tf.placeholder(v.dtype, v.shape) for v in inputs]
            y = fn(*xs)
            g = cplx(y.shape.as_list(), inputs[0].dtype)
            grads = tf.gradients(y, xs, grad_ys=tf.constant(g)) if attrs.get("grad", True) else []
            out = s.run([y] + grads, dict(zip(xs, inputs)))
        for i, v in enumerate(inputs):
            arrays[f"{k}/x{i}"] = v
        arrays[f"{k}/g"] = g
        arrays[f"{k}/y"] = out[0]
        for i, v in enumerate(out[1:]):
            arrays[f"{k}/dx{i}"] = v
        meta.append({"key": k, "op": op, "dtype": np.dtype(dtype).name, "n": len(inputs), **attrs})

    for dtype in (np.complex64, np.complex128):
        x = cplx((3, 4), dtype)
        x.reshape(-1)[0] = 0.25 + 0j
        for op, fn in [("Sqrt", tf.sqrt), ("Rsqrt", tf.rsqrt), ("Tanh", tf.tanh), ("Sigmoid", tf.sigmoid),
                       ("Reciprocal", tf.reciprocal)]:
            add(op, dtype, {}, [x], fn)
        add("SquaredDifference", dtype, {}, [cplx((3, 4), dtype), cplx((3, 4), dtype)], tf.squared_difference)
        add("SquaredDifference", dtype, {"broadcast": True}, [cplx((2, 3, 4), dtype), cplx((4,), dtype)],
            tf.squared_difference)
        for op, fn in [("Cumsum", tf.cumsum), ("Cumprod", tf.cumprod)]:
            for axis in (0, 1, -1):
                for exclusive in (False, True):
                    for reverse in (False, True):
                        add(op, dtype, {"axis": axis, "exclusive": exclusive, "reverse": reverse},
                            [cplx((3, 4), dtype)],
                            lambda t, a=axis, e=exclusive, r=reverse, f=fn: f(t, a, exclusive=e, reverse=r))
        # The raw gradient kernels: (y, dy), with some dy exactly 0.
        for op, raw in [("SqrtGrad", tf.raw_ops.SqrtGrad), ("RsqrtGrad", tf.raw_ops.RsqrtGrad),
                        ("TanhGrad", tf.raw_ops.TanhGrad), ("SigmoidGrad", tf.raw_ops.SigmoidGrad),
                        ("ReciprocalGrad", tf.raw_ops.ReciprocalGrad)]:
            dy = cplx((3, 4), dtype)
            dy.reshape(-1)[:2] = 0
            add(op, dtype, {}, [cplx((3, 4), dtype), dy], lambda a, b, f=raw: f(y=a, dy=b))
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    os.makedirs(OUT, exist_ok=True)
    np.savez_compressed(os.path.join(OUT, "grads.npz"), **arrays)
    print(len(meta), "cases")


if __name__ == "__main__":
    main()
