//! The FFT ops with TensorFlow's inputs, attrs and shape functions:
//! `FFT`/`IFFT` (1-D, 2-D, 3-D) keep their input's shape; the real ones
//! (`RFFT*`, `IRFFT*`) take an `fft_length` input, whose constant value
//! gives the innermost output dimensions; the N-D forms also take `axes`.

use super::complex::COMPLEX;
use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

const REALS: &[DType] = &[DType::Float32, DType::Float64];

/// TensorFlow's `WithRankAtLeast` on input `i`.
fn rank_at_least(ctx: &InferContext, i: usize, r: usize) -> Result<()> {
    match ctx.shape(i).rank() {
        Some(k) if k < r => {
            Err(ctx.shape_error(format!("Shape must be at least rank {r} but is rank {k}")))
        }
        _ => Ok(()),
    }
}

/// A dimension from a constant length, as TensorFlow's `MakeDim`: -1 is
/// unknown, other negative values are an error.
fn make_dim(ctx: &InferContext, v: i64) -> Result<Option<usize>> {
    match v {
        -1 => Ok(None),
        v if v < 0 => Err(ctx.shape_error(format!("Dimension {v} must be >= 0"))),
        v => Ok(Some(v as usize)),
    }
}

/// `FFT`, `IFFT` and their 2-D and 3-D forms: the input's shape and dtype.
fn complex_fft(ctx: &InferContext, rank: usize) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, COMPLEX)?;
    rank_at_least(ctx, 0, rank)?;
    single(d, ctx.shape(0).clone())
}

fn fft1(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    complex_fft(ctx, 1)
}

fn fft2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    complex_fft(ctx, 2)
}

fn fft3(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    complex_fft(ctx, 3)
}

/// The input dtype and the output dtype (`Tcomplex` / `Treal`) of a real
/// transform.
fn real_dtypes(ctx: &InferContext, forward: bool) -> Result<DType> {
    if forward {
        ctx.expect_dtype(0, REALS)?;
        ctx.type_or("Tcomplex", DType::Complex64)
    } else {
        ctx.expect_dtype(0, COMPLEX)?;
        ctx.type_or("Treal", DType::Float32)
    }
}

/// The innermost `k` output dimensions from a constant `fft_length`
/// (forward: the last one is `n / 2 + 1`, or 0 for 0).
fn inner_dims(ctx: &InferContext, lengths: &[i64], forward: bool) -> Result<Vec<Option<usize>>> {
    let k = lengths.len();
    lengths
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let v = if forward && i == k - 1 && v != 0 {
                v / 2 + 1
            } else {
                v
            };
            make_dim(ctx, v)
        })
        .collect()
}

/// The input's shape with its innermost dimensions replaced by `inner`
/// (unknown rank stays unknown).
fn replace_inner(shape: &PartialShape, inner: &[Option<usize>]) -> PartialShape {
    match shape.dims() {
        None => PartialShape::unknown(),
        Some(d) => {
            let mut d = d.to_vec();
            let at = d.len() - inner.len();
            d[at..].copy_from_slice(inner);
            PartialShape::from_dims(d)
        }
    }
}

/// TensorFlow's `RFFTShape`: `RFFT*` (forward) and `IRFFT*`.
fn real_fft(ctx: &InferContext, forward: bool, rank: usize) -> Result<Vec<OutputInfo>> {
    let out = real_dtypes(ctx, forward)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    rank_at_least(ctx, 0, rank)?;
    ctx.expect_rank(1, 1)?;
    if let Some(n) = ctx.shape(1).dim(0) {
        if n != rank {
            return Err(ctx.shape_error(format!("Dimension must be {rank} but is {n}")));
        }
    }
    let inner = match ctx.const_ints(1) {
        Some(v) => inner_dims(ctx, &v, forward)?,
        None => vec![None; rank],
    };
    single(out, replace_inner(ctx.shape(0), &inner))
}

fn rfft1(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, true, 1)
}

fn rfft2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, true, 2)
}

fn rfft3(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, true, 3)
}

fn irfft1(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, false, 1)
}

fn irfft2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, false, 2)
}

fn irfft3(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    real_fft(ctx, false, 3)
}

/// The N-D ops (`FFTND`, `IFFTND`, `RFFTND`, `IRFFTND`): `real` is None for
/// the complex ones, else `Some(forward)`. TensorFlow's shape function
/// keeps the input's shape; the output's innermost dimensions are
/// computed here whenever `fft_length` is a constant, since that is the
/// shape the kernel gives.
fn nd(ctx: &InferContext, real: Option<bool>) -> Result<Vec<OutputInfo>> {
    let out = match real {
        None => ctx.expect_dtype(0, COMPLEX)?,
        Some(forward) => real_dtypes(ctx, forward)?,
    };
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_dtype(2, &[DType::Int32])?;
    rank_at_least(ctx, 0, 1)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let shape = ctx.shape(0);
    let k = ctx.shape(1).dim(0);
    let fits = |k: usize| shape.rank().is_none_or(|r| k <= r);
    let inner = match ctx.const_ints(1) {
        Some(v) if fits(v.len()) => inner_dims(ctx, &v, real == Some(true))?,
        _ => match k {
            Some(k) if fits(k) => vec![None; k],
            _ => {
                let r = shape.rank();
                return single(
                    out,
                    r.map_or_else(PartialShape::unknown, PartialShape::unknown_dims),
                );
            }
        },
    };
    single(out, replace_inner(shape, &inner))
}

fn fft_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    nd(ctx, None)
}

fn rfft_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    nd(ctx, Some(true))
}

fn irfft_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    nd(ctx, Some(false))
}

/// Every op of this module.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("FFT", &["input"], fft1),
        OpDef::new("IFFT", &["input"], fft1),
        OpDef::new("FFT2D", &["input"], fft2),
        OpDef::new("IFFT2D", &["input"], fft2),
        OpDef::new("FFT3D", &["input"], fft3),
        OpDef::new("IFFT3D", &["input"], fft3),
        OpDef::new("RFFT", &["input", "fft_length"], rfft1),
        OpDef::new("RFFT2D", &["input", "fft_length"], rfft2),
        OpDef::new("RFFT3D", &["input", "fft_length"], rfft3),
        OpDef::new("IRFFT", &["input", "fft_length"], irfft1),
        OpDef::new("IRFFT2D", &["input", "fft_length"], irfft2),
        OpDef::new("IRFFT3D", &["input", "fft_length"], irfft3),
        OpDef::new("FFTND", &["input", "fft_length", "axes"], fft_nd),
        OpDef::new("IFFTND", &["input", "fft_length", "axes"], fft_nd),
        OpDef::new("RFFTND", &["input", "fft_length", "axes"], rfft_nd),
        OpDef::new("IRFFTND", &["input", "fft_length", "axes"], irfft_nd),
    ]
}
