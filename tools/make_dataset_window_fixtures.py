"""Write tests/fixtures/dataset_windows.json: what TensorFlow 2.21 (graph mode, tf.compat.v1) gives for the
pipelines of tests/python/_dataset_window_cases.py (window, group_by_window, bucket_by_sequence_length, scan,
reduce, take_while, unique, choose_from_datasets, get_single_element: every element, each component's dtype,
shape and values) and the cardinality() of each dataset of ``cardinalities``. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_dataset_window_fixtures.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow.compat.v1 as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _dataset_window_cases import cardinalities, pipelines  # noqa: E402

tf.disable_v2_behavior()


def plain(value):
    """A fetched structure as JSON: each leaf [dtype, shape, flat values] (bytes as text), in nest order."""
    if isinstance(value, dict):
        return [plain(value[k]) for k in sorted(value)]
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    a = np.asarray(value)
    flat = [v.decode() if isinstance(v, bytes) else v.item() for v in a.ravel()]
    return [str(a.dtype) if a.dtype.kind != "O" else "string", list(a.shape), flat]


def read_all(sess, ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    while True:
        try:
            out.append(plain(sess.run(nxt)))
        except tf.errors.OutOfRangeError:
            return out


def main():
    result = {"elements": {}, "cardinality": {}}
    with tf.Graph().as_default():
        cases = pipelines(tf)
        cards = {k: tf.data.experimental.cardinality(d) for k, d in cardinalities(tf).items()}
        with tf.Session() as sess:
            for name, ds in cases.items():
                if hasattr(ds, "element_spec"):
                    result["elements"][name] = read_all(sess, ds)
                else:
                    result["elements"][name] = [plain(sess.run(ds))]
            result["cardinality"] = {k: int(v) for k, v in sess.run(cards).items()}
    out = ROOT / "tests" / "fixtures" / "dataset_windows.json"
    out.write_text(json.dumps(result, indent=None, sort_keys=True) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
