"""Write tests/fixtures/uint32_64/: what TensorFlow 2.21 computes for uint32 and uint64 tensors (issue 23).

Run from the repository root with the TensorFlow virtualenv (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_uint32_64_fixtures.py

Files:

``values.json``
    ``casts``: for each (source, target) pair, the input (floats as Python floats, NaN and
    infinities as JSON's ``NaN``/``Infinity``) and TF's output. Float-to-uint32 results for NaN and
    out-of-range values depend on the element's position in TF's CPU kernel (its packet loop and
    its scalar tail loop differ), so those inputs are recorded at lengths 5 (tail only), 18 and 64.
    ``ops``: op type, dtype, inputs, attrs and TF's output (also as the hex of its little-endian
    bytes, which keeps NaN payloads) for the arithmetic, comparison, bitwise, reduction and bitcast
    ops with uint32/uint64 CPU kernels. ``rejected``: the ops TF refuses to
    build for uint32/uint64 inputs (its op definitions leave those types out).
``ckpt/model.ckpt.*`` and ``checkpoint``
    A V2 checkpoint written by TF's Saver holding uint32 and uint64 variables; ``values.json``'s
    ``checkpoint`` lists them with the values TF reads back.

With ``--check-ferroflow DIR`` the script instead reads the checkpoint ferroflow saved at
``DIR/model.ckpt`` (``tests/python/test_dtypes_uint32_64.py`` writes one when
``FERROFLOW_KEEP_UINT_CKPT=DIR`` is set) with TensorFlow's own reader and checks its dtypes and values.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "uint32_64"
v1 = tf.compat.v1
raw = tf.raw_ops

SPECIAL_FLOATS = [-1.0, 2.0**32, 1e20, float("nan"), -0.5, 3.7, 4294967295.0, 2.0**64, -1e20, float("inf"),
                  float("-inf"), 2.0**63, 1.5e19, 2.0**31, -(2.0**31), -3e9, 3e9, 1e10]
INTS = [-1, 0, 1, 2**31 - 1, -(2**31), 2**32, 2**40 + 5, -(2**63), 2**63 - 1, 7, -300]
U32 = [0, 1, 2, 7, 255, 65535, 2**31 - 1, 2**31, 2**32 - 1, 123456789, 3000000000]
U64 = [0, 1, 2, 7, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 12345678901234567890]
FLOAT_TARGETS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INT_TARGETS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def as_json(value):
    """A fetched value as JSON: bool/int/float lists (bfloat16 and float16 as floats, complex as pairs)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":
        return np.stack([arr.real, arr.imag], axis=-1).astype(np.float64).tolist()
    if arr.dtype.kind == "V" or arr.dtype.name == "bfloat16" or arr.dtype == np.float16:
        return arr.astype(np.float64).tolist()
    return arr.tolist()


def run(fetch):
    with v1.Session() as sess:
        return sess.run(fetch)


def cast_cases():
    cases = []
    # Floats to uint32/uint64: the special values, at lengths that put them in TF's tail loop only
    # (5), in both loops (18) and, repeated, in the packet loop almost only (64).
    for src in ["float16", "bfloat16", "float32", "float64"]:
        for length in (5, 18, 64):
            if length == 5:
                values = [float("nan"), 2.0**32, 1e20, -1.0, 1e10]
            else:
                values = (SPECIAL_FLOATS * 4)[:length]
            for dst in ["uint32", "uint64"]:
                with tf.Graph().as_default():
                    x = tf.constant(np.array(values, np.float64))
                    out = run(tf.cast(tf.cast(x, src), dst))
                    src_vals = run(tf.cast(tf.cast(x, src), tf.float64))
                cases.append({"src": src, "dst": dst, "x": np.asarray(src_vals).tolist(), "y": out.tolist()})
    # Signed and narrow integers to uint32/uint64 (values wrapped to the source type first).
    for src in ["int8", "int16", "int32", "int64", "uint8", "uint16"]:
        src_vals = np.array(INTS, np.int64).astype(np.dtype(src)).tolist()
        for dst in ["uint32", "uint64"]:
            with tf.Graph().as_default():
                out = run(tf.cast(tf.constant(np.array(src_vals, np.dtype(src))), dst))
            cases.append({"src": src, "dst": dst, "x": src_vals, "y": out.tolist()})
    # uint32/uint64 to everything.
    for src, vals in (("uint32", U32), ("uint64", U64)):
        for dst in FLOAT_TARGETS + INT_TARGETS:
            if dst == src:
                continue
            with tf.Graph().as_default():
                out = run(tf.cast(tf.constant(np.array(vals, np.dtype(src))), dst))
            cases.append({"src": src, "dst": dst, "x": vals, "y": as_json(out)})
    return cases


def op_cases():
    cases = []

    def add(op, dtype, inputs, attrs, build):
        np_dt = np.dtype(dtype)
        with tf.Graph().as_default():
            tensors = [tf.constant(np.array(v, np_dt if k != "axis" else np.int32)) for k, v in inputs]
            out = run(build(*tensors))
        cases.append({"op": op, "dtype": dtype, "inputs": [[k, v] for k, v in inputs], "attrs": attrs,
                      "y": as_json(out), "y_dtype": np.asarray(out).dtype.name,
                      "y_hex": np.ascontiguousarray(out).tobytes().hex()})

    for dtype, big in (("uint32", 2**32 - 1), ("uint64", 2**64 - 1)):
        x = [0, 1, 5, 7, big, big - 1, 2**31, 3, 100, 12]
        y = [3, big, 2, 7, 2, big, 2**31, 5, 7, 12]
        for op in ["AddV2", "Sub", "Mul", "Div", "FloorDiv", "FloorMod", "TruncateDiv", "Maximum", "Minimum",
                   "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "BitwiseAnd", "BitwiseOr",
                   "BitwiseXor"]:
            fn = getattr(raw, op)
            add(op, dtype, [("x", x), ("y", y)], {}, lambda a, b, fn=fn: fn(x=a, y=b))
        bits = 32 if dtype == "uint32" else 64
        shifts = [0, 1, 5, bits - 1, bits, bits + 3, 200, 31, 2, 63 % bits]
        for op in ["LeftShift", "RightShift"]:
            fn = getattr(raw, op)
            add(op, dtype, [("x", x), ("y", shifts)], {}, lambda a, b, fn=fn: fn(x=a, y=b))
        # Broadcasting a scalar.
        add("AddV2", dtype, [("x", x), ("y", big)], {}, lambda a, b: raw.AddV2(x=a, y=b))
        for op in ["Invert", "PopulationCount", "Square", "Relu", "Relu6"]:
            fn = getattr(raw, op)
            key = "features" if op.startswith("Relu") else "x"
            add(op, dtype, [("x", x)], {}, lambda a, fn=fn, key=key: fn(**{key: a}))
        m = [[1, big, 3], [4, 5, 2**31], [big, 0, 9], [7, 8, 9]]
        for op in ["Sum", "Prod", "Max", "Min", "Mean", "EuclideanNorm"]:
            fn = getattr(raw, op)
            for axis in (0, 1):
                add(op, dtype, [("input", m), ("axis", [axis])], {"keep_dims": False},
                    lambda a, ax, fn=fn: fn(input=a, axis=ax))
        for op in ["ArgMax", "ArgMin"]:
            fn = getattr(raw, op)
            add(op, dtype, [("input", m), ("axis", 0)], {}, lambda a, ax, fn=fn: fn(input=a, dimension=ax))
        for op in ["Cumsum", "Cumprod"]:
            fn = getattr(raw, op)
            add(op, dtype, [("x", m), ("axis", 1)], {}, lambda a, ax, fn=fn: fn(x=a, axis=ax))
        add("AddN", dtype, [("x", x), ("y", y)], {}, lambda a, b: raw.AddN(inputs=[a, b]))
    # Bitcasts between uint32/uint64 and the other 4- and 8-byte types.
    f32_bits = [0, 1065353216, 3221225472, 2139095040, 4294967295]
    for dst in ["float32", "int32", "uint8", "uint16", "int64", "float64", "uint64"]:
        vals = f32_bits if dst not in ("int64", "float64", "uint64") else [f32_bits[:2], f32_bits[2:4]]
        add("Bitcast", "uint32", [("input", vals)], {"type": dst},
            lambda a, dst=dst: raw.Bitcast(input=a, type=tf.as_dtype(dst)))
    for dst in ["float64", "int64", "uint32", "float32", "uint8"]:
        add("Bitcast", "uint64", [("input", [0, 4607182418800017408, 2**64 - 1, 2**63])], {"type": dst},
            lambda a, dst=dst: raw.Bitcast(input=a, type=tf.as_dtype(dst)))
    for src, vals in (("float32", [1.0, -2.0, 0.5]), ("int32", [-1, 7, 2**31 - 1]), ("float64", [1.0, -2.5])):
        for dst in ("uint32", "uint64"):
            if src == "float64" and dst == "uint32":
                continue
            if src != "float64" and dst == "uint64":
                vals2 = [vals[:2], vals[1:3]]
            else:
                vals2 = vals
            add("Bitcast", src, [("input", vals2)], {"type": dst},
                lambda a, dst=dst: raw.Bitcast(input=a, type=tf.as_dtype(dst)))
    return cases


def rejected_ops():
    """The ops among those ferroflow has that TF 2.21 refuses at graph construction for uint32/uint64."""
    unary = {"Neg": "x", "Abs": "x", "Sign": "x", "Reciprocal": "x", "Round": "x", "Floor": "x", "IsFinite": "x"}
    binary = ["Pow", "TruncateMod", "SquaredDifference", "DivNoNan", "Add"]
    out = []
    for dtype in ("uint32", "uint64"):
        for op, key in unary.items():
            with tf.Graph().as_default():
                try:
                    getattr(raw, op)(**{key: tf.constant(np.array([1, 2], np.dtype(dtype)))})
                except TypeError:
                    out.append({"op": op, "dtype": dtype, "inputs": 1})
        for op in binary:
            with tf.Graph().as_default():
                c = tf.constant(np.array([1, 2], np.dtype(dtype)))
                try:
                    getattr(raw, op)(x=c, y=c)
                except TypeError:
                    out.append({"op": op, "dtype": dtype, "inputs": 2})
    return out


def stateless_full_int():
    """``tf.random.stateless_uniform`` over the whole range of uint32/uint64 (and int32/int64)."""
    out = {}
    with tf.Graph().as_default():
        for dtype in ("uint32", "uint64", "int32", "int64"):
            r = tf.random.stateless_uniform([7], seed=[1, 2], minval=None, maxval=None, dtype=dtype)
            out[dtype] = run(r).tolist()
    return out


CKPT_VALUES = {
    "u32": ("uint32", [0, 1, 2**31, 2**32 - 1]),
    "u32_matrix": ("uint32", [[7, 8, 9], [4000000000, 5, 6]]),
    "u64": ("uint64", [0, 2**63, 2**64 - 1, 12345678901234567890]),
    "u64_scalar": ("uint64", 2**64 - 2),
}


def write_checkpoint():
    (OUT / "ckpt").mkdir(parents=True)
    with tf.Graph().as_default():
        variables = {}
        for name, (dtype, value) in CKPT_VALUES.items():
            variables[name] = v1.Variable(np.array(value, np.dtype(dtype)), name=name)
        saver = v1.train.Saver(save_relative_paths=True)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            saver.save(sess, str(OUT / "ckpt" / "model.ckpt"), write_meta_graph=False)
    reader = tf.train.load_checkpoint(str(OUT / "ckpt" / "model.ckpt"))
    dtypes = reader.get_variable_to_dtype_map()
    listed = []
    for name, (dtype, value) in CKPT_VALUES.items():
        got = reader.get_tensor(name)
        np.testing.assert_array_equal(got, np.array(value, np.dtype(dtype)))
        assert dtypes[name].name == dtype
        listed.append({"name": name, "dtype": dtype, "dtype_enum": dtypes[name].as_datatype_enum,
                       "shape": list(np.shape(got)), "value": np.asarray(got).tolist()})
    return listed


def check_ferroflow(directory):
    """Reads ferroflow's checkpoint with TF and compares it with the same variables' values."""
    reader = tf.train.load_checkpoint(str(pathlib.Path(directory) / "model.ckpt"))
    dtypes = reader.get_variable_to_dtype_map()
    for name, (dtype, value) in CKPT_VALUES.items():
        got = reader.get_tensor(name)
        assert dtypes[name].name == dtype, (name, dtypes[name])
        np.testing.assert_array_equal(got, np.array(value, np.dtype(dtype)))
        assert got.dtype == np.dtype(dtype), (name, got.dtype)
    print(f"TensorFlow {tf.__version__} read {len(CKPT_VALUES)} uint32/uint64 tensors from ferroflow's "
          f"checkpoint with the right dtypes and values")


def main():
    v1.disable_eager_execution()
    if len(sys.argv) == 3 and sys.argv[1] == "--check-ferroflow":
        check_ferroflow(sys.argv[2])
        return
    v1.disable_resource_variables()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    data = {
        "tensorflow": tf.__version__,
        "casts": cast_cases(),
        "ops": op_cases(),
        "rejected": rejected_ops(),
        "checkpoint": write_checkpoint(),
        "stateless_full_int": stateless_full_int(),
    }
    (OUT / "values.json").write_text(json.dumps(data) + "\n")


if __name__ == "__main__":
    main()
