"""Writes tests/fixtures/data_ragged/expected.json: what TensorFlow 2.21 (tf.compat.v1, graph mode) gives for
the pipelines of tests/fixtures/data_ragged/ragged_pipelines.py, for tests/python/test_data_ragged.py.

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_ragged_data_fixtures.py

For each pipeline: its element_spec, output_types/shapes/classes, and every element a one-shot iterator yields
(ragged leaves as flat values + nested row splits + the nested list; dense leaves as lists), or the error a
run raised; for each of ``failing``: the exception class and message of building it; and the losses and final
weights of the training run ``train`` (parse_example_dataset's ragged ids -> batch -> SGD step).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "data_ragged"
sys.path.insert(0, str(HERE))
import ragged_pipelines  # noqa: E402


def main():
    out = {"tensorflow": tf.__version__, "pipelines": {}, "failing": {}}
    for name, build in ragged_pipelines.pipelines(tf).items():
        out["pipelines"][name] = ragged_pipelines.run(tf, build)
    for name, build in ragged_pipelines.failing(tf).items():
        with tf.Graph().as_default():
            try:
                build()
            except Exception as e:  # noqa: BLE001 - the class is what is recorded
                out["failing"][name] = [type(e).__name__, str(e)]
            else:
                out["failing"][name] = None
    out["train"] = ragged_pipelines.train(tf)
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for name, info in out["pipelines"].items():
        print(name, json.dumps(info["element_spec"]), len(info["elements"]), info.get("error"))
    for name, e in out["failing"].items():
        print(name, e)
    print("train", out["train"]["losses"])


if __name__ == "__main__":
    main()
