"""Every sparse case of _sparse_cases.py against TensorFlow 2.21's results (tests/fixtures/sparse, made by
make_sparse.py there): values, gradients (IndexedSlices where TensorFlow gives them), error classes and
messages, and static shapes."""

import json
import pathlib

import numpy as np
import pytest

import _sparse_cases as cases
import ferroflow as tf

HERE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "sparse"
GOLDEN = np.load(HERE / "sparse.npz")
DOC = json.loads((HERE / "sparse.json").read_text())


def _expected(name):
    prefix = name + ":"
    return {k[len(prefix):]: GOLDEN[k] for k in GOLDEN.files if k.startswith(prefix)}


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.__name__)
def test_case_matches_tensorflow(case):
    got = cases.run_case(tf, case)
    name = case.__name__
    if name in DOC["errors"]:
        want = DOC["errors"][name]
        assert got.get("error") == want["error"], f"{name}: expected {want['error']}, got {got}"
        assert want["message"] in got["message"], f"{name}: {got['message']!r} lacks {want['message']!r}"
        return
    assert "error" not in got, f"{name} failed: {got}"
    want = _expected(name)
    assert sorted(got) == sorted(want), f"{name}: results {sorted(got)} != {sorted(want)}"
    for key, exp in want.items():
        val = np.asarray(got[key])
        what = f"{name}:{key}"
        assert val.shape == exp.shape, f"{what}: shape {val.shape} != {exp.shape}"
        if exp.dtype.kind == "S":
            assert [bytes(x) for x in val.reshape(-1)] == list(exp.reshape(-1)), what
            continue
        assert val.dtype == exp.dtype, f"{what}: dtype {val.dtype} != {exp.dtype}"
        if exp.dtype.kind == "f":
            np.testing.assert_allclose(val, exp, rtol=2e-5, atol=2e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(val, exp, err_msg=what)


def test_static_shapes_match_tensorflow():
    assert cases.static_shapes(tf) == DOC["static_shapes"]
