"""Keras model files both ways (HDF5, and TF-format weight checkpoints), for tests/python/test_keras_saving.py
(tests/fixtures/keras/h5/).

TensorFlow 2.21's tf_keras (graph mode, TF_USE_LEGACY_KERAS=1) builds the models of
tests/python/_keras_cases.py (``h5_sequential``, ``h5_functional``, ``h5_wrappers``), saves them (``model.save``) and their
weights (``save_weights`` to .h5 and, for the first, to a TF-format checkpoint), and records its predictions. Then ferroflow builds the same models with the
same weights and saves them; tf_keras loads ferroflow's files (``load_model``, and ``load_weights`` into its own
model) and its predictions of them are recorded too: the test checks ferroflow's predictions against both.
Each model is also trained two epochs, saved with its optimizer's state, loaded and trained two more (by TF from
TF's file and from ferroflow's): the continued losses show that the optimizer state went across.

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_keras_h5_fixtures.py
"""

import os
import pathlib
import sys
import tempfile

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

import numpy as np  # noqa: E402

import ferroflow  # noqa: E402  (before tensorflow)

# isort: split
import tensorflow.compat.v1 as tf1  # noqa: E402

import _keras_cases  # noqa: E402

tf1.disable_v2_behavior()

OUT = ROOT / "tests" / "fixtures" / "keras" / "h5"
BUILDERS = {"sequential": _keras_cases.h5_sequential, "functional": _keras_cases.h5_functional,
            "wrappers": _keras_cases.h5_wrappers}


def fresh_tf():
    tf1.reset_default_graph()
    tf1.keras.backend.clear_session()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, build in BUILDERS.items():
        fresh_tf()
        model, x = build(tf1)
        expected[f"tf_{name}"] = model.predict(x)
        model.save(str(OUT / f"tf_{name}.h5"))
        # trained a little, saved with its optimizer's state, loaded and trained on
        y = _keras_cases.h5_targets(x)
        model.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
        model.save(str(OUT / f"tf_{name}_trained.h5"))
        expected[f"tf_{name}_trained_predict"] = model.predict(x)
        fresh_tf()
        again = tf1.keras.models.load_model(str(OUT / f"tf_{name}_trained.h5"))
        expected[f"tf_{name}_continued"] = np.asarray(
            again.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"])
        fresh_tf()
        model, x = build(tf1)
        if name == "sequential":
            model.save_weights(str(OUT / "tf_sequential_weights.h5"))
            model.save_weights(str(OUT / "tf_sequential_ckpt"))
            (OUT / "checkpoint").unlink()  # the state file: the test names the prefix
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in BUILDERS.items():
            ferroflow.keras.backend.clear_session()
            ff_model, x = build(ferroflow)
            expected[f"ff_{name}"] = ff_model.predict(x)
            ff_model.save(os.path.join(tmp, f"ff_{name}.h5"))
            ff_model.save_weights(os.path.join(tmp, f"ff_{name}_weights.h5"))
            ff_model.save_weights(os.path.join(tmp, f"ff_{name}_ckpt"))
            y = _keras_cases.h5_targets(x)
            ff_model.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
            ff_model.save(os.path.join(tmp, f"ff_{name}_trained.h5"))
            fresh_tf()
            loaded = tf1.keras.models.load_model(os.path.join(tmp, f"ff_{name}.h5"))
            expected[f"ff_{name}_loaded_by_tf"] = loaded.predict(x)
            expected[f"ff_{name}_tf_loss"] = np.asarray(loaded.loss if isinstance(loaded.loss, str) else "")
            fresh_tf()
            tf_model, _ = build(tf1)
            tf_model.load_weights(os.path.join(tmp, f"ff_{name}_weights.h5"))
            expected[f"ff_{name}_weights_loaded_by_tf"] = tf_model.predict(x)
            fresh_tf()
            tf_model, _ = build(tf1)
            tf_model.load_weights(os.path.join(tmp, f"ff_{name}_ckpt")).assert_existing_objects_matched()
            expected[f"ff_{name}_ckpt_loaded_by_tf"] = tf_model.predict(x)
            fresh_tf()
            again = tf1.keras.models.load_model(os.path.join(tmp, f"ff_{name}_trained.h5"))
            expected[f"ff_{name}_continued_by_tf"] = np.asarray(
                again.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"])
    for key in sorted(expected):
        if key.startswith("ff_") and key.endswith("by_tf") and "continued" not in key:
            base = key.split("_loaded")[0].split("_weights")[0].split("_ckpt")[0]
            print(f"{key}: max |TF - ferroflow| = {np.max(np.abs(expected[key] - expected[base])):.3g}")
    np.savez_compressed(OUT / "expected.npz", **expected)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
