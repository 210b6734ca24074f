"""Classic TF1 programs (tests/programs/*.py, written as their tutorials wrote them) run unchanged on ferroflow
and give what TensorFlow 2.21 gave for the same program (tests/fixtures/tf1_programs/*.json, recorded by
tools/run_tf1_programs_tf.py): the same losses to 1e-5 where the program is deterministic, the same names,
shapes, collections, files and counts everywhere. Keys a program lists in RANDOM_KEYS come from random
initial values or sampling (ferroflow's random streams are not TensorFlow's): those must be finite, and where
the program says "trained", the last quarter's mean must be below the first quarter's. A program that TF 2.21
cannot run (NO_TF_FIXTURE: tf.estimator) must run and train.
"""

import importlib
import json
import math
import pathlib
import sys

import numpy as np
import pytest

import ferroflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.startswith("_"))


@pytest.fixture(scope="module", autouse=True)
def programs_on_path():
    sys.path.insert(0, str(PROGRAMS))
    yield
    sys.path.remove(str(PROGRAMS))


def _compare(want, got, path, mismatches):
    if isinstance(want, dict):
        if not isinstance(got, dict) or sorted(want) != sorted(got):
            mismatches.append(
                f"{path}: keys {sorted(want)} vs {sorted(got) if isinstance(got, dict) else got!r}"
            )
            return
        for k in want:
            _compare(want[k], got[k], f"{path}.{k}", mismatches)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            mismatches.append(f"{path}: {want!r} vs {got!r}")
            return
        for i, (w, g) in enumerate(zip(want, got)):
            _compare(w, g, f"{path}[{i}]", mismatches)
    elif isinstance(want, float) or (isinstance(want, int) and isinstance(got, float)):
        if not math.isclose(float(got), float(want), rel_tol=1e-5, abs_tol=1e-5):
            mismatches.append(f"{path}: TF {want!r} vs ferroflow {got!r}")
    elif want != got:
        mismatches.append(f"{path}: TF {want!r} vs ferroflow {got!r}")


def _trained(values):
    values = np.asarray(values, np.float64)
    k = max(1, len(values) // 4)
    return values[-k:].mean() < values[:k].mean()


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_tensorflow(name, fixtures):
    program = importlib.import_module(name)
    if getattr(program, "NO_TF_FIXTURE", False):
        # TensorFlow 2.21 cannot run it (tf.estimator was removed): it must run and train here.
        got = program.main(tf, program.TF_STEPS)
        assert np.all(np.isfinite(got["losses"])) and _trained(got["losses"]), got["losses"]
        return
    expected = json.loads((fixtures / "tf1_programs" / f"{name}.json").read_text())
    steps = expected.pop("steps")
    assert steps == program.TF_STEPS
    got = json.loads(json.dumps(program.main(tf, steps), default=float))
    for key, check in getattr(program, "RANDOM_KEYS", {}).items():
        assert len(got[key]) == len(expected[key]), key
        assert np.all(np.isfinite(got[key])), (key, got[key])
        if check == "trained":
            assert _trained(got[key]), (key, got[key])
        got.pop(key)
        expected.pop(key)
    mismatches = []
    _compare(expected, got, name, mismatches)
    assert not mismatches, "\n".join(mismatches)
