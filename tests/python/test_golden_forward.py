"""Forward values recorded by real TensorFlow (golden/gradients ``output.*`` and golden/clipping's
tf.clip_by_value cases): rebuild each recorded expression from the JSON manifest and compare.

Fixtures are copies of the team's TensorFlow-made golden data (made by TensorFlow 2.21 in graph mode, see its README,
sections c and e) kept in tests/fixtures/golden. Every shape, dtype, input and output name is read from
the manifests; only each case's expression (its definition in the README) is written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
GRADIENT_CASES = sorted(p.stem for p in (GOLDEN / "gradients").glob("*.json"))
RTOL = {"float32": 1e-5, "float64": 1e-10, "float16": 5e-2}


def _load(case):
    meta = json.loads((GOLDEN / "gradients" / f"{case}.json").read_text())
    with np.load(GOLDEN / "gradients" / f"{case}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def _mlp(p):
    hidden = tf.nn.relu(tf.matmul(p["x"], p["W1"]) + p["b1"])
    logits = tf.matmul(hidden, p["W2"]) + p["b2"]
    return hidden, logits


def _reduction(name, x):
    """``<op>_<all|axis<N>|axis_last>[_keepdims]`` -> the reduction that name describes."""
    m = re.fullmatch(r"(sum|mean|max|min|prod)_(all|axis(\d+)|axis_last)(_keepdims)?", name)
    assert m, f"unrecognised reduction output name {name!r}"
    fn = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
          "prod": tf.reduce_prod}[m.group(1)]
    axis = None if m.group(2) == "all" else (-1 if m.group(2) == "axis_last" else int(m.group(3)))
    return fn(x, axis=axis, keepdims=m.group(4) is not None)


def _broadcast_add_mul(p, names):
    a, b, c = p["a"], p["b"], p["c"]
    y = (a + b) * c - a / (b * b + 1) + 2 * c
    return {"y": y, "s": tf.reduce_sum(y * y)}


def _elementwise_ties(p, names):
    x, y = p["x"], p["y"]
    return {
        "relu": tf.nn.relu(x),
        "relu6": tf.nn.relu6(x),
        "abs": tf.abs(x),
        "maximum": tf.maximum(x, y),
        "minimum": tf.minimum(x, y),
        "clip_by_value": tf.clip_by_value(x, -1.0, 1.0),
        "tanh": tf.tanh(x),
        "sigmoid": tf.sigmoid(x),
        "sqrt_abs_plus1": tf.sqrt(tf.abs(x) + 1.0),
        "square": tf.square(x),
        "where": tf.where(x > y, 2.0 * x, 3.0 * y),
    }


def _gather_embedding_lookup(p, names):
    emb = tf.nn.embedding_lookup(p["params"], p["ids"])
    return {"emb": emb, "y": tf.reduce_sum(emb * p["w"]), "y2": tf.reduce_sum(tf.gather(p["params"], p["ids"]) ** 2)}


def _grad_ys(p, names):
    return {"y1": tf.tanh(p["x"] * p["w"]), "y2": tf.reduce_sum(p["x"] * p["x"], axis=0)}


def _mlp_softmax_xent_v2(p, names):
    hidden, logits = _mlp(p)
    xent = tf.nn.softmax_cross_entropy_with_logits_v2(labels=p["labels"], logits=logits)
    return {"hidden": hidden, "logits": logits, "xent": xent, "loss": tf.reduce_mean(xent)}


def _mlp_sparse_softmax_xent(p, names):
    hidden, logits = _mlp(p)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=p["labels"], logits=logits)
    return {"hidden": hidden, "logits": logits, "xent": xent, "loss": tf.reduce_mean(xent)}


def _reductions(p, names):
    return {n: _reduction(n, p["x"]) for n in names}


def _stop_gradient(p, names):
    x = p["x"]
    sg = tf.stop_gradient
    return {"y": tf.reduce_sum(x * sg(x) + 3.0 * sg(x * x) + x), "z": tf.reduce_sum(sg(x))}


# Case name -> builder(placeholders by input name, output names) -> {output name: tensor}.
FORWARD = {
    "broadcast_add_mul": _broadcast_add_mul,
    "elementwise_ties": _elementwise_ties,
    "gather_embedding_lookup": _gather_embedding_lookup,
    "grad_ys": _grad_ys,
    "mlp_softmax_xent_v2": _mlp_softmax_xent_v2,
    "mlp_sparse_softmax_xent": _mlp_sparse_softmax_xent,
    "reductions": _reductions,
    "stop_gradient": _stop_gradient,
}


def test_fixtures_are_present():
    assert GRADIENT_CASES, f"no golden gradient manifests in {GOLDEN / 'gradients'}"


@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_gradient_case_forward_outputs(case):
    meta, arrays = _load(case)
    assert case in FORWARD, f"no forward expression for golden case {case!r} ({meta.get('description')})"
    names = list(meta["outputs"])
    with tf.Graph().as_default():
        phs, feed = {}, {}
        for name, spec in meta["inputs"].items():
            value = arrays[spec["npz_key"]]
            assert list(value.shape) == list(spec["shape"])
            phs[name] = tf.placeholder(tf.as_dtype(spec["dtype"]), spec["shape"], name=name)
            feed[phs[name]] = value
        outs = FORWARD[case](phs, names)
        missing = [n for n in names if n not in outs]
        assert not missing, f"{case}: no expression for outputs {missing}"
        fetch = {n: outs[n] for n in names}
        for n, t in fetch.items():
            expected = arrays[meta["outputs"][n]["npz_key"]]
            # Static shapes are fully known from the placeholders.
            assert t.shape.as_list() == list(expected.shape), (case, n)
        with tf.Session() as sess:
            got = sess.run(fetch, feed)
    rtol = RTOL.get(meta.get("dtype", "float32"), 1e-5)
    for n in names:
        expected = arrays[meta["outputs"][n]["npz_key"]]
        assert got[n].dtype == expected.dtype, (case, n)
        np.testing.assert_allclose(got[n], expected, rtol=rtol, atol=rtol * 0.1, err_msg=f"{case}: {n}")
        # Signed zeros are part of TF's answer (e.g. where/minimum at x == -0.0).
        zeros = expected == 0
        np.testing.assert_array_equal(np.signbit(got[n][zeros]), np.signbit(expected[zeros]), err_msg=f"{case}: {n}")


def _clipping():
    path = GOLDEN / "clipping" / "clipping.json"
    if not path.exists():
        return None, None, []
    meta = json.loads(path.read_text())
    with np.load(GOLDEN / "clipping" / "clipping.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays, [c for c in meta["cases"] if c["api"] == "tf.clip_by_value"]


_CLIP_META, _CLIP_ARRAYS, CLIP_CASES = _clipping()


def _npz_ref(v):
    """``"npz:<key> (note)"`` -> key, else None."""
    if isinstance(v, str) and v.startswith("npz:"):
        return v[4:].split(" ", 1)[0]
    return None


@pytest.mark.parametrize("case", CLIP_CASES, ids=[c["case"] for c in CLIP_CASES])
def test_clip_by_value_cases(case):
    dtype = tf.as_dtype(_CLIP_META["dtype"])
    with tf.Graph().as_default():
        args, feed = {}, {}
        for k, v in case["args"].items():
            key = _npz_ref(v)
            if key is None:
                args[k] = v
            else:
                value = _CLIP_ARRAYS[key]
                args[k] = tf.placeholder(dtype, value.shape, name=k)
                feed[args[k]] = value
        out = tf.clip_by_value(**args)
        expected = _CLIP_ARRAYS[_npz_ref(case["output"])]
        assert out.shape.as_list() == list(expected.shape)
        with tf.Session() as sess:
            got = sess.run(out, feed)
    np.testing.assert_allclose(got, expected, rtol=RTOL[_CLIP_META["dtype"]], atol=0)
