"""Write tests/fixtures/lookup/: the vocabulary files and cases.npz, each case of
tests/python/_lookup_cases.py run under real TensorFlow 2.21 (graph mode).

Run from the repository root with TensorFlow's Python (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_lookup_fixtures.py
"""

import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _lookup_cases as cases  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "lookup"


class Api:
    """The TF1 module plus ``contrib_lookup`` (TensorFlow's lookup_ops: index_table_from_* live there)."""

    def __init__(self, tf, lookup_ops):
        self._tf = tf
        self.contrib_lookup = lookup_ops

    def __getattr__(self, name):
        return getattr(self._tf, name)


def main():
    import tensorflow.compat.v1 as tf
    from tensorflow.python.ops import lookup_ops

    tf.disable_v2_behavior()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in cases.VOCAB_FILES.items():
        (OUT / name).write_bytes(text.encode())
    d = str(OUT)
    api = Api(tf, lookup_ops)
    arrays = {}
    for case, fn in cases.CASES.items():
        g = tf.Graph()
        with g.as_default():
            init, steps = cases.steps_of(fn(api, d))
            try:
                with tf.Session() as sess:
                    if init:
                        sess.run(tf.tables_initializer())
                    for i, step in enumerate(steps):
                        got = sess.run(step)
                        for k, v in got.items():
                            for key, arr in cases.normalize(k, v).items():
                                if arr.dtype == object and arr.size and isinstance(arr.flat[0], bytes):
                                    arr = np.vectorize(lambda b: b.decode().replace(d, "{dir}"))(arr).astype(object)
                                arrays[f"{case}/{i}/{key}"] = arr
            except tf.errors.OpError as e:
                arrays[f"{case}/error"] = np.array(cases.error_text(e, d))
        print(case, "error: " + str(arrays[f"{case}/error"]) if f"{case}/error" in arrays else "ok")
    # Object arrays would need pickle; store strings as unicode.
    out = {k: (v.astype(str) if v.dtype == object else v) for k, v in arrays.items()}
    np.savez_compressed(OUT / "cases.npz", **out)
    print("wrote", OUT / "cases.npz", len(out), "arrays")


if __name__ == "__main__":
    main()
