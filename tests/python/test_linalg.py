"""``tf.linalg`` and TF1's matrix ops against TensorFlow 2.21: values and gradients of every case of
``_linalg_cases.py`` (fixtures made by ``tools/make_linalg_fixtures.py``), reconstructions of the
decompositions, TensorFlow's op types and errors.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import _linalg_cases as cases
import ferroflow as tf

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "linalg" / "linalg.npz"


@pytest.fixture(scope="module")
def golden():
    with np.load(FIX) as d:
        return {k: d[k] for k in d.files}


def _tol(v):
    return (2e-4, 2e-4) if v.dtype == np.float32 else (1e-9, 1e-7)


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_tensorflow(name, golden):
    got = cases.run_case(tf, name)
    want = {k.split("/", 1)[1]: v for k, v in golden.items() if k.startswith(name + "/")}
    assert sorted(got) == sorted(want), name
    for k, v in want.items():
        atol, rtol = _tol(v)
        if k.startswith("d"):
            atol, rtol = atol * 20, rtol * 20
        assert got[k].dtype == v.dtype, (name, k)
        assert got[k].shape == v.shape, (name, k, got[k].shape, v.shape)
        np.testing.assert_allclose(got[k], v, atol=atol, rtol=rtol, err_msg=f"{name} {k}")


def _run(fetches):
    with tf.Session() as s:
        return s.run(fetches)


def test_decompositions_reconstruct():
    rs = np.random.RandomState(7)
    x = rs.standard_normal((2, 5, 3))
    sym = x[0] @ x[0].T
    with tf.Graph().as_default():
        q, r = tf.qr(x, full_matrices=True)
        s, u, v = tf.svd(x, full_matrices=True)
        e, w = tf.self_adjoint_eig(sym)
        lu, p = tf.linalg.lu(sym + 5 * np.eye(5))
        q, r, s, u, v, e, w, lu, p = _run([q, r, s, u, v, e, w, lu, p])
    assert q.shape == (2, 5, 5) and r.shape == (2, 5, 3)
    np.testing.assert_allclose(q @ r, x, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(5), (2, 5, 5)), atol=1e-12)
    assert np.all(np.diff(s, axis=-1) <= 0), "singular values descend"
    np.testing.assert_allclose(u[..., :3] * s[:, None, :] @ np.swapaxes(v, -1, -2), x, atol=1e-12)
    assert np.all(np.diff(e) >= 0), "eigenvalues ascend"
    np.testing.assert_allclose(w @ np.diag(e) @ w.T, sym, atol=1e-12)
    lower = np.tril(lu, -1) + np.eye(5)
    np.testing.assert_allclose(lower @ np.triu(lu), (sym + 5 * np.eye(5))[p], atol=1e-12)


def test_graphs_have_tensorflows_op_types():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3, 3])
        v = tf.placeholder(tf.float32, [2, 3])
        tf.matrix_diag(v)
        tf.matrix_diag_part(x)
        tf.matrix_set_diag(x, v)
        tf.einsum("bij,bjk->bik", x, x)
        tf.linalg.slogdet(x)
        tf.self_adjoint_eigvals(x)
        tf.linalg.lu(x)
        tf.eye(3)
        types = {op.type for op in g.get_operations()}
    assert {"MatrixDiagV3", "MatrixDiagPartV3", "MatrixSetDiagV3", "Einsum", "LogMatrixDeterminant",
            "SelfAdjointEigV2", "Lu"} <= types


def test_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 3])
        assert tf.qr(x).q.shape.as_list() == [None, 5, 3]
        assert tf.qr(x, full_matrices=True).q.shape.as_list() == [None, 5, 5]
        s, u, v = tf.svd(x)
        assert (s.shape.as_list(), u.shape.as_list(), v.shape.as_list()) == ([None, 3], [None, 5, 3], [None, 3, 3])
        assert tf.einsum("bij,bkj->bik", x, x).shape.as_list() == [None, 5, 5]
        assert tf.matrix_diag_part(x, k=(-1, 1)).shape.as_list() == [None, 3, 3]
        assert tf.norm(x, axis=[1, 2]).shape.as_list() == [None]
        assert tf.eye(2, 3, batch_shape=[4]).shape.as_list() == [4, 2, 3]


def test_singular_matrices_raise_invalid_argument(golden):
    for name, build in [("inverse_singular", lambda m: tf.matrix_inverse(m)),
                        ("solve_singular", lambda m: tf.matrix_solve(m, np.ones((2, 1))))]:
        with tf.Graph().as_default():
            y = build(np.array([[1.0, 2.0], [2.0, 4.0]]))
            with pytest.raises(tf.errors.InvalidArgumentError, match=str(golden[f"error/{name}/message"])):
                _run(y)
        assert str(golden[f"error/{name}/class"]) == "InvalidArgumentError"


def test_bad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.cholesky(np.ones((2, 3)))
        with pytest.raises(ValueError):
            tf.einsum("ij,jk->iz", np.ones((2, 2)), np.ones((2, 2)))
        with pytest.raises(ValueError, match="'ord' must be a supported"):
            tf.norm(np.ones((2, 2)), ord="nuc", axis=[0, 1])
        with pytest.raises(ValueError, match="'axis' must be"):
            tf.norm(np.ones((2, 2)), axis=[0, 0])
        x = tf.placeholder(tf.float64, [None, None])
        c = tf.cholesky(x)
        with pytest.raises(tf.errors.InvalidArgumentError, match="square"):
            with tf.Session() as s:
                s.run(c, {x: np.ones((2, 3))})


def test_linalg_namespace_aliases():
    names = ["adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag", "diag_part", "eigh",
             "eigvalsh", "einsum", "eye", "global_norm", "inv", "l2_normalize", "logdet", "lstsq", "lu", "matmul",
             "matrix_transpose", "matvec", "norm", "qr", "set_diag", "slogdet", "solve", "sqrtm", "svd",
             "tensor_diag", "tensor_diag_part", "tensordot", "trace", "transpose", "triangular_solve"]
    assert [n for n in names if not hasattr(tf.linalg, n)] == []
    assert tf.linalg.diag is tf.matrix_diag and tf.linalg.tensor_diag is tf.diag
    with tf.Graph().as_default():
        a = np.arange(6.0).reshape(2, 3)
        got = _run([tf.linalg.matvec(a, np.ones(3)), tf.linalg.adjoint(a)])
    np.testing.assert_allclose(got[0], a.sum(1))
    np.testing.assert_allclose(got[1], a.T)


def test_einsum_gradient_numerically():
    """Repeated labels and broadcasting: analytic gradients equal central differences."""
    rs = np.random.RandomState(3)
    a0, b0 = rs.standard_normal((3, 3, 2)), rs.standard_normal((2, 4))
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float64, a0.shape)
        b = tf.placeholder(tf.float64, b0.shape)
        y = tf.reduce_sum(tf.sin(tf.einsum("iij,jk->ki", a, b)))
        ga, gb = tf.gradients(y, [a, b])
        with tf.Session() as s:
            f = lambda x0, y0: s.run(y, {a: x0, b: y0})  # noqa: E731
            ga_v, gb_v = s.run([ga, gb], {a: a0, b: b0})
            eps = 1e-6
            for arr, g in [(a0, ga_v), (b0, gb_v)]:
                num = np.zeros_like(arr)
                for idx in np.ndindex(arr.shape):
                    old = arr[idx]
                    arr[idx] = old + eps
                    hi = f(a0, b0)
                    arr[idx] = old - eps
                    lo = f(a0, b0)
                    arr[idx] = old
                    num[idx] = (hi - lo) / (2 * eps)
                np.testing.assert_allclose(g, num, atol=1e-7)
