"""Writes tests/fixtures/sobol/sobol.npz: tf.math.sobol_sample from TensorFlow 2.21.

Run from the repository root: /work/tfvenv/bin/python tools/make_sobol_fixtures.py

Each case ``k`` stores TF's points ``k/y`` for the (dim, num_results, skip, dtype) listed in ``meta``
(JSON); for the largest dimension only every 53rd column is kept (``cols``), to keep the file small.
"""

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "sobol")
CASES = [(1, 10, 0), (2, 16, 0), (5, 100, 0), (3, 50, 7), (10, 64, 1000), (40, 33, 12345), (7, 5, 2 ** 28),
         (3, 4, 2 ** 30 - 10), (21200, 3, 0), (21200, 2, 99)]


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, meta = {}, []
    for dim, n, skip in CASES:
        for dtype in (tf.float32, tf.float64):
            y = tf.math.sobol_sample(dim, n, skip=skip, dtype=dtype).numpy()
            cols = 53 if dim > 1000 else 1
            k = f"s{len(meta)}"
            arrays[f"{k}/y"] = y[:, ::cols]
            meta.append({"key": k, "dim": dim, "num_results": n, "skip": skip, "dtype": dtype.name, "cols": cols})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(os.path.join(OUT, "sobol.npz"), **arrays)
    print(len(meta), "cases")


if __name__ == "__main__":
    main()
