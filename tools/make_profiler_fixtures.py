"""Write tests/fixtures/profiler.json: TensorFlow 2.21's tf.compat.v1.profiler parameter and float-operation
counts of the graph in tests/python/_profiler_cases.py, for tests/python/test_profiler.py. Run from the
repository root:

    TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_profiler_fixtures.py
"""

import json
import pathlib
import sys

import tensorflow.compat.v1 as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _profiler_cases import cases  # noqa: E402

tf.disable_v2_behavior()


def main():
    out = ROOT / "tests" / "fixtures" / "profiler.json"
    out.write_text(json.dumps(cases(tf), indent=1, default=int) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
