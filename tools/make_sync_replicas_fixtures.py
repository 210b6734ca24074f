"""Writes tests/fixtures/sync_replicas/*.json: what real TensorFlow 2.21 (``tf.compat.v1`` after
``disable_v2_behavior()``) does with the SyncReplicasOptimizer cases of
``tests/python/_sync_replicas_cases.py``.

Run from the repository root with a Python that has TensorFlow (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_sync_replicas_fixtures.py

Files:

- ``schedules.json``: per case of ``CASES``, the record ``run_case`` returns (after every step of the
  single-threaded schedule: the token or error of the step, the variables, global step, local steps,
  accumulator count and token-queue size);
- ``structure.json``: ``structure(tf)`` (devices under ``replica_device_setter``, shared names, local
  variables, the chief queue runner, init-tokens ops) and ``errors(tf)`` (class and message of each misuse).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "sync_replicas"
sys.path.insert(0, str(ROOT / "tests" / "python"))

import tensorflow as tf  # noqa: E402

import _sync_replicas_cases as cases  # noqa: E402

README = """# SyncReplicasOptimizer fixtures

Made by `tools/make_sync_replicas_fixtures.py` with TensorFlow {tf_version} through `tf.compat.v1` after
`disable_v2_behavior()`, from the cases in `tests/python/_sync_replicas_cases.py`;
`tests/python/test_sync_replicas.py` runs the same cases with ferroflow and compares.

- `schedules.json`: the state after every step of each single-threaded replica/chief schedule.
- `structure.json`: placement and wiring under `replica_device_setter(ps_tasks=2)`, and TF's errors.
"""


def main():
    v1 = tf.compat.v1
    v1.disable_v2_behavior()
    v1.logging.set_verbosity(v1.logging.ERROR)
    OUT.mkdir(parents=True, exist_ok=True)
    schedules = {name: cases.run_case(v1, name) for name in cases.CASES}
    (OUT / "schedules.json").write_text(json.dumps(schedules, indent=1, sort_keys=True) + "\n")
    structure = {"structure": cases.structure(v1), "errors": cases.errors(v1)}
    (OUT / "structure.json").write_text(json.dumps(structure, indent=1, sort_keys=True) + "\n")
    (OUT / "README.md").write_text(README.format(tf_version=tf.__version__))


if __name__ == "__main__":
    main()
