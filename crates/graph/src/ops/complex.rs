//! Complex-number ops (`Complex`, `Real`, `Imag`, `Conj`, `Angle`,
//! `ComplexAbs`) with TensorFlow's inputs and attrs (`T`, `Tout`), and the
//! list of real-number ops whose TensorFlow definitions also take
//! `complex64` / `complex128`.

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use ferroflow_tensor::{DType, Result};

/// The complex dtypes.
pub const COMPLEX: &[DType] = &[DType::Complex64, DType::Complex128];
const PARTS: &[DType] = &[DType::Float32, DType::Float64];

/// Ops that TensorFlow defines on complex numbers as well as on the real
/// types their shape functions list (TF's `T` attrs include complex64 and
/// complex128 for these).
const TAKES_COMPLEX: &[&str] = &[
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "Div",
    "RealDiv",
    "DivNoNan",
    "Pow",
    "SquaredDifference",
    "Neg",
    "Sign",
    "Square",
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Expm1",
    "Log",
    "Log1p",
    "Sin",
    "Cos",
    "Tan",
    "Tanh",
    "Sigmoid",
    "Reciprocal",
    "Inv",
    "Sum",
    "Mean",
    "Prod",
    "MatMul",
    "BatchMatMulV2",
    "AddN",
    "Cumsum",
    "Cumprod",
    // The gradient kernels of the complex activations above.
    "TanhGrad",
    "SigmoidGrad",
    "SqrtGrad",
    "RsqrtGrad",
    "ReciprocalGrad",
];

/// Input `i`'s dtype: one of `allowed`, or complex when the op is one that
/// TensorFlow also defines on complex numbers (TypeError otherwise, as
/// [`InferContext::expect_dtype`]).
pub fn expect_dtype_or_complex(ctx: &InferContext, i: usize, allowed: &[DType]) -> Result<DType> {
    let d = ctx.dtype(i);
    if d.is_complex() && TAKES_COMPLEX.contains(&ctx.def.name) {
        return Ok(d);
    }
    ctx.expect_dtype(i, allowed)
}

/// `Tout` when set, else the real type of input 0's complex dtype.
fn part_out(ctx: &InferContext, input: DType) -> Result<DType> {
    let d = ctx.type_or("Tout", input.real_dtype())?;
    if !PARTS.contains(&d) {
        return Err(ctx.shape_error(format!("Tout must be float or double, got {d}")));
    }
    Ok(d)
}

fn complex(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = ctx.expect_dtype(0, PARTS)?;
    ctx.expect_same(0, 1)?;
    let want = if t == DType::Float64 {
        DType::Complex128
    } else {
        DType::Complex64
    };
    let out = ctx.type_or("Tout", want)?;
    if out != want {
        return Err(ctx.shape_error(format!("Tout {out} does not match the parts' dtype {t}")));
    }
    let shape = ctx.shape(0).broadcast(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Dimensions must be equal, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })?;
    single(out, shape)
}

/// `Real`, `Imag`, `Angle`, `ComplexAbs`: complex in, its part type out.
fn to_part(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, COMPLEX)?;
    single(part_out(ctx, d)?, ctx.shape(0).clone())
}

fn conj(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Complex64, DType::Complex128, DType::Variant])?;
    single(d, ctx.shape(0).clone())
}

/// Every op of this module.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Complex", &["real", "imag"], complex),
        OpDef::new("Real", &["input"], to_part),
        OpDef::new("Imag", &["input"], to_part),
        OpDef::new("Angle", &["input"], to_part),
        OpDef::new("ComplexAbs", &["x"], to_part),
        OpDef::new("Conj", &["input"], conj),
    ]
}
