//! Special functions and the elementwise ops and reductions around them
//! (`tf.math.erf`, `lgamma`, `igamma`, `betainc`, `xlogy`, `nextafter`,
//! `cumulative_logsumexp`, `bincount`, `reduce_euclidean_norm`, ...), with
//! TensorFlow's op types, inputs and attrs.

use super::math::reduced_shape;
use super::{single, InferContext, OpDef, FLOATS, INDEX, NUMERIC_WIDE};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

const F32_F64: &[DType] = &[DType::Float32, DType::Float64];
const BINCOUNT_TYPES: &[DType] = &[DType::Int32, DType::Int64, DType::Float32, DType::Float64];

fn unary_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    single(d, ctx.shape(0).clone())
}

fn broadcast_with(ctx: &InferContext, allowed: &[DType]) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, allowed)?;
    ctx.expect_same(0, 1)?;
    let shape = ctx.shape(0).broadcast(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Dimensions must be equal, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })?;
    single(d, shape)
}

fn binary_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    broadcast_with(ctx, FLOATS)
}

fn binary_f32_f64(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    broadcast_with(ctx, F32_F64)
}

/// TensorFlow's `TruncateDiv` CPU kernels include uint32 and uint64.
fn binary_numeric(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    broadcast_with(ctx, NUMERIC_WIDE)
}

/// `Betainc`: a, b and x share one shape, or are scalars.
fn betainc(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, F32_F64)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_same(0, 2)?;
    let mut out = PartialShape::unknown();
    for i in 0..3 {
        let s = ctx.shape(i);
        if s.rank() == Some(0) {
            continue;
        }
        out = out.merge(s).ok_or_else(|| {
            ctx.shape_error(format!(
                "Shapes of a, b and x are inconsistent: {} vs. {} vs. {}",
                ctx.shape(0),
                ctx.shape(1),
                ctx.shape(2)
            ))
        })?;
    }
    if (0..3).all(|i| ctx.shape(i).rank() == Some(0)) {
        out = PartialShape::from_dims(vec![]);
    }
    single(d, out)
}

fn cumulative_logsumexp(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_dtype(1, INDEX)?;
    // As TF's shape function, the axis's range is the kernel's check.
    single(d, ctx.shape(0).clone())
}

fn euclidean_norm(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    single(d, reduced_shape(ctx)?)
}

/// `Bincount(arr, size, weights)`: a vector of `size` elements.
fn bincount(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int32])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    let d = ctx.expect_dtype(2, BINCOUNT_TYPES)?;
    let size = ctx
        .const_value(1)
        .and_then(|t| t.scalar_i64().ok())
        .filter(|&s| s >= 0)
        .map(|s| s as usize);
    single(d, PartialShape::from_dims(vec![size]))
}

/// `DenseBincount(input, size, weights)`: `[size]` for a vector input,
/// `[rows, size]` for a matrix.
fn dense_bincount(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let idx = ctx.expect_dtype(0, INDEX)?;
    ctx.expect_dtype(1, &[idx])?;
    let d = ctx.expect_dtype(2, BINCOUNT_TYPES)?;
    let size = ctx
        .const_value(1)
        .and_then(|t| t.scalar_i64().ok())
        .filter(|&s| s >= 0)
        .map(|s| s as usize);
    let shape = match ctx.shape(0).dims() {
        Some([]) | Some([_]) => PartialShape::from_dims(vec![size]),
        Some([rows, _]) => PartialShape::from_dims(vec![*rows, size]),
        Some(other) => {
            return Err(ctx.shape_error(format!(
                "Shape must be at most rank 2 but is rank {}",
                other.len()
            )))
        }
        None => PartialShape::unknown(),
    };
    single(d, shape)
}

macro_rules! defs {
    ($f:ident, $inputs:expr, $($name:literal),*) => {
        [$(OpDef::new($name, $inputs, $f)),*]
    };
}

const UNARY: [OpDef; 19] = defs!(
    unary_float,
    &["x"],
    "Acos",
    "Asin",
    "Atan",
    "Acosh",
    "Asinh",
    "Atanh",
    "Sinh",
    "Cosh",
    "Erf",
    "Erfc",
    "Erfinv",
    "Ndtri",
    "Lgamma",
    "Digamma",
    "BesselI0",
    "BesselI0e",
    "BesselI1",
    "BesselI1e",
    "Rint"
);
const BINARY_FLOAT: [OpDef; 4] = defs!(
    binary_float,
    &["x", "y"],
    "Xlogy",
    "Xlog1py",
    "Xdivy",
    "MulNoNan"
);
const IGAMMA: [OpDef; 2] = defs!(binary_float, &["a", "x"], "Igamma", "Igammac");

const OTHERS: &[OpDef] = &[
    OpDef::new("IgammaGradA", &["a", "x"], binary_f32_f64),
    OpDef::new("Polygamma", &["a", "x"], binary_f32_f64),
    OpDef::new("Zeta", &["x", "q"], binary_f32_f64),
    OpDef::new("NextAfter", &["x1", "x2"], binary_f32_f64),
    OpDef::new("TruncateDiv", &["x", "y"], binary_numeric),
    OpDef::new("Betainc", &["a", "b", "x"], betainc),
    OpDef::new("CumulativeLogsumexp", &["x", "axis"], cumulative_logsumexp),
    OpDef::new(
        "EuclideanNorm",
        &["input", "reduction_indices"],
        euclidean_norm,
    ),
    OpDef::new("Bincount", &["arr", "size", "weights"], bincount),
    OpDef::new(
        "DenseBincount",
        &["input", "size", "weights"],
        dense_bincount,
    ),
];

/// Every op of this module.
pub fn ops() -> Vec<OpDef> {
    [&UNARY[..], &BINARY_FLOAT, &IGAMMA, OTHERS].concat()
}
