//! Batched dense linear algebra with TensorFlow's conventions: Cholesky,
//! LU (determinants, inverses, solves), triangular solves, least squares,
//! QR, SVD, symmetric eigendecomposition and the matrix square root.
//!
//! The factorizations are the `faer` crate's (blocked, vectorized, checked
//! against LAPACK by its authors); this module only copies TensorFlow's
//! row-major batches of matrices into and out of `faer` matrices, applies
//! TensorFlow's conventions (which triangle is read, output order, signs of
//! determinants, ascending eigenvalues, descending singular values) and
//! reports failures as TensorFlow does. f32 and f64 are supported; f32
//! inputs are factorized in f32 (as TensorFlow does).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, Shape};
use crate::tensor::{Element, Tensor};
use faer::linalg::solvers::{DenseSolveCore, Solve, SolveCore};
use faer::traits::RealField;
use faer::{Mat, MatRef, Par, Side};

/// A real scalar the factorizations run on (f32 or f64).
pub trait Real: RealField + Copy + Default + Element + Into<f64> + Send + Sync {
    /// `v` rounded to this type.
    fn of(v: f64) -> Self;
    /// The value as f64 (exact).
    fn wide(self) -> f64 {
        self.into()
    }
}

impl Real for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
}

impl Real for f64 {
    fn of(v: f64) -> f64 {
        v
    }
}

/// Runs `$body` with `$t` the Rust type of a float tensor's dtype (f32 or
/// f64); other dtypes are an `InvalidArgument` naming `$op`.
macro_rules! with_float {
    ($dtype:expr, $op:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            other => Err(Error::invalid_argument(format!(
                "{}: only float32 and float64 are supported, got {other}",
                $op
            ))),
        }
    };
}

/// The batch dimensions and the matrix size of a rank >= 2 tensor.
pub fn matrix_dims<'a>(x: &'a Tensor, op: &str) -> Result<(&'a [usize], usize, usize)> {
    let d = x.dims();
    if d.len() < 2 {
        return Err(Error::invalid_argument(format!(
            "{op}: input must have rank >= 2, got shape {}",
            x.shape()
        )));
    }
    Ok((&d[..d.len() - 2], d[d.len() - 2], d[d.len() - 1]))
}

fn square_dims<'a>(x: &'a Tensor, op: &str) -> Result<(&'a [usize], usize)> {
    let (b, m, n) = matrix_dims(x, op)?;
    if m != n {
        return Err(Error::invalid_argument(format!(
            "{op}: Input matrix must be square, got shape {}",
            x.shape()
        )));
    }
    Ok((b, n))
}

fn with_matrix(batch: &[usize], rows: usize, cols: usize) -> Shape {
    let mut s = Shape::new(batch);
    s.push(rows);
    s.push(cols);
    s
}

/// The `i`-th `m x n` row-major matrix of `x` as a faer matrix.
fn load<T: Real>(x: &[T], i: usize, m: usize, n: usize) -> Mat<T> {
    let s = &x[i * m * n..(i + 1) * m * n];
    Mat::from_fn(m, n, |r, c| s[r * n + c])
}

/// The `i`-th matrix of `x`, transposed when `adjoint`.
fn load_adj<T: Real>(x: &[T], i: usize, n: usize, adjoint: bool) -> Mat<T> {
    let s = &x[i * n * n..(i + 1) * n * n];
    if adjoint {
        Mat::from_fn(n, n, |r, c| s[c * n + r])
    } else {
        Mat::from_fn(n, n, |r, c| s[r * n + c])
    }
}

/// Appends `m` row-major to `out`.
fn store<T: Real>(m: MatRef<'_, T>, out: &mut Vec<T>) {
    for r in 0..m.nrows() {
        for c in 0..m.ncols() {
            out.push(m[(r, c)]);
        }
    }
}

/// Parallelism for one factorization: faer's threads for a matrix large
/// enough to pay for them.
fn par_for(n: usize) -> Par {
    if n >= 128 {
        faer::get_global_parallelism()
    } else {
        Par::Seq
    }
}

/// `Cholesky`: the lower factor `L` of each matrix (only its lower triangle
/// is read), with zeros above the diagonal; NaNs in the lower triangle of a
/// matrix that is not positive definite, as TensorFlow 2.21 gives (TF 1.x
/// raised InvalidArgumentError instead).
pub fn cholesky(x: &Tensor) -> Result<Tensor> {
    let (_, n) = square_dims(x, "Cholesky")?;
    with_float!(x.dtype(), "Cholesky", T => {
        let a = x.as_slice::<T>()?;
        let count = if n == 0 { 0 } else { a.len() / (n * n) };
        let mut out = Vec::with_capacity(a.len());
        let par = par_for(n);
        let mut mem = faer::dyn_stack::MemBuffer::new(
            faer::linalg::cholesky::llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()),
        );
        for i in 0..count {
            let s = &a[i * n * n..(i + 1) * n * n];
            // Column-major copy of the lower triangle.
            let mut l = Mat::from_fn(n, n, |r, c| if r >= c { s[r * n + c] } else { T::of(0.0) });
            let stack = faer::dyn_stack::MemStack::new(&mut mem);
            let ok = faer::linalg::cholesky::llt::factor::cholesky_in_place(
                l.as_mut(),
                Default::default(),
                par,
                stack,
                Default::default(),
            )
            .is_ok();
            // TensorFlow 2.21 does not fail on a matrix that is not
            // positive definite: its factor is NaN (lower triangle).
            let nan = T::of(f64::NAN);
            for r in 0..n {
                for c in 0..n {
                    out.push(if c > r {
                        T::of(0.0)
                    } else if ok {
                        l[(r, c)]
                    } else {
                        nan
                    });
                }
            }
        }
        Tensor::from_vec(x.shape().clone(), out)
    })
}

/// LU with partial pivoting of one square matrix: the packed factors
/// (unit lower `L` below the diagonal, `U` on and above), the row
/// permutation (`P A = L U` with `(P A)[i] = A[perm[i]]`), and the number of
/// row transpositions.
fn lu_one<T: Real>(mut a: Mat<T>) -> (Mat<T>, Vec<usize>, usize) {
    let n = a.nrows();
    let par = par_for(n);
    let mut fwd = vec![0usize; n];
    let mut bwd = vec![0usize; n];
    let mut mem = faer::dyn_stack::MemBuffer::new(
        faer::linalg::lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
            n,
            n,
            par,
            Default::default(),
        ),
    );
    let (info, _) = faer::linalg::lu::partial_pivoting::factor::lu_in_place(
        a.as_mut(),
        &mut fwd,
        &mut bwd,
        par,
        faer::dyn_stack::MemStack::new(&mut mem),
        Default::default(),
    );
    (a, fwd, info.transposition_count)
}

/// `MatrixDeterminant`: one determinant per matrix (0 for a singular one).
pub fn determinant(x: &Tensor) -> Result<Tensor> {
    let (batch, n) = square_dims(x, "MatrixDeterminant")?;
    with_float!(x.dtype(), "MatrixDeterminant", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let (lu, _, swaps) = lu_one(load::<T>(a, i, n, n));
            let mut d: T = if swaps % 2 == 1 { T::of(-1.0) } else { T::of(1.0) };
            for k in 0..n {
                d *= lu[(k, k)];
            }
            out.push(d);
        }
        Tensor::from_vec(Shape::new(batch), out)
    })
}

/// `LogMatrixDeterminant`: `(sign, log|det|)` per matrix; a singular matrix
/// gives sign 0 and `-inf`.
pub fn log_determinant(x: &Tensor) -> Result<(Tensor, Tensor)> {
    let (batch, n) = square_dims(x, "LogMatrixDeterminant")?;
    with_float!(x.dtype(), "LogMatrixDeterminant", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let (mut signs, mut logs) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for i in 0..count {
            let (lu, _, swaps) = lu_one(load::<T>(a, i, n, n));
            let mut sign = if swaps % 2 == 1 { -1.0 } else { 1.0 };
            let mut log = 0.0f64;
            for k in 0..n {
                let v = lu[(k, k)].wide();
                if v < 0.0 {
                    sign = -sign;
                }
                log += v.abs().ln();
            }
            if log == f64::NEG_INFINITY {
                sign = 0.0;
            }
            signs.push(T::of(sign));
            logs.push(T::of(log));
        }
        Ok((
            Tensor::from_vec(Shape::new(batch), signs)?,
            Tensor::from_vec(Shape::new(batch), logs)?,
        ))
    })
}

/// `Lu`: the packed `L\U` factors and the permutation `p` with
/// `A[p] = L U` (rows of the input gathered by `p`), in `idx` (int32/int64).
pub fn lu(x: &Tensor, idx: DType) -> Result<(Tensor, Tensor)> {
    let (batch, n) = square_dims(x, "Lu")?;
    with_float!(x.dtype(), "Lu", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(a.len());
        let mut perm: Vec<i64> = Vec::with_capacity(count * n);
        for i in 0..count {
            let (lu, p, _) = lu_one(load::<T>(a, i, n, n));
            store(lu.as_ref(), &mut out);
            perm.extend(p.iter().map(|&v| v as i64));
        }
        let mut ps = Shape::new(batch);
        ps.push(n);
        let p = match idx {
            DType::Int32 => Tensor::from_vec(ps, perm.into_iter().map(|v| v as i32).collect::<Vec<_>>())?,
            DType::Int64 => Tensor::from_vec(ps, perm)?,
            other => {
                return Err(Error::invalid_argument(format!(
                    "Lu: output_idx_type must be int32 or int64, got {other}"
                )))
            }
        };
        Ok((Tensor::from_vec(x.shape().clone(), out)?, p))
    })
}

/// `MatrixInverse`: the inverse of each matrix (of its transpose when
/// `adjoint`); a singular matrix is an `InvalidArgument`.
pub fn inverse(x: &Tensor, adjoint: bool) -> Result<Tensor> {
    let (batch, n) = square_dims(x, "MatrixInverse")?;
    with_float!(x.dtype(), "MatrixInverse", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(a.len());
        for i in 0..count {
            let m = load_adj::<T>(a, i, n, adjoint);
            let lu = m.partial_piv_lu();
            if (0..n).any(|k| {
                let v = lu.U()[(k, k)].wide();
                v == 0.0
            }) {
                return Err(Error::invalid_argument("Input is not invertible."));
            }
            store(lu.inverse().as_ref(), &mut out);
        }
        Tensor::from_vec(x.shape().clone(), out)
    })
}

/// `MatrixSolve`: `X` with `A X = B` (or `A^T X = B` when `adjoint`) for
/// each matrix of the batch; a singular `A` is an `InvalidArgument`.
pub fn solve(a: &Tensor, b: &Tensor, adjoint: bool) -> Result<Tensor> {
    let (batch, n) = square_dims(a, "MatrixSolve")?;
    let (bb, bm, k) = matrix_dims(b, "MatrixSolve")?;
    if bb != batch || bm != n {
        return Err(Error::invalid_argument(format!(
            "MatrixSolve: Input matrix and right-hand side must have the same number of rows and batch shape, got {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    same_dtype(a, b, "MatrixSolve")?;
    with_float!(a.dtype(), "MatrixSolve", T => {
        let (x, y) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(y.len());
        for i in 0..count {
            let m = load_adj::<T>(x, i, n, adjoint);
            let f = m.partial_piv_lu();
            if (0..n).any(|d| {
                let v = f.U()[(d, d)].wide();
                v == 0.0
            }) {
                return Err(Error::invalid_argument("Input matrix is not invertible."));
            }
            let mut rhs = load::<T>(y, i, n, k);
            f.solve_in_place_with_conj(faer::Conj::No, rhs.as_mut());
            store(rhs.as_ref(), &mut out);
        }
        Tensor::from_vec(b.shape().clone(), out)
    })
}

fn same_dtype(a: &Tensor, b: &Tensor, op: &str) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: matrix and rhs must have one dtype, got {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(())
}

/// Offsets of each output batch item into an operand with batch dims `sub`,
/// broadcast to `batch`.
fn batch_offsets(sub: &[usize], batch: &Shape) -> Vec<usize> {
    let plan = super::broadcast::Broadcast::to(sub, &[], batch.clone());
    let idx: Vec<usize> = (0..sub.iter().product::<usize>()).collect();
    plan.map(&idx, &[0usize], |i, _| i)
}

/// `MatrixTriangularSolve`: solves `A X = B` (`A^T X = B` when `adjoint`)
/// with `A` lower (or upper) triangular, reading only that triangle; batch
/// dimensions broadcast.
pub fn triangular_solve(a: &Tensor, b: &Tensor, lower: bool, adjoint: bool) -> Result<Tensor> {
    let op = "MatrixTriangularSolve";
    let (ab, n) = square_dims(a, op)?;
    let (bb, bm, k) = matrix_dims(b, op)?;
    same_dtype(a, b, op)?;
    if bm != n {
        return Err(Error::invalid_argument(format!(
            "{op}: Input matrix and right-hand side must have the same number of rows, got {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    let batch = broadcast_shapes(ab, bb).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{op}: Incompatible batch shapes {} and {}",
            a.shape(),
            b.shape()
        ))
    })?;
    let (ao, bo) = (batch_offsets(ab, &batch), batch_offsets(bb, &batch));
    with_float!(a.dtype(), op, T => {
        let (x, y) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        let mut out = Vec::with_capacity(batch.num_elements() * n * k);
        let zero = T::of(0.0);
        for i in 0..batch.num_elements() {
            let s = &x[ao[i] * n * n..(ao[i] + 1) * n * n];
            // The triangle actually used, transposed for the adjoint.
            let keep = |r: usize, c: usize| if lower { r >= c } else { r <= c };
            let m = if adjoint {
                Mat::from_fn(n, n, |r, c| if keep(c, r) { s[c * n + r] } else { zero })
            } else {
                Mat::from_fn(n, n, |r, c| if keep(r, c) { s[r * n + c] } else { zero })
            };
            let mut rhs = load::<T>(y, bo[i], n, k);
            let par = par_for(n.max(k));
            if lower != adjoint {
                faer::linalg::triangular_solve::solve_lower_triangular_in_place(m.as_ref(), rhs.as_mut(), par);
            } else {
                faer::linalg::triangular_solve::solve_upper_triangular_in_place(m.as_ref(), rhs.as_mut(), par);
            }
            store(rhs.as_ref(), &mut out);
        }
        Tensor::from_vec(with_matrix(batch.dims(), n, k), out)
    })
}

/// `MatrixSolveLs`: least-squares solutions `argmin |A X - B|^2 + l2 |X|^2`.
/// With `fast` (or `l2 > 0`) through the regularized normal equations
/// (Cholesky), as TensorFlow's fast path; otherwise the minimum-norm
/// solution from a thin SVD (TensorFlow uses a complete orthogonal
/// decomposition, which gives the same solution).
pub fn solve_ls(a: &Tensor, b: &Tensor, l2: f64, fast: bool) -> Result<Tensor> {
    let op = "MatrixSolveLs";
    let (batch, m, n) = matrix_dims(a, op)?;
    let (bb, bm, k) = matrix_dims(b, op)?;
    same_dtype(a, b, op)?;
    if bb != batch || bm != m {
        return Err(Error::invalid_argument(format!(
            "{op}: matrix and rhs must have the same number of rows and batch shape, got {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    with_float!(a.dtype(), op, T => {
        let (x, y) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count * n * k);
        for i in 0..count {
            let am = load::<T>(x, i, m, n);
            let bm = load::<T>(y, i, m, k);
            let sol: Mat<T> = if fast || l2 > 0.0 {
                let reg = T::of(l2);
                if m >= n {
                    let mut g: Mat<T> = am.transpose() * &am;
                    for d in 0..n {
                        g[(d, d)] += reg;
                    }
                    let rhs: Mat<T> = am.transpose() * &bm;
                    let llt = g.llt(Side::Lower).map_err(|_| {
                        Error::invalid_argument(
                            "MatrixSolveLs: Cholesky decomposition was not successful. The input might not be valid.",
                        )
                    })?;
                    llt.solve(&rhs)
                } else {
                    let mut g: Mat<T> = &am * am.transpose();
                    for d in 0..m {
                        g[(d, d)] += reg;
                    }
                    let llt = g.llt(Side::Lower).map_err(|_| {
                        Error::invalid_argument(
                            "MatrixSolveLs: Cholesky decomposition was not successful. The input might not be valid.",
                        )
                    })?;
                    let z = llt.solve(&bm);
                    am.transpose() * &z
                }
            } else {
                let svd = am.thin_svd().map_err(|_| {
                    Error::invalid_argument("MatrixSolveLs: the SVD did not converge")
                })?;
                let (u, v, s) = (svd.U(), svd.V(), svd.S());
                let sv: Vec<f64> = (0..s.dim()).map(|j| s[j].wide()).collect();
                let eps = if std::mem::size_of::<T>() == 8 { f64::EPSILON } else { f64::from(f32::EPSILON) };
                let tol = sv.first().copied().unwrap_or(0.0) * (m.max(n) as f64) * eps;
                let mut utb: Mat<T> = u.transpose() * &bm;
                for (j, &sj) in sv.iter().enumerate() {
                    let inv = if sj > tol { 1.0 / sj } else { 0.0 };
                    for c in 0..k {
                        utb[(j, c)] *= T::of(inv);
                    }
                }
                v * &utb
            };
            store(sol.as_ref(), &mut out);
        }
        Tensor::from_vec(with_matrix(batch, n, k), out)
    })
}

/// `Qr`: `(q, r)` of each matrix, `q` `m x m` and `r` `m x n` with
/// `full_matrices`, else `m x k` and `k x n` (`k = min(m, n)`).
pub fn qr(x: &Tensor, full: bool) -> Result<(Tensor, Tensor)> {
    let (batch, m, n) = matrix_dims(x, "Qr")?;
    with_float!(x.dtype(), "Qr", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let kk = m.min(n);
        let (qc, rr) = if full { (m, m) } else { (kk, kk) };
        let (mut qo, mut ro) = (Vec::with_capacity(count * m * qc), Vec::with_capacity(count * rr * n));
        for i in 0..count {
            let am = load::<T>(a, i, m, n);
            let f = am.qr();
            if full {
                store(f.compute_Q().as_ref(), &mut qo);
                // faer's R has min(m, n) rows; the full R has m (zeros below).
                store(f.thin_R(), &mut ro);
                ro.extend(std::iter::repeat_n(T::of(0.0), (m - kk) * n));
            } else {
                store(f.compute_thin_Q().as_ref(), &mut qo);
                store(f.thin_R(), &mut ro);
            }
        }
        Ok((
            Tensor::from_vec(with_matrix(batch, m, qc), qo)?,
            Tensor::from_vec(with_matrix(batch, rr, n), ro)?,
        ))
    })
}

/// `Svd`: `(s, u, v)` with `a = u diag(s) v^T`, singular values descending.
/// Without `compute_uv`, `u` and `v` are empty (shape `[0]`), as in
/// TensorFlow.
pub fn svd(x: &Tensor, compute_uv: bool, full: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let (batch, m, n) = matrix_dims(x, "Svd")?;
    with_float!(x.dtype(), "Svd", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let kk = m.min(n);
        let (uc, vc) = if full { (m, n) } else { (kk, kk) };
        let mut so = Vec::with_capacity(count * kk);
        let (mut uo, mut vo) = (Vec::new(), Vec::new());
        let fail = |_| Error::invalid_argument("Svd: the SVD computation did not converge");
        for i in 0..count {
            let am = load::<T>(a, i, m, n);
            if !compute_uv {
                let s = am.singular_values().map_err(fail)?;
                so.extend(s);
                continue;
            }
            let f = if full { am.svd() } else { am.thin_svd() }.map_err(fail)?;
            let s = f.S();
            so.extend((0..kk).map(|j| s[j]));
            store(f.U(), &mut uo);
            store(f.V(), &mut vo);
        }
        let mut ss = Shape::new(batch);
        ss.push(kk);
        let s = Tensor::from_vec(ss, so)?;
        if !compute_uv {
            let e = Tensor::from_vec(Shape::new(&[0]), Vec::<T>::new())?;
            return Ok((s, e.clone(), e));
        }
        Ok((
            s,
            Tensor::from_vec(with_matrix(batch, m, uc), uo)?,
            Tensor::from_vec(with_matrix(batch, n, vc), vo)?,
        ))
    })
}

/// `SelfAdjointEigV2`: eigenvalues ascending and (with `compute_v`) the
/// eigenvectors as columns; only the lower triangle is read. Without
/// `compute_v` the vectors are empty (shape `[0]`).
pub fn self_adjoint_eig(x: &Tensor, compute_v: bool) -> Result<(Tensor, Tensor)> {
    let (batch, n) = square_dims(x, "SelfAdjointEigV2")?;
    with_float!(x.dtype(), "SelfAdjointEigV2", T => {
        let a = x.as_slice::<T>()?;
        let count: usize = batch.iter().product();
        let (mut eo, mut vo) = (Vec::with_capacity(count * n), Vec::new());
        let fail = |_| Error::invalid_argument("SelfAdjointEigV2: the eigendecomposition did not converge");
        for i in 0..count {
            let s = &a[i * n * n..(i + 1) * n * n];
            let m = Mat::from_fn(n, n, |r, c| if r >= c { s[r * n + c] } else { s[c * n + r] });
            if compute_v {
                let f = m.self_adjoint_eigen(Side::Lower).map_err(fail)?;
                let e = f.S();
                eo.extend((0..n).map(|j| e[j]));
                store(f.U(), &mut vo);
            } else {
                eo.extend(m.self_adjoint_eigenvalues(Side::Lower).map_err(fail)?);
            }
        }
        let mut es = Shape::new(batch);
        es.push(n);
        let e = Tensor::from_vec(es, eo)?;
        if !compute_v {
            return Ok((e, Tensor::from_vec(Shape::new(&[0]), Vec::<T>::new())?));
        }
        Ok((e, Tensor::from_vec(x.shape().clone(), vo)?))
    })
}

/// `MatrixSquareRoot`: the principal square root of each matrix, by the
/// scaled product form of the Denman-Beavers iteration in f64 (TensorFlow
/// uses a real Schur method; both give the principal root of a matrix with
/// no eigenvalues on the closed negative real axis). A matrix whose
/// iteration breaks down gives NaNs, as TensorFlow's does for matrices
/// without a real square root.
pub fn matrix_square_root(x: &Tensor) -> Result<Tensor> {
    let (batch, n) = square_dims(x, "MatrixSquareRoot")?;
    let count: usize = batch.iter().product();
    let a = x.to_f64_vec()?;
    let mut out: Vec<f64> = Vec::with_capacity(a.len());
    for i in 0..count {
        let m = load::<f64>(&a, i, n, n);
        store(sqrtm_db(m).as_ref(), &mut out);
    }
    let t = Tensor::from_vec(x.shape().clone(), out)?;
    match x.dtype() {
        DType::Float64 => Ok(t),
        DType::Float32 => super::elementwise::cast(&t, DType::Float32),
        other => Err(Error::invalid_argument(format!(
            "MatrixSquareRoot: only float32 and float64 are supported, got {other}"
        ))),
    }
}

fn sqrtm_db(a: Mat<f64>) -> Mat<f64> {
    let n = a.nrows();
    let nan = || Mat::from_fn(n, n, |_, _| f64::NAN);
    if n == 0 {
        return a;
    }
    // Product form: M_0 = A, Y_0 = A; with scaling mu = |det M|^(-1/(2n)).
    let mut y = a.clone();
    let mut m = a;
    let id: Mat<f64> = Mat::identity(n, n);
    for it in 0..100 {
        let lu = m.partial_piv_lu();
        let mut det_log = 0.0;
        let mut bad = false;
        for k in 0..n {
            let v = lu.U()[(k, k)];
            if v == 0.0 || !v.is_finite() {
                bad = true;
            }
            det_log += v.abs().ln();
        }
        if bad {
            return nan();
        }
        let minv = lu.inverse();
        let mu = if it < 20 {
            (-det_log / (2.0 * n as f64)).exp()
        } else {
            1.0
        };
        // Y <- mu Y (I + M^-1 / mu^2) / 2 ; M <- (I + (mu^2 M + M^-1 / mu^2) / 2) / 2
        let t: Mat<f64> = Mat::from_fn(n, n, |r, c| 0.5 * (mu * id[(r, c)] + minv[(r, c)] / mu));
        let ynew: Mat<f64> = &y * &t;
        let mnew: Mat<f64> = Mat::from_fn(n, n, |r, c| {
            0.5 * id[(r, c)] + 0.25 * (mu * mu * m[(r, c)] + minv[(r, c)] / (mu * mu))
        });
        let mut diff = 0.0f64;
        let mut norm = 0.0f64;
        for r in 0..n {
            for c in 0..n {
                diff = diff.max((mnew[(r, c)] - id[(r, c)]).abs());
                norm = norm.max(ynew[(r, c)].abs());
            }
        }
        y = ynew;
        m = mnew;
        if !diff.is_finite() {
            return nan();
        }
        if diff <= 1e-15 * n as f64 && it >= 1 {
            break;
        }
        let _ = norm;
    }
    y
}

/// Copies the `rows x cols` block of `src` (row-major, `cols_src` wide)
/// into a mutable faer view; used by tests.
#[cfg(test)]
fn fill(dst: faer::MatMut<'_, f64>, src: &[f64], cols_src: usize) {
    let mut dst = dst;
    for r in 0..dst.nrows() {
        for c in 0..dst.ncols() {
            dst[(r, c)] = src[r * cols_src + c];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::from_vec(Shape::new(shape), v).unwrap()
    }

    fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        c
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn cholesky_reconstructs_and_reads_the_lower_triangle() {
        // Upper triangle garbage must be ignored.
        let x = t(&[2, 2], vec![4.0, 99.0, 2.0, 5.0]);
        let l = cholesky(&x).unwrap().into_vec::<f64>().unwrap();
        close(&l, &[2.0, 0.0, 1.0, 2.0], 1e-12);
        // Not positive definite: TF 2.21 does not raise; the factor's lower
        // triangle is NaN and its upper triangle zero.
        let bad = t(&[2, 2], vec![1.0, 0.0, 0.0, -1.0]);
        let f = cholesky(&bad).unwrap().into_vec::<f64>().unwrap();
        assert!(f[0].is_nan() && f[2].is_nan() && f[3].is_nan(), "{f:?}");
        assert_eq!(f[1], 0.0);
    }

    #[test]
    fn determinant_sign_and_inverse() {
        let x = t(&[2, 2, 2], vec![0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 1.0, 3.0]);
        let d = determinant(&x).unwrap().into_vec::<f64>().unwrap();
        close(&d, &[-1.0, 5.0], 1e-12);
        let (s, l) = log_determinant(&x).unwrap();
        close(&s.into_vec::<f64>().unwrap(), &[-1.0, 1.0], 0.0);
        close(&l.into_vec::<f64>().unwrap(), &[0.0, 5f64.ln()], 1e-12);
        let inv = inverse(&x, false).unwrap().into_vec::<f64>().unwrap();
        close(&inv[4..], &[0.6, -0.2, -0.2, 0.4], 1e-12);
        let sing = t(&[2, 2], vec![1.0, 2.0, 2.0, 4.0]);
        assert_eq!(
            inverse(&sing, false).unwrap_err().message(),
            "Input is not invertible."
        );
        let (s, _) = log_determinant(&sing).unwrap();
        assert_eq!(s.into_vec::<f64>().unwrap(), vec![0.0]);
    }

    #[test]
    fn solves_match_products() {
        let a = vec![3.0, 1.0, 0.5, 1.0, 4.0, 1.0, 0.2, 0.3, 5.0];
        let b = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let x = solve(&t(&[3, 3], a.clone()), &t(&[3, 2], b.clone()), false).unwrap();
        close(
            &matmul(&a, &x.into_vec::<f64>().unwrap(), 3, 3, 2),
            &b,
            1e-12,
        );
        // Lower triangular solve ignores the upper triangle.
        let lo = vec![2.0, 0.0, 0.0, 1.0, 3.0, 0.0, 4.0, 5.0, 6.0];
        let x =
            triangular_solve(&t(&[3, 3], a.clone()), &t(&[3, 2], b.clone()), true, false).unwrap();
        let mut l = a.clone();
        for r in 0..3 {
            for c in r + 1..3 {
                l[r * 3 + c] = 0.0;
            }
        }
        close(
            &matmul(&l, &x.into_vec::<f64>().unwrap(), 3, 3, 2),
            &b,
            1e-12,
        );
        let _ = lo;
    }

    #[test]
    fn svd_qr_eig_reconstruct() {
        let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.5, 7.0, 8.0, 10.0, 1.0, 0.0, 2.0];
        let x = t(&[4, 3], a.clone());
        let (s, u, v) = svd(&x, true, false).unwrap();
        let (s, u, v) = (
            s.into_vec::<f64>().unwrap(),
            u.into_vec::<f64>().unwrap(),
            v.into_vec::<f64>().unwrap(),
        );
        assert!(s[0] >= s[1] && s[1] >= s[2]);
        let us: Vec<f64> = (0..12).map(|i| u[i] * s[i % 3]).collect();
        let mut vt = vec![0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                vt[r * 3 + c] = v[c * 3 + r];
            }
        }
        close(&matmul(&us, &vt, 4, 3, 3), &a, 1e-10);
        let (q, r) = qr(&x, false).unwrap();
        close(
            &matmul(
                &q.into_vec::<f64>().unwrap(),
                &r.into_vec::<f64>().unwrap(),
                4,
                3,
                3,
            ),
            &a,
            1e-10,
        );
        let sym = t(&[2, 2], vec![2.0, 0.0, 1.0, 2.0]);
        let (e, _) = self_adjoint_eig(&sym, true).unwrap();
        close(&e.into_vec::<f64>().unwrap(), &[1.0, 3.0], 1e-12);
        let mut m = Mat::<f64>::zeros(2, 2);
        fill(m.as_mut(), &[1.0, 2.0, 3.0, 4.0], 2);
        assert_eq!(m[(1, 0)], 3.0);
    }

    #[test]
    fn square_root_squares_back() {
        let a = vec![4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0];
        let r = matrix_square_root(&t(&[3, 3], a.clone()))
            .unwrap()
            .into_vec::<f64>()
            .unwrap();
        close(&matmul(&r, &r, 3, 3, 3), &a, 1e-10);
    }
}
