"""Gradients of complex Sqrt, Rsqrt, Tanh, Sigmoid, Reciprocal, SquaredDifference, Cumsum and Cumprod, and the
complex gradient kernels, against TensorFlow 2.21.

Fixtures: tests/fixtures/complex/grads.npz, made by tools/make_complex_grad_fixtures.py.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops._op_util import make

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "complex", "grads.npz"))
CASES = json.loads(bytes(FIXTURE["meta"]).decode())

FORWARD = {
    "Sqrt": tf.sqrt,
    "Rsqrt": tf.rsqrt,
    "Tanh": tf.tanh,
    "Sigmoid": tf.sigmoid,
    "Reciprocal": tf.reciprocal,
    "SquaredDifference": tf.squared_difference,
}


def _build(case, xs):
    op = case["op"]
    if op in FORWARD:
        return FORWARD[op](*xs)
    if op in ("Cumsum", "Cumprod"):
        fn = tf.cumsum if op == "Cumsum" else tf.cumprod
        return fn(xs[0], case["axis"], exclusive=case["exclusive"], reverse=case["reverse"])
    return make(op, xs)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['key']}-{c['op']}-{c['dtype']}")
def test_value_and_gradient_match_tensorflow(case):
    k = case["key"]
    inputs = [FIXTURE[f"{k}/x{i}"] for i in range(case["n"])]
    with tf.Graph().as_default(), tf.Session() as s:
        xs = [tf.constant(v) for v in inputs]
        y = _build(case, xs)
        assert y.dtype == tf.as_dtype(inputs[0].dtype)
        fetches = [y]
        if case.get("grad", True):
            fetches += tf.gradients(y, xs, grad_ys=tf.constant(FIXTURE[f"{k}/g"]))
        got = s.run(fetches)
    tol = 2e-6 if case["dtype"] == "complex64" else 1e-12
    np.testing.assert_allclose(got[0], FIXTURE[f"{k}/y"], rtol=tol, atol=tol)
    for i, g in enumerate(got[1:]):
        want = FIXTURE[f"{k}/dx{i}"]
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=tol * 5, atol=tol * 5, err_msg=f"gradient of input {i}")


def test_real_gradients_keep_their_values():
    """The Sqrt/Rsqrt/Reciprocal gradient kernels now take the forward output itself (TF's kernels conjugate it);
    for real inputs nothing changes."""
    x = np.array([0.25, 1.0, 4.0], np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        t = tf.constant(x)
        got = s.run([tf.gradients(f(t), t)[0] for f in (tf.sqrt, tf.rsqrt, tf.reciprocal)])
    np.testing.assert_allclose(got[0], 0.5 / np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(got[1], -0.5 * x ** -1.5, rtol=1e-6)
    np.testing.assert_allclose(got[2], -1.0 / x ** 2, rtol=1e-6)
