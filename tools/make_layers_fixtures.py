"""Writes tests/fixtures/layers/: what real TensorFlow computes for the tf.layers cases of
tests/python/_layers_cases.py, and a TF1 checkpoint of a tf.layers model.

    TF_USE_LEGACY_KERAS=1 /path/to/python-with-tensorflow tools/make_layers_fixtures.py

Needs TensorFlow and tf-keras (``tf.compat.v1.layers`` lives in tf-keras since TF 2.16). Each case runs
with ``tensorflow.compat.v1`` after ``disable_v2_behavior()`` in a fresh graph and session:
``global_variables_initializer()``, then the case's runs in order. See ``_layers_cases.py`` for the
.npz layout. ``checkpoint/`` holds ``model.ckpt`` (tf.train.Saver, V2 format) of
``_layers_cases.checkpoint_model`` with every variable set to seeded random values (positive moving
variances), and ``expected.npz`` its inference logits for ``checkpoint_input()``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "layers"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _layers_cases  # noqa: E402


def _names(values):
    return np.array([str(v) for v in values], dtype=np.str_)


def run_case(tf, fn):
    g = tf.Graph()
    out = {}
    with g.as_default():
        tf.set_random_seed(0)
        runs = fn(tf)
        gvars = tf.global_variables()
        out["global_variables"] = _names(v.name for v in gvars)
        out["trainable_variables"] = _names(v.name for v in tf.trainable_variables())
        out["update_ops"] = _names(u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        out["regularization_losses"] = _names(t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
        for v in gvars:
            out[v.name + "__shape"] = np.array(v.shape.as_list(), dtype=np.int64)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for i, (fetches, feed) in enumerate(runs):
                values = sess.run(fetches, feed)
                for key, value in values.items():
                    if value is not None and not isinstance(fetches[key], tf.Operation):
                        out[f"{i}/{key}"] = np.asarray(value)
    return out


def write_checkpoint(tf):
    folder = OUT / "checkpoint"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    g = tf.Graph()
    with g.as_default():
        x, logits = _layers_cases.checkpoint_model(tf)
        rs = np.random.RandomState(7)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                shape = v.shape.as_list()
                value = rs.uniform(0.5, 1.5, shape) if "moving_variance" in v.name else rs.uniform(-0.5, 0.5, shape)
                v.load(value.astype(np.float32), sess)
            tf.train.Saver().save(sess, str(folder / "model.ckpt"), write_meta_graph=False)
            np.savez_compressed(folder / "expected.npz",
                                logits=sess.run(logits, {x: _layers_cases.checkpoint_input()}))
    (folder / "checkpoint").unlink(missing_ok=True)


def main():
    import tensorflow

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, fn in _layers_cases.CASES.items():
        np.savez_compressed(OUT / f"{name}.npz", **run_case(tf, fn))
        print("wrote", name)
    write_checkpoint(tf)
    (OUT / "README.md").write_text(
        "# tf.layers fixtures\n\n"
        "Made by `tools/make_layers_fixtures.py` with TensorFlow "
        f"{tensorflow.__version__} (tf-keras legacy layers, `TF_USE_LEGACY_KERAS=1`), NumPy {np.__version__}, "
        "through `tensorflow.compat.v1` after `disable_v2_behavior()`. One `.npz` per case of "
        "`tests/python/_layers_cases.py` (layout described there); `checkpoint/` is a TF1 V2-format "
        "checkpoint of `checkpoint_model` and its expected inference logits. "
        "`tests/python/test_layers.py` rebuilds each graph with ferroflow and compares.\n")


if __name__ == "__main__":
    main()
