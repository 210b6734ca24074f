"""Write tests/fixtures/checkpoints/bf16_complex/: a checkpoint of bfloat16, complex64 and complex128
variables saved by real TensorFlow (tf.compat.v1 Saver, V2 format), with the values TF reads back.

Run from the repository root with the TensorFlow virtualenv (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_checkpoint_dtype_fixtures.py

Files: ``ckpt/model.ckpt.{index,data-00000-of-00001}`` and ``checkpoint`` as TF wrote them, and
``manifest.json``: per variable its name, TF dtype name, DataType enum, shape and value (bfloat16 as
its uint16 bit patterns, complex as ``[real, imag]`` pairs of Python floats, exact for these values).
"""

import json
import pathlib
import shutil

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "checkpoints" / "bf16_complex"

VALUES = {
    "bf16": (tf.bfloat16, [1.5, -2.25, 0.0078125, 3e38, -0.0]),
    "bf16_matrix": (tf.bfloat16, [[1.0, 2.0, 3.0], [-4.0, 65280.0, 1e-3]]),
    "c64": (tf.complex64, [1 + 2j, -0.5 - 0.25j, 3.0 + 0j]),
    "c128": (tf.complex128, [[0.1 + 1e-300j, -7.5 + 2.0j], [1e300 - 1j, 0j]]),
    "c128_scalar": (tf.complex128, 2.5 - 1.25j),
    "f32": (tf.float32, [1.0, 2.0]),
}


def main():
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    v1.disable_resource_variables()
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "ckpt").mkdir(parents=True)
    graph = tf.Graph()
    with graph.as_default():
        variables = {name: v1.Variable(np.array(value), dtype=dtype, name=name) for name, (dtype, value) in VALUES.items()}
        saver = v1.train.Saver(save_relative_paths=True)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            saver.save(sess, str(OUT / "ckpt" / "model.ckpt"), write_meta_graph=False)
            values = sess.run(variables)
    reader = tf.train.load_checkpoint(str(OUT / "ckpt" / "model.ckpt"))
    manifest = []
    for name, (dtype, _) in VALUES.items():
        got = reader.get_tensor(name)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(values[name]))
        if dtype == tf.bfloat16:
            stored = np.asarray(got).view(np.uint16).tolist()
        elif dtype.is_complex:
            arr = np.asarray(got)
            stored = np.stack([arr.real, arr.imag], axis=-1).astype(np.float64).tolist()
        else:
            stored = np.asarray(got).tolist()
        manifest.append(
            {
                "name": name,
                "dtype": dtype.name,
                "dtype_enum": dtype.as_datatype_enum,
                "shape": list(got.shape),
                "value": stored,
            }
        )
    (OUT / "manifest.json").write_text(json.dumps({"tensorflow": tf.__version__, "variables": manifest}, indent=1) + "\n")


if __name__ == "__main__":
    main()
