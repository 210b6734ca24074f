"""Linear algebra: ``tf.linalg`` and TF1's top-level matrix ops.

Each op is TensorFlow's (``Cholesky``, ``MatrixInverse``, ``Svd``, ``Qr``, ``SelfAdjointEigV2``, ``Einsum``,
``MatrixDiagV3``, ...) with a Rust kernel (factorizations from the ``faer`` crate) and TensorFlow's gradient,
so GraphDefs interoperate. As in TensorFlow, ``cholesky_solve``, ``logdet``, ``trace``, ``norm``, ``eye`` and
the fast path of ``matrix_solve_ls`` are composed from those ops. ``einsum`` with more than two operands
contracts them pairwise, left to right.
"""

from __future__ import annotations

import collections
import numbers

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, make_op, type_attr

# TF1's top-level names (tf.linalg adds slogdet, logdet, lu, ...).
__all__ = [
    "cholesky",
    "cholesky_solve",
    "cross",
    "diag",
    "diag_part",
    "einsum",
    "eye",
    "matrix_band_part",
    "matrix_determinant",
    "matrix_diag",
    "matrix_diag_part",
    "matrix_inverse",
    "matrix_set_diag",
    "matrix_solve",
    "matrix_solve_ls",
    "matrix_square_root",
    "matrix_triangular_solve",
    "norm",
    "qr",
    "self_adjoint_eig",
    "self_adjoint_eigvals",
    "svd",
    "trace",
]

_Qr = collections.namedtuple("Qr", ["q", "r"])
_Lu = collections.namedtuple("Lu", ["lu", "p"])
_LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def _t(x, name="input", dtype=None):
    return ops.convert_to_tensor(x, dtype=dtype, name=name)


def _unary(op_type, default_name, **attrs):
    def f(input, name=None):  # noqa: A002
        with ops.name_scope(name, default_name, [input]) as scope:
            return make(op_type, [_t(input)], dict(attrs), scope)

    return f


def _index(v, name, dtype=dtypes.int32):
    if isinstance(v, ops.Tensor):
        return v
    return ops.convert_to_tensor(v, dtype=dtype, name=name)


# --------------------------------------------------------------------------- factorizations and solves


def cholesky(input, name=None):  # noqa: A002
    """The lower Cholesky factor of each (symmetric positive definite) matrix; reads the lower triangle."""
    with ops.name_scope(name, "Cholesky", [input]) as scope:
        return make("Cholesky", [_t(input)], {}, scope)


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each matrix (of its adjoint when ``adjoint``); singular input: InvalidArgumentError."""
    with ops.name_scope(name, "MatrixInverse", [input]) as scope:
        return make("MatrixInverse", [_t(input)], {"adjoint": bool(adjoint)}, scope)


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each matrix."""
    with ops.name_scope(name, "MatrixDeterminant", [input]) as scope:
        return make("MatrixDeterminant", [_t(input)], {}, scope)


def log_matrix_determinant(input, name=None):  # noqa: A002
    """``(sign, log|det|)`` of each matrix (op ``LogMatrixDeterminant``)."""
    with ops.name_scope(name, "LogMatrixDeterminant", [input]) as scope:
        op = make_op("LogMatrixDeterminant", [_t(input)], {}, scope)
        return _LogMatrixDeterminant(*op.outputs)


slogdet = log_matrix_determinant


def logdet(matrix, name=None):
    """``log(det(matrix))`` of Hermitian positive definite matrices, through the Cholesky factor."""
    with ops.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=[-1])


def matrix_square_root(input, name=None):  # noqa: A002
    """The principal square root of each matrix."""
    with ops.name_scope(name, "MatrixSquareRoot", [input]) as scope:
        return make("MatrixSquareRoot", [_t(input)], {}, scope)


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002
    """``(lu, p)``: packed LU factors with partial pivoting and the row permutation (op ``Lu``)."""
    with ops.name_scope(name, "Lu", [input]) as scope:
        op = make_op("Lu", [_t(input)], {"output_idx_type": type_attr(output_idx_type)}, scope)
        return _Lu(*op.outputs)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """``X`` with ``matrix @ X = rhs`` (``adjoint(matrix) @ X = rhs`` with ``adjoint``)."""
    with ops.name_scope(name, "MatrixSolve", [matrix, rhs]) as scope:
        a = _t(matrix, "matrix")
        return make("MatrixSolve", [a, _t(rhs, "rhs", a.dtype)], {"adjoint": bool(adjoint)}, scope)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves with the lower (or upper) triangle of ``matrix``; batch dimensions broadcast."""
    with ops.name_scope(name, "MatrixTriangularSolve", [matrix, rhs]) as scope:
        a = _t(matrix, "matrix")
        return make("MatrixTriangularSolve", [a, _t(rhs, "rhs", a.dtype)],
                    {"lower": bool(lower), "adjoint": bool(adjoint)}, scope)


def cholesky_solve(chol, rhs, name=None):
    """``X`` with ``A X = rhs`` given ``chol = cholesky(A)`` (two triangular solves)."""
    with ops.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind):
    gramian = math_ops.matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if isinstance(l2_regularizer, ops.Tensor) or l2_regularizer != 0:
        small = matrix.shape.as_list()[-1 if first_kind else -2]
        batch = matrix.shape.as_list()[:-2]
        identity = eye(small, batch_shape=batch if batch else None, dtype=matrix.dtype)
        gramian = gramian + math_ops.cast(l2_regularizer, matrix.dtype) * identity
    return cholesky(gramian)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions of ``matrix @ X = rhs`` with an optional L2 regularizer.

    ``fast=True`` (with static matrix sizes) solves the regularized normal equations through a Cholesky
    factor built from differentiable ops, as TensorFlow does; otherwise the ``MatrixSolveLs`` op
    (minimum-norm solution).
    """
    with ops.name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]) as scope:
        a = _t(matrix, "matrix")
        b = _t(rhs, "rhs", a.dtype)
        dims = a.shape.as_list() if a.shape.ndims is not None else None
        if fast and dims is not None and dims[-2] is not None and dims[-1] is not None and b.shape.ndims is not None:
            if dims[-2] >= dims[-1]:
                chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=True)
                return cholesky_solve(chol, math_ops.matmul(a, b, adjoint_a=True))
            chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=False)
            return math_ops.matmul(a, cholesky_solve(chol, b), adjoint_a=True)
        l2 = ops.convert_to_tensor(l2_regularizer, dtype=dtypes.float64, name="l2_regularizer")
        return make("MatrixSolveLs", [a, b, l2], {"fast": bool(fast)}, scope)


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """``(q, r)`` of each matrix (op ``Qr``); ``full_matrices`` gives square ``q``."""
    with ops.name_scope(name, "Qr", [input]) as scope:
        op = make_op("Qr", [_t(input)], {"full_matrices": bool(full_matrices)}, scope)
        return _Qr(*op.outputs)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values (descending), and with ``compute_uv`` the vectors: ``(s, u, v)`` with ``a = u s v^T``."""
    with ops.name_scope(name, "Svd", [tensor]) as scope:
        op = make_op("Svd", [_t(tensor, "tensor")],
                     {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)}, scope)
        s, u, v = op.outputs
        return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor, name=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of self-adjoint matrices; reads the lower triangle."""
    with ops.name_scope(name, "self_adjoint_eig", [tensor]) as scope:
        op = make_op("SelfAdjointEigV2", [_t(tensor, "tensor")], {"compute_v": True}, scope)
        return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor, name=None):
    """Eigenvalues (ascending) of self-adjoint matrices."""
    with ops.name_scope(name, "self_adjoint_eigvals", [tensor]) as scope:
        op = make_op("SelfAdjointEigV2", [_t(tensor, "tensor")], {"compute_v": False}, scope)
        return op.outputs[0]


# --------------------------------------------------------------------------- bands and diagonals


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Zeros everything outside a band of ``num_lower`` sub- and ``num_upper`` superdiagonals (-1: all)."""
    with ops.name_scope(name, "MatrixBandPart", [input, num_lower, num_upper]) as scope:
        lo = _index(num_lower, "num_lower", dtypes.int64)
        up = _index(num_upper, "num_upper", lo.dtype)
        return make("MatrixBandPart", [_t(input), lo, up], {}, scope)


def _k(k):
    if isinstance(k, ops.Tensor):
        return k
    if isinstance(k, (list, tuple)):
        return ops.convert_to_tensor(list(k), dtype=dtypes.int32, name="k")
    return ops.convert_to_tensor(k, dtype=dtypes.int32, name="k")


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Batched matrices with the given diagonals ``k`` (op ``MatrixDiagV3``)."""
    with ops.name_scope(name, "MatrixDiagV3", [diagonal]) as scope:
        d = _t(diagonal, "diagonal")
        pad = ops.convert_to_tensor(padding_value, dtype=d.dtype, name="padding_value")
        return make("MatrixDiagV3", [d, _k(k), _index(num_rows, "num_rows"), _index(num_cols, "num_cols"), pad],
                    {"align": align}, scope)


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The diagonals ``k`` of each matrix (op ``MatrixDiagPartV3``)."""
    with ops.name_scope(name, "MatrixDiagPartV3", [input]) as scope:
        x = _t(input)
        pad = ops.convert_to_tensor(padding_value, dtype=x.dtype, name="padding_value")
        return make("MatrixDiagPartV3", [x, _k(k), pad], {"align": align}, scope)


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with its diagonals ``k`` replaced (op ``MatrixSetDiagV3``)."""
    with ops.name_scope(name, "MatrixSetDiagV3", [input, diagonal]) as scope:
        x = _t(input)
        return make("MatrixSetDiagV3", [x, _t(diagonal, "diagonal", x.dtype), _k(k)], {"align": align}, scope)


def diag(diagonal, name=None):
    """A rank-``2k`` tensor with ``diagonal`` (rank ``k``) on its diagonal (op ``Diag``)."""
    with ops.name_scope(name, "Diag", [diagonal]) as scope:
        return make("Diag", [_t(diagonal, "diagonal")], {}, scope)


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a rank-``2k`` tensor (op ``DiagPart``)."""
    with ops.name_scope(name, "DiagPart", [input]) as scope:
        return make("DiagPart", [_t(input)], {}, scope)


def trace(x, name=None):
    """The sum of each matrix's main diagonal."""
    with ops.name_scope(name, "Trace", [x]) as scope:
        x = _t(x, "x")
        return math_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """Identity matrices ``[*batch_shape, num_rows, num_columns]``."""
    with ops.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        dtype = dtypes.as_dtype(dtype)
        static = all(isinstance(v, numbers.Integral) for v in (num_rows, num_columns or 0))
        batch = [] if batch_shape is None else batch_shape
        if static and not isinstance(batch, ops.Tensor):
            cols = num_rows if num_columns is None else num_columns
            ones = constant_op.constant(np.ones(list(batch) + [min(num_rows, cols)], dtype.as_numpy_dtype))
        else:
            rows = _index(num_rows, "num_rows")
            cols = rows if num_columns is None else _index(num_columns, "num_columns")
            size = math_ops.minimum(rows, cols)
            shape = array_ops.concat([_index(batch, "batch_shape") if len(batch) or isinstance(batch, ops.Tensor)
                                      else array_ops.zeros([0], dtypes.int32), array_ops.reshape(size, [1])], 0)
            ones = array_ops.ones(shape, dtype)
        if num_columns is None:
            return matrix_diag(ones)
        return matrix_diag(ones, num_rows=num_rows, num_cols=num_columns)


def cross(a, b, name=None):
    """Cross products of 3-vectors along the last dimension (op ``Cross``)."""
    with ops.name_scope(name, "Cross", [a, b]) as scope:
        a = _t(a, "a")
        return make("Cross", [a, _t(b, "b", a.dtype)], {}, scope)


# --------------------------------------------------------------------------- norm


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """Vector or matrix norms (``ord`` 'euclidean'/'fro'/1/2/inf or p > 0; ``axis`` an int or a pair)."""
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
        keepdims = keep_dims
    keepdims = bool(keepdims)
    is_matrix_norm = (isinstance(axis, (tuple, list)) and len(axis) == 2)
    if is_matrix_norm:
        axis = tuple(axis)
        if (not isinstance(axis[0], int) or not isinstance(axis[1], int)) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", 1, 2, np.inf]
        if ord not in supported and (isinstance(ord, (str, bool)) or not isinstance(ord, numbers.Real) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (axis,)
    with ops.name_scope(name, "norm", [tensor]):
        x = _t(tensor, "tensor")
        if ord in ["fro", "euclidean", 2, 2.0] and not (is_matrix_norm and ord in (2, 2.0)):
            result = math_ops.sqrt(math_ops.reduce_sum(x * x, axis, keepdims=True))
        else:
            result = math_ops.abs(x)
            if ord == np.inf and not is_matrix_norm:
                result = math_ops.reduce_max(result, axis, keepdims=True)
            elif is_matrix_norm:
                rank = x.shape.ndims
                if rank is None:
                    raise ValueError("norm of a matrix needs a tensor of known rank")
                ax = [a % rank for a in axis]
                if ord in (2, 2.0):
                    perm = [i for i in range(rank) if i not in ax] + ax
                    s = svd(array_ops.transpose(x, perm), compute_uv=False)
                    result = math_ops.reduce_max(s, -1, keepdims=True)
                    # Back to the input's rank, the two axes of size 1 in place.
                    result = array_ops.expand_dims(result, -1)
                    inv = np.argsort(perm).tolist()
                    result = array_ops.transpose(result, inv)
                elif ord == 1:
                    result = math_ops.reduce_max(math_ops.reduce_sum(result, ax[0], keepdims=True), ax[1],
                                                 keepdims=True)
                else:
                    result = math_ops.reduce_max(math_ops.reduce_sum(result, ax[1], keepdims=True), ax[0],
                                                 keepdims=True)
            else:
                result = math_ops.pow(math_ops.reduce_sum(math_ops.pow(result, ord), axis, keepdims=True),
                                      1.0 / ord)
        if not keepdims:
            result = array_ops.squeeze(result, list(axis) if axis is not None else None)
        return result


# --------------------------------------------------------------------------- einsum


def _parse_subscripts(equation, ranks):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    subs = lhs.split(",")
    if len(subs) != len(ranks):
        raise ValueError(f"Expected {len(subs)} inputs but got {len(ranks)} for equation {equation!r}")
    for s in subs + ([rhs] if rhs is not None else []):
        letters = s.replace("...", "")
        if "." in letters or not all(c.isalpha() for c in letters):
            raise ValueError(f"Invalid character in einsum equation {equation!r}")
    if rhs is None:
        letters = "".join(s.replace("...", "") for s in subs)
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        rhs = ("..." if any("..." in s for s in subs) else "") + "".join(once)
    return subs, rhs


def einsum(equation, *inputs, **kwargs):
    """TensorFlow's ``einsum``: one ``Einsum`` op per pair of operands (more than two: left to right)."""
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for this function: {', '.join(sorted(kwargs))}")
    if not inputs:
        raise ValueError("einsum needs at least one input")
    with ops.name_scope(name, "einsum", list(inputs)) as scope:
        xs = [_t(x, "inputs") for x in inputs]
        subs, out = _parse_subscripts(equation, [x.shape.ndims for x in xs])
        if len(xs) <= 2:
            eq = ",".join(subs) + "->" + out
            return make("Einsum", xs, {"equation": eq, "N": len(xs)}, scope)
        acc, acc_sub = xs[0], subs[0]
        for i in range(1, len(xs)):
            rest = "".join(subs[i + 1:]) + out
            if i == len(xs) - 1:
                keep = out
            else:
                seen = []
                for c in (acc_sub + subs[i]).replace("...", ""):
                    if c in rest and c not in seen:
                        seen.append(c)
                ell = "..." if "..." in acc_sub + subs[i] else ""
                keep = ell + "".join(seen)
            acc = make("Einsum", [acc, xs[i]], {"equation": f"{acc_sub},{subs[i]}->{keep}", "N": 2},
                       scope if i == len(xs) - 1 else None)
            acc_sub = keep
        return acc


# --------------------------------------------------------------------------- expm

# Padé coefficients b_0..b_m of exp (Higham, "The scaling and squaring method for the matrix exponential
# revisited", 2005), and the 1-norm bounds below which each degree is accurate.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0,
        1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}


def _pade(a, m, ident):
    """``(U, V)`` of the degree-``m`` Padé approximant of ``exp(a)``."""
    b = _PADE[m]
    a2 = math_ops.matmul(a, a)
    if m == 13:
        a4 = math_ops.matmul(a2, a2)
        a6 = math_ops.matmul(a4, a2)
        u1 = b[13] * a6 + b[11] * a4 + b[9] * a2
        u = math_ops.matmul(a, math_ops.matmul(a6, u1) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v1 = b[12] * a6 + b[10] * a4 + b[8] * a2
        v = math_ops.matmul(a6, v1) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
        return u, v
    powers = [ident, a2]
    while len(powers) <= m // 2:
        powers.append(math_ops.matmul(powers[-1], a2))
    # Added pairwise (the identity broadcasts against a batch).
    u = b[1] * powers[0]
    v = b[0] * powers[0]
    for k in range(1, m // 2 + 1):
        u = u + b[2 * k + 1] * powers[k]
        v = v + b[2 * k] * powers[k]
    return math_ops.matmul(a, u), v


def matrix_exponential(input, name=None):  # noqa: A002
    """``exp`` of each square matrix: Padé approximants with scaling and squaring, as TensorFlow's ``expm``
    (degrees 3/5/7 for float32, up to 13 for float64, chosen per matrix by its 1-norm)."""
    from ferroflow.ops.while_loop import while_loop

    with ops.name_scope(name, "matrix_exponential", [input]):
        x = _t(input)
        dims = x.shape.as_list()
        n = dims[-1]
        if n is None:
            raise ValueError("expm needs a static matrix size")
        if n == 0:
            return x
        flat = array_ops.reshape(x, [-1, n, n])
        l1 = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(flat), axis=1), axis=-1)[:, None, None]
        ident = eye(n, dtype=x.dtype)
        if x.dtype == dtypes.float64:
            maxnorm, degrees = 5.371920351148152, (3, 5, 7, 9, 13)
            conds = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001, 2.097847961257068e+000)
        else:
            maxnorm, degrees = 3.925724783138660, (3, 5, 7)
            conds = (4.258730016922831e-001, 1.880152677804762e+000)
        squarings = math_ops.maximum(math_ops.floor(math_ops.log(l1 / maxnorm) / np.log(2.0)), 0.0)
        scaled = flat / math_ops.pow(math_ops.cast(2.0, x.dtype), squarings)
        uv = [_pade(flat if d != degrees[-1] else scaled, d, ident) for d in degrees]

        def pick(k):
            out = uv[-1][k]
            for c, pair in reversed(list(zip(conds, uv[:-1]))):
                out = array_ops.where_v2(math_ops.less(l1, c), pair[k], out)
            return out

        u, v = pick(0), pick(1)
        result = matrix_solve(v - u, u + v)
        max_squarings = math_ops.reduce_max(squarings)

        def body(i, r):
            return i + 1.0, array_ops.where_v2(math_ops.less(i, squarings), math_ops.matmul(r, r), r)

        _, result = while_loop(lambda i, _: math_ops.less(i, max_squarings), body,
                               [ops.convert_to_tensor(0.0, dtype=x.dtype), result])
        return array_ops.reshape(result, array_ops.shape(x))


def adjoint(matrix, name=None):
    """The conjugate transpose of each matrix (the transpose, for real dtypes)."""
    return array_ops.matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """``a @ b`` for a batch of matrices ``a`` and vectors ``b``."""
    m = math_ops.matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return array_ops.squeeze(m, [-1], name=name)
