"""Quantize / dequantize ops against TensorFlow 2.21, bit for bit.

Fixtures: tests/fixtures/quantize/quantize.npz, made by tools/make_quantize_fixtures.py with
TensorFlow 2.21's reference CPU kernels (TF_ENABLE_ONEDNN_OPTS=0; see that script). Each kind of
case is checked in one graph and one session run; a failure lists every case that differs.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops.quantize_ops import quantize_and_dequantize_v3

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "quantize", "quantize.npz"))
CASES = json.loads(bytes(FIXTURE["meta"]).decode())
QTYPES = {"qint8": tf.qint8, "quint8": tf.quint8, "qint16": tf.qint16, "quint16": tf.quint16, "qint32": tf.qint32}


def _arrays(case):
    return {name: FIXTURE[key] for name, key in case["arrays"].items()}


def _cases(kind):
    return [c for c in CASES if c["kind"] == kind]


def _bits_equal(got, want):
    """Equal values and signs of zero, NaN equal to NaN."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        return np.array_equal(got.astype(want.dtype).view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}"))
    return np.array_equal(got.astype(np.int64), want.astype(np.int64))


def _check_all(cases, build, compare):
    """Builds every case into one graph, runs it once, and collects the cases whose outputs differ."""
    with tf.Graph().as_default(), tf.Session() as s:
        feeds, fetches = {}, []
        for c in cases:
            fetches.append(build(c, _arrays(c), feeds))
        results = s.run(fetches, feeds)
    bad = []
    for c, got in zip(cases, results):
        diff = compare(got, _arrays(c))
        if diff:
            bad.append(f"{c['key']} {json.dumps({k: v for k, v in c.items() if k not in ('arrays', 'key')})}: {diff}")
    assert not bad, f"{len(bad)} of {len(cases)} cases differ from TensorFlow:\n" + "\n".join(bad[:20])


def test_quantize_matches_tensorflow():
    def build(c, a, feeds):
        x = tf.placeholder(tf.float32, a["x"].shape)
        lo, hi = tf.placeholder(tf.float32, a["min"].shape), tf.placeholder(tf.float32, a["max"].shape)
        feeds.update({x: a["x"], lo: a["min"], hi: a["max"]})
        r = tf.quantization.quantize(x, lo, hi, QTYPES[c["T"]], mode=c["mode"], round_mode=c["round_mode"],
                                     narrow_range=c["narrow_range"], axis=c["axis"],
                                     ensure_minimum_range=c["ensure_minimum_range"])
        assert r.output.dtype == QTYPES[c["T"]]
        return list(r)

    def compare(got, a):
        y, ymin, ymax = got
        out = []
        if y.dtype != a["y"].dtype:
            out.append(f"fetched as {y.dtype}, TF gives {a['y'].dtype}")
        if not _bits_equal(y, a["y"]):
            i = np.flatnonzero(np.asarray(y).reshape(-1).astype(np.int64) != a["y"].reshape(-1).astype(np.int64))[:4]
            out.append(f"y at {i.tolist()}: x={a['x'].reshape(-1)[i]} got {np.asarray(y).reshape(-1)[i]} "
                       f"want {a['y'].reshape(-1)[i]}")
        for name, g in (("ymin", ymin), ("ymax", ymax)):
            if not _bits_equal(np.asarray(g, np.float32), a[name]):
                out.append(f"{name} {g} want {a[name]}")
        return "; ".join(out)

    _check_all(_cases("quantize"), build, compare)


def test_dequantize_matches_tensorflow():
    def build(c, a, feeds):
        q = tf.placeholder(QTYPES[c["T"]], a["q"].shape)
        lo, hi = tf.placeholder(tf.float32, a["min"].shape), tf.placeholder(tf.float32, a["max"].shape)
        feeds.update({q: a["q"], lo: a["min"], hi: a["max"]})
        out = tf.bfloat16 if c["dtype"] == "bfloat16" else tf.float32
        y = tf.quantization.dequantize(q, lo, hi, mode=c["mode"], narrow_range=c["narrow_range"], axis=c["axis"],
                                       dtype=out)
        assert y.dtype == out
        return tf.cast(y, tf.float32) if out == tf.bfloat16 else y

    def compare(got, a):
        if _bits_equal(got, a["y"]):
            return ""
        i = np.flatnonzero(got.reshape(-1).view(np.uint32) != a["y"].reshape(-1).view(np.uint32))[:4]
        return f"y at {i.tolist()}: q={a['q'].reshape(-1)[i]} got {got.reshape(-1)[i]} want {a['y'].reshape(-1)[i]}"

    _check_all(_cases("dequantize"), build, compare)


def test_quantize_and_dequantize_and_gradients_match_tensorflow():
    def build(c, a, feeds):
        dt = tf.as_dtype(a["x"].dtype)
        x = tf.placeholder(dt, a["x"].shape)
        lo, hi = tf.placeholder(dt, a["min"].shape), tf.placeholder(dt, a["max"].shape)
        feeds.update({x: a["x"], lo: a["min"], hi: a["max"]})
        kw = dict(signed_input=c["signed_input"], num_bits=c["num_bits"], range_given=c["range_given"],
                  round_mode=c["round_mode"], narrow_range=c["narrow_range"], axis=c["axis"])
        if c["version"] == "V2":
            y = tf.quantization.quantize_and_dequantize(x, lo, hi, **kw)
        elif c["version"] == "V4":
            y = tf.quantization.quantize_and_dequantize_v2(x, lo, hi, **kw)
        else:
            ax = -1 if c["axis"] is None else c["axis"] % len(a["x"].shape)
            y = quantize_and_dequantize_v3(x, lo, hi, c["num_bits"], signed_input=c["signed_input"],
                                           range_given=c["range_given"], narrow_range=c["narrow_range"], axis=ax)
        assert y.op.type == "QuantizeAndDequantize" + c["version"]
        (dx,) = tf.gradients(y, [x], grad_ys=tf.constant(a["g"]))
        return [y, dx]

    def compare(got, a):
        out = []
        for name, g in zip(("y", "dx"), got):
            if not _bits_equal(g, a[name]):
                bits = f"u{a[name].itemsize}"
                i = np.flatnonzero(g.reshape(-1).view(bits) != a[name].reshape(-1).view(bits))[:4]
                out.append(f"{name} at {i.tolist()}: x={a['x'].reshape(-1)[i]} got {g.reshape(-1)[i]} "
                           f"want {a[name].reshape(-1)[i]}")
        return "; ".join(out)

    _check_all(_cases("qdq"), build, compare)


def test_quantized_concat_matches_tensorflow():
    def build(c, a, feeds):
        t = QTYPES[c["T"]]
        vals = [tf.placeholder(t, a[f"v{i}"].shape) for i in range(c["n"])]
        mins = [tf.placeholder(tf.float32, []) for _ in range(c["n"])]
        maxes = [tf.placeholder(tf.float32, []) for _ in range(c["n"])]
        for i in range(c["n"]):
            feeds.update({vals[i]: a[f"v{i}"], mins[i]: a["mins"][i], maxes[i]: a["maxes"][i]})
        r = tf.quantization.quantized_concat(c["axis"], vals, mins, maxes)
        assert r.output.dtype == t and r.output.shape.as_list() == list(a["y"].shape)
        return list(r)

    def compare(got, a):
        y, ymin, ymax = got
        ok = _bits_equal(y, a["y"]) and _bits_equal(np.float32(ymin), a["ymin"]) and _bits_equal(
            np.float32(ymax), a["ymax"])
        return "" if ok else f"got {y.tolist()} [{ymin}, {ymax}] want {a['y'].tolist()} [{a['ymin']}, {a['ymax']}]"

    _check_all(_cases("concat"), build, compare)


def test_names_and_constants_of_quantized_dtypes():
    assert tf.quantize is tf.quantization.quantize and tf.dequantize is tf.quantization.dequantize
    assert tf.quantized_concat is tf.quantization.quantized_concat
    assert tf.compat.v1.quantize_v2 is tf.quantize_v2
    with tf.Graph().as_default(), tf.Session() as s:
        c = tf.constant(np.array([1, 2, 250], np.uint8), dtype=tf.quint8)
        assert c.dtype == tf.quint8
        q = tf.quantize_v2([0.5, -1.0], -1.0, 1.0, tf.qint8)
        assert q.output.op.type == "QuantizeV2" and q._fields == ("output", "output_min", "output_max")
        d = tf.dequantize(c, 0.0, 1.0, mode="SCALED")
        got_c, got_q, got_d = s.run([c, q.output, d])
        # Quantized tensors are fetched as their integers, as TensorFlow 2.21 returns them.
        assert got_c.dtype == np.uint8 and got_c.tolist() == [1, 2, 250]
        assert got_q.dtype == np.int8 and got_q.tolist() == [63, -128]
        np.testing.assert_array_equal(got_d, np.array([1, 2, 250], np.float32) * np.float32(1 / 255))
        # A qint8 placeholder takes Python ints.
        p = tf.placeholder(tf.qint8, [None])
        np.testing.assert_array_equal(s.run(tf.dequantize(p, -1.0, 1.0), {p: [-128, 127]}), [-1.0, 1.0])


def test_gradients():
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.constant([0.3, -2.0, 0.7, 1.0])
        g = tf.constant([1.0, 2.0, 3.0, 4.0])
        # V2 (quantize_and_dequantize): straight through; V4 (_v2): zero outside [input_min, input_max].
        (d2,) = tf.gradients(tf.quantization.quantize_and_dequantize(x, -1.0, 1.0, range_given=True), x, g)
        (d4,) = tf.gradients(tf.quantization.quantize_and_dequantize_v2(x, -1.0, 0.9, range_given=True), x, g)
        assert d4.op.type == "QuantizeAndDequantizeV4Grad"
        np.testing.assert_array_equal(s.run(d2), [1.0, 2.0, 3.0, 4.0])
        np.testing.assert_array_equal(s.run(d4), [1.0, 0.0, 3.0, 0.0])
        lo = tf.constant(-1.0)
        (dlo,) = tf.gradients(tf.quantization.quantize_and_dequantize_v2(x, lo, 1.0, range_given=True), lo)
        assert s.run(dlo) == 0.0
        # TensorFlow registers no gradient for QuantizeV2 and Dequantize.
        with pytest.raises(LookupError, match="QuantizeV2"):
            tf.gradients(tf.quantization.quantize(x, -1.0, 1.0, tf.qint8).output_min, x)
        m = tf.constant(0.0)
        q = tf.constant(np.array([1, 2], np.uint8), dtype=tf.quint8)
        with pytest.raises(LookupError, match="Dequantize"):
            tf.gradients(tf.dequantize(q, m, 1.0), m)


def _run_error(fn, feed=None):
    with tf.Graph().as_default(), tf.Session() as s:
        out = fn()
        return s.run(out, feed(tf.get_default_graph()) if feed else None)


def test_construction_errors_are_tensorflows():
    x = np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.quantization.quantize(x, [0.0, 1.0], [1.0, 2.0], tf.qint8)
        with pytest.raises(ValueError, match="Shape must be at least rank 6 but is rank 2"):
            tf.quantization.quantize(x, [0.0] * 3, [1.0] * 3, tf.qint8, axis=5)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.quantization.quantize(x, [0.0] * 2, [1.0] * 2, tf.qint8, axis=1)
        with pytest.raises(ValueError, match="Attr 'mode' of 'QuantizeV2' Op passed string 'FOO'"):
            tf.quantization.quantize(x, 0.0, 1.0, tf.qint8, mode="FOO")
        with pytest.raises(TypeError, match="parameter 'T' has DataType int8 not in list of allowed values"):
            tf.quantization.quantize(x, 0.0, 1.0, tf.int8)
        with pytest.raises(TypeError, match="DataType uint8 not in list of allowed values: qint8"):
            tf.quantization.dequantize(np.array([1], np.uint8), 0.0, 1.0)
        with pytest.raises(TypeError, match="parameter 'dtype' has DataType float64"):
            tf.quantization.dequantize(tf.constant(np.array([1], np.int8), tf.qint8), 0.0, 1.0, dtype=tf.float64)
        q = tf.constant(np.array([[1, 2, 3], [-4, 5, 127]], np.int8), dtype=tf.qint8)
        with pytest.raises(ValueError, match=r"Axis must be less than input dimension\(2\), got 5"):
            tf.quantization.dequantize(q, [0.0] * 3, [1.0] * 3, axis=5)
        with pytest.raises(ValueError, match="Attr 'round_mode' of 'QuantizeAndDequantizeV2' Op passed string 'X'"):
            tf.quantization.quantize_and_dequantize(x, 0.0, 1.0, round_mode="X")
        with pytest.raises(TypeError, match="parameter 'input' has DataType int32"):
            tf.quantization.quantize_and_dequantize(np.zeros(3, np.int32), 0, 1)
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.quantization.quantize_and_dequantize_v2(x, [0.0] * 2, [1.0] * 2)
        qu = tf.constant(np.array([[1]], np.uint8), dtype=tf.quint8)
        with pytest.raises(ValueError, match="List argument 'input_mins' to 'quantized_concat' Op with length 1"):
            tf.quantization.quantized_concat(0, [qu, qu], [0.0], [1.0, 1.0])
        with pytest.raises(ValueError, match="shorter than minimum length 2"):
            tf.quantization.quantized_concat(0, [qu], [0.0], [1.0])
        with pytest.raises(ValueError, match="Shape must be at least rank 3 but is rank 2"):
            tf.quantization.quantized_concat(2, [qu, qu], [0.0, 0.0], [1.0, 1.0])


def test_run_time_errors_are_tensorflows():
    x = np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)
    E = tf.errors
    with pytest.raises(E.InvalidArgumentError, match="input_max_range must be larger than input_min_range"):
        _run_error(lambda: tf.quantization.quantize(x, 1.0, 0.0, tf.qint8))
    with pytest.raises(E.UnimplementedError, match="MIN_FIRST mode is not implemented for Quantize with axis"):
        _run_error(lambda: tf.quantization.quantize(x, [0.0] * 3, [1.0] * 3, tf.qint8, axis=1, mode="MIN_FIRST"))
    with pytest.raises(E.InvalidArgumentError, match="Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED'"):
        _run_error(lambda: tf.quantization.quantize(x, 0.0, 1.0, tf.qint8, round_mode="HALF_TO_EVEN"))
    with pytest.raises(E.InvalidArgumentError, match="min_range must contain a single float element, but it "
                                                     "contains 2 elements"):
        _run_error(lambda: tf.quantization.quantize(x, tf.placeholder(tf.float32, None, name="m"), 1.0, tf.qint8),
                   lambda g: {g.get_tensor_by_name("m:0"): [0.0, 1.0]})
    q = np.array([1, 2], np.int8)
    with pytest.raises(E.InvalidArgumentError, match="When output type is bfloat16, Mode string must be "
                                                     "'MIN_COMBINED', is 'SCALED'"):
        _run_error(lambda: tf.quantization.dequantize(tf.constant(q, tf.qint8), 0.0, 1.0, mode="SCALED",
                                                      dtype=tf.bfloat16))
    with pytest.raises(E.UnimplementedError, match="MIN_FIRST mode is not implemented for Dequantize"):
        _run_error(lambda: tf.quantization.dequantize(tf.constant(q, tf.qint8), [0.0] * 2, [1.0] * 2, axis=0,
                                                      mode="MIN_FIRST"))
    with pytest.raises(E.InvalidArgumentError, match="num_bits is out of range: 0 with signed_input_ 1"):
        _run_error(lambda: tf.quantization.quantize_and_dequantize(x, 0.0, 1.0, num_bits=0))
    with pytest.raises(E.InvalidArgumentError, match="num_bits is out of range: 62 with signed_input_ 1"):
        _run_error(lambda: tf.quantization.quantize_and_dequantize_v2(x, 0.0, 1.0, num_bits=62))
    with pytest.raises(E.InvalidArgumentError, match="Invalid range: input_min 1 > input_max 0"):
        _run_error(lambda: tf.quantization.quantize_and_dequantize(x, 1.0, 0.0, range_given=True))
    with pytest.raises(E.InvalidArgumentError, match="num_bits is out of range: 0 with `signed_input_` 1"):
        _run_error(lambda: quantize_and_dequantize_v3(x, 0.0, 1.0, 0))
    # TensorFlow 2.21's V2 and V4 kernels refuse per-axis given ranges (V3's take them).
    with pytest.raises(E.InvalidArgumentError, match="input_min must be a scalar"):
        _run_error(lambda: tf.quantization.quantize_and_dequantize_v2(x, [-1.0] * 3, [1.0] * 3, range_given=True,
                                                                      axis=1))
    qu = np.array([[1]], np.uint8)
    with pytest.raises(E.InvalidArgumentError, match=r"Expected concatenating dimensions in the range \[0, 2\), "
                                                     "but got 5"):
        _run_error(lambda: tf.quantization.quantized_concat(
            tf.placeholder(tf.int32, [], name="d"), [tf.constant(qu, tf.quint8)] * 2, [0.0, 0.0], [1.0, 1.0]),
            lambda g: {g.get_tensor_by_name("d:0"): 5})


def test_graph_def_round_trip_keeps_quantized_constants():
    q = np.array([1, 2, 250], np.uint8)
    with tf.Graph().as_default() as g:
        tf.constant(q, dtype=tf.quint8, name="c")
        tf.constant(np.array([-7], np.int8), dtype=tf.qint8, name="one")
        tf.dequantize(g.get_tensor_by_name("c:0"), 0.0, 1.0, name="d")
    gd = g.as_graph_def()
    nodes = {n.name: n for n in gd.node}
    # TensorFlow's importer requires a constant's value to have the constant's (quantized) dtype.
    assert nodes["c"].attr["value"].tensor.dtype == tf.quint8.as_datatype_enum
    assert nodes["one"].attr["value"].tensor.dtype == tf.qint8.as_datatype_enum
    with tf.Graph().as_default(), tf.Session() as s:
        tf.import_graph_def(gd, name="")
        c, one, d = s.run(["c:0", "one:0", "d:0"])
    assert c.dtype == np.uint8 and c.tolist() == q.tolist() and one.tolist() == [-7]
    np.testing.assert_array_equal(d, q.astype(np.float32) * (np.float32(1) / np.float32(255)))
