"""Record what TensorFlow 2.21's tf_keras (graph mode, as TF 1.x's Keras) gives for the cases of
tests/python/_keras_round2_cases.py, in tests/fixtures/keras/round2/<case>.npz, for
tests/python/test_keras_round2.py.

Run from the repository root (TF_USE_LEGACY_KERAS=1 selects tf_keras; disable_v2_behavior gives graph mode):

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_keras_round2_fixtures.py [--compare] [cases]

``--optimizer-checkpoints`` writes TF's save_weights checkpoints with optimizer state instead
(round2/optimizer_ckpt/, round2/optimizer_checkpoint.npz).

With --compare, each case also runs with ferroflow (imported first) and the largest differences are printed;
nothing is written.
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

import numpy as np  # noqa: E402

if "--compare" in sys.argv:
    import ferroflow  # noqa: E402  (before tensorflow)

# isort: split
import tensorflow.compat.v1 as tf1  # noqa: E402

import _keras_round2_cases  # noqa: E402

tf1.disable_v2_behavior()

OUT = ROOT / "tests" / "fixtures" / "keras" / "round2"


def run(tf, name):
    if tf is tf1:
        tf1.reset_default_graph()
    tf.keras.backend.clear_session()
    np.random.seed(0)
    return _keras_round2_cases.CASES[name](tf)


def write_lambda_model():
    """TF's JSON of _keras_round2_cases.lambda_model (Lambda functions as bytecode of this Python), its weights
    and predictions, and the Python version that wrote the bytecode: lambda_model.json."""
    import json
    import platform

    tf1.reset_default_graph()
    tf1.keras.backend.clear_session()
    model, x = _keras_round2_cases.lambda_model(tf1)
    record = {"python": platform.python_version(), "json": model.to_json(), "x": x.tolist(),
              "weights": [w.tolist() for w in model.get_weights()], "predict": model.predict(x).tolist()}
    (OUT / "lambda_model.json").write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", OUT / "lambda_model.json")


def write_optimizer_checkpoints():
    """TF's save_weights checkpoints with optimizer state (round2/optimizer_ckpt/) and the weights after one more
    epoch (optimizer_checkpoint.npz): ferroflow restores them and trains on to the same weights."""
    tf1.reset_default_graph()
    tf1.keras.backend.clear_session()
    path = OUT / "optimizer_ckpt"
    path.mkdir(exist_ok=True)
    ref = _keras_round2_cases.optimizer_checkpoint(tf1, str(path), save=True)
    for f in path.iterdir():
        if f.name == "checkpoint":
            f.unlink()  # the state file names this machine's path
    np.savez_compressed(OUT / "optimizer_checkpoint.npz", **ref)
    print("wrote", path, OUT / "optimizer_checkpoint.npz")


def main(argv):
    compare = "--compare" in argv
    if "--optimizer-checkpoints" in argv:
        write_optimizer_checkpoints()
        return
    names = [a for a in argv if not a.startswith("--")] or list(_keras_round2_cases.CASES)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        ref = run(tf1, name)
        if not compare:
            np.savez_compressed(OUT / f"{name}.npz", **ref)
            print("wrote", OUT / f"{name}.npz")
            if name == "lambda_json":
                write_lambda_model()
            continue
        got = run(ferroflow, name)
        for key in ref:
            want = np.asarray(ref[key])
            have = np.asarray(got.get(key))
            if want.dtype.kind in "fiub" and have.shape == want.shape:
                print(f"{name}.{key}: {np.max(np.abs(have.astype(np.float64) - want), initial=0):.3g}")
            elif want.dtype.kind in "fiub" or not np.array_equal(want, have):
                print(f"{name}.{key}: TF {want!r} ferroflow {have!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
