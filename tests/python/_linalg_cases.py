"""Linear-algebra cases, each written against a TF1-style module ``tf`` (``ferroflow`` or TensorFlow's
``tf.compat.v1``), so the same code makes the golden fixtures under TensorFlow
(tools/make_linalg_fixtures.py -> tests/fixtures/linalg/linalg.npz) and is checked under ferroflow
(test_linalg.py).

A case is ``(inputs, build, wrt)``: ``build(tf, **placeholders)`` returns a tuple of output tensors;
``run_case`` fetches them and the gradients of ``sum(out_i * r_i)`` (fixed random ``r_i``) with respect to
the inputs named in ``wrt``. Decompositions with a sign freedom (QR, SVD, eigenvectors) are normalised
inside ``build`` (columns multiplied by the sign of a chosen entry), so values and gradients are
comparable; TensorFlow's gradients of the normalised outputs are the same as of the raw ones up to that
sign. Imports nothing but numpy.
"""

import numpy as np

R = np.random.RandomState(2321)


def _m(*shape, dtype=np.float64):
    return R.uniform(-1, 1, size=shape).astype(dtype)


def _spd(*shape, dtype=np.float64):
    a = R.uniform(-1, 1, size=shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _sym(*shape, dtype=np.float64):
    a = R.uniform(-1, 1, size=shape)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def _well(*shape, dtype=np.float64):
    """A well-conditioned (diagonally dominant) square matrix."""
    n = shape[-1]
    return (R.uniform(-1, 1, size=shape) + 3 * np.eye(n)).astype(dtype)


def _col_signs(tf, x, row=0):
    """``x`` with each column multiplied by the sign of its entry in ``row``."""
    s = tf.sign(x[..., row:row + 1, :])
    return x * s, s


def _qr_norm(tf, x):
    q, r = tf.qr(x)
    d = tf.sign(tf.matrix_diag_part(r))
    return q * tf.expand_dims(d, -2), r * tf.expand_dims(d, -1)


def _svd(tf, x, full=False):
    s, u, v = tf.svd(x, full_matrices=full)
    k = min(x.shape.as_list()[-2:])
    sign = tf.sign(u[..., :1, :k])
    u = tf.concat([u[..., :, :k] * sign, u[..., :, k:]], -1)
    v = tf.concat([v[..., :, :k] * sign, v[..., :, k:]], -1)
    return s, u, v


def _eig(tf, x):
    e, v = tf.self_adjoint_eig(x)
    v, _ = _col_signs(tf, v)
    return e, v


CASES = {
    # factorizations
    "cholesky": ({"x": _spd(4, 4)}, lambda tf, x: (tf.cholesky(x),), ["x"]),
    "cholesky_batch_f32": ({"x": _spd(2, 3, 5, 5, dtype=np.float32)}, lambda tf, x: (tf.cholesky(x),), ["x"]),
    "cholesky_not_pd": ({"x": np.array([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 2.0], [2.0, 1.0]]])},
                        lambda tf, x: (tf.cholesky(x),), []),
    "cholesky_solve": ({"a": _spd(2, 4, 4), "b": _m(2, 4, 3)},
                       lambda tf, a, b: (tf.cholesky_solve(tf.cholesky(a), b),), ["a", "b"]),
    "inverse": ({"x": _well(3, 4, 4)}, lambda tf, x: (tf.matrix_inverse(x),), ["x"]),
    "inverse_adjoint": ({"x": _well(4, 4)}, lambda tf, x: (tf.matrix_inverse(x, adjoint=True),), ["x"]),
    "determinant": ({"x": _m(3, 4, 4)}, lambda tf, x: (tf.matrix_determinant(x),), ["x"]),
    "determinant_f32": ({"x": _m(5, 5, dtype=np.float32)}, lambda tf, x: (tf.matrix_determinant(x),), ["x"]),
    "slogdet": ({"x": _m(3, 4, 4)}, lambda tf, x: tuple(tf.linalg.slogdet(x))[::-1], ["x"]),
    "logdet": ({"x": _spd(2, 4, 4)}, lambda tf, x: (tf.linalg.logdet(x),), ["x"]),
    "solve": ({"a": _well(2, 4, 4), "b": _m(2, 4, 3)}, lambda tf, a, b: (tf.matrix_solve(a, b),), ["a", "b"]),
    "solve_adjoint": ({"a": _well(4, 4), "b": _m(4, 2)},
                      lambda tf, a, b: (tf.matrix_solve(a, b, adjoint=True),), ["a", "b"]),
    "tri_lower": ({"a": _well(2, 4, 4), "b": _m(2, 4, 3)},
                  lambda tf, a, b: (tf.matrix_triangular_solve(a, b),), ["a", "b"]),
    "tri_upper_adjoint": ({"a": _well(4, 4), "b": _m(4, 3)},
                          lambda tf, a, b: (tf.matrix_triangular_solve(a, b, lower=False, adjoint=True),),
                          ["a", "b"]),
    "tri_broadcast": ({"a": _well(4, 4), "b": _m(2, 4, 3)},
                      lambda tf, a, b: (tf.linalg.triangular_solve(a, b),), ["a", "b"]),
    "lstsq_fast": ({"a": _m(6, 3), "b": _m(6, 2)}, lambda tf, a, b: (tf.matrix_solve_ls(a, b),), ["a", "b"]),
    "lstsq_fast_l2": ({"a": _m(2, 6, 3), "b": _m(2, 6, 2)},
                      lambda tf, a, b: (tf.matrix_solve_ls(a, b, l2_regularizer=0.5),), ["a", "b"]),
    "lstsq_under": ({"a": _m(3, 5), "b": _m(3, 2)}, lambda tf, a, b: (tf.matrix_solve_ls(a, b),), ["a", "b"]),
    "lstsq_slow": ({"a": _m(6, 3), "b": _m(6, 2)},
                   lambda tf, a, b: (tf.matrix_solve_ls(a, b, fast=False),), []),
    "qr": ({"x": _m(5, 3)}, lambda tf, x: _qr_norm(tf, x), ["x"]),
    "qr_square_batch": ({"x": _m(2, 4, 4)}, lambda tf, x: _qr_norm(tf, x), ["x"]),
    "qr_wide": ({"x": _m(3, 5)}, lambda tf, x: _qr_norm(tf, x), ["x"]),
    "qr_full_values": ({"x": _m(5, 3)}, lambda tf, x: (tf.abs(tf.qr(x, full_matrices=True)[1]),), []),
    "svd": ({"x": _m(5, 3)}, lambda tf, x: _svd(tf, x), ["x"]),
    "svd_wide_batch": ({"x": _m(2, 3, 4)}, lambda tf, x: _svd(tf, x), ["x"]),
    "svd_square": ({"x": _m(4, 4)}, lambda tf, x: _svd(tf, x), ["x"]),
    "svd_values": ({"x": _m(2, 6, 4)}, lambda tf, x: (tf.svd(x, compute_uv=False),), ["x"]),
    "svd_full": ({"x": _m(4, 3)}, lambda tf, x: _svd(tf, x, full=True)[:1], []),
    "eig": ({"x": _sym(4, 4)}, lambda tf, x: _eig(tf, x), ["x"]),
    "eig_batch_f32": ({"x": _sym(3, 5, 5, dtype=np.float32)}, lambda tf, x: _eig(tf, x), ["x"]),
    "eigvals": ({"x": _sym(2, 4, 4)}, lambda tf, x: (tf.self_adjoint_eigvals(x),), ["x"]),
    "sqrtm": ({"x": _spd(4, 4)}, lambda tf, x: (tf.matrix_square_root(x),), []),
    "sqrtm_general": ({"x": _well(2, 3, 3)}, lambda tf, x: (tf.linalg.sqrtm(x),), []),
    "expm": ({"x": 3 * _m(2, 4, 4)}, lambda tf, x: (tf.linalg.expm(x),), []),
    "expm_small_f32": ({"x": 0.2 * _m(3, 3, dtype=np.float32)}, lambda tf, x: (tf.linalg.expm(x),), []),
    "lu": ({"x": _m(2, 4, 4)}, lambda tf, x: tuple(tf.linalg.lu(x)), []),
    # bands, diagonals, norms
    "band_part": ({"x": _m(2, 4, 5)}, lambda tf, x: (tf.matrix_band_part(x, 1, 2), tf.matrix_band_part(x, -1, 0)),
                  ["x"]),
    "matrix_diag": ({"d": _m(2, 3)}, lambda tf, d: (tf.matrix_diag(d),), ["d"]),
    "matrix_diag_k": ({"d": _m(2, 3, 4)},
                      lambda tf, d: (tf.matrix_diag(d, k=(-1, 1), num_rows=5, num_cols=4, padding_value=0.5),),
                      ["d"]),
    "matrix_diag_part": ({"x": _m(2, 3, 4)}, lambda tf, x: (tf.matrix_diag_part(x),), ["x"]),
    "matrix_diag_part_k": ({"x": _m(2, 4, 3)},
                           lambda tf, x: (tf.matrix_diag_part(x, k=(-2, 1), padding_value=9.0),
                                          tf.linalg.diag_part(x, k=1, align="LEFT_RIGHT")), ["x"]),
    "matrix_set_diag": ({"x": _m(2, 3, 4), "d": _m(2, 3)}, lambda tf, x, d: (tf.matrix_set_diag(x, d),),
                        ["x", "d"]),
    "matrix_set_diag_k": ({"x": _m(4, 4), "d": _m(2, 4)},
                          lambda tf, x, d: (tf.matrix_set_diag(x, d, k=(-1, 0)),), ["x", "d"]),
    "diag": ({"d": _m(2, 3)}, lambda tf, d: (tf.diag(d),), ["d"]),
    "diag_part": ({"x": _m(2, 3, 2, 3)}, lambda tf, x: (tf.diag_part(x),), ["x"]),
    "trace": ({"x": _m(2, 3, 4)}, lambda tf, x: (tf.trace(x),), ["x"]),
    "eye": ({}, lambda tf: (tf.eye(3), tf.eye(2, 4, batch_shape=[2], dtype=tf.float64)), []),
    "cross": ({"a": _m(4, 3), "b": _m(4, 3)}, lambda tf, a, b: (tf.cross(a, b),), ["a", "b"]),
    "norm_default": ({"x": _m(3, 4)}, lambda tf, x: (tf.norm(x), tf.norm(x, axis=1, keepdims=True)), ["x"]),
    "norm_ords": ({"x": _m(2, 3, 4)},
                  lambda tf, x: (tf.norm(x, ord=1, axis=-1), tf.norm(x, ord=np.inf, axis=1),
                                 tf.norm(x, ord=3, axis=2), tf.norm(x, ord="fro", axis=[1, 2]),
                                 tf.norm(x, ord=1, axis=(-2, -1)), tf.norm(x, ord=np.inf, axis=(1, 2))), ["x"]),
    "norm_spectral": ({"x": _m(2, 4, 3)}, lambda tf, x: (tf.norm(x, ord=2, axis=[-2, -1]),
                                                         tf.norm(x, ord=2, axis=[2, 1], keepdims=True)), ["x"]),
    # einsum
    "einsum_bmm": ({"a": _m(2, 3, 4), "b": _m(2, 4, 5)}, lambda tf, a, b: (tf.einsum("bij,bjk->bik", a, b),),
                   ["a", "b"]),
    "einsum_mm": ({"a": _m(3, 4), "b": _m(4, 5)}, lambda tf, a, b: (tf.einsum("ij,jk->ik", a, b),), ["a", "b"]),
    "einsum_attn": ({"q": _m(2, 2, 3, 4), "k": _m(2, 2, 5, 4)},
                    lambda tf, q, k: (tf.einsum("bhqd,bhkd->bhqk", q, k),), ["q", "k"]),
    "einsum_attn_out": ({"p": _m(2, 2, 3, 5), "v": _m(2, 2, 5, 4)},
                        lambda tf, p, v: (tf.einsum("bhqk,bhkd->bqhd", p, v),), ["p", "v"]),
    "einsum_dense": ({"x": _m(2, 3, 4), "w": _m(4, 2, 5)},
                     lambda tf, x, w: (tf.einsum("btd,dhk->bthk", x, w),), ["x", "w"]),
    "einsum_outer_trace": ({"a": _m(3), "b": _m(4), "c": _m(3, 3)},
                           lambda tf, a, b, c: (tf.einsum("i,j->ij", a, b), tf.einsum("ii->", c),
                                                tf.einsum("ii->i", c), tf.einsum("ij->ji", c),
                                                tf.einsum("ij", c)), ["a", "b", "c"]),
    "einsum_reduce": ({"a": _m(2, 3, 4), "b": _m(4, 5)},
                      lambda tf, a, b: (tf.einsum("abc,cd->a", a, b), tf.einsum("abc->cb", a)), ["a", "b"]),
    "einsum_ellipsis": ({"a": _m(2, 1, 3, 4), "b": _m(5, 4, 2)},
                        lambda tf, a, b: (tf.einsum("...ij,...jk->...ik", a, b),), ["a", "b"]),
    "einsum_three": ({"a": _m(2, 3), "b": _m(3, 4), "c": _m(4, 5)},
                     lambda tf, a, b, c: (tf.einsum("ij,jk,kl->il", a, b, c),), ["a", "b", "c"]),
    "einsum_f32": ({"a": _m(3, 4, dtype=np.float32), "b": _m(5, 4, dtype=np.float32)},
                   lambda tf, a, b: (tf.einsum("ij,kj->ik", a, b),), ["a", "b"]),
}


def upstream(i, shape, dtype):
    """The fixed random weights of output ``i`` in the loss."""
    rs = np.random.RandomState(100 + i + 7 * len(shape))
    return rs.uniform(-1, 1, size=shape).astype(dtype)


def run_case(tf, name):
    """``{out<i>: value, d<input>: gradient}`` of case ``name`` under module ``tf``."""
    inputs, build, wrt = CASES[name]
    g = tf.Graph()
    with g.as_default():
        phs = {k: tf.placeholder(tf.as_dtype(v.dtype), v.shape, name=k) for k, v in inputs.items()}
        outs = build(tf, **phs)
        feed = {phs[k]: v for k, v in inputs.items()}
        with tf.Session() as s:
            vals = s.run(list(outs), feed)
            res = {f"out{i}": np.asarray(v) for i, v in enumerate(vals)}
            if wrt:
                loss = tf.add_n([tf.reduce_sum(o * upstream(i, v.shape, v.dtype))
                                 for i, (o, v) in enumerate(zip(outs, vals)) if v.dtype.kind == "f"])
                grads = s.run(tf.gradients(loss, [phs[k] for k in wrt]), feed)
                res.update({f"d{k}": np.asarray(v) for k, v in zip(wrt, grads)})
    return res
