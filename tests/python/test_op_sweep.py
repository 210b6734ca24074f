"""The op sweep (issue 23): every case of ``_op_sweep_cases.py`` replayed under ferroflow and compared with what
TensorFlow 2.21 did (``tests/fixtures/op_sweep``, written by ``tools/op_sweep_tf.py``).

Per case: the same outcome (values, or an error of the same class raised at the same phase: graph construction
or ``Session.run``); per output the same dtype, the same static shape wherever TensorFlow knows a dim (ferroflow
may know more), and the same value (exactly for integers, bools and strings; to a few ulps for floats, NaNs in
the same places). Differences that are deliberate or not fixed yet are listed in ``EXPECTED`` with the reason;
an entry that no longer differs fails too, so the table stays true.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import _op_sweep_cases as cases
import ferroflow as tf

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "op_sweep"
META = json.loads((FIX / "cases.json").read_text())["ops"]
with np.load(FIX / "values.npz") as _d:
    PACKED = {k: _d[k] for k in _d.files}

# Relative tolerance per float dtype (the absolute tolerance is a tenth of this times the output's largest
# magnitude, for sums whose order differs).
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5,
        "complex128": 1e-12}

# Why ferroflow differs from TensorFlow, for reasons shared by several cases.
_NO_KERNEL = (
    "TF 2.21 has no CPU kernel for this dtype (run-time InvalidArgumentError); ferroflow computes it")
_REALDIV_INT = (
    "TF's RealDiv op admits integers but registers no CPU kernel for them (run-time error); ferroflow's "
    "op definition rejects them when the graph is built (TypeError)")
_TRUNC_ZERO = (
    "TF raises InternalError ('Unexpected error in binary operator') for an integer division by zero in "
    "TruncateDiv/TruncateMod, its own message calling it unexpected; ferroflow raises "
    "InvalidArgumentError as for FloorDiv/FloorMod")
_NAN_SORT = (
    "TF sorts through TopK, whose order with NaNs present is an artefact of its partial sort; ferroflow "
    "orders NaN as the largest value")

# "op/case index" -> why ferroflow differs from TensorFlow there.
EXPECTED: dict[str, str] = {
    "rint/3": _NO_KERNEL,
    "reciprocal/8": _NO_KERNEL,
    "reciprocal/9": _NO_KERNEL,
    "math.erfinv/3": _NO_KERNEL,
    "math.ndtri/3": _NO_KERNEL,
    "truncatediv/5": _TRUNC_ZERO,
    "truncatemod/5": _TRUNC_ZERO,
    "truncatemod/8": _NO_KERNEL,
    "realdiv/4": _REALDIV_INT,
    "realdiv/5": _REALDIV_INT,
    "realdiv/6": _REALDIV_INT,
    "realdiv/7": _REALDIV_INT,
    "math.igamma/8": _NO_KERNEL,
    "sort/0": _NAN_SORT,
    "argsort/0": _NAN_SORT,
    "nn.max_pool/9": (
        "ferroflow pools NCHW on the CPU (TF only on a GPU), so it reads ksize [1, 2, 2, 1] as a window over "
        "channels and rejects it when building (UnimplementedError); TF's CPU kernel rejects NCHW at run time"),
    "nn.conv2d/12": (
        "grouped convolutions (a filter depth dividing the input depth) are not implemented by ferroflow's "
        "Conv2D kernels (UnimplementedError when run)"),
    "sparse.maximum/0": (
        "TF merges unordered indices without checking them (its output then repeats positions, not an "
        "elementwise maximum); ferroflow requires ordered indices (InvalidArgumentError) as its other sparse ops"),
}


def _want_value(dtype_key, shape, offset):
    flat = PACKED[dtype_key]
    n = int(np.prod(shape))
    return flat[offset:offset + n].reshape(shape)


def _bfloat16_as_float32(got, want):
    """bfloat16 values are stored as float32 (numpy cannot save ml_dtypes' type): compare as float32 after
    checking ferroflow's value really is bfloat16."""
    if got.dtype.name != "bfloat16":
        return None, f"value dtype {got.dtype} != bfloat16"
    return got.astype(np.float32), None


def _shape_ok(got, want):
    if want == "?":
        return True
    if got == "?":
        return False
    g, w = got[1:-1].split(","), want[1:-1].split(",")
    return len(g) == len(w) and all(b == "?" or a == b for a, b in zip(g, w))


def _compare_value(got, want, dtype_name, rtol):
    if want.dtype.kind == "S":
        gl = [x if isinstance(x, bytes) else str(x).encode() for x in got.ravel()]
        return None if got.shape == want.shape and gl == list(want.ravel()) else f"value {got!r} != {want!r}"
    if got.shape != want.shape:
        return f"value shape {got.shape} != {want.shape}"
    if got.dtype != want.dtype:
        return f"value dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "fc" or dtype_name == "bfloat16":
        g, w = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64), \
            want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        if not np.array_equal(np.isnan(g), np.isnan(w)):
            return f"NaNs differ: {got} != {want}"
        finite = np.isfinite(w)
        if not np.array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)]):
            return f"infinities differ: {got} != {want}"
        if not np.all(np.isfinite(g[finite])):
            return f"non-finite values where TF has finite ones: {got} != {want}"
        scale = float(np.max(np.abs(w[finite]))) if finite.any() else 0.0
        err = np.abs(g[finite] - w[finite])
        bad = err > rtol * np.abs(w[finite]) + rtol * scale * 0.1
        if bad.any():
            return f"values differ (max abs err {err.max():.3g}): {got} != {want}"
        return None
    return None if np.array_equal(got, want) else f"values {got} != {want}"


def compare_case(name, index, got, want):
    """The differences between ferroflow's outcome ``got`` and TensorFlow's ``want`` (a list of strings)."""
    if got["phase"] != want["phase"] or (want["phase"] != "ok" and got["class"] != want["class"]):
        g = got["phase"] if got["phase"] == "ok" else f"{got['phase']} {got['class']}: {got['message']}"
        w = want["phase"] if want["phase"] == "ok" else f"{want['phase']} {want['class']}: {want['message']}"
        return [f"outcome: ferroflow {g} / TF {w}"]
    if want["phase"] != "ok":
        return []
    if len(got["out"]) != len(want["out"]):
        return [f"{len(got['out'])} outputs, TF {len(want['out'])}"]
    diffs = []
    for k, ((gd, gs, gv), (wd, ws, vkey, vshape, off)) in enumerate(zip(got["out"], want["out"])):
        if gd != wd:
            diffs.append(f"out {k}: dtype {gd} != {wd}")
            continue
        if not _shape_ok(gs, ws):
            diffs.append(f"out {k}: static shape {gs} != {ws}")
        w, gv = _want_value(vkey, vshape, off), np.asarray(gv)
        if vkey == "bfloat16":
            gv, problem = _bfloat16_as_float32(gv, w)
            if problem:
                diffs.append(f"out {k}: {problem}")
                continue
        problem = _compare_value(gv, w, wd, RTOL.get(wd, 0.0))
        if problem:
            diffs.append(f"out {k}: {problem}")
    return diffs


@pytest.mark.parametrize("name", sorted(cases.OPS))
def test_op_matches_tensorflow(name):
    entry = cases.OPS[name]
    want_all = META[name]
    assert len(want_all) == len(entry.cases), "fixture out of date: run tools/op_sweep_tf.py"
    results = cases.run_op(tf, entry)
    failures, stale = [], []
    for i, (got, want) in enumerate(zip(results, want_all)):
        key = f"{name}/{i}"
        diffs = compare_case(name, i, got, want)
        if diffs and key not in EXPECTED:
            failures.append(f"{key} {entry.cases[i].describe()}: " + "; ".join(diffs))
        elif not diffs and key in EXPECTED:
            stale.append(f"{key}: matches TensorFlow now; drop it from EXPECTED ({EXPECTED[key]})")
    assert not failures and not stale, "\n".join(failures + stale)


def test_expected_differences_name_real_cases():
    for key in EXPECTED:
        name, index = key.rsplit("/", 1)
        assert name in cases.OPS and int(index) < len(cases.OPS[name].cases), key
