"""``tf.gradients`` results recorded by real TensorFlow (golden/gradients ``grad.*``).

Fixtures are copies of the team's TensorFlow-made golden data (gradients set) (TensorFlow 2.21, graph mode; see its README,
section e, and tests/fixtures/golden/gradients/SOURCE.md). Each case's forward expression is the
one test_golden_forward.py checks against the recorded outputs (``FORWARD``); everything else —
inputs, shapes, dtypes, which ys and xs, ``grad_ys`` and other kwargs, the expected result type
(Tensor / IndexedSlices / None) and values — is read from the manifests, so a different golden set
with the same layout runs unchanged.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import ferroflow as tf
from test_golden_forward import FORWARD, GOLDEN

DIR = GOLDEN / "gradients"
CASES = sorted(p.stem for p in DIR.glob("*.json"))
RTOL = {"float16": 5e-2, "bfloat16": 5e-2, "float32": 1e-5, "float64": 1e-10}


def _load(case):
    meta = json.loads((DIR / f"{case}.json").read_text())
    with np.load(DIR / f"{case}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def _key(ref):
    """``"grad.y.params.values"`` / ``"npz:input.gy1 (note)"`` -> the npz key."""
    ref = ref[4:] if ref.startswith("npz:") else ref
    return ref.split(" ", 1)[0]


def _ys_names(spec, outputs):
    """The ys of a gradient entry: ``"[y1, y2] summed"`` -> [y1, y2]; ``"y (note)"`` / ``"y = ..."`` -> [y]."""
    text = spec["ys"].strip()
    m = re.match(r"\[([^\]]*)\]", text)
    names = [n.strip() for n in m.group(1).split(",")] if m else [re.match(r"\w+", text).group(0)]
    unknown = [n for n in names if n not in outputs]
    assert not unknown, f"ys {spec['ys']!r} names unknown outputs {unknown}"
    return names


def _kwarg(value, by_key, arrays):
    """A manifest kwarg: npz references become the matching input placeholder (or a constant)."""
    if isinstance(value, list):
        return [_kwarg(v, by_key, arrays) for v in value]
    if isinstance(value, str) and value.startswith("npz:"):
        key = _key(value)
        return by_key[key] if key in by_key else tf.constant(arrays[key])
    return value


def _gradient_entries():
    out = []
    for case in CASES:
        meta = json.loads((DIR / f"{case}.json").read_text())
        out.extend((case, g) for g in meta["gradients"])
    return out


def test_fixtures_are_present():
    assert CASES, f"no golden gradient manifests in {DIR}"
    assert _gradient_entries()


@pytest.mark.parametrize(("case", "gname"), _gradient_entries(), ids=[f"{c}-{g}" for c, g in _gradient_entries()])
def test_golden_gradient(case, gname):
    meta, arrays = _load(case)
    assert case in FORWARD, f"no forward expression for golden case {case!r} ({meta.get('description')})"
    spec = meta["gradients"][gname]
    rtol = RTOL.get(meta.get("dtype", "float32"), 1e-5)
    with tf.Graph().as_default():
        phs, feed, by_key = {}, {}, {}
        for name, inp in meta["inputs"].items():
            value = arrays[inp["npz_key"]]
            phs[name] = tf.placeholder(tf.as_dtype(inp["dtype"]), inp["shape"], name=name)
            feed[phs[name]] = value
            by_key[inp["npz_key"]] = phs[name]
        outs = FORWARD[case](phs, list(meta["outputs"]))
        ys = [outs[n] for n in _ys_names(spec, outs)]
        xnames = list(spec["wrt"])
        kwargs = {k: _kwarg(v, by_key, arrays) for k, v in spec.get("kwargs", {}).items()}
        grads = tf.gradients(ys if len(ys) > 1 else ys[0], [phs[x] for x in xnames], **kwargs)
        assert len(grads) == len(xnames)

        fetch = {}
        for x, g in zip(xnames, grads):
            want = spec["wrt"][x]
            kind = want["type"]
            if kind == "None":
                assert g is None, f"{case}/{gname}: d/d{x} should be None (unconnected), got {g}"
                continue
            assert g is not None, f"{case}/{gname}: d/d{x} is None, TensorFlow gives a {kind}"
            if kind == "IndexedSlices":
                assert isinstance(g, tf.IndexedSlices), f"{case}/{gname}: d/d{x} is {type(g).__name__}, not IndexedSlices"
                fetch[x] = {"values": g.values, "indices": g.indices, "dense_shape": g.dense_shape,
                            "densified": tf.convert_to_tensor(g)}
            else:
                assert kind == "Tensor", f"unknown result type {kind!r}"
                assert isinstance(g, tf.Tensor) and not isinstance(g, tf.IndexedSlices), (case, gname, x, g)
                assert g.dtype.name == want["dtype"], (case, gname, x, g.dtype)
                assert g.shape.is_compatible_with(want["shape"]), (case, gname, x, g.shape)
                fetch[x] = g
        with tf.Session() as sess:
            got = sess.run(fetch, feed) if fetch else {}

    for x, value in got.items():
        want = spec["wrt"][x]
        msg = f"{case}/{gname}: d/d{x}"
        if want["type"] == "IndexedSlices":
            for part in ("values", "indices", "dense_shape", "densified"):
                expected = arrays[_key(want[part])]
                actual = np.asarray(value[part])
                assert actual.shape == expected.shape, (msg, part, actual.shape, expected.shape)
                assert actual.dtype == expected.dtype, (msg, part, actual.dtype, expected.dtype)
                if expected.dtype.kind in "iu":
                    np.testing.assert_array_equal(actual, expected, err_msg=f"{msg} {part}")
                else:
                    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * 0.1, err_msg=f"{msg} {part}")
        else:
            expected = arrays[want["npz_key"]]
            assert list(expected.shape) == list(want["shape"])
            assert value.shape == expected.shape, (msg, value.shape, expected.shape)
            assert value.dtype == expected.dtype, (msg, value.dtype, expected.dtype)
            np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol * 0.1, err_msg=msg)
