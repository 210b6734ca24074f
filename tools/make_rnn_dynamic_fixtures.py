"""Regenerate tests/fixtures/rnn_dynamic/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_rnn_dynamic_fixtures.py

Builds the two models of ``tests/python/_rnn_dynamic_models.py`` with ``tensorflow.compat.v1``
(v2 behaviour disabled; ``TF_USE_LEGACY_KERAS=1`` so ``tf.nn.rnn_cell`` is TF1's cells) and writes

* ``training.npz``: for ``build_training``, ``losses`` (the loss before each of the
  ``TRAIN_STEPS`` Adam steps and after the last, float32 ``[TRAIN_STEPS + 1]``) and, per trainable
  variable, its value after training (key: the variable's name);
* ``model.ckpt.index``, ``model.ckpt.data-00000-of-00001``: a ``tf.train.Saver`` (V2) checkpoint of
  ``build_checkpoint``'s variables, initialized by TF's own random initializers under a fixed
  graph seed;
* ``checkpoint_expected.npz``: the input ``x`` and TF's fetches for it with those weights.
"""

from __future__ import annotations

import os
import pathlib
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "rnn_dynamic"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _rnn_dynamic_models as models  # noqa: E402

README = """# Fixtures for the dynamic_rnn training and checkpoint tests

Written by `tools/make_rnn_dynamic_fixtures.py` with TensorFlow {tf_version} (tf-keras,
`TF_USE_LEGACY_KERAS=1`, so `tf.compat.v1.nn.rnn_cell` is TensorFlow 1's cells; v2 behaviour
disabled), NumPy {np_version}, on CPU, from the models of `tests/python/_rnn_dynamic_models.py`:

* `training.npz` (`test_rnn_training_golden.py`): `losses`, the loss of `build_training` before
  each of its {steps} `AdamOptimizer` steps and after the last, and every trainable variable's
  value after training (key: its name);
* `model.ckpt.index`, `model.ckpt.data-00000-of-00001` (`test_rnn_dynamic_checkpoint.py`): a
  `tf.train.Saver` checkpoint of `build_checkpoint`'s variables (TF's random initial values);
* `checkpoint_expected.npz`: the input `x` and what TensorFlow computed for it with those weights
  (`outputs`, final `c` and `h`, `logits`).

The tests never import TensorFlow.
"""


def main():
    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    OUT.mkdir(parents=True, exist_ok=True)

    with tf.Graph().as_default():
        (x, labels), loss, train_op = models.build_training(tf)
        xv, lv = models.training_feed_values()
        feed = {x: xv, labels: lv}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(models.TRAIN_STEPS):
                value, _ = sess.run([loss, train_op], feed)
                losses.append(value)
            losses.append(sess.run(loss, feed))
            arrays = {"losses": np.asarray(losses, np.float32)}
            for v in tf.trainable_variables():
                arrays[v.op.name] = sess.run(v)
        np.savez(OUT / "training.npz", **arrays)
        print("training losses", arrays["losses"])

    with tf.Graph().as_default():
        tf.set_random_seed(1234)
        x, fetches = models.build_checkpoint(tf)
        # The zero biases would restore to what ferroflow initializes anyway: make them non-zero.
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                if v.op.name.endswith("bias"):
                    v.load(np.linspace(-0.5, 0.5, int(v.shape[0])).astype(np.float32), sess)
            xv = models.checkpoint_feed_values()
            values = sess.run(fetches, {x: xv})
            tf.train.Saver().save(sess, str(OUT / "model.ckpt"), write_meta_graph=False, write_state=False)
        np.savez(OUT / "checkpoint_expected.npz", x=xv, **values)
        print("checkpoint variables", [v.op.name for v in tf.global_variables()])

    (OUT / "README.md").write_text(
        README.format(tf_version=tf_root.__version__, np_version=np.__version__, steps=models.TRAIN_STEPS)
    )


if __name__ == "__main__":
    main()
