"""Run the classic TF1 programs of tests/programs/ under real TensorFlow 2.21 (tf.compat.v1, graph mode) and
record what they return in tests/fixtures/tf1_programs/<name>.json, for tests/python/test_tf1_programs.py.

With --compare, also run each with ferroflow in the same process (ferroflow is imported first) and print the
largest difference of every numeric list, without writing anything. Run from the repository root:

    PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/run_tf1_programs_tf.py [--compare] [names]
"""

import importlib
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
OUT = ROOT / "tests" / "fixtures" / "tf1_programs"
sys.path.insert(0, str(PROGRAMS))

# tf.nn.rnn_cell and tf.layers need the Keras 2 package (tf-keras) in TF 2.21.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402

import ferroflow  # noqa: E402  (before tensorflow, as the README asks)

# isort: split
import tensorflow.compat.v1 as tf1  # noqa: E402

tf1.disable_v2_behavior()


def names():
    return sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.startswith("_"))


def diff(a, b, path=""):
    """Yield (path, max abs diff or a note) for every number/list where a and b can be compared."""
    if isinstance(a, dict):
        for k in a:
            if k in b:
                yield from diff(a[k], b[k], f"{path}.{k}")
            else:
                yield f"{path}.{k}", "missing in ferroflow"
    elif isinstance(a, list) and a and all(isinstance(v, (int, float)) for v in a):
        if len(a) != len(b):
            yield path, f"lengths {len(a)} vs {len(b)}"
        else:
            yield path, float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float))))
    elif isinstance(a, (int, float)) and not isinstance(a, bool):
        yield path, abs(float(a) - float(b))
    elif a != b:
        yield path, f"TF {a!r} vs ferroflow {b!r}"


def main(argv):
    compare = "--compare" in argv
    chosen = [a for a in argv if not a.startswith("--")] or names()
    OUT.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        mod = importlib.import_module(name)
        if getattr(mod, "NO_TF_FIXTURE", False):
            print("skipped", name, "(TensorFlow 2.21 cannot run it)")
            continue
        steps = mod.TF_STEPS
        ref = json.loads(json.dumps(mod.main(tf1, steps), default=float))
        ref["steps"] = steps
        if compare:
            got = json.loads(json.dumps(mod.main(ferroflow, steps), default=float))
            got["steps"] = steps
            for path, d in diff(ref, got):
                print(f"{name}{path}: {d}")
        else:
            (OUT / f"{name}.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")
            print("wrote", OUT / f"{name}.json")


if __name__ == "__main__":
    main(sys.argv[1:])
