"""Writes tests/fixtures/quantize/quantized_nn.npz from TensorFlow 2.21 (graph mode, tf.compat.v1).

Run from the repository root: /work/tfvenv/bin/python tools/make_quantized_nn_fixtures.py

``meta`` (JSON) lists the cases with their op and attrs; case ``k``'s arrays
are stored under ``<k>/<name>``:

* ``conv``: ``tf.nn.quantized_conv2d`` of quint8 ``x`` and quint8 ``w`` (the
  only types TF's CPU kernel computes) with float ranges ``r`` = [min_input,
  max_input, min_filter, max_filter] -> qint32 ``y`` and its range ``yr``.
  Strides 1-4, SAME and VALID, 1x1 filters (TF's matmul path), ranges whose
  zero point lies inside, on the edge of and outside the quint8 grid, empty
  (min == max) and reversed ranges;
* ``avg_pool`` / ``max_pool``: ``tf.nn.quantized_avg_pool`` /
  ``quantized_max_pool`` of quint8 or qint8 ``x`` -> ``y``, ``yr`` (max pool
  also over the depth window);
* ``relu``: TF 2.21 registers no kernel for ``QuantizedReluX``, so these hold
  the ops with the same kernel and a fixed cap: ``QuantizedRelu6`` (ReluX with
  max_value 6) and ``QuantizedRelu`` (ReluX with a cap above the
  range's top, for ranges with min < max) of quint8 and qint32 ``x`` over ``r`` = [min, max] -> ``y``, ``yr``.

Inputs are fed through placeholders so that nothing is folded before the
kernels run. TF_ENABLE_ONEDNN_OPTS=0 as for tools/make_quantize_fixtures.py.
"""

import json
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "quantize")
rng = np.random.default_rng(2321)
QTYPES = {"quint8": (tf.quint8, np.uint8), "qint8": (tf.qint8, np.int8), "qint32": (tf.qint32, np.int32)}


class Cases:
    def __init__(self):
        self.arrays, self.meta = {}, []

    def add(self, kind, attrs, **arrays):
        key = f"{kind}{len(self.meta)}"
        for name, v in arrays.items():
            self.arrays[f"{key}/{name}"] = np.asarray(v)
        self.meta.append({"key": key, "kind": kind, **attrs})


def ints(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dtype)


CONV_RANGES = [(-1.0, 2.0, -3.0, 1.0), (0.0, 6.0, -0.5, 0.5), (-10.0, 0.0, 0.0, 1.0),
               (1.0, 3.0, -1.0, 1.0), (-5.0, -2.0, 2.0, 4.0), (-1.0, 1.0, 0.25, 0.25),
               (2.0, -1.0, 1.0, -3.0), (-0.1, 100.0, -7.0, 0.2)]


def conv_cases(c, s):
    shapes = [  # (x shape, w shape, stride, padding)
        ((1, 6, 6, 2), (3, 3, 2, 3), 1, "SAME"),
        ((2, 7, 5, 3), (3, 2, 3, 4), 1, "VALID"),
        ((1, 8, 8, 2), (3, 3, 2, 2), 2, "SAME"),
        ((1, 9, 7, 2), (2, 3, 2, 3), 2, "VALID"),
        ((2, 10, 11, 1), (3, 3, 1, 2), 3, "SAME"),
        ((1, 10, 11, 2), (2, 2, 2, 2), 3, "VALID"),
        ((1, 8, 9, 2), (1, 1, 2, 2), 4, "SAME"),
        ((1, 11, 10, 2), (3, 2, 2, 2), 4, "VALID"),
        ((1, 12, 12, 1), (5, 5, 1, 2), 4, "SAME"),
        ((3, 4, 5, 6), (1, 1, 6, 5), 1, "SAME"),
        ((1, 4, 4, 3), (1, 1, 3, 2), 1, "VALID"),
        ((1, 3, 3, 2), (5, 5, 2, 2), 1, "SAME"),
        ((1, 1, 1, 40), (1, 1, 40, 3), 1, "VALID"),
    ]
    for i, (xs, ws, stride, padding) in enumerate(shapes):
        for r in CONV_RANGES if i < 3 else CONV_RANGES[i % len(CONV_RANGES):][:2] + [CONV_RANGES[3]]:
            x, w = ints(np.uint8, xs), ints(np.uint8, ws)
            px, pw = tf.placeholder(tf.quint8, xs), tf.placeholder(tf.quint8, ws)
            pr = [tf.placeholder(tf.float32, []) for _ in range(4)]
            out = tf.nn.quantized_conv2d(px, pw, *pr, strides=[1, stride, stride, 1], padding=padding)
            feed = {px: x, pw: w, **{p: np.float32(v) for p, v in zip(pr, r)}}
            y, lo, hi = s.run(out, feed)
            c.add("conv", {"stride": stride, "padding": padding}, x=x, w=w, r=np.array(r, np.float32), y=y,
                  yr=np.array([lo, hi], np.float32))


POOLS = [  # (x shape, ksize, strides, padding)
    ((2, 5, 5, 3), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
    ((1, 6, 7, 2), [1, 3, 3, 1], [1, 2, 2, 1], "VALID"),
    ((1, 6, 7, 2), [1, 3, 2, 1], [1, 1, 2, 1], "SAME"),
    ((2, 4, 4, 1), [1, 7, 7, 1], [1, 3, 3, 1], "SAME"),
    ((1, 5, 3, 4), [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    ((1, 9, 9, 2), [1, 4, 3, 1], [1, 3, 4, 1], "SAME"),
]


def pool_cases(c, s):
    for kind, fn in (("avg_pool", tf.nn.quantized_avg_pool), ("max_pool", tf.nn.quantized_max_pool)):
        cases = [(t, *p) for t in ("quint8", "qint8") for p in POOLS]
        if kind == "max_pool":
            cases += [("quint8", (2, 3, 3, 6), [1, 1, 1, 3], [1, 1, 1, 3], "VALID"),
                      ("qint8", (1, 2, 4, 4), [1, 1, 1, 2], [1, 1, 1, 2], "SAME")]
        for tname, xs, ksize, strides, padding in cases:
            tt, nt = QTYPES[tname]
            x = ints(nt, xs)
            px, lo, hi = tf.placeholder(tt, xs), tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
            y, ylo, yhi = s.run(fn(px, lo, hi, ksize, strides, padding), {px: x, lo: -1.5, hi: 4.25})
            c.add(kind, {"T": tname, "ksize": ksize, "strides": strides, "padding": padding}, x=x, y=y,
                  yr=np.array([ylo, yhi], np.float32))


RELU_RANGES = [(-1.0, 5.0), (0.0, 6.0), (-6.0, 12.0), (1.0, 10.0), (-20.0, -1.0), (-3.0, 3.0), (2.0, 2.0),
               (-0.01, 250.0), (5.0, -1.0)]


def relu_cases(c, s):
    for tname in ("quint8", "qint32"):
        tt, nt = QTYPES[tname]
        for lo_hi in RELU_RANGES:
            x = ints(nt, (4, 33))
            x.ravel()[:6] = [np.iinfo(nt).min, np.iinfo(nt).max, 0, 1, -1 if nt == np.int32 else 2, 128]
            # QuantizedRelu has no cap: ReluX with a cap above the range's top clamps to the type's highest
            # level, the same thing, unless the range is empty or reversed.
            for op in ("relu6", "relu") if lo_hi[0] < lo_hi[1] else ("relu6",):
                px, lo, hi = tf.placeholder(tt, x.shape), tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
                f = tf.raw_ops.QuantizedRelu6 if op == "relu6" else tf.raw_ops.QuantizedRelu
                y, ylo, yhi = s.run(f(features=px, min_features=lo, max_features=hi, out_type=tt),
                                    {px: x, lo: lo_hi[0], hi: lo_hi[1]})
                cap = 6.0 if op == "relu6" else max(lo_hi[1], 0.0) + 1.0
                c.add("relu", {"T": tname, "op": op, "max_value": cap}, x=x, r=np.array(lo_hi, np.float32), y=y,
                      yr=np.array([ylo, yhi], np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    c = Cases()
    for make in (conv_cases, pool_cases, relu_cases):
        with tf.Graph().as_default(), tf.Session() as s:
            make(c, s)
    c.arrays["meta"] = np.frombuffer(json.dumps(c.meta).encode(), dtype=np.uint8)
    np.savez_compressed(os.path.join(OUT, "quantized_nn.npz"), **c.arrays)
    kinds = {}
    for m in c.meta:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    print(len(c.meta), "cases", kinds)


if __name__ == "__main__":
    main()
