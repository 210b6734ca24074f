"""Writes tests/fixtures/fake_quant/fake_quant.npz from TensorFlow 2.21.

Run from the repository root: /work/tfvenv/bin/python tools/make_fake_quant_fixtures.py

Each case k stores its inputs (k/x, k/g, k/min, k/max), attrs (k/attrs =
[num_bits, narrow_range]) and TF's outputs: the fake-quantized values (k/y)
and the gradient op's outputs (k/dx and, for the Vars ops, k/dmin, k/dmax).
Inputs include values exactly on rounding midpoints and outside the range.
"""

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "fake_quant")
rng = np.random.default_rng(21)


def inputs(shape, lo, hi, num_bits):
    x = rng.uniform(lo - 1.0, hi + 1.0, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    # Some exact midpoints between quantization levels and the range ends.
    step = (hi - lo) / (2 ** num_bits - 1)
    k = min(flat.size, 6)
    flat[:k] = np.float32(lo + (np.arange(k) + 0.5) * step)
    if flat.size > 8:
        flat[6], flat[7], flat[8] = np.float32(lo), np.float32(hi), np.float32(0.0)
    return x


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, meta = {}, []
    scalar_cases = [(-6.0, 6.0, 8, False), (-6.0, 6.0, 8, True), (-0.3, 1.7, 4, False), (0.1, 2.5, 2, True),
                    (-10.0, -2.0, 16, False), (-1.0, 1.0, 7, True), (2.5, 40.0, 5, False)]
    for i, (lo, hi, bits, narrow) in enumerate(scalar_cases):
        x = inputs((7, 9), lo, hi, bits)
        g = rng.normal(size=x.shape).astype(np.float32)
        for kind in ("args", "vars"):
            k = f"{kind}{i}"
            if kind == "args":
                y = tf.quantization.fake_quant_with_min_max_args(x, lo, hi, bits, narrow)
                dx = tf.quantization.fake_quant_with_min_max_args_gradient(g, x, lo, hi, bits, narrow)
                outs = {"y": y, "dx": dx}
            else:
                y = tf.quantization.fake_quant_with_min_max_vars(x, lo, hi, bits, narrow)
                dx, dmin, dmax = tf.quantization.fake_quant_with_min_max_vars_gradient(g, x, lo, hi, bits, narrow)
                outs = {"y": y, "dx": dx, "dmin": dmin, "dmax": dmax}
            arrays.update({f"{k}/x": x, f"{k}/g": g, f"{k}/min": np.float32(lo), f"{k}/max": np.float32(hi)})
            arrays.update({f"{k}/{n}": v.numpy() for n, v in outs.items()})
            meta.append({"key": k, "op": kind, "num_bits": bits, "narrow_range": narrow})
    # Degenerate ranges of the Vars ops (min == max, min > max).
    for j, (lo, hi) in enumerate([(0.0, 0.0), (2.0, 1.0), (-1.5, -1.5)]):
        k = f"vars_degenerate{j}"
        x = np.linspace(-3, 3, 13).astype(np.float32)
        g = np.ones_like(x)
        y = tf.quantization.fake_quant_with_min_max_vars(x, lo, hi)
        dx, dmin, dmax = tf.quantization.fake_quant_with_min_max_vars_gradient(g, x, lo, hi)
        arrays.update({f"{k}/x": x, f"{k}/g": g, f"{k}/min": np.float32(lo), f"{k}/max": np.float32(hi),
                       f"{k}/y": y.numpy(), f"{k}/dx": dx.numpy(), f"{k}/dmin": dmin.numpy(),
                       f"{k}/dmax": dmax.numpy()})
        meta.append({"key": k, "op": "vars", "num_bits": 8, "narrow_range": False})
    # Per channel: the last dimension is the channel.
    for i, (shape, bits, narrow) in enumerate([((5,), 8, False), ((6, 4), 3, True), ((2, 3, 5), 8, False),
                                               ((4, 3), 16, False)]):
        d = shape[-1]
        lo = rng.uniform(-4, 0.5, size=d).astype(np.float32)
        hi = (lo + rng.uniform(0.5, 6, size=d)).astype(np.float32)
        if d >= 4:
            lo[1], hi[1] = 0.0, 0.0
        x = rng.uniform(-6, 6, size=shape).astype(np.float32)
        g = rng.normal(size=shape).astype(np.float32)
        y = tf.quantization.fake_quant_with_min_max_vars_per_channel(x, lo, hi, bits, narrow)
        dx, dmin, dmax = tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi, bits, narrow)
        k = f"per_channel{i}"
        arrays.update({f"{k}/x": x, f"{k}/g": g, f"{k}/min": lo, f"{k}/max": hi, f"{k}/y": y.numpy(),
                       f"{k}/dx": dx.numpy(), f"{k}/dmin": dmin.numpy(), f"{k}/dmax": dmax.numpy()})
        meta.append({"key": k, "op": "per_channel", "num_bits": bits, "narrow_range": narrow})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(os.path.join(OUT, "fake_quant.npz"), **arrays)
    print(len(meta), "cases")


if __name__ == "__main__":
    main()
