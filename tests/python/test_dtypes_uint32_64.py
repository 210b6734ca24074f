"""uint32 and uint64 tensors end to end (issue 23): dtype objects, constants, feeds and fetches, casts,
arithmetic, comparisons, bitwise ops, reductions, bitcasts, layout ops, variables, checkpoints,
GraphDefs, tf.data and stateless random integers.

TensorFlow's results come from ``tests/fixtures/uint32_64/values.json`` and the checkpoint next to it,
written by TF 2.21 (``tools/make_uint32_64_fixtures.py``); wrap-around arithmetic is also checked
against NumPy, whose unsigned arithmetic wraps the same way.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import shutil

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops._op_util import make, type_attr

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "uint32_64"
DATA = json.loads((FIXTURES / "values.json").read_text())
UINTS = [(tf.uint32, np.uint32), (tf.uint64, np.uint64)]


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# ------------------------------------------------------------------------------------------ DType objects


def test_dtype_objects_match_tensorflow():
    assert tf.uint32.as_datatype_enum == 22 and tf.uint64.as_datatype_enum == 23
    assert tf.uint32.as_numpy_dtype is np.uint32 and tf.uint64.as_numpy_dtype is np.uint64
    assert (tf.uint32.min, tf.uint32.max) == (0, 2**32 - 1)
    assert (tf.uint64.min, tf.uint64.max) == (0, 2**64 - 1)
    for d in (tf.uint32, tf.uint64):
        assert d.is_unsigned and d.is_integer and not d.is_floating and d.is_numpy_compatible
    assert (tf.uint32.size, tf.uint64.size) == (4, 8)
    assert tf.as_dtype(np.uint32) is tf.uint32 and tf.as_dtype("uint64") is tf.uint64
    assert tf.as_dtype(np.dtype(np.uint64)) is tf.uint64 and tf.as_dtype(22) is tf.uint32
    assert tf.uint32.name == "uint32" and repr(tf.uint64) == "tf.uint64"


# ------------------------------------------------------------------------- constants, feeds, fetches


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_constants_feeds_and_fetches_keep_every_bit(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    values = np.array([0, 1, top, top - 1, top // 2 + 1], np_dtype)
    c = tf.constant(values)
    assert c.dtype == dtype
    p = tf.placeholder(dtype, [None])
    scalar = tf.constant(top, dtype)
    got, fed, ident, s = run([c, p, tf.identity(p), scalar], {p: values[::-1]})
    for out, want in ((got, values), (fed, values[::-1]), (ident, values[::-1])):
        assert out.dtype == np_dtype
        np.testing.assert_array_equal(out, want)
    assert s.dtype == np_dtype and int(s) == int(top)
    # A Python list of large ints with an explicit dtype.
    np.testing.assert_array_equal(run(tf.constant([top, 3], dtype)), np.array([top, 3], np_dtype))


def test_python_ints_beyond_int64_are_uint64_like_tf():
    # TF 2.21 (graph mode): 2**63 + 5 and [2**63] become uint64; [[2**64 - 1], [3]] (NumPy: float64) float32.
    a, b, c = tf.constant(2**63 + 5), tf.constant([2**63]), tf.constant([[2**64 - 1], [3]])
    assert (a.dtype, b.dtype, c.dtype) == (tf.uint64, tf.uint64, tf.float32)
    got = run([a, b])
    assert int(got[0]) == 2**63 + 5 and got[1].tolist() == [2**63]


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_feeding_other_dtypes_is_refused_or_converted_like_tf(dtype, np_dtype):
    p = tf.placeholder(dtype, [2])
    # A list of Python ints converts to the placeholder's dtype.
    np.testing.assert_array_equal(run(p, {p: [1, 2]}), np.array([1, 2], np_dtype))


# --------------------------------------------------------------------------------------------- casts


def _as_np(values, dtype_name):
    if dtype_name == "bfloat16":
        import ml_dtypes

        return np.array(values, np.float64).astype(ml_dtypes.bfloat16)
    return np.array(values, np.dtype(dtype_name))


def _cast_id(case):
    return f"{case['src']}->{case['dst']}[{len(case['x'])}]"


@pytest.mark.parametrize("case", DATA["casts"], ids=_cast_id)
def test_cast_matches_tensorflow(case):
    x = tf.constant(_as_np(case["x"], case["src"]))
    y = tf.cast(x, case["dst"])
    assert y.dtype == tf.as_dtype(case["dst"])
    got = np.asarray(run(y))
    if got.dtype.kind == "c":
        got = np.stack([got.real, got.imag], axis=-1)
    want = np.array(case["y"], np.float64 if got.dtype.kind in "fcV" or case["dst"] == "bfloat16" else got.dtype)
    if case["dst"] in ("bfloat16", "float16"):
        got = got.astype(np.float64)
    np.testing.assert_array_equal(got, want)


def test_float_to_uint32_depends_on_position_like_tensorflow():
    # TF's CPU kernel converts in packets of 8 and the remainder one by one, and the two loops treat
    # NaN and out-of-range values differently: 2**31 in packets, the low 32 bits of the int64
    # conversion in the tail. Both -1.0s wrap to 2**32-1 either way.
    x = np.full(11, np.nan, np.float32)
    x[0] = x[9] = -1.0
    x[1] = x[10] = 1e10
    got = run(tf.cast(tf.constant(x), tf.uint32))
    assert got.tolist() == [2**32 - 1, 2**31] + [2**31] * 6 + [0, 2**32 - 1, 1410065408]
    assert run(tf.cast(tf.constant(float("nan")), tf.uint32)) == 0
    assert run(tf.cast(tf.constant(float("nan")), tf.uint64)) == 2**63


def test_cast_large_uint64_to_float_and_back_rounds_like_tf():
    v = np.array([2**64 - 1, 2**63 + 2**11, 2**53 + 1], np.uint64)
    f64, f32 = run([tf.cast(tf.constant(v), tf.float64), tf.cast(tf.constant(v), tf.float32)])
    np.testing.assert_array_equal(f64, v.astype(np.float64))
    np.testing.assert_array_equal(f32, v.astype(np.float32))


# ---------------------------------------------------------------------------------- ops against TF

_BUILDERS = {
    "AddV2": lambda a, b: tf.add(a, b),
    "Sub": lambda a, b: tf.subtract(a, b),
    "Mul": lambda a, b: tf.multiply(a, b),
    "Div": lambda a, b: make("Div", [a, b]),
    "FloorDiv": lambda a, b: tf.math.floordiv(a, b),
    "FloorMod": lambda a, b: tf.math.floormod(a, b),
    "TruncateDiv": lambda a, b: tf.truncatediv(a, b),
    "Maximum": lambda a, b: tf.maximum(a, b),
    "Minimum": lambda a, b: tf.minimum(a, b),
    "Equal": lambda a, b: tf.equal(a, b),
    "NotEqual": lambda a, b: tf.not_equal(a, b),
    "Less": lambda a, b: tf.less(a, b),
    "LessEqual": lambda a, b: tf.less_equal(a, b),
    "Greater": lambda a, b: tf.greater(a, b),
    "GreaterEqual": lambda a, b: tf.greater_equal(a, b),
    "BitwiseAnd": lambda a, b: tf.bitwise.bitwise_and(a, b),
    "BitwiseOr": lambda a, b: tf.bitwise.bitwise_or(a, b),
    "BitwiseXor": lambda a, b: tf.bitwise.bitwise_xor(a, b),
    "LeftShift": lambda a, b: tf.bitwise.left_shift(a, b),
    "RightShift": lambda a, b: tf.bitwise.right_shift(a, b),
    "Invert": lambda a: tf.bitwise.invert(a),
    "PopulationCount": lambda a: tf.raw_ops.PopulationCount(x=a),
    "Square": lambda a: tf.square(a),
    "Relu": lambda a: tf.nn.relu(a),
    "Relu6": lambda a: tf.nn.relu6(a),
    "Sum": lambda a, ax: tf.reduce_sum(a, axis=ax),
    "Prod": lambda a, ax: tf.reduce_prod(a, axis=ax),
    "Max": lambda a, ax: tf.reduce_max(a, axis=ax),
    "Min": lambda a, ax: tf.reduce_min(a, axis=ax),
    "Mean": lambda a, ax: tf.reduce_mean(a, axis=ax),
    "EuclideanNorm": lambda a, ax: tf.math.reduce_euclidean_norm(a, axis=ax),
    "ArgMax": lambda a, ax: tf.argmax(a, axis=ax),
    "ArgMin": lambda a, ax: tf.argmin(a, axis=ax),
    "Cumsum": lambda a, ax: tf.cumsum(a, axis=ax),
    "Cumprod": lambda a, ax: tf.cumprod(a, axis=ax),
    "AddN": lambda a, b: tf.add_n([a, b]),
}


def _op_id(case):
    extra = case["attrs"].get("type", "")
    return f"{case['op']}-{case['dtype']}{'-' + extra if extra else ''}"


@pytest.mark.parametrize("case", DATA["ops"], ids=_op_id)
def test_op_matches_tensorflow(case):
    np_dt = np.dtype(case["dtype"])
    tensors = [tf.constant(np.array(v, np.int32 if k == "axis" else np_dt)) for k, v in case["inputs"]]
    if case["op"] == "Bitcast":
        y = tf.bitcast(tensors[0], case["attrs"]["type"])
    else:
        y = _BUILDERS[case["op"]](*tensors)
    got = np.asarray(run(y))
    assert got.dtype == np.dtype(case["y_dtype"])
    np.testing.assert_array_equal(got, np.array(case["y"], got.dtype))
    # Every bit, NaN payloads of bitcasts included.
    assert np.ascontiguousarray(got).tobytes().hex() == case["y_hex"]


@pytest.mark.parametrize("case", DATA["rejected"], ids=lambda c: f"{c['op']}-{c['dtype']}")
def test_ops_tf_refuses_for_unsigned_are_refused(case):
    c = tf.constant(np.array([1, 2], np.dtype(case["dtype"])))
    with pytest.raises(TypeError):
        make(case["op"], [c] * case["inputs"])


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_matmul_is_refused_like_tf(dtype, np_dtype):
    # TF builds the graph but has no uint32/uint64 MatMul kernel; ferroflow refuses at construction.
    a = tf.constant(np.ones([2, 2], np_dtype))
    with pytest.raises((TypeError, tf.errors.NotFoundError, tf.errors.InvalidArgumentError)):
        run(tf.matmul(a, a))


def test_string_to_number_reads_unsigned_like_tf():
    # TF 2.21: whitespace and "+" are accepted; "-1", out-of-range values, "1.5" and "0x10" are errors.
    got = run({
        "u32": tf.strings.to_number(["4294967295", " 12", "+5"], tf.uint32),
        "u64": tf.strings.to_number(["18446744073709551615", "4294967296"], tf.uint64),
    })
    assert got["u32"].dtype == np.uint32 and got["u32"].tolist() == [2**32 - 1, 12, 5]
    assert got["u64"].dtype == np.uint64 and got["u64"].tolist() == [2**64 - 1, 2**32]
    for text, dtype in (("-1", tf.uint32), ("4294967296", tf.uint32), ("1.5", tf.uint64), ("0x10", tf.uint64),
                        ("-1", tf.uint64)):
        with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert string"):
            run(tf.strings.to_number([text], dtype))


def test_range_is_refused_like_tf():
    # TF 2.21's Range op definition lists uint32 but it registers no kernel for it (nor uint64).
    for np_dtype in (np.uint32, np.uint64):
        c = [tf.constant(np_dtype(v)) for v in (0, 5, 1)]
        with pytest.raises(TypeError, match="Range"):
            make("Range", c, {"Tidx": type_attr(c[0].dtype)})


def test_as_string_prints_every_digit():
    # TF 2.21: b"18446744073709551615", b"7" and b"  4294967295" (width 12).
    big = tf.strings.as_string(tf.constant(np.array([2**64 - 1, 7], np.uint64)))
    wide = tf.strings.as_string(tf.constant(np.array([2**32 - 1], np.uint32)), width=12)
    got_big, got_wide = run([big, wide])
    assert got_big.tolist() == [b"18446744073709551615", b"7"] and got_wide.tolist() == [b"  4294967295"]


# ------------------------------------------------------------------------ wrap-around against NumPy


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_wraparound_arithmetic_matches_numpy(dtype, np_dtype):
    rng = np.random.default_rng(23)
    info = np.iinfo(np_dtype)
    a = rng.integers(0, info.max, size=257, dtype=np_dtype, endpoint=True)
    b = rng.integers(1, info.max, size=257, dtype=np_dtype, endpoint=True)
    b[:4] = [1, 2, info.max, 3]
    a[:4] = [info.max, info.max, 0, 7]
    x, y = tf.constant(a), tf.constant(b)
    outs = run({
        "add": x + y, "sub": x - y, "mul": x * y, "fdiv": x // y, "mod": x % y, "max": tf.maximum(x, y),
        "lt": x < y, "eq": tf.equal(x, y), "sum": tf.reduce_sum(x), "prod": tf.reduce_prod(x[:9]),
        "neg_const": x - tf.constant(1, dtype),
    })
    with np.errstate(over="ignore"):
        want = {
            "add": a + b, "sub": a - b, "mul": a * b, "fdiv": a // b, "mod": a % b, "max": np.maximum(a, b),
            "lt": a < b, "eq": a == b, "sum": a.sum(dtype=np_dtype), "prod": a[:9].prod(dtype=np_dtype),
            "neg_const": a - np_dtype(1),
        }
    for k, v in want.items():
        assert np.asarray(outs[k]).dtype == np.asarray(v).dtype, k
        np.testing.assert_array_equal(outs[k], v, err_msg=k)


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_integer_division_by_zero_is_an_error(dtype, np_dtype):
    x = tf.constant(np.array([4, 5], np_dtype))
    with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
        run(tf.math.floordiv(x, tf.constant(np.array([1, 0], np_dtype))))


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_truediv_goes_through_float64_like_tf(dtype, np_dtype):
    x = tf.constant(np.array([7, 2**32 - 1], np_dtype))
    y = x / tf.constant(np.array([2, 4], np_dtype))
    assert y.dtype == tf.float64
    np.testing.assert_array_equal(run(y), [3.5, (2**32 - 1) / 4])


# ---------------------------------------------------------------------------------------- layout ops


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_layout_ops_move_unsigned_values(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    a = (np.arange(24, dtype=np_dtype) * np_dtype(top // 23)).reshape(2, 3, 4)
    x = tf.constant(a)
    checks = {
        "reshape": (tf.reshape(x, [6, 4]), a.reshape(6, 4)),
        "concat": (tf.concat([x, x], 1), np.concatenate([a, a], 1)),
        "stack": (tf.stack([x, x]), np.stack([a, a])),
        "unstack": (tf.unstack(x, axis=1)[2], a[:, 2]),
        "slice": (tf.slice(x, [0, 1, 1], [2, 2, 2]), a[:, 1:3, 1:3]),
        "strided": (x[:, ::-1, 1::2], a[:, ::-1, 1::2]),
        "gather": (tf.gather(x, [2, 0], axis=1), a[:, [2, 0]]),
        "gather_nd": (tf.gather_nd(x, [[1, 2], [0, 0]]), a[[1, 0], [2, 0]]),
        "transpose": (tf.transpose(x, [2, 0, 1]), a.transpose(2, 0, 1)),
        "tile": (tf.tile(x, [1, 2, 1]), np.tile(a, [1, 2, 1])),
        "pad": (tf.pad(x, [[0, 0], [1, 0], [0, 2]]), np.pad(a, [[0, 0], [1, 0], [0, 2]])),
        "reverse": (tf.reverse(x, [2]), a[:, :, ::-1]),
        "expand": (tf.expand_dims(x, 0), a[None]),
        "squeeze": (tf.squeeze(tf.expand_dims(x, 2), [2]), a),
        "split": (tf.split(x, 2, axis=2)[1], a[:, :, 2:]),
        "broadcast": (tf.broadcast_to(x[:1], [3, 3, 4]), np.broadcast_to(a[:1], [3, 3, 4])),
        "where": (tf.where(x > np_dtype(top // 2), x, tf.zeros_like(x)), np.where(a > top // 2, a, 0)),
        "fill": (tf.fill([2, 2], tf.constant(top, dtype)), np.full([2, 2], top, np_dtype)),
        "zeros": (tf.zeros([3], dtype), np.zeros(3, np_dtype)),
        "ones_like": (tf.ones_like(x), np.ones_like(a)),
        "one_hot": (tf.one_hot([1, 0], 3, on_value=tf.constant(top, dtype), off_value=tf.constant(0, dtype)),
                    np.array([[0, top, 0], [top, 0, 0]], np_dtype)),
        "sort": (tf.sort(tf.reshape(x, [-1]), direction="DESCENDING"), np.sort(a.ravel())[::-1]),
        "top_k": (tf.math.top_k(tf.reshape(x, [-1]), 3).values, np.sort(a.ravel())[::-1][:3]),
        "unique": (tf.unique(tf.constant(np.array([top, 1, top], np_dtype))).y, np.array([top, 1], np_dtype)),
        "segment_sum": (tf.math.segment_sum(tf.constant(a[0, 0]), [0, 0, 1, 1]),
                        np.array([a[0, 0, 0] + a[0, 0, 1], a[0, 0, 2] + a[0, 0, 3]], np_dtype)),
        "segment_max": (tf.math.unsorted_segment_max(tf.constant(a[1, 2]), [1, 0, 1, 0], 2),
                        np.array([max(a[1, 2, 1], a[1, 2, 3]), max(a[1, 2, 0], a[1, 2, 2])], np_dtype)),
        "setdiff": (tf.compat.v1.setdiff1d(tf.constant(a[0, 0]), tf.constant(a[0, 0, 1:3]))[0], a[0, 0, [0, 3]]),
        "diag": (tf.linalg.diag(tf.constant(a[0, 0, :2])), np.diag(a[0, 0, :2])),
        "roll": (tf.roll(x, 1, 2), np.roll(a, 1, 2)),
        "space_to_depth": (tf.nn.space_to_depth(tf.reshape(x[:, :2], [1, 4, 4, 1]), 2),
                           a[:, :2].reshape(1, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, 4)),
        "stitch": (tf.dynamic_stitch([[1, 0]], [tf.constant(a[0, 0, :2])]), a[0, 0, 1::-1]),
        "mask": (tf.boolean_mask(tf.constant(a[0, 0]), [True, False, False, True]), a[0, 0, [0, 3]]),
    }
    outs = run({k: v[0] for k, v in checks.items()})
    for k, (_, want) in checks.items():
        assert np.asarray(outs[k]).dtype == np_dtype, k
        np.testing.assert_array_equal(outs[k], want, err_msg=k)


# ------------------------------------------------------------------------------------------ variables


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_variables_hold_unsigned_values(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    v = tf.Variable(np.array([top, 5], np_dtype), name="v")
    assert v.dtype.base_dtype == dtype
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign(np.array([1, top - 1], np_dtype)))
        sess.run(v.assign_add(np.array([top, 2], np_dtype)))  # wraps: 1 + top = 0, top - 1 + 2 = 0
        np.testing.assert_array_equal(sess.run(v), np.array([0, 0], np_dtype))


# ---------------------------------------------------------------------------------------- checkpoints


def test_checkpoint_written_by_tensorflow_restores():
    prefix = str(FIXTURES / "ckpt" / "model.ckpt")
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    variables = {}
    for entry in DATA["checkpoint"]:
        np_dt = np.dtype(entry["dtype"])
        got = reader.get_tensor(entry["name"])
        assert dtypes[entry["name"]] == tf.as_dtype(entry["dtype"])
        assert got.dtype == np_dt
        np.testing.assert_array_equal(got, np.array(entry["value"], np_dt))
        variables[entry["name"]] = tf.Variable(np.zeros(entry["shape"], np_dt), name=entry["name"])
    saver = tf.train.Saver(variables)
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        for entry in DATA["checkpoint"]:
            np.testing.assert_array_equal(sess.run(variables[entry["name"]]),
                                          np.array(entry["value"], np.dtype(entry["dtype"])))


def test_checkpoint_written_by_ferroflow_stores_tf_dtypes_and_bytes(tmp_path):
    # TF reads this checkpoint (tools/make_uint32_64_fixtures.py --check-ferroflow DIR checks it when
    # FERROFLOW_KEEP_UINT_CKPT=DIR); here: same dtype enums and same tensor bytes as TF's own file.
    variables = {e["name"]: tf.Variable(np.array(e["value"], np.dtype(e["dtype"])), name=e["name"])
                 for e in DATA["checkpoint"]}
    saver = tf.train.Saver(variables)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    ours = tf.train.load_checkpoint(path)
    theirs = tf.train.load_checkpoint(str(FIXTURES / "ckpt" / "model.ckpt"))
    assert ours.get_variable_to_dtype_map() == theirs.get_variable_to_dtype_map()
    for e in DATA["checkpoint"]:
        a, b = ours.get_tensor(e["name"]), theirs.get_tensor(e["name"])
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    data_name = "model.ckpt.data-00000-of-00001"
    assert (tmp_path / data_name).read_bytes() == (FIXTURES / "ckpt" / data_name).read_bytes()
    keep = os.environ.get("FERROFLOW_KEEP_UINT_CKPT")
    if keep:
        shutil.copytree(tmp_path, keep, dirs_exist_ok=True)


# ------------------------------------------------------------------------------------------- GraphDef


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_graph_def_constants_use_tf_fields_and_import_back(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    g = tf.Graph()
    with g.as_default():
        tf.constant(top, dtype, name="scalar")
        tf.constant(np.array([top, 0, 7], np_dtype), name="vector")
    gd = g.as_graph_def()
    nodes = {n.name: n for n in gd.node}
    field = "uint32_val" if dtype == tf.uint32 else "uint64_val"
    scalar = nodes["scalar"].attr["value"].tensor
    assert scalar.dtype == dtype.as_datatype_enum and list(getattr(scalar, field)) == [top]
    vector = nodes["vector"].attr["value"].tensor
    assert np.frombuffer(vector.tensor_content, np_dtype).tolist() == [top, 0, 7]
    with tf.Graph().as_default():
        s, v = tf.import_graph_def(gd, return_elements=["scalar:0", "vector:0"])
        assert s.dtype == dtype
        got_s, got_v = run([s, v])
    assert got_s == top and got_v.dtype == np_dtype
    np.testing.assert_array_equal(got_v, np.array([top, 0, 7], np_dtype))


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_make_tensor_proto_round_trip(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    proto = tf.make_tensor_proto(np.array([[top, 1]], np_dtype))
    assert proto.dtype == dtype.as_datatype_enum
    back = tf.make_ndarray(proto)
    assert back.dtype == np_dtype and back.tolist() == [[top, 1]]


# ------------------------------------------------------------------------------------ tf.data, random


@pytest.mark.parametrize("dtype,np_dtype", UINTS)
def test_dataset_slices_batches_and_serializes(dtype, np_dtype):
    top = np.iinfo(np_dtype).max
    values = np.array([[top, 1], [2, top - 3], [4, 5]], np_dtype)
    ds = tf.data.Dataset.from_tensor_slices(values).batch(2)
    it = tf.data.make_one_shot_iterator(ds)
    nxt = it.get_next()
    assert nxt.dtype == dtype
    ser = tf.io.serialize_tensor(tf.constant(values))
    back = tf.io.parse_tensor(ser, dtype)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(nxt), values[:2])
        np.testing.assert_array_equal(sess.run(nxt), values[2:])
        np.testing.assert_array_equal(sess.run(back), values)


def test_stateless_uniform_full_range_matches_tf():
    outs = {d: tf.random.stateless_uniform([7], seed=[1, 2], minval=None, maxval=None, dtype=d)
            for d in DATA["stateless_full_int"]}
    got = run(outs)
    for d, want in DATA["stateless_full_int"].items():
        assert got[d].dtype == np.dtype(d)
        np.testing.assert_array_equal(got[d], np.array(want, np.dtype(d)))
    with pytest.raises(ValueError, match="unsigned"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=0, maxval=5, dtype=tf.uint32)


def test_fixture_casts_cover_the_issue_values():
    # The issue's values (-1, 2**32, 1e20, NaN) are in the float32 cases, at both positions.
    case = next(c for c in DATA["casts"] if c["src"] == "float32" and c["dst"] == "uint32" and len(c["x"]) == 18)
    assert case["x"][:3] == [-1.0, 2.0**32, float(np.float32(1e20))] and math.isnan(case["x"][3])
