"""Writes tests/fixtures/quantize/quantize.npz from TensorFlow 2.21 (graph mode, tf.compat.v1).

Run from the repository root: /work/tfvenv/bin/python tools/make_quantize_fixtures.py

``meta`` (JSON) lists the cases with their op and attrs; each case's
``arrays`` maps the names below to the keys of its inputs and TF's outputs in
the file (an array that several cases share is stored once):

* ``quantize``: ``tf.quantization.quantize`` of ``x`` over ``min``..``max``
  into T (modes MIN_COMBINED / MIN_FIRST / SCALED, both round modes,
  narrow_range, ensure_minimum_range, per-axis ranges) -> ``y`` (as the
  storage integers), ``ymin``, ``ymax``;
* ``dequantize``: ``tf.quantization.dequantize`` of the integers ``q`` of
  T -> ``y`` (float32, or bfloat16 as float32 values);
* ``qdq``: ``QuantizeAndDequantizeV2`` / ``V3`` / ``V4`` of ``x`` -> ``y``
  and the gradient of ``sum(y * g)`` with respect to x -> ``dx``;
* ``concat``: ``tf.quantization.quantized_concat`` of ``v0``, ``v1``, ...
  -> ``y``, ``ymin``, ``ymax``.

Inputs are fed through placeholders, so that no graph rewrite folds the ops
before their kernels run. TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's oneDNN build
replaces two cases (quint8 MIN_FIRST, qint8 SCALED with HALF_TO_EVEN) by oneDNN
kernels with other rounding and ranges; these fixtures hold the reference CPU
kernels' values, which is what ferroflow implements.
"""

import hashlib
import json
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "quantize")
rng = np.random.default_rng(23)

QTYPES = {"qint8": (tf.qint8, np.int8), "quint8": (tf.quint8, np.uint8), "qint16": (tf.qint16, np.int16),
          "quint16": (tf.quint16, np.uint16), "qint32": (tf.qint32, np.int32)}
RANGES = [(-1.0, 1.0), (0.0, 6.0), (-3.7, 2.1), (-50.0, -2.0), (2.0, 10.0), (0.0, 0.0), (-1e-4, 1e-4),
          (-1e6, 3.0)]


def float_inputs(lo, hi, n=96):
    x = rng.uniform(lo - 1.0 - abs(lo) * 0.1, hi + 1.0 + abs(hi) * 0.1, n).astype(np.float32)
    x[:24] = np.linspace(lo, hi, 24).astype(np.float32)
    x[24:28] = [lo, hi, 0.0, -0.0]
    return x


class Cases:
    """Cases share their arrays: each distinct array is stored once, under its hash, and a case's
    ``arrays`` maps its names to those keys."""

    def __init__(self):
        self.arrays, self.meta = {}, []

    def add(self, kind, attrs, **arrays):
        names = {}
        for name, v in arrays.items():
            v = np.asarray(v)
            key = hashlib.sha1(v.dtype.str.encode() + str(v.shape).encode() + v.tobytes()).hexdigest()[:16]
            self.arrays.setdefault(key, v)
            names[name] = key
        self.meta.append({"key": f"{kind}{len(self.meta)}", "kind": kind, **attrs, "arrays": names})


def quantize_cases(c, s):
    for tname, (tt, _) in QTYPES.items():
        for (lo, hi) in RANGES:
            x = float_inputs(lo, hi)
            for mode, rm, narrow in [("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", False),
                                     ("MIN_FIRST", "HALF_AWAY_FROM_ZERO", False),
                                     ("SCALED", "HALF_AWAY_FROM_ZERO", False),
                                     ("SCALED", "HALF_AWAY_FROM_ZERO", True),
                                     ("SCALED", "HALF_TO_EVEN", False),
                                     ("SCALED", "HALF_TO_EVEN", True)]:
                run_quantize(c, s, x, lo, hi, tname, tt, mode, rm, narrow, None, 0.01)
    # ensure_minimum_range and tiny ranges.
    for emr in (0.0, 0.5):
        for (lo, hi) in [(0.0, 0.0), (-1e-4, 1e-4), (-2.0, 3.0)]:
            x = float_inputs(lo, hi, 40)
            for mode in ("MIN_COMBINED", "MIN_FIRST", "SCALED"):
                run_quantize(c, s, x, lo, hi, "quint8", tf.quint8, mode, "HALF_AWAY_FROM_ZERO", False, None, emr)
                run_quantize(c, s, x, lo, hi, "qint8", tf.qint8, mode, "HALF_AWAY_FROM_ZERO", False, None, emr)
    # Per-axis ranges (MIN_FIRST has none).
    for tname in ("qint8", "quint8", "qint32"):
        tt = QTYPES[tname][0]
        for shape, axis in [((3, 4), 0), ((3, 4), 1), ((2, 3, 5), 1), ((2, 3, 5), -1), ((1, 4), 0)]:
            d = shape[axis]
            lo = rng.uniform(-5, 0.5, d).astype(np.float32)
            hi = (lo + rng.uniform(0.01, 6, d)).astype(np.float32)
            x = rng.uniform(-7, 7, shape).astype(np.float32)
            for mode, rm, narrow in [("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", False),
                                     ("SCALED", "HALF_TO_EVEN", True), ("SCALED", "HALF_AWAY_FROM_ZERO", False)]:
                run_quantize(c, s, x, lo, hi, tname, tt, mode, rm, narrow, axis, 0.01)


def run_quantize(c, s, x, lo, hi, tname, tt, mode, rm, narrow, axis, emr):
    xp = tf.placeholder(tf.float32, x.shape)
    lo, hi = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
    mnp, mxp = tf.placeholder(tf.float32, lo.shape), tf.placeholder(tf.float32, hi.shape)
    r = tf.quantization.quantize(xp, mnp, mxp, tt, mode=mode, round_mode=rm, narrow_range=narrow, axis=axis,
                                 ensure_minimum_range=emr)
    y, ymin, ymax = s.run(r, {xp: x, mnp: lo, mxp: hi})
    c.add("quantize", {"T": tname, "mode": mode, "round_mode": rm, "narrow_range": narrow, "axis": axis,
                       "ensure_minimum_range": emr},
          x=x, min=lo, max=hi, y=y, ymin=ymin, ymax=ymax)


def dequantize_cases(c, s):
    for tname, (tt, npt) in QTYPES.items():
        info = np.iinfo(npt)
        for (lo, hi) in RANGES + [(3.0, 1.0)]:
            q = rng.integers(info.min, info.max, 64, endpoint=True).astype(npt)
            q[:4] = [info.min, info.max, 0, info.max - 1]
            for mode, narrow, out in [("MIN_COMBINED", False, "float32"), ("MIN_FIRST", False, "float32"),
                                      ("SCALED", False, "float32"), ("SCALED", True, "float32"),
                                      ("MIN_COMBINED", False, "bfloat16")]:
                run_dequantize(c, s, q, lo, hi, tname, tt, mode, narrow, None, out)
    for tname in ("qint8", "quint8", "qint32"):
        tt, npt = QTYPES[tname]
        info = np.iinfo(npt)
        for shape, axis in [((3, 4), 0), ((3, 4), 1), ((2, 3, 5), 2), ((1, 4), 0)]:
            d = shape[axis]
            lo = rng.uniform(-5, 0.5, d).astype(np.float32)
            hi = (lo + rng.uniform(0.01, 6, d)).astype(np.float32)
            q = rng.integers(info.min, info.max, shape, endpoint=True).astype(npt)
            q.reshape(-1)[:2] = [info.min, info.max]
            for mode, narrow in [("MIN_COMBINED", False), ("SCALED", False), ("SCALED", True)]:
                run_dequantize(c, s, q, lo, hi, tname, tt, mode, narrow, axis, "float32")


def run_dequantize(c, s, q, lo, hi, tname, tt, mode, narrow, axis, out):
    qp = tf.placeholder(tt, q.shape)
    lo, hi = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
    mnp, mxp = tf.placeholder(tf.float32, lo.shape), tf.placeholder(tf.float32, hi.shape)
    y = tf.quantization.dequantize(qp, mnp, mxp, mode=mode, narrow_range=narrow, axis=axis,
                                   dtype=tf.bfloat16 if out == "bfloat16" else tf.float32)
    if out == "bfloat16":
        y = tf.cast(y, tf.float32)
    v = s.run(y, {qp: q, mnp: lo, mxp: hi})
    c.add("dequantize", {"T": tname, "mode": mode, "narrow_range": narrow, "axis": axis, "dtype": out},
          q=q, min=lo, max=hi, y=v)


def qdq_cases(c, s):
    configs = []
    for signed in (True, False):
        for bits in (2, 4, 8, 16):
            for rg in (True, False):
                for rm in ("HALF_TO_EVEN", "HALF_UP"):
                    configs.append((signed, bits, rg, rm, bits == 4 and signed))
    for dt, npt in ((tf.float32, np.float32), (tf.float64, np.float64)):
        for (lo, hi) in [(-1.0, 1.0), (-2.5, 0.75), (0.0, 3.0), (-4.0, -1.0)]:
            x = rng.uniform(lo - 1, hi + 1, 48).astype(npt)
            x[:16] = np.linspace(lo, hi, 16)
            x[16:20] = [lo, hi, 0.0, (lo + hi) / 2]
            g = rng.normal(size=x.shape).astype(npt)
            for signed, bits, rg, rm, narrow in configs:
                for version in ("V2", "V3", "V4"):
                    if version == "V3" and (bits != 8 or rm != "HALF_TO_EVEN"):
                        continue
                    run_qdq(c, s, x, g, lo, hi, dt, version, signed, bits, rg, rm, narrow, None)
    # Per-axis.
    for shape, axis in [((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)]:
        d = shape[axis]
        lo = rng.uniform(-3, -0.1, d).astype(np.float32)
        hi = rng.uniform(0.1, 3, d).astype(np.float32)
        x = rng.uniform(-4, 4, shape).astype(np.float32)
        g = rng.normal(size=shape).astype(np.float32)
        for rg in (True, False):
            # TF 2.21's V2 and V4 kernels reject per-axis given ranges ("input_min must be a scalar.").
            for version in ("V2", "V3", "V4") if not rg else ("V3",):
                run_qdq(c, s, x, g, lo, hi, tf.float32, version, True, 8, rg, "HALF_TO_EVEN", False, axis)
                run_qdq(c, s, x, g, lo, hi, tf.float32, version, False, 3, rg, "HALF_TO_EVEN", True, axis)


def run_qdq(c, s, x, g, lo, hi, dt, version, signed, bits, rg, rm, narrow, axis):
    npt = dt.as_numpy_dtype
    lo, hi = np.asarray(lo, npt), np.asarray(hi, npt)
    xp = tf.placeholder(dt, x.shape)
    mnp, mxp = tf.placeholder(dt, lo.shape), tf.placeholder(dt, hi.shape)
    if version == "V2":
        y = tf.quantization.quantize_and_dequantize(xp, mnp, mxp, signed_input=signed, num_bits=bits, range_given=rg,
                                                    round_mode=rm, narrow_range=narrow, axis=axis)
    elif version == "V4":
        y = tf.quantization.quantize_and_dequantize_v2(xp, mnp, mxp, signed_input=signed, num_bits=bits,
                                                       range_given=rg, round_mode=rm, narrow_range=narrow, axis=axis)
    else:
        ax = -1 if axis is None else axis % len(x.shape)
        y = tf.raw_ops.QuantizeAndDequantizeV3(input=xp, input_min=mnp, input_max=mxp, num_bits=bits,
                                               signed_input=signed, range_given=rg, narrow_range=narrow, axis=ax)
    (dx,) = tf.gradients(y, [xp], grad_ys=tf.constant(g))
    yv, dxv = s.run([y, dx], {xp: x, mnp: lo, mxp: hi})
    c.add("qdq", {"version": version, "signed_input": signed, "num_bits": bits, "range_given": rg,
                  "round_mode": rm, "narrow_range": narrow, "axis": axis},
          x=x, g=g, min=lo, max=hi, y=yv, dx=dxv)


def concat_cases(c, s):
    for tname in ("quint8", "qint32"):
        tt, npt = QTYPES[tname]
        info = np.iinfo(npt)
        for axis in (0, 1):
            for ranges in [[(-1.0, 1.0), (0.0, 4.0), (-3.0, 0.5)], [(0.0, 2.0), (0.0, 2.0)],
                           [(1.0, 3.0), (0.0, 0.0), (-2.0, 5.0)], [(-3.0, 3.0), (-3.0, 3.0)]]:
                vals = []
                for i in range(len(ranges)):
                    shape = (2, 3 + i) if axis == 1 else (1 + i, 3)
                    v = rng.integers(info.min, info.max, shape, endpoint=True).astype(npt)
                    v.reshape(-1)[:2] = [info.min, info.max]
                    vals.append(v)
                ps = [tf.placeholder(tt, v.shape) for v in vals]
                mins = [tf.placeholder(tf.float32, []) for _ in vals]
                maxes = [tf.placeholder(tf.float32, []) for _ in vals]
                r = tf.quantization.quantized_concat(axis, ps, mins, maxes)
                feed = {p: v for p, v in zip(ps, vals)}
                feed.update({m: np.float32(lo) for m, (lo, _) in zip(mins, ranges)})
                feed.update({m: np.float32(hi) for m, (_, hi) in zip(maxes, ranges)})
                y, ymin, ymax = s.run(r, feed)
                arrays = {f"v{i}": v for i, v in enumerate(vals)}
                c.add("concat", {"T": tname, "axis": axis, "n": len(vals)}, **arrays,
                      mins=np.array([r[0] for r in ranges], np.float32),
                      maxes=np.array([r[1] for r in ranges], np.float32), y=y, ymin=ymin, ymax=ymax)


def main():
    os.makedirs(OUT, exist_ok=True)
    c = Cases()
    for make in (quantize_cases, dequantize_cases, qdq_cases, concat_cases):
        with tf.Graph().as_default(), tf.Session() as s:
            make(c, s)
    c.arrays["meta"] = np.frombuffer(json.dumps(c.meta).encode(), dtype=np.uint8)
    np.savez_compressed(os.path.join(OUT, "quantize.npz"), **c.arrays)
    kinds = {}
    for m in c.meta:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    print(len(c.meta), "cases", kinds)


if __name__ == "__main__":
    main()
