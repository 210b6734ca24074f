//! The linear-algebra ops of `tf.linalg`, with TensorFlow's names, inputs,
//! outputs and attrs: factorizations (`Cholesky`, `Qr`, `Svd`,
//! `SelfAdjointEigV2`, `Lu`), solves and inverses, determinants,
//! `MatrixSquareRoot`, the band/diagonal ops (V1, V2 and V3), `Diag`,
//! `DiagPart`, `Cross` and `Einsum`.

use super::{single, InferContext, OpDef};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::einsum;
use ferroflow_tensor::{DType, Result};

type Dims = Vec<Option<usize>>;

const LINALG_FLOATS: &[DType] = &[DType::Float32, DType::Float64];
const EINSUM_TYPES: &[DType] = &[
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
    DType::Int32,
    DType::Int64,
];
const CROSS_TYPES: &[DType] = &[DType::Float32, DType::Float64, DType::Int32, DType::Int64];

/// Input `i`'s dims when it is a batch of matrices (rank >= 2); None when
/// the rank is unknown.
fn matrix(ctx: &InferContext, i: usize) -> Result<Option<Dims>> {
    match ctx.shape(i).dims() {
        None => Ok(None),
        Some(d) if d.len() < 2 => Err(ctx.shape_error(format!(
            "Shape must be at least rank 2 but is rank {}",
            d.len()
        ))),
        Some(d) => Ok(Some(d.to_vec())),
    }
}

fn check_equal(ctx: &InferContext, a: Option<usize>, b: Option<usize>) -> Result<()> {
    if let (Some(x), Some(y)) = (a, b) {
        if x != y {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {x} and {y}")));
        }
    }
    Ok(())
}

/// A batch of square matrices: its dims with the two sizes merged.
fn square(ctx: &InferContext, i: usize) -> Result<Option<Dims>> {
    let Some(mut d) = matrix(ctx, i)? else {
        return Ok(None);
    };
    let r = d.len();
    check_equal(ctx, d[r - 2], d[r - 1])?;
    let n = d[r - 2].or(d[r - 1]);
    d[r - 2] = n;
    d[r - 1] = n;
    Ok(Some(d))
}

fn shape_of(d: Option<Dims>) -> PartialShape {
    d.map_or_else(PartialShape::unknown, PartialShape::from_dims)
}

/// Square in, same shape out (Cholesky, MatrixInverse, MatrixSquareRoot).
fn square_same(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    single(dt, shape_of(square(ctx, 0)?))
}

fn batch_of(d: &Option<Dims>) -> PartialShape {
    match d {
        Some(d) => PartialShape::from_dims(d[..d.len() - 2].to_vec()),
        None => PartialShape::unknown(),
    }
}

fn determinant(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    single(dt, batch_of(&square(ctx, 0)?))
}

fn log_determinant(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    let b = batch_of(&square(ctx, 0)?);
    Ok(vec![OutputInfo::new(dt, b.clone()), OutputInfo::new(dt, b)])
}

fn lu(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    let idx = ctx.type_or("output_idx_type", DType::Int32)?;
    let d = square(ctx, 0)?;
    let p = match &d {
        Some(d) => PartialShape::from_dims(d[..d.len() - 1].to_vec()),
        None => PartialShape::unknown(),
    };
    Ok(vec![
        OutputInfo::new(dt, shape_of(d)),
        OutputInfo::new(idx, p),
    ])
}

/// MatrixSolve: rhs's shape, with the rows and batch merged with matrix's.
fn solve(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    ctx.expect_same(0, 1)?;
    let a = square(ctx, 0)?;
    let b = matrix(ctx, 1)?;
    let (Some(a), Some(mut b)) = (a, b) else {
        return single(dt, shape_of(matrix(ctx, 1)?));
    };
    if a.len() != b.len() {
        return Err(ctx.shape_error(format!(
            "Shape must be rank {} but is rank {}",
            a.len(),
            b.len()
        )));
    }
    let r = b.len();
    for i in 0..r - 1 {
        check_equal(ctx, a[i], b[i])?;
        b[i] = b[i].or(a[i]);
    }
    single(dt, PartialShape::from_dims(b))
}

fn triangular_solve(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    ctx.expect_same(0, 1)?;
    let (Some(a), Some(b)) = (square(ctx, 0)?, matrix(ctx, 1)?) else {
        return single(dt, PartialShape::unknown());
    };
    let (ra, rb) = (a.len(), b.len());
    check_equal(ctx, a[ra - 1], b[rb - 2])?;
    let batch = PartialShape::from_dims(a[..ra - 2].to_vec())
        .broadcast(&PartialShape::from_dims(b[..rb - 2].to_vec()))
        .ok_or_else(|| ctx.shape_error("Incompatible batch shapes"))?;
    let mut d = batch.dims().map(<[_]>::to_vec).unwrap_or_default();
    d.push(b[rb - 2].or(a[ra - 1]));
    d.push(b[rb - 1]);
    single(dt, PartialShape::from_dims(d))
}

fn solve_ls(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(2, 0)?;
    let (Some(a), Some(b)) = (matrix(ctx, 0)?, matrix(ctx, 1)?) else {
        return single(dt, PartialShape::unknown());
    };
    if a.len() != b.len() {
        return Err(ctx.shape_error(format!(
            "Shape must be rank {} but is rank {}",
            a.len(),
            b.len()
        )));
    }
    let r = a.len();
    check_equal(ctx, a[r - 2], b[r - 2])?;
    let mut d: Dims = a[..r - 2]
        .iter()
        .zip(&b[..r - 2])
        .map(|(x, y)| x.or(*y))
        .collect();
    d.push(a[r - 1]);
    d.push(b[r - 1]);
    single(dt, PartialShape::from_dims(d))
}

fn with_tail(batch: &[Option<usize>], tail: &[Option<usize>]) -> PartialShape {
    let mut d = batch.to_vec();
    d.extend_from_slice(tail);
    PartialShape::from_dims(d)
}

fn qr(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    let full = ctx.bool_or("full_matrices", false)?;
    let Some(d) = matrix(ctx, 0)? else {
        let u = PartialShape::unknown();
        return Ok(vec![OutputInfo::new(dt, u.clone()), OutputInfo::new(dt, u)]);
    };
    let r = d.len();
    let (m, n) = (d[r - 2], d[r - 1]);
    let k = match (m, n) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => None,
    };
    let b = &d[..r - 2];
    let (q, rr) = if full {
        (with_tail(b, &[m, m]), with_tail(b, &[m, n]))
    } else {
        (with_tail(b, &[m, k]), with_tail(b, &[k, n]))
    };
    Ok(vec![OutputInfo::new(dt, q), OutputInfo::new(dt, rr)])
}

fn svd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    let full = ctx.bool_or("full_matrices", false)?;
    let uv = ctx.bool_or("compute_uv", true)?;
    let Some(d) = matrix(ctx, 0)? else {
        let u = PartialShape::unknown();
        return Ok(vec![
            OutputInfo::new(dt, u.clone()),
            OutputInfo::new(dt, u.clone()),
            OutputInfo::new(dt, u),
        ]);
    };
    let r = d.len();
    let (m, n) = (d[r - 2], d[r - 1]);
    let k = match (m, n) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => None,
    };
    let b = &d[..r - 2];
    let s = with_tail(b, &[k]);
    let empty = PartialShape::from_dims(vec![Some(0)]);
    let (u, v) = if !uv {
        (empty.clone(), empty)
    } else if full {
        (with_tail(b, &[m, m]), with_tail(b, &[n, n]))
    } else {
        (with_tail(b, &[m, k]), with_tail(b, &[n, k]))
    };
    Ok(vec![
        OutputInfo::new(dt, s),
        OutputInfo::new(dt, u),
        OutputInfo::new(dt, v),
    ])
}

fn eig(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, LINALG_FLOATS)?;
    let cv = ctx.bool_or("compute_v", true)?;
    let d = square(ctx, 0)?;
    let e = match &d {
        Some(d) => PartialShape::from_dims(d[..d.len() - 1].to_vec()),
        None => PartialShape::unknown(),
    };
    let v = if cv {
        shape_of(d)
    } else {
        PartialShape::from_dims(vec![Some(0)])
    };
    Ok(vec![OutputInfo::new(dt, e), OutputInfo::new(dt, v)])
}

fn band_part(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    ctx.expect_rank(1, 0)?;
    ctx.expect_rank(2, 0)?;
    // TF's shape function keeps the input's shape: a rank below 2 is the kernel's error.
    single(dt, ctx.shape(0).clone())
}

/// The `k` input of the V2/V3 diagonal ops as `(k0, k1)`, when constant.
fn diag_k(ctx: &InferContext, i: usize) -> Option<(i64, i64)> {
    let k = ctx.const_ints(i)?;
    match k.as_slice() {
        [a] => Some((*a, *a)),
        [a, b] => Some((*a, *b)),
        _ => None,
    }
}

fn scalar_int(ctx: &InferContext, i: usize) -> Option<i64> {
    ctx.const_ints(i).and_then(|v| v.first().copied())
}

fn matrix_diag(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    let v1 = ctx.num_inputs() == 1;
    let (k0, k1) = if v1 {
        (0, 0)
    } else {
        match diag_k(ctx, 1) {
            Some(k) => k,
            None => return single(dt, PartialShape::unknown()),
        }
    };
    let Some(d) = ctx.shape(0).dims() else {
        return single(dt, PartialShape::unknown());
    };
    let single_diag = k0 == k1;
    let need = if single_diag { 1 } else { 2 };
    if d.len() < need {
        return Err(ctx.shape_error(format!(
            "Shape must be at least rank {need} but is rank {}",
            d.len()
        )));
    }
    let batch = &d[..d.len() - need];
    let (rows, cols) = if v1 {
        (-1, -1)
    } else {
        match (scalar_int(ctx, 2), scalar_int(ctx, 3)) {
            (Some(r), Some(c)) => (r, c),
            _ => return single(dt, with_tail(batch, &[None, None])),
        }
    };
    let Some(len) = d[d.len() - 1] else {
        return single(dt, with_tail(batch, &[None, None]));
    };
    let len = len as i64;
    let min_rows = len - k1.min(0);
    let min_cols = len + k0.max(0);
    let (m, n) = match (rows, cols) {
        (-1, -1) => (min_rows.max(min_cols), min_rows.max(min_cols)),
        (-1, c) => (min_rows, c),
        (r, -1) => (r, min_cols),
        (r, c) => (r, c),
    };
    let to = |v: i64| usize::try_from(v).ok();
    single(dt, with_tail(batch, &[to(m), to(n)]))
}

fn matrix_diag_part(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    let v1 = ctx.num_inputs() == 1;
    let Some(d) = matrix(ctx, 0)? else {
        return single(dt, PartialShape::unknown());
    };
    let (k0, k1) = if v1 {
        (0, 0)
    } else {
        match diag_k(ctx, 1) {
            Some(k) => k,
            None => return single(dt, PartialShape::unknown()),
        }
    };
    let r = d.len();
    let batch = &d[..r - 2];
    let len = match (d[r - 2], d[r - 1]) {
        (Some(m), Some(n)) => {
            let (m, n) = (m as i64, n as i64);
            usize::try_from((m + k1.min(0)).min(n - k0.max(0)).max(0)).ok()
        }
        _ => None,
    };
    if k0 == k1 {
        single(dt, with_tail(batch, &[len]))
    } else {
        single(dt, with_tail(batch, &[Some((k1 - k0 + 1) as usize), len]))
    }
}

fn matrix_set_diag(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    ctx.expect_same(0, 1)?;
    single(dt, shape_of(matrix(ctx, 0)?))
}

fn diag(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    let Some(d) = ctx.shape(0).dims() else {
        return single(dt, PartialShape::unknown());
    };
    if d.is_empty() {
        return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
    }
    let mut out = d.to_vec();
    out.extend_from_slice(d);
    single(dt, PartialShape::from_dims(out))
}

fn diag_part(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.dtype(0);
    let Some(d) = ctx.shape(0).dims() else {
        return single(dt, PartialShape::unknown());
    };
    if d.is_empty() || d.len() % 2 != 0 {
        return Err(ctx.shape_error(format!(
            "Input must have even and non-zero rank, input rank is {}",
            d.len()
        )));
    }
    let k = d.len() / 2;
    let mut out = Vec::with_capacity(k);
    for i in 0..k {
        check_equal(ctx, d[i], d[i + k])?;
        out.push(d[i].or(d[i + k]));
    }
    single(dt, PartialShape::from_dims(out))
}

fn cross(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dt = ctx.expect_dtype(0, CROSS_TYPES)?;
    ctx.expect_same(0, 1)?;
    let s = ctx
        .shape(0)
        .merge(ctx.shape(1))
        .ok_or_else(|| ctx.shape_error("Dimensions must be equal"))?;
    if let Some(d) = s.dims() {
        match d.last() {
            None => return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0")),
            Some(Some(n)) if *n != 3 => {
                return Err(ctx.shape_error(format!("Dimension must be 3 but is {n}")))
            }
            _ => {}
        }
    }
    single(dt, s)
}

fn einsum_shape(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs();
    if n == 0 {
        return Err(ctx.shape_error("Einsum needs at least one input"));
    }
    let dt = ctx.expect_dtype(0, EINSUM_TYPES)?;
    for i in 1..n {
        ctx.expect_same(0, i)?;
    }
    let equation = ctx.attrs().str_or("equation", "")?;
    let shapes: Vec<&[Option<usize>]> = match (0..n).map(|i| ctx.shape(i).dims()).collect() {
        Some(s) => s,
        None => return single(dt, PartialShape::unknown()),
    };
    let ranks: Vec<usize> = shapes.iter().map(|s| s.len()).collect();
    let eq = einsum::parse(&equation, &ranks).map_err(|e| ctx.shape_error(e.message()))?;
    // Each label's size: a known size other than a broadcast 1 wins.
    let mut conflict: Option<(Option<usize>, usize)> = None;
    let mut size = |l: u32| -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut unknown = false;
        for (labels, dims) in eq.inputs.iter().zip(&shapes) {
            for (m, d) in labels.iter().zip(dims.iter()) {
                if *m == l {
                    match d {
                        Some(v) if best.is_none_or(|b| b == 1) => best = Some(*v),
                        Some(v) if *v != 1 && best != Some(*v) => conflict = Some((best, *v)),
                        Some(_) => {}
                        None => unknown = true,
                    }
                }
            }
        }
        match best {
            Some(1) if unknown => None,
            b => b,
        }
    };
    let out: Vec<Option<usize>> = eq.output.iter().map(|&l| size(l)).collect();
    // Every label, also the contracted ones, must have one size (or broadcast 1).
    for labels in &eq.inputs {
        for &l in labels.iter() {
            size(l);
        }
    }
    if let Some((Some(a), b)) = conflict {
        return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
    }
    single(dt, PartialShape::from_dims(out))
}

/// Every op of this module.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Cholesky", &["input"], square_same),
        OpDef::new("MatrixInverse", &["input"], square_same),
        OpDef::new("MatrixSquareRoot", &["input"], square_same),
        OpDef::new("MatrixDeterminant", &["input"], determinant),
        OpDef::new("LogMatrixDeterminant", &["input"], log_determinant),
        OpDef::new("Lu", &["input"], lu),
        OpDef::new("MatrixSolve", &["matrix", "rhs"], solve),
        OpDef::new(
            "MatrixTriangularSolve",
            &["matrix", "rhs"],
            triangular_solve,
        ),
        OpDef::new(
            "MatrixSolveLs",
            &["matrix", "rhs", "l2_regularizer"],
            solve_ls,
        ),
        OpDef::new("Qr", &["input"], qr),
        OpDef::new("Svd", &["input"], svd),
        OpDef::new("SelfAdjointEigV2", &["input"], eig),
        OpDef::new(
            "MatrixBandPart",
            &["input", "num_lower", "num_upper"],
            band_part,
        ),
        OpDef::new("MatrixDiag", &["diagonal"], matrix_diag),
        OpDef::new(
            "MatrixDiagV2",
            &["diagonal", "k", "num_rows", "num_cols", "padding_value"],
            matrix_diag,
        ),
        OpDef::new(
            "MatrixDiagV3",
            &["diagonal", "k", "num_rows", "num_cols", "padding_value"],
            matrix_diag,
        ),
        OpDef::new("MatrixDiagPart", &["input"], matrix_diag_part),
        OpDef::new(
            "MatrixDiagPartV2",
            &["input", "k", "padding_value"],
            matrix_diag_part,
        ),
        OpDef::new(
            "MatrixDiagPartV3",
            &["input", "k", "padding_value"],
            matrix_diag_part,
        ),
        OpDef::new("MatrixSetDiag", &["input", "diagonal"], matrix_set_diag),
        OpDef::new(
            "MatrixSetDiagV2",
            &["input", "diagonal", "k"],
            matrix_set_diag,
        ),
        OpDef::new(
            "MatrixSetDiagV3",
            &["input", "diagonal", "k"],
            matrix_set_diag,
        ),
        OpDef::new("Diag", &["diagonal"], diag),
        OpDef::new("DiagPart", &["input"], diag_part),
        OpDef::new("Cross", &["a", "b"], cross),
        OpDef::new("Einsum", &["inputs*"], einsum_shape),
    ]
}
