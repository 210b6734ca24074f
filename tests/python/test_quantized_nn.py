"""tf.nn.quantized_conv2d / quantized_avg_pool / quantized_max_pool / quantized_relu_x against TensorFlow 2.21.

Fixtures: tests/fixtures/quantize/quantized_nn.npz, made by tools/make_quantized_nn_fixtures.py with
TensorFlow 2.21's reference CPU kernels (TF_ENABLE_ONEDNN_OPTS=0). TF 2.21 has no CPU kernel for
QuantizedReluX; its relu cases come from QuantizedRelu6 (ReluX with max_value 6) and QuantizedRelu
(ReluX with a cap above the range), which share its arithmetic (see that script). Each kind is built
into one graph and run once; a failure lists every case that differs.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "quantize", "quantized_nn.npz"))
CASES = json.loads(bytes(FIXTURE["meta"]).decode())
QTYPES = {"qint8": tf.qint8, "quint8": tf.quint8, "qint32": tf.qint32}


def _a(case, name):
    return FIXTURE[f"{case['key']}/{name}"]


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        return np.array_equal(got.astype(want.dtype).view(np.uint32), want.view(np.uint32))
    return np.array_equal(got.astype(np.int64), want.astype(np.int64))


def _check(kind, build):
    cases = [c for c in CASES if c["kind"] == kind]
    assert cases
    with tf.Graph().as_default(), tf.Session() as s:
        feeds, fetches = {}, []
        for c in cases:
            fetches.append(build(c, feeds))
        results = s.run(fetches, feeds)
    bad = []
    for c, (y, lo, hi) in zip(cases, results):
        if not (_same_bits(y, _a(c, "y")) and _same_bits([lo, hi], _a(c, "yr"))):
            bad.append(f"{c['key']} {json.dumps({k: v for k, v in c.items() if k != 'key'})}: "
                       f"range {lo}, {hi} vs {_a(c, 'yr')}")
    assert not bad, f"{len(bad)} of {len(cases)} cases differ from TensorFlow:\n" + "\n".join(bad[:20])


def _feed(feeds, dtype, value):
    p = tf.placeholder(dtype, np.shape(value))
    feeds[p] = value
    return p


def test_quantized_conv2d_matches_tensorflow():
    def build(c, feeds):
        x, w = _feed(feeds, tf.quint8, _a(c, "x")), _feed(feeds, tf.quint8, _a(c, "w"))
        r = [_feed(feeds, tf.float32, v) for v in _a(c, "r")]
        out = tf.nn.quantized_conv2d(x, w, *r, strides=[1, c["stride"], c["stride"], 1], padding=c["padding"])
        assert out.output.dtype == tf.qint32
        assert out.output.shape.as_list() == list(_a(c, "y").shape)
        return tuple(out)

    _check("conv", build)


@pytest.mark.parametrize("kind", ["avg_pool", "max_pool"])
def test_quantized_pools_match_tensorflow(kind):
    fn = tf.nn.quantized_avg_pool if kind == "avg_pool" else tf.nn.quantized_max_pool

    def build(c, feeds):
        x = _feed(feeds, QTYPES[c["T"]], _a(c, "x"))
        out = fn(x, -1.5, 4.25, c["ksize"], c["strides"], c["padding"])
        assert out.output.dtype == QTYPES[c["T"]]
        assert out.output.shape.as_list() == list(_a(c, "y").shape)
        return tuple(out)

    _check(kind, build)


def test_quantized_relu_x_matches_tensorflow():
    def build(c, feeds):
        t = QTYPES[c["T"]]
        x = _feed(feeds, t, _a(c, "x"))
        lo, hi = (_feed(feeds, tf.float32, v) for v in _a(c, "r"))
        out = tf.nn.quantized_relu_x(x, c["max_value"], lo, hi, out_type=t)
        assert out.activations.dtype == t and out.activations.shape.as_list() == list(_a(c, "x").shape)
        return tuple(out)

    _check("relu", build)


def _level(v, lo, hi):
    """TensorFlow's FloatToQuantized for quint8 (round half away from zero, in double)."""
    lo, hi = np.float32(lo), np.float32(hi)
    scale = 256.0 / (float(np.float32(hi - lo)) * (256.0 / 255.0))
    rnd = lambda z: float(np.sign(z) * np.floor(abs(z) + 0.5))  # noqa: E731
    return int(np.clip(rnd(float(v) * scale) - rnd(float(lo) * scale), 0, 255))


def test_quantized_relu_x_caps_at_max_value():
    x = np.arange(0, 256, 5, dtype=np.uint8)
    with tf.Graph().as_default(), tf.Session() as s:
        out = s.run(tf.nn.quantized_relu_x(tf.constant(x, dtype=tf.quint8), 2.5, -1.0, 7.0))
    floor, cap = _level(0.0, -1.0, 7.0), _level(2.5, -1.0, 7.0)
    np.testing.assert_array_equal(out.activations, np.clip(x, floor, cap))
    assert (out.min_activations, out.max_activations) == (-1.0, 7.0)


def _run(build):
    with tf.Graph().as_default(), tf.Session() as s:
        return s.run(build())


X = np.zeros((1, 4, 4, 2), np.uint8)
W = np.zeros((2, 2, 2, 3), np.uint8)


def _conv(x=X, w=W, strides=(1, 1, 1, 1), dilations=(1, 1, 1, 1), mins=0.0, **kw):
    return tf.nn.quantized_conv2d(tf.constant(x, dtype=kw.pop("tin", tf.quint8)),
                                  tf.constant(w, dtype=kw.pop("tf_", tf.quint8)), mins, 1.0, 0.0, 1.0,
                                  list(strides), kw.pop("padding", "SAME"), dilations=list(dilations), **kw)


@pytest.mark.parametrize("kw, match", [
    ({"strides": (1, 2, 1, 1)}, "equal row and column strides"),
    ({"strides": (2, 1, 1, 1)}, "batch and depth"),
    ({"dilations": (1, 2, 2, 1)}, "dilation rate of 1"),
    ({"tin": tf.qint8, "tf_": tf.qint8}, "no CPU kernel for Tinput=qint8"),
    ({"out_type": tf.quint8}, "out_type=quint8"),
])
def test_quantized_conv2d_run_time_errors_name_the_op(kw, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match) as e:
        _run(lambda: _conv(**kw))
    assert "QuantizedConv2D" in str(e.value)


def test_quantized_conv2d_graph_errors():
    with pytest.raises(ValueError, match="stride"):
        _conv(strides=(1, 1, 1))
    with pytest.raises(ValueError, match="Depth of input"):
        _conv(w=np.zeros((2, 2, 3, 1), np.uint8))
    with pytest.raises(ValueError, match="Negative dimension size"):
        _conv(w=np.zeros((5, 5, 2, 1), np.uint8), padding="VALID")
    with pytest.raises(ValueError, match="rank 0"):
        _conv(mins=[0.0, 1.0])
    with pytest.raises(ValueError, match="padding"):
        _conv(padding="EXPLICIT")
    with pytest.raises(TypeError, match="input"):
        tf.nn.quantized_conv2d(tf.constant(X), tf.constant(W, dtype=tf.quint8), 0.0, 1.0, 0.0, 1.0,
                               [1, 1, 1, 1], "SAME")


def test_quantized_ops_fed_bad_ranges_and_shapes():
    with tf.Graph().as_default(), tf.Session() as s:
        lo = tf.placeholder(tf.float32)
        x = tf.placeholder(tf.quint8)
        conv = tf.nn.quantized_conv2d(x, tf.constant(W, dtype=tf.quint8), lo, 1.0, 0.0, 1.0, [1, 1, 1, 1], "SAME")
        pool = tf.nn.quantized_avg_pool(x, lo, 1.0, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        relu = tf.nn.quantized_relu_x(x, lo, 0.0, 1.0)
        for out, what in ((conv, "min_input"), (pool, "min_input"), (relu, "max_value")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=what) as e:
                s.run(out, {x: X, lo: [0.0, 1.0]})
            assert out[0].op.type in str(e.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match="rank 4") as e:
            s.run(conv, {x: X[0], lo: 0.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty dimension"):
            s.run(conv, {x: X[:0], lo: 0.0})
        # Pools of an empty batch are empty, as in TF.
        y = s.run(pool, {x: X[:0], lo: 0.0})
        assert y.output.shape == (0, 2, 2, 2)


@pytest.mark.parametrize("fn", [tf.nn.quantized_avg_pool, tf.nn.quantized_max_pool])
def test_quantized_pool_errors(fn):
    def x():
        return tf.constant(X, dtype=tf.quint8)

    with pytest.raises(ValueError, match="4 values"):
        fn(x(), 0.0, 1.0, [1, 2, 2], [1, 2, 2, 1], "SAME")
    with pytest.raises(ValueError, match="positive"):
        fn(x(), 0.0, 1.0, [1, 2, 2, 1], [1, 0, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        fn(x(), 0.0, 1.0, [1, 5, 5, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.UnimplementedError, match="batch"):
        _run(lambda: fn(x(), 0.0, 1.0, [2, 1, 1, 1], [1, 1, 1, 1], "SAME"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="T=qint32"):
        _run(lambda: fn(tf.constant(X.astype(np.int32), dtype=tf.qint32), 0.0, 1.0, [1, 2, 2, 1], [1, 1, 1, 1],
                        "SAME"))
    depth = [1, 1, 1, 2]
    if fn is tf.nn.quantized_avg_pool:
        with pytest.raises(tf.errors.UnimplementedError, match="QuantizedAvgPool"):
            _run(lambda: fn(x(), 0.0, 1.0, depth, depth, "VALID"))
    else:
        with pytest.raises(tf.errors.UnimplementedError, match="depth stride"):
            _run(lambda: fn(x(), 0.0, 1.0, depth, [1, 1, 1, 1], "VALID"))


def test_quantized_relu_x_types():
    def x():
        return tf.constant(np.arange(4, dtype=np.uint8), dtype=tf.quint8)

    with pytest.raises(tf.errors.InvalidArgumentError, match="out_type=qint32"):
        _run(lambda: tf.nn.quantized_relu_x(x(), 1.0, 0.0, 1.0, out_type=tf.qint32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tinput=qint8"):
        _run(lambda: tf.nn.quantized_relu_x(tf.constant(np.arange(4, dtype=np.int8), dtype=tf.qint8), 1.0, 0.0,
                                            1.0, out_type=tf.qint8))
    with pytest.raises(TypeError, match="features"):
        tf.nn.quantized_relu_x(tf.constant([1.0]), 1.0, 0.0, 1.0)


def test_quantized_ops_have_no_gradient():
    """TensorFlow registers no gradient for them: tf.gradients through one raises LookupError naming it, as TF's."""
    x = tf.constant(X, dtype=tf.quint8)
    lo = tf.constant(0.0)
    outs = [tf.nn.quantized_relu_x(x, 1.0, lo, 1.0), tf.nn.quantized_max_pool(x, lo, 1.0, [1, 2, 2, 1], [1] * 4, "SAME"),
            tf.nn.quantized_avg_pool(x, lo, 1.0, [1, 2, 2, 1], [1] * 4, "SAME"),
            tf.nn.quantized_conv2d(x, tf.constant(W, dtype=tf.quint8), lo, 1.0, 0.0, 1.0, [1] * 4, "SAME")]
    for out in outs:
        with pytest.raises(LookupError, match=f"No gradient defined for operation '{out[1].op.name}'"):
            tf.gradients(out[1], lo)
