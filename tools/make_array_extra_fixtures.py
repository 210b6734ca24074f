"""Write tests/fixtures/array_extra/: values, gradients, static shapes and errors of the remaining array ops
(unique_with_counts, setdiff1d, searchsorted, sort/argsort, roll, repeat, reverse_sequence, meshgrid, the
histograms, unravel_index, the space/batch ops, extract_volume_patches, edit_distance, identity_n,
ensure_shape, broadcast_dynamic_shape/broadcast_static_shape) computed by real TensorFlow 2.21 with
``tf.compat.v1`` graphs, for tests/python/test_array_extra.py.

The cases live in tests/python/_array_extra_cases.py, written against a TF1-style module, so TensorFlow here and
ferroflow in the test build the same graphs. Outputs: ``values.npz`` (``<case>/<fetch>`` arrays), ``meta.json``
(static shapes per fetch, each error case's phase/class/message, broadcast_static_shape results). Run from the
repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_array_extra_fixtures.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))
import _array_extra_cases as cases  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OUT = ROOT / "tests" / "fixtures" / "array_extra"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    values, shapes = {}, {}
    for case in cases.VALUE_CASES:
        vals, sh = cases.run_value_case(tf1, case)
        for k, v in vals.items():
            # Strings come back as object arrays of bytes: store them as fixed-width bytes (no pickling).
            values[f"{case.__name__}/{k}"] = v.astype(bytes) if v.dtype == object else v
            shapes[f"{case.__name__}/{k}"] = sh[k]
    errors = {name: cases.run_error_case(tf1, fn) for name, fn in cases.ERROR_CASES.items()}
    static = []
    for a, b in cases.STATIC_SHAPE_PAIRS:
        sa = tf.TensorShape(None if a == "?" else a)
        sb = tf.TensorShape(None if b == "?" else b)
        r = tf.broadcast_static_shape(sa, sb)
        static.append(None if r.rank is None else r.as_list())
    np.savez_compressed(OUT / "values.npz", **values)
    meta = {"tensorflow": tf.__version__, "static_shapes": shapes, "errors": errors,
            "broadcast_static_shape": static}
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"{len(values)} arrays, {len(errors)} error cases -> {OUT}")


if __name__ == "__main__":
    main()
