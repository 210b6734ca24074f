"""Write tests/fixtures/op_sweep/: what TensorFlow 2.21 does for every case of the op sweep
(tests/python/_op_sweep_cases.py), for tests/python/test_op_sweep.py.

Each case is built in a ``tf.compat.v1`` graph (v2 behaviour off) and run in a session. Outputs:
``cases.json`` (per op, per case: ``{"phase": "ok", "out": [[dtype, static shape, value dtype, value shape,
offset], ...]}`` or ``{"phase": "build" | "run", "class": <tf.errors or Python class>, "message": ...}``) and
``values.npz``, one flat array per value dtype that the outputs' values are packed into (at ``offset``; strings
as fixed-width bytes, bfloat16 as float32), so that a few thousand small arrays cost no per-array zip headers. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/op_sweep_tf.py
"""

import json
import pathlib
import sys

import numpy as np
import tensorflow as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))
import _op_sweep_cases as cases  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_v2_behavior()
OUT = ROOT / "tests" / "fixtures" / "op_sweep"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    packed, meta = {}, {}
    only = set(sys.argv[1:])
    for name, entry in cases.OPS.items():
        if only and name not in only:
            continue
        recs = []
        for res in cases.run_op(tf1, entry):
            rec = {"phase": res["phase"]}
            if res["phase"] == "ok":
                rec["out"] = []
                for dtype, shape, v in res["out"]:
                    v = v.astype(bytes) if v.dtype == object else v
                    key = "bytes" if v.dtype.kind == "S" else v.dtype.name
                    if key == "bfloat16":  # numpy cannot save ml_dtypes' bfloat16: kept exactly as float32
                        v = v.astype(np.float32)
                    chunks = packed.setdefault(key, [])
                    offset = sum(x.size for x in chunks)
                    chunks.append(v.ravel())
                    rec["out"].append([dtype, shape, key, list(v.shape), offset])
            else:
                rec["class"], rec["message"] = res["class"], res["message"]
            recs.append(rec)
        meta[name] = recs
    values = {k: np.concatenate(v) if v else np.zeros(0) for k, v in packed.items()}
    np.savez_compressed(OUT / "values.npz", **values)
    # One line per op: small, and a regenerated fixture diffs by op.
    lines = [f"{json.dumps(k)}: {json.dumps(v, sort_keys=True, ensure_ascii=False)}" for k, v in sorted(meta.items())]
    text = "{" + f'"tensorflow": "{tf.__version__}", "ops": {{\n' + ",\n".join(lines) + "\n}}\n"
    (OUT / "cases.json").write_text(text)
    n = sum(len(v) for v in meta.values())
    print(f"{len(meta)} ops, {n} cases, {sum(len(v) for v in packed.values())} arrays -> {OUT}")


if __name__ == "__main__":
    main()
