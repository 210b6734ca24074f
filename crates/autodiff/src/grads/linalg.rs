//! Gradients of the `tf.linalg` ops, in TensorFlow's formulas
//! (`linalg_grad.py`, `array_grad.py`): inverse, determinants, Cholesky,
//! solves, QR, SVD and the symmetric eigendecomposition from the same
//! matrix ops; the band/diagonal ops are each other's adjoints; `Einsum`'s
//! gradients are Einsums with the output and the other operand swapped.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::kernels::einsum;
use ferroflow_tensor::{Error, Result, Tensor};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("called with an output gradient")
}

/// Output `i`'s gradient, zeros when none arrived.
fn grad_or_zeros(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], i: usize) -> Result<Output> {
    match g.get(i).copied().flatten() {
        Some(o) => Ok(o),
        None => b.zeros_like(Output::new(n.id, i)),
    }
}

fn rank_of(b: &Builder<'_>, x: Output, op: &str) -> Result<usize> {
    b.graph.output(x).shape.rank().ok_or_else(|| {
        Error::unimplemented(format!("The gradient of {op} needs inputs of known rank"))
    })
}

fn static_dims(b: &Builder<'_>, x: Output) -> Option<Vec<Option<usize>>> {
    b.graph.output(x).shape.dims().map(<[_]>::to_vec)
}

/// `x` with its last two dimensions swapped.
fn adj(b: &mut Builder<'_>, x: Output) -> Result<Output> {
    let r = rank_of(b, x, "a matrix op")?;
    let mut perm: Vec<i32> = (0..r as i32).collect();
    perm.swap(r - 2, r - 1);
    let p = b.const_i32(perm)?;
    b.transpose(x, p)
}

fn bmm(b: &mut Builder<'_>, x: Output, y: Output, ax: bool, ay: bool) -> Result<Output> {
    b.op(
        "BatchMatMulV2",
        &[x, y],
        vec![
            ("adj_x", AttrValue::Bool(ax)),
            ("adj_y", AttrValue::Bool(ay)),
        ],
    )
}

fn zero_scalar(b: &mut Builder<'_>, like: Output) -> Result<Output> {
    let dt = b.dtype(like);
    b.scalar(dt, 0.0)
}

fn k_const(b: &mut Builder<'_>, k: &[i64]) -> Result<Output> {
    let v: Vec<i32> = k.iter().map(|&x| x as i32).collect();
    if v.len() == 1 {
        b.scalar_i32(v[0])
    } else {
        b.const_i32(v)
    }
}

fn align_attr(align: &str) -> Vec<(&'static str, AttrValue)> {
    vec![("align", AttrValue::Str(align.as_bytes().to_vec()))]
}

fn matrix_diag(b: &mut Builder<'_>, diag: Output, k: Output, align: &str) -> Result<Output> {
    let m1 = b.scalar_i32(-1)?;
    let pad = zero_scalar(b, diag)?;
    b.op("MatrixDiagV3", &[diag, k, m1, m1, pad], align_attr(align))
}

fn diag_part(b: &mut Builder<'_>, x: Output, k: Output, align: &str) -> Result<Output> {
    let pad = zero_scalar(b, x)?;
    b.op("MatrixDiagPartV3", &[x, k, pad], align_attr(align))
}

fn set_diag(
    b: &mut Builder<'_>,
    x: Output,
    diag: Output,
    k: Output,
    align: &str,
) -> Result<Output> {
    b.op("MatrixSetDiagV3", &[x, diag, k], align_attr(align))
}

fn band(b: &mut Builder<'_>, x: Output, lo: i64, up: i64) -> Result<Output> {
    let l = b.constant(Tensor::scalar(lo))?;
    let u = b.constant(Tensor::scalar(up))?;
    b.op("MatrixBandPart", &[x, l, u], vec![])
}

fn tri_solve(
    b: &mut Builder<'_>,
    a: Output,
    rhs: Output,
    lower: bool,
    adjoint: bool,
) -> Result<Output> {
    b.op(
        "MatrixTriangularSolve",
        &[a, rhs],
        vec![
            ("lower", AttrValue::Bool(lower)),
            ("adjoint", AttrValue::Bool(adjoint)),
        ],
    )
}

fn inverse(b: &mut Builder<'_>, a: Output, adjoint: bool) -> Result<Output> {
    b.op(
        "MatrixInverse",
        &[a],
        vec![("adjoint", AttrValue::Bool(adjoint))],
    )
}

fn expand(b: &mut Builder<'_>, x: Output, axis: i32) -> Result<Output> {
    let a = b.scalar_i32(axis)?;
    b.op("ExpandDims", &[x, a], vec![])
}

fn einsum_op(b: &mut Builder<'_>, eq: &str, xs: &[Output]) -> Result<Output> {
    b.op(
        "Einsum",
        xs,
        vec![
            ("equation", AttrValue::Str(eq.as_bytes().to_vec())),
            ("N", AttrValue::Int(xs.len() as i64)),
        ],
    )
}

/// MatrixInverse: `-A^-H g A^-H` (with the adjoint attr honoured).
fn matrix_inverse(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let ainv = Output::new(n.id, 0);
    let adjoint = n.attrs.bool_or("adjoint", false)?;
    let inner = bmm(b, g0(g), ainv, adjoint, !adjoint)?;
    let r = bmm(b, ainv, inner, !adjoint, false)?;
    Ok(vec![d(b.neg(r)?)])
}

/// MatrixDeterminant: `g det(A) A^-T`.
fn matrix_determinant(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let a = n.inputs[0];
    let c = Output::new(n.id, 0);
    let ainv = inverse(b, a, true)?;
    let gc = b.mul(g0(g), c)?;
    let e1 = expand(b, gc, -1)?;
    let e2 = expand(b, e1, -1)?;
    Ok(vec![d(b.mul(e2, ainv)?)])
}

/// LogMatrixDeterminant: `g_logdet A^-T` (the sign has no gradient).
fn log_matrix_determinant(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let Some(gl) = g.get(1).copied().flatten() else {
        let z = b.zeros_like(n.inputs[0])?;
        return Ok(vec![d(z)]);
    };
    let ainv = inverse(b, n.inputs[0], true)?;
    let e1 = expand(b, gl, -1)?;
    let e2 = expand(b, e1, -1)?;
    Ok(vec![d(b.mul(e2, ainv)?)])
}

/// Cholesky, as TensorFlow's `_CholeskyGrad`.
fn cholesky(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let l = Output::new(n.id, 0);
    let grad = g0(g);
    // L^-1 as a triangular solve against the identity.
    let ones = b.ones_like(l)?;
    let k0 = k_const(b, &[0])?;
    let ones_diag = diag_part(b, ones, k0, "RIGHT_LEFT")?;
    let eye = matrix_diag(b, ones_diag, k0, "RIGHT_LEFT")?;
    let l_inv = tri_solve(b, l, eye, true, false)?;
    let middle = bmm(b, l, grad, true, false)?;
    let mdiag = diag_part(b, middle, k0, "RIGHT_LEFT")?;
    let half = b.scalar(b.dtype(l), 0.5)?;
    let hd = b.mul(half, mdiag)?;
    let middle = set_diag(b, middle, hd, k0, "RIGHT_LEFT")?;
    let middle = band(b, middle, -1, 0)?;
    let t = bmm(b, l_inv, middle, true, false)?;
    let grad_a = bmm(b, t, l_inv, false, false)?;
    let ga_t = adj(b, grad_a)?;
    let sum = b.add(grad_a, ga_t)?;
    Ok(vec![d(b.mul(sum, half)?)])
}

/// MatrixSolve(A, B) = C: `dB = solve(A, g, !adjoint)`, `dA = -dB C^T`
/// (or `-C dB^T` for the adjoint).
fn matrix_solve(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let a = n.inputs[0];
    let adjoint = n.attrs.bool_or("adjoint", false)?;
    let c = Output::new(n.id, 0);
    let gb = b.op(
        "MatrixSolve",
        &[a, g0(g)],
        vec![("adjoint", AttrValue::Bool(!adjoint))],
    )?;
    let ga = if adjoint {
        bmm(b, c, gb, false, true)?
    } else {
        bmm(b, gb, c, false, true)?
    };
    Ok(vec![d(b.neg(ga)?), d(gb)])
}

/// MatrixTriangularSolve: as MatrixSolve, with `dA` kept to A's triangle
/// and both reduced over broadcast batch dimensions.
fn matrix_triangular_solve(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (a, rhs) = (n.inputs[0], n.inputs[1]);
    let adjoint = n.attrs.bool_or("adjoint", false)?;
    let lower = n.attrs.bool_or("lower", true)?;
    let c = Output::new(n.id, 0);
    let gb = tri_solve(b, a, g0(g), lower, !adjoint)?;
    let ga = if adjoint {
        bmm(b, c, gb, false, true)?
    } else {
        bmm(b, gb, c, false, true)?
    };
    let ga = b.neg(ga)?;
    let ga = if lower {
        band(b, ga, -1, 0)?
    } else {
        band(b, ga, 0, -1)?
    };
    let (ga, gb) = unbroadcast_batch(b, ga, gb, a, rhs)?;
    Ok(vec![d(ga), d(gb)])
}

/// Reduces matrix gradients over batch dimensions their operands
/// broadcast (static shapes equal: nothing to do).
fn unbroadcast_batch(
    b: &mut Builder<'_>,
    ga: Output,
    gb: Output,
    a: Output,
    x: Output,
) -> Result<(Output, Output)> {
    let (sa, sb) = (static_dims(b, a), static_dims(b, x));
    if let (Some(da), Some(db)) = (&sa, &sb) {
        let (ba, bb) = (&da[..da.len() - 2], &db[..db.len() - 2]);
        if ba == bb && ba.iter().all(Option::is_some) {
            return Ok((ga, gb));
        }
    }
    let (ra, rb) = (
        rank_of(b, a, "MatrixTriangularSolve")?,
        rank_of(b, x, "MatrixTriangularSolve")?,
    );
    let shape_a = b.shape(a)?;
    let shape_b = b.shape(x)?;
    let batch_a = slice_vec(b, shape_a, 0, ra as i32 - 2)?;
    let batch_b = slice_vec(b, shape_b, 0, rb as i32 - 2)?;
    let args = b.node("BroadcastGradientArgs", &[batch_a, batch_b], vec![])?;
    let ra_sum = b.sum(ga, Output::new(args, 0), false)?;
    let rb_sum = b.sum(gb, Output::new(args, 1), false)?;
    Ok((b.reshape(ra_sum, shape_a)?, b.reshape(rb_sum, shape_b)?))
}

/// `v[begin:end]` of a 1-D tensor.
fn slice_vec(b: &mut Builder<'_>, v: Output, begin: i32, end: i32) -> Result<Output> {
    let bg = b.const_i32(vec![begin])?;
    let en = b.const_i32(vec![end])?;
    let st = b.const_i32(vec![1])?;
    b.op("StridedSlice", &[v, bg, en, st], vec![])
}

/// `x[..., :, begin:end]` (columns of a batch of matrices).
fn cols(b: &mut Builder<'_>, x: Output, begin: i64, end: i64) -> Result<Output> {
    let r = rank_of(b, x, "a matrix op")?;
    let mut bg = vec![0i32; r];
    let mut en = vec![0i32; r];
    bg[r - 1] = begin as i32;
    en[r - 1] = end as i32;
    let bgo = b.const_i32(bg)?;
    let eno = b.const_i32(en)?;
    let st = b.const_i32(vec![1; r])?;
    // Every dimension but the last is taken whole.
    let mask = (1i64 << (r - 1)) - 1;
    b.op(
        "StridedSlice",
        &[x, bgo, eno, st],
        vec![
            ("begin_mask", AttrValue::Int(mask)),
            ("end_mask", AttrValue::Int(mask)),
        ],
    )
}

/// SelfAdjointEigV2, as TensorFlow's `_SelfAdjointEigV2Grad`.
fn self_adjoint_eig(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let a = n.inputs[0];
    let compute_v = n.attrs.bool_or("compute_v", true)?;
    let ge = grad_or_zeros(b, n, g, 0)?;
    let k0 = k_const(b, &[0])?;
    let ge_mat = matrix_diag(b, ge, k0, "RIGHT_LEFT")?;
    let grad_a = if compute_v {
        let e = Output::new(n.id, 0);
        let v = Output::new(n.id, 1);
        let gv = grad_or_zeros(b, n, g, 1)?;
        let e2 = expand(b, e, -2)?;
        let e1 = expand(b, e, -1)?;
        let diff = b.sub(e2, e1)?;
        let recip = b.unary("Reciprocal", diff)?;
        let ze = b.zeros_like(e)?;
        let f = set_diag(b, recip, ze, k0, "RIGHT_LEFT")?;
        let vgv = bmm(b, v, gv, true, false)?;
        let fv = b.mul(f, vgv)?;
        let inner = b.add(ge_mat, fv)?;
        let t = bmm(b, inner, v, false, true)?;
        bmm(b, v, t, false, false)?
    } else {
        let id = b.node(
            "SelfAdjointEigV2",
            &[a],
            vec![("compute_v", AttrValue::Bool(true))],
        )?;
        let v = Output::new(id, 1);
        let t = bmm(b, ge_mat, v, false, true)?;
        bmm(b, v, t, false, false)?
    };
    let ga_t = adj(b, grad_a)?;
    let s = b.add(grad_a, ga_t)?;
    let low = band(b, s, -1, 0)?;
    let dp = diag_part(b, low, k0, "RIGHT_LEFT")?;
    let half = b.scalar(b.dtype(a), 0.5)?;
    let hd = b.mul(half, dp)?;
    Ok(vec![d(set_diag(b, low, hd, k0, "RIGHT_LEFT")?)])
}

/// `x * 1 / (x^2 + 1e-20)`: TensorFlow's `_SafeReciprocal`.
fn safe_reciprocal(b: &mut Builder<'_>, x: Output) -> Result<Output> {
    let sq = b.mul(x, x)?;
    let eps = b.scalar(b.dtype(x), 1e-20)?;
    let den = b.add(sq, eps)?;
    let r = b.unary("Reciprocal", den)?;
    b.mul(x, r)
}

/// Svd, as TensorFlow's `_SvdGrad` (real inputs).
fn svd(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let a = n.inputs[0];
    let gs = grad_or_zeros(b, n, g, 0)?;
    let k0 = k_const(b, &[0])?;
    let gs_mat = matrix_diag(b, gs, k0, "RIGHT_LEFT")?;
    if !n.attrs.bool_or("compute_uv", true)? {
        let id = b.node("Svd", &[a], vec![("compute_uv", AttrValue::Bool(true))])?;
        let (u, v) = (Output::new(id, 1), Output::new(id, 2));
        let t = bmm(b, gs_mat, v, false, true)?;
        return Ok(vec![d(bmm(b, u, t, false, false)?)]);
    }
    let full = n.attrs.bool_or("full_matrices", false)?;
    let dims = static_dims(b, a).unwrap_or_default();
    let (m, nn) =
        match dims.as_slice() {
            [.., Some(m), Some(n)] => (*m as i64, *n as i64),
            _ => return Err(Error::unimplemented(
                "SVD gradient has not been implemented for input with unknown inner matrix shape.",
            )),
        };
    let s = Output::new(n.id, 0);
    let mut u = Output::new(n.id, 1);
    let mut v = Output::new(n.id, 2);
    let mut gu = grad_or_zeros(b, n, g, 1)?;
    let mut gv = grad_or_zeros(b, n, g, 2)?;
    let (mut m, mut nn) = (m, nn);
    let use_adjoint = m > nn;
    if use_adjoint {
        std::mem::swap(&mut m, &mut nn);
        std::mem::swap(&mut u, &mut v);
        std::mem::swap(&mut gu, &mut gv);
    }
    if full && (m - nn).abs() > 1 {
        return Err(Error::unimplemented(
            "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True",
        ));
    }
    let s_mat = matrix_diag(b, s, k0, "RIGHT_LEFT")?;
    let s2 = b.mul(s, s)?;
    let e2 = expand(b, s2, -2)?;
    let e1 = expand(b, s2, -1)?;
    let diff = b.sub(e2, e1)?;
    let rdiff = safe_reciprocal(b, diff)?;
    let zs = b.zeros_like(s)?;
    let f = set_diag(b, rdiff, zs, k0, "RIGHT_LEFT")?;
    let s_inv = safe_reciprocal(b, s)?;
    let s_inv_mat = matrix_diag(b, s_inv, k0, "RIGHT_LEFT")?;
    let v1 = cols(b, v, 0, m)?;
    let gv1 = cols(b, gv, 0, m)?;
    let u_gu = bmm(b, u, gu, true, false)?;
    let v_gv = bmm(b, v1, gv1, true, false)?;
    let f_u = b.mul(f, u_gu)?;
    let f_v = b.mul(f, v_gv)?;
    let f_u_t = adj(b, f_u)?;
    let f_v_t = adj(b, f_v)?;
    let fu_sym = b.add(f_u, f_u_t)?;
    let fv_sym = b.add(f_v, f_v_t)?;
    let t1 = bmm(b, fu_sym, s_mat, false, false)?;
    let t2 = bmm(b, s_mat, fv_sym, false, false)?;
    let t12 = b.add(t1, t2)?;
    let term1_nouv = b.add(gs_mat, t12)?;
    let inner = bmm(b, term1_nouv, v1, false, true)?;
    let term1 = bmm(b, u, inner, false, false)?;
    let before = if m == nn {
        term1
    } else {
        let gv1t = adj(b, gv1)?;
        let gv1t_v1 = bmm(b, gv1t, v1, false, false)?;
        let p = bmm(b, gv1t_v1, v1, false, true)?;
        let mut term2_nous = b.sub(gv1t, p)?;
        if full {
            let v2 = cols(b, v, m, nn)?;
            let gv2 = cols(b, gv, m, nn)?;
            let v1t_gv2 = bmm(b, v1, gv2, true, false)?;
            let q = bmm(b, v1t_gv2, v2, false, true)?;
            term2_nous = b.sub(term2_nous, q)?;
        }
        let u_s_inv = bmm(b, u, s_inv_mat, false, false)?;
        let term2 = bmm(b, u_s_inv, term2_nous, false, false)?;
        b.add(term1, term2)?
    };
    let ga = if use_adjoint { adj(b, before)? } else { before };
    Ok(vec![d(ga)])
}

/// Qr, as TensorFlow's `_QrGrad`.
fn qr(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let q = Output::new(n.id, 0);
    let r = Output::new(n.id, 1);
    let dq = grad_or_zeros(b, n, g, 0)?;
    let dr = grad_or_zeros(b, n, g, 1)?;
    let (qd, rd) = (static_dims(b, q), static_dims(b, r));
    let (Some(qd), Some(rd)) = (qd, rd) else {
        return Err(Error::unimplemented(
            "QrGrad not implemented with dynamic shapes.",
        ));
    };
    let (Some(rows), Some(rcols), Some(qcols)) =
        (qd[qd.len() - 2], rd[rd.len() - 1], qd[qd.len() - 1])
    else {
        return Err(Error::unimplemented(
            "QrGrad not implemented with dynamic shapes.",
        ));
    };
    let rrows = rd[rd.len() - 2].unwrap_or(0);
    if rrows > rcols && rows == qcols {
        return Err(Error::unimplemented(
            "QrGrad not implemented when nrows > ncols and full_matrices is true.",
        ));
    }
    if rows >= rcols {
        return Ok(vec![d(qr_square_deep(b, q, r, dq, dr)?)]);
    }
    let a = n.inputs[0];
    let y = cols(b, a, rows as i64, rcols as i64)?;
    let u = cols(b, r, 0, rows as i64)?;
    let dv = cols(b, dr, rows as i64, rcols as i64)?;
    let du = cols(b, dr, 0, rows as i64)?;
    let dy = bmm(b, q, dv, false, false)?;
    let ydv = bmm(b, y, dv, false, true)?;
    let dq2 = b.add(dq, ydv)?;
    let dx = qr_square_deep(b, q, u, dq2, du)?;
    let axis = b.scalar_i32(-1)?;
    Ok(vec![d(b.concat(&[dx, dy], axis)?)])
}

/// `x R^-H` for upper-triangular `R`.
fn qr_tri(b: &mut Builder<'_>, x: Output, r: Output) -> Result<Output> {
    let xt = adj(b, x)?;
    let s = tri_solve(b, r, xt, false, false)?;
    adj(b, s)
}

fn qr_square_deep(
    b: &mut Builder<'_>,
    q: Output,
    r: Output,
    dq: Output,
    dr: Output,
) -> Result<Output> {
    let qdq = bmm(b, q, dq, true, false)?;
    let qdq_t = adj(b, qdq)?;
    let qdq_ = b.sub(qdq, qdq_t)?;
    let rdr = bmm(b, r, dr, false, true)?;
    let rdr_t = adj(b, rdr)?;
    let rdr_ = b.sub(rdr, rdr_t)?;
    let s = b.add(qdq_, rdr_)?;
    let tril = band(b, s, -1, 0)?;
    let ts = qr_tri(b, tril, r)?;
    let inner = b.add(dr, ts)?;
    let grad_a = bmm(b, q, inner, false, false)?;
    let qqdq = bmm(b, q, qdq, false, false)?;
    let diff = b.sub(dq, qqdq)?;
    let grad_b = qr_tri(b, diff, r)?;
    b.add(grad_a, grad_b)
}

/// MatrixBandPart: the same band of the gradient.
fn band_part(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let r = b.op("MatrixBandPart", &[g0(g), n.inputs[1], n.inputs[2]], vec![])?;
    Ok(vec![d(r), None, None])
}

/// The node's `k` input (V2/V3) or a constant 0 (V1), and its alignment.
fn k_and_align(b: &mut Builder<'_>, n: &Node, k_input: usize) -> Result<(Output, String)> {
    let (k, align) = if n.op.ends_with("V2") || n.op.ends_with("V3") {
        let align = if n.op.ends_with("V3") {
            n.attrs.str_or("align", "RIGHT_LEFT")?
        } else {
            "LEFT_LEFT".to_string()
        };
        (n.inputs[k_input], align)
    } else {
        (k_const(b, &[0])?, "RIGHT_LEFT".to_string())
    };
    Ok((k, align))
}

/// MatrixDiag*: the gradient's diagonals.
fn matrix_diag_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (k, align) = k_and_align(b, n, 1)?;
    let r = diag_part(b, g0(g), k, &align)?;
    let mut out = vec![d(r)];
    out.extend(std::iter::repeat_n(None, n.inputs.len() - 1));
    Ok(out)
}

/// MatrixDiagPart*: the gradient set into zeros shaped like the input.
fn matrix_diag_part_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (k, align) = k_and_align(b, n, 1)?;
    let z = b.zeros_like(n.inputs[0])?;
    let r = set_diag(b, z, g0(g), k, &align)?;
    let mut out = vec![d(r)];
    out.extend(std::iter::repeat_n(None, n.inputs.len() - 1));
    Ok(out)
}

/// MatrixSetDiag*: the input gets the gradient with those diagonals
/// zeroed; the diagonal gets the gradient's diagonals.
fn matrix_set_diag_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (k, align) = k_and_align(b, n, 2)?;
    let g = g0(g);
    let zd = b.zeros_like(n.inputs[1])?;
    let gi = set_diag(b, g, zd, k, &align)?;
    let gd = diag_part(b, g, k, &align)?;
    let mut out = vec![d(gi), d(gd)];
    out.extend(std::iter::repeat_n(None, n.inputs.len() - 2));
    Ok(out)
}

fn diag_grad(b: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(b.op("DiagPart", &[g0(g)], vec![])?)])
}

fn diag_part_grad(b: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(b.op("Diag", &[g0(g)], vec![])?)])
}

/// Cross(u, v): `du = v x g`, `dv = g x u`.
fn cross(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let du = b.op("Cross", &[n.inputs[1], g], vec![])?;
    let dv = b.op("Cross", &[g, n.inputs[0]], vec![])?;
    Ok(vec![d(du), d(dv)])
}

/// Letters of a parsed label list, with the broadcast labels as `...`
/// (they are contiguous).
fn subs(labels: &[u32]) -> String {
    let mut s = String::new();
    let mut ell = false;
    for &l in labels {
        if l >= 1 << 16 {
            if !ell {
                s.push_str("...");
                ell = true;
            }
        } else {
            s.push(char::from(l as u8));
        }
    }
    s
}

/// Einsum, as TensorFlow's `_EinsumGrad`: each operand's gradient is the
/// Einsum of the output gradient with the other operand; labels only that
/// operand held are broadcast back by an Einsum with ones shaped like it;
/// broadcast (ellipsis) dimensions are summed back to the operand's.
fn einsum_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let equation = n.attrs.str_or("equation", "")?;
    let ranks: Vec<usize> = n
        .inputs
        .iter()
        .map(|&x| rank_of(b, x, "Einsum"))
        .collect::<Result<_>>()?;
    let eq = einsum::parse(&equation, &ranks)?;
    let (ins, out) = (&eq.inputs, &eq.output);
    // Broadcast labels in the output need the full ellipsis there.
    let out_s = subs(out);
    if n.inputs.len() == 1 {
        let x = n.inputs[0];
        let x_s = subs(&ins[0]);
        let reduced = ins[0].iter().any(|l| !out.contains(l));
        let r = if reduced {
            let ones = b.ones_like(x)?;
            einsum_op(b, &format!("{out_s},{x_s}->{x_s}"), &[grad, ones])?
        } else {
            einsum_op(b, &format!("{out_s}->{x_s}"), &[grad])?
        };
        return Ok(vec![d(r)]);
    }
    let mut res = Vec::new();
    for i in 0..2 {
        let (x, y) = (n.inputs[i], n.inputs[1 - i]);
        let (xl, yl) = (&ins[i], &ins[1 - i]);
        let x_s = subs(xl);
        let y_s = subs(yl);
        let kept: Vec<u32> = xl
            .iter()
            .copied()
            .filter(|l| out.contains(l) || yl.contains(l) || *l >= 1 << 16)
            .collect();
        let left = subs(&kept);
        let mut gx = einsum_op(b, &format!("{out_s},{y_s}->{left}"), &[grad, y])?;
        if kept.len() != xl.len() {
            let ones = b.ones_like(x)?;
            gx = einsum_op(b, &format!("{left},{x_s}->{x_s}"), &[gx, ones])?;
        }
        // Broadcast dimensions: sum back to x's own.
        let x_ell: Vec<usize> = (0..xl.len()).filter(|&j| xl[j] >= 1 << 16).collect();
        let out_has_ell = out.iter().any(|&l| l >= 1 << 16);
        if out_has_ell && !x_ell.is_empty() {
            let same = match (static_dims(b, x), static_dims(b, y)) {
                (Some(dx), Some(dy)) => {
                    let ex: Vec<Option<usize>> = x_ell.iter().map(|&j| dx[j]).collect();
                    let ey: Vec<Option<usize>> = (0..yl.len())
                        .filter(|&j| yl[j] >= 1 << 16)
                        .map(|j| dy[j])
                        .collect();
                    ex == ey && ex.iter().all(Option::is_some)
                }
                _ => false,
            };
            if !same {
                gx = unbroadcast_ellipsis(b, gx, x, y, xl, yl)?;
            }
        }
        res.push(d(gx));
    }
    Ok(res)
}

/// Sums `gx` (laid out as `x`'s labels with the ellipsis at the output's
/// broadcast rank) over the dimensions `x` broadcast, then reshapes to x.
fn unbroadcast_ellipsis(
    b: &mut Builder<'_>,
    gx: Output,
    x: Output,
    y: Output,
    xl: &[u32],
    yl: &[u32],
) -> Result<Output> {
    let start = xl.iter().position(|&l| l >= 1 << 16).unwrap_or(
        // No ellipsis in x: x's labels never broadcast, but the result of
        // the first Einsum has none either.
        xl.len(),
    );
    let ex = xl.iter().filter(|&&l| l >= 1 << 16).count() as i32;
    let y_start = yl.iter().position(|&l| l >= 1 << 16).unwrap_or(0) as i32;
    let ey = yl.iter().filter(|&&l| l >= 1 << 16).count() as i32;
    let sx = b.shape(x)?;
    let sy = b.shape(y)?;
    let bx = slice_vec(b, sx, start as i32, start as i32 + ex)?;
    let by = slice_vec(b, sy, y_start, y_start + ey)?;
    let args = b.node("BroadcastGradientArgs", &[bx, by], vec![])?;
    let off = b.scalar_i32(start as i32)?;
    let idx = b.add(Output::new(args, 0), off)?;
    let s = b.sum(gx, idx, false)?;
    b.reshape(s, sx)
}

pub(crate) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("MatrixInverse", GradEntry::Func(matrix_inverse));
    reg("MatrixDeterminant", GradEntry::Func(matrix_determinant));
    reg(
        "LogMatrixDeterminant",
        GradEntry::Func(log_matrix_determinant),
    );
    reg("Cholesky", GradEntry::Func(cholesky));
    reg("MatrixSolve", GradEntry::Func(matrix_solve));
    reg(
        "MatrixTriangularSolve",
        GradEntry::Func(matrix_triangular_solve),
    );
    reg("SelfAdjointEigV2", GradEntry::Func(self_adjoint_eig));
    reg("Svd", GradEntry::Func(svd));
    reg("Qr", GradEntry::Func(qr));
    reg("MatrixBandPart", GradEntry::Func(band_part));
    for op in ["MatrixDiag", "MatrixDiagV2", "MatrixDiagV3"] {
        reg(op, GradEntry::Func(matrix_diag_grad));
    }
    for op in ["MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3"] {
        reg(op, GradEntry::Func(matrix_diag_part_grad));
    }
    for op in ["MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"] {
        reg(op, GradEntry::Func(matrix_set_diag_grad));
    }
    reg("Diag", GradEntry::Func(diag_grad));
    reg("DiagPart", GradEntry::Func(diag_part_grad));
    reg("Cross", GradEntry::Func(cross));
    reg("Einsum", GradEntry::Func(einsum_grad));
}
