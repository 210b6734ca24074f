"""Regenerate tests/fixtures/compat_v1_last/ with real TensorFlow (never needed by the tests).

    /work/tfvenv/bin/python tools/make_compat_v1_last_fixtures.py

The last Python-level names of ``tf.compat.v1`` (issue 23), run by TensorFlow in graph mode
(``tensorflow.compat.v1`` with v2 behaviour disabled; ``TF_USE_LEGACY_KERAS=1`` so
``tf.nn.rnn_cell`` is TensorFlow 1's cells):

* ``state_saving_rnn.npz``: for each model of ``tests/python/_state_saving_models.py``, the outputs
  (stacked, ``<kind>/outputs/<run>``) and final state (``<kind>/state/<run>``, the pieces of a tuple
  state stacked) of two ``Session.run`` calls in a row, the second starting from the state the
  first saved;
* ``module.json``: what ``tests/python/_module_models.py``'s ``describe`` sees of a few
  ``tf.Module`` subclasses (names, name scopes, variable lists, op names, values);
* ``function.json``: what ``tests/python/_function_models.py``'s ``describe`` sees of
  ``tf.function`` and ``tf.compat.v1.wrap_function`` (trace counts, call op types, values and
  gradients, variable names, error classes);
* ``gradient_tape.json``: what ``tests/python/_tape_models.py``'s ``describe`` sees of
  ``tf.GradientTape`` (which gradients are None, their values, watched variables, error classes),
  with control flow v2 on for that part (TensorFlow's tape refuses TF1 ``tf.cond`` in a graph).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "compat_v1_last"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import _function_models  # noqa: E402
import _module_models  # noqa: E402
import _state_saving_models as ssm  # noqa: E402
import _tape_models  # noqa: E402


def state_saving_rnn(tf):
    arrays = {}
    for kind in ssm.KINDS:
        with tf.Graph().as_default():
            x, outputs, state = ssm.build(tf, kind)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for step in range(2):
                    out, st = sess.run([outputs, state], {x: ssm.input_values(step)})
                    arrays[f"{kind}/outputs/{step}"] = np.stack(out)
                    arrays[f"{kind}/state/{step}"] = np.stack(st) if isinstance(st, tuple) else st
    np.savez(OUT / "state_saving_rnn.npz", **arrays)


def module(tf):
    (OUT / "module.json").write_text(json.dumps(_module_models.describe(tf), indent=1) + "\n")


def function(tf):
    (OUT / "function.json").write_text(json.dumps(_function_models.describe(tf), indent=1) + "\n")


def gradient_tape(tf):
    tf.enable_control_flow_v2()
    try:
        described = _tape_models.describe(tf)
    finally:
        tf.disable_control_flow_v2()
    (OUT / "gradient_tape.json").write_text(json.dumps(described, indent=1) + "\n")


def main():
    import tensorflow as tf_root

    tf = tf_root.compat.v1
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    OUT.mkdir(parents=True, exist_ok=True)
    state_saving_rnn(tf)
    module(tf)
    function(tf)
    gradient_tape(tf)
    (OUT / "README.md").write_text(
        f"# Fixtures for the last tf.compat.v1 names (issue 23)\n\n"
        f"Written by `tools/make_compat_v1_last_fixtures.py` with TensorFlow {tf_root.__version__} "
        f"(graph mode, tf-keras cells), NumPy {np.__version__}, on CPU; that script's docstring says what "
        f"each file holds. The tests never import TensorFlow.\n"
    )


if __name__ == "__main__":
    main()
