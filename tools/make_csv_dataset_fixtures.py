"""Write tests/fixtures/csv_dataset.json: TensorFlow 2.21's tf.data.experimental.make_csv_dataset and Counter
(types inferred, key order, shapes, values) for tests/python/test_data_csv.py; the calls and the CSV files are
in tests/python/_csv_dataset_cases.py. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_csv_dataset_fixtures.py
"""

import json
import pathlib
import sys
import tempfile

import tensorflow.compat.v1 as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from _csv_dataset_cases import cases, write_files  # noqa: E402

tf.disable_v2_behavior()


def main():
    with tempfile.TemporaryDirectory() as d:
        write_files(pathlib.Path(d))
        result = cases(tf, pathlib.Path(d))
    out = ROOT / "tests" / "fixtures" / "csv_dataset.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
