"""Fake quantization ops against TensorFlow 2.21, bit for bit.

Fixtures: tests/fixtures/fake_quant/fake_quant.npz, made by
tools/make_fake_quant_fixtures.py with TensorFlow 2.21.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "fake_quant", "fake_quant.npz"))
CASES = json.loads(bytes(FIXTURE["meta"]).decode())


def _arr(key, name):
    return FIXTURE[f"{key}/{name}"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["key"])
def test_values_and_gradient_ops_match_tensorflow(case):
    k, bits, narrow = case["key"], case["num_bits"], case["narrow_range"]
    x, g, lo, hi = _arr(k, "x"), _arr(k, "g"), _arr(k, "min"), _arr(k, "max")
    with tf.Graph().as_default(), tf.Session() as s:
        if case["op"] == "args":
            y = tf.fake_quant_with_min_max_args(x, float(lo), float(hi), bits, narrow)
            dx = tf.quantization.fake_quant_with_min_max_args_gradient(g, x, float(lo), float(hi), bits, narrow)
            got = dict(zip(["y", "dx"], s.run([y, dx])))
        else:
            fwd = (tf.fake_quant_with_min_max_vars if case["op"] == "vars"
                   else tf.fake_quant_with_min_max_vars_per_channel)
            bwd = (tf.fake_quant_with_min_max_vars_gradient if case["op"] == "vars"
                   else tf.fake_quant_with_min_max_vars_per_channel_gradient)
            y = fwd(x, lo, hi, bits, narrow)
            dx, dmin, dmax = bwd(g, x, lo, hi, num_bits=bits, narrow_range=narrow)
            got = dict(zip(["y", "dx", "dmin", "dmax"], s.run([y, dx, dmin, dmax])))
    np.testing.assert_array_equal(got["y"], _arr(k, "y"))
    np.testing.assert_array_equal(got["dx"], _arr(k, "dx"))
    for name in ("dmin", "dmax"):
        if name in got:
            # Sums: TF's Eigen reduction adds in another order, so the last bits may differ.
            np.testing.assert_allclose(got[name], _arr(k, name), rtol=1e-5, atol=1e-6)


def test_registered_gradients_are_the_gradient_ops():
    k = "vars1"
    x, lo, hi = _arr(k, "x"), _arr(k, "min"), _arr(k, "max")
    g = _arr(k, "g")
    with tf.Graph().as_default(), tf.Session() as s:
        xt = tf.constant(x)
        mn, mx = tf.constant(lo), tf.constant(hi)
        y = tf.fake_quant_with_min_max_vars(xt, mn, mx, num_bits=8, narrow_range=True)
        grads = tf.gradients(y, [xt, mn, mx], grad_ys=tf.constant(g))
        assert grads[0].op.type == "FakeQuantWithMinMaxVarsGradient"
        dx, dmin, dmax = s.run(grads)
        np.testing.assert_array_equal(dx, _arr(k, "dx"))
        np.testing.assert_allclose([dmin, dmax], [_arr(k, "dmin"), _arr(k, "dmax")], rtol=1e-5)
        a = tf.fake_quant_with_min_max_args(xt, min=float(lo), max=float(hi), narrow_range=True)
        (da,) = tf.gradients(a, [xt], grad_ys=tf.constant(g))
        assert da.op.type == "FakeQuantWithMinMaxArgsGradient"
        assert da.op.get_attr("narrow_range") is True
        np.testing.assert_array_equal(s.run(da), _arr(k, "dx"))
        pc = tf.fake_quant_with_min_max_vars_per_channel(xt, np.full(9, lo, np.float32), np.full(9, hi, np.float32),
                                                         narrow_range=True)
        (dpc,) = tf.gradients(pc, [xt], grad_ys=tf.constant(g))
        assert dpc.op.type == "FakeQuantWithMinMaxVarsPerChannelGradient"
        # One range for every channel: the same mask as the Vars op's.
        np.testing.assert_array_equal(s.run(dpc), _arr(k, "dx"))


def test_errors_name_the_op_and_argument():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="min has to be smaller than max"):
            s.run(tf.fake_quant_with_min_max_args(x, min=1.0, max=1.0))
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="num_bits must be between 2 and 16"):
            s.run(tf.fake_quant_with_min_max_args(x, num_bits=17))
        with pytest.raises(ValueError, match="rank 0"):
            tf.fake_quant_with_min_max_vars(x, [0.0], [1.0])
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.fake_quant_with_min_max_vars_per_channel(np.zeros((2, 3), np.float32), [0.0, 0.0], [1.0, 1.0])
        mn = tf.placeholder(tf.float32, None)
        y = tf.fake_quant_with_min_max_vars_per_channel(np.zeros((2, 3), np.float32), mn, [1.0, 1.0, 1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="min has incorrect size, expected 3 was 2"):
            s.run(y, {mn: [0.0, 0.0]})
        with pytest.raises((TypeError, ValueError)):
            tf.fake_quant_with_min_max_args(tf.constant(np.zeros(3), dtype=tf.float64))
