"""Write tests/fixtures/data_gaps.json: what TensorFlow 2.21 (graph mode, tf.compat.v1) gives for the datasets and
tensors of tests/python/_data_gaps_cases.py (``Dataset.window`` then ``flat_map``/``interleave``/``reduce``,
windows of SparseTensors and RaggedTensors, ``tf.data.experimental.group_by_reducer``, ``tf.gather`` with
``batch_dims``, ``tf.map_fn`` over RaggedTensors). Every element of a dataset, in order, as plain JSON (see
``plain``). Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_data_gaps_fixtures.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow.compat.v1 as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _data_gaps_cases import datasets, tensors  # noqa: E402

tf.disable_v2_behavior()


def plain(v):
    """A fetched value as JSON: arrays as {dtype, shape, values}; SparseTensorValue and RaggedTensorValue as
    their parts; tuples and dicts as lists and dicts."""
    if isinstance(v, tf.SparseTensorValue):
        return {"sparse": [plain(v.indices), plain(v.values), plain(v.dense_shape)]}
    if hasattr(v, "to_list") and hasattr(v, "nested_row_splits"):
        return {"ragged": [plain(v.flat_values)] + [plain(s) for s in v.nested_row_splits]}
    if isinstance(v, dict):
        return {k: plain(v[k]) for k in sorted(v)}
    if isinstance(v, (tuple, list)):
        return [plain(x) for x in v]
    a = np.asarray(v)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.ravel().tolist()}


def main():
    out = {"datasets": {}, "tensors": {}}
    with tf.Graph().as_default():
        made = datasets(tf)
        nexts = {k: tf.data.make_one_shot_iterator(d).get_next() for k, d in made.items()}
        with tf.Session() as sess:
            for name, nxt in nexts.items():
                elements = []
                while True:
                    try:
                        elements.append(plain(sess.run(nxt)))
                    except tf.errors.OutOfRangeError:
                        break
                out["datasets"][name] = elements
    with tf.Graph().as_default():
        made = tensors(tf)
        with tf.Session() as sess:
            for name, value in sess.run(made).items():
                out["tensors"][name] = plain(value)
    path = ROOT / "tests" / "fixtures" / "data_gaps.json"
    path.write_text(json.dumps(out, sort_keys=True) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
