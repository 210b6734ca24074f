"""Gradient clipping (tf.clip_by_value / clip_by_norm / clip_by_average_norm / clip_by_global_norm /
global_norm) against values recorded by real TensorFlow, plus TF1 semantics (None entries, IndexedSlices,
NaN/inf norms, errors).

Fixtures: tests/fixtures/golden/clipping (copied from the team's TensorFlow-made golden data, its README section c). Every argument,
input and output is read from the manifest.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "clipping"
API = Path(__file__).resolve().parents[1] / "fixtures" / "api" / "tf_compat_v1_api.json"
# README: float32 rtol 1e-5 / atol 1e-6 (reductions may sum in another order than Eigen's).
RTOL, ATOL = 1e-5, 1e-6


def _manifest():
    meta = json.loads((GOLDEN / "clipping.json").read_text())
    with np.load(GOLDEN / "clipping.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


META, ARRAYS = _manifest()
CASES = META["cases"]


def _api(name):
    """``tf.clip_by_norm``, ``tf.compat.v1.clip_by_average_norm``, ``tf.linalg.global_norm`` -> ferroflow."""
    obj = tf
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return getattr(tf, name.rsplit(".", 1)[-1])
    return obj


def _npz_key(ref):
    """``"npz:<key> (comment)"`` -> ``<key>``."""
    return ref[len("npz:"):].split(" ", 1)[0]


class _Inputs:
    """Turns manifest arguments into graph values, feeding every npz array through a placeholder."""

    def __init__(self):
        self.feed = {}

    def array(self, ref):
        value = ARRAYS[_npz_key(ref)]
        ph = tf.placeholder(tf.as_dtype(value.dtype.name), value.shape)
        self.feed[ph] = value
        return ph

    def value(self, v):
        if v is None:
            return None
        if isinstance(v, str) and v.startswith("npz:"):
            return self.array(v)
        if isinstance(v, str):
            m = re.match(r"tf\.constant\(([^,]+),\s*(\w+)\)", v)
            assert m, f"unrecognised argument {v!r}"
            return tf.constant(float(m.group(1)), dtype=tf.as_dtype(m.group(2)))
        if isinstance(v, dict) and "IndexedSlices" in v:
            s = v["IndexedSlices"]
            shape = s.get("dense_shape")
            return tf.IndexedSlices(self.array(s["values"]), self.array(s["indices"]),
                                    None if shape is None else tf.constant(shape, dtype=tf.int64))
        if isinstance(v, list):
            return [self.value(e) for e in v]
        return v


def _flatten_outputs(got, expected):
    """Pairs (fetchable, expected array or None) following the manifest's output structure."""
    if expected is None:
        assert got is None
        return []
    if isinstance(expected, str):
        assert isinstance(got, tf.Tensor), f"expected a Tensor, got {got!r}"
        return [(got, ARRAYS[_npz_key(expected)])]
    if isinstance(expected, dict) and "IndexedSlices" in expected:
        assert isinstance(got, tf.IndexedSlices), f"expected IndexedSlices, got {got!r}"
        s = expected["IndexedSlices"]
        return [(got.values, ARRAYS[_npz_key(s["values"])]), (got.indices, ARRAYS[_npz_key(s["indices"])])]
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        return [p for g, e in zip(got, expected) for p in _flatten_outputs(g, e)]
    raise AssertionError(f"unrecognised output spec {expected!r}")


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_clipping_matches_tensorflow(case):
    inputs = _Inputs()
    args = {k: inputs.value(v) for k, v in case["args"].items()}
    result = _api(case["api"])(**args)
    if "outputs" in case:
        clipped, norm = result
        pairs = _flatten_outputs(clipped, case["outputs"]["list_clipped"])
        pairs += _flatten_outputs(norm, case["outputs"]["global_norm"])
    else:
        pairs = _flatten_outputs(result, case["output"])
    with tf.Session() as sess:
        values = sess.run([p[0] for p in pairs], inputs.feed)
    for got, (tensor, want) in zip(values, pairs):
        assert got.dtype == want.dtype and got.shape == want.shape, tensor.name
        if want.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=tensor.name)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_api_arguments_and_defaults_match_tensorflow():
    entries = json.loads(API.read_text())["modules"][""]
    for name in ["clip_by_value", "clip_by_norm", "clip_by_average_norm", "clip_by_global_norm", "global_norm"]:
        params = inspect.signature(getattr(tf, name)).parameters
        assert list(params) == entries[name]["args"], name
        defaults = {k: repr(p.default) for k, p in params.items() if p.default is not inspect.Parameter.empty}
        assert defaults == entries[name]["defaults"], name
        assert getattr(tf.compat.v1, name) is getattr(tf, name)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_clip_by_norm_formula_and_noop_rounding():
    x = np.array([[3.0, 4.0], [1e-3, -7.25]], np.float32)
    for clip in (1.0, 100.0, 2.5):
        got = _run(tf.clip_by_norm(tf.constant(x), clip))
        norm = np.sqrt(np.sum(x.astype(np.float64) ** 2))
        expected = (x * np.float32(clip)) / np.float32(max(norm, clip))
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    # per-row norms with axes
    got = _run(tf.clip_by_norm(tf.constant(x), 1.0, axes=[1]))
    norms = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=1, keepdims=True))
    np.testing.assert_allclose(got, x / np.maximum(norms, 1.0), rtol=1e-6)


def test_clip_by_norm_zero_input_and_zero_clip():
    z = tf.zeros([2, 3])
    assert np.array_equal(_run(tf.clip_by_norm(z, 1.0)), np.zeros([2, 3], np.float32))
    assert np.all(np.isnan(_run(tf.clip_by_norm(z, 0.0))))  # 0 * 0 / max(0, 0)
    # A negative Python clip_norm counts as 0; a tensor one is max(c, 0).
    x = tf.constant([3.0, 4.0])
    assert np.array_equal(_run(tf.clip_by_norm(x, -1.0)), [0.0, 0.0])
    assert np.array_equal(_run(tf.clip_by_norm(x, tf.constant(-1.0))), [0.0, 0.0])
    assert np.allclose(_run(tf.clip_by_norm(x, tf.constant(2.5, tf.float64))), [1.5, 2.0])


def test_clip_by_norm_gradient_is_finite_at_zero():
    x = tf.placeholder(tf.float32, [3])
    (g,) = tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), [x])
    got = _run(g, {x: np.zeros(3, np.float32)})
    assert np.all(np.isfinite(got))


def test_indexed_slices_keep_indices():
    values = tf.constant([[3.0, 4.0], [0.3, 0.4]])
    indices = tf.constant([2, 2], tf.int64)
    s = tf.IndexedSlices(values, indices, tf.constant([4, 2], tf.int64))
    for out in (tf.clip_by_norm(s, 1.0), tf.clip_by_value(s, -0.35, 0.35)):
        assert isinstance(out, tf.IndexedSlices)
        assert out.indices is indices and out.dense_shape is s.dense_shape
    v = _run(tf.clip_by_norm(s, 1.0).values)
    # the norm is over the values (5.0249...), duplicates counted separately
    np.testing.assert_allclose(v, np.array([[3, 4], [0.3, 0.4]]) / np.sqrt(25.25), rtol=1e-6)
    np.testing.assert_allclose(_run(tf.clip_by_value(s, -0.35, 0.35).values), [[0.35, 0.35], [0.3, 0.35]])


def test_global_norm_counts_duplicate_indices_and_skips_none():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [1.0, 2.0]]), tf.constant([0, 0]), tf.constant([3, 2]))
    norm = tf.global_norm([tf.constant([2.0]), None, s])
    np.testing.assert_allclose(_run(norm), np.sqrt(4 + 5 + 5), rtol=1e-6)
    assert norm.op.name.endswith("global_norm")
    assert _run(tf.global_norm([None])) == 0.0


def test_clip_by_global_norm_structure_and_names():
    a = tf.constant([3.0, 4.0])
    s = tf.IndexedSlices(tf.constant([[0.0, 12.0]]), tf.constant([1]), tf.constant([2, 2]))
    clipped, norm = tf.clip_by_global_norm((a, None, s), 6.5)
    assert isinstance(clipped, list) and clipped[1] is None
    assert isinstance(clipped[2], tf.IndexedSlices) and clipped[2].indices is s.indices
    # TensorFlow names the outputs "<scope>/<scope>_<i>".
    assert clipped[0].op.name == "clip_by_global_norm/clip_by_global_norm/_0"
    va, vs, n = _run([clipped[0], clipped[2].values, norm])
    assert n == pytest.approx(13.0)
    np.testing.assert_allclose(va, [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(vs, [[0.0, 6.0]], rtol=1e-6)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_clip_by_global_norm_non_finite_norm_makes_everything_nan(bad):
    clipped, norm = tf.clip_by_global_norm([tf.constant([1.0, bad]), tf.constant([[0.5]])], 1.0)
    a, b, n = _run([clipped[0], clipped[1], norm])
    assert np.all(np.isnan(a)) and np.all(np.isnan(b))
    assert np.isnan(n) or np.isinf(n)


def test_clip_by_global_norm_use_norm_and_errors():
    clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0, use_norm=tf.constant(10.0))
    np.testing.assert_allclose(_run(clipped[0]), [0.3, 0.4], rtol=1e-6)
    assert _run(norm) == 10.0
    with pytest.raises(AttributeError):
        tf.clip_by_global_norm([tf.constant([3.0])], 1.0, use_norm=10.0)
    for bad in (tf.constant([1.0, 2.0]), "ab"):
        with pytest.raises(TypeError, match="should be a sequence of tensors"):
            tf.clip_by_global_norm(bad, 1.0)
        with pytest.raises(TypeError, match="should be a sequence of tensors"):
            tf.global_norm(bad)


def test_clip_by_average_norm_is_float32_only():
    x = np.array([[1.0, -2.0], [0.5, 4.0]], np.float32)
    got = _run(tf.clip_by_average_norm(tf.constant(x), 0.5))
    avg = np.sqrt(np.sum(x.astype(np.float64) ** 2)) / x.size
    np.testing.assert_allclose(got, x * 0.5 / max(avg, 0.5), rtol=1e-6)
    with pytest.raises(TypeError):
        tf.clip_by_average_norm(tf.constant(x, tf.float64), 0.5)
