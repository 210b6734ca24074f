//! Fake quantization ops (`FakeQuantWithMinMaxArgs`, `...Vars`,
//! `...VarsPerChannel` and their `...Gradient` ops), with TensorFlow's
//! inputs, outputs and attrs (`min`/`max` floats for `Args`, `num_bits`,
//! `narrow_range`). All take and give float32.

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

const F32: &[DType] = &[DType::Float32];

/// Checks `num_bits` (2 to 16) when it is set.
fn check_bits(ctx: &InferContext) -> Result<()> {
    let bits = ctx.int_or("num_bits", 8)?;
    if !(2..=16).contains(&bits) {
        return Err(ctx.shape_error("num_bits must be between 2 and 16, inclusive"));
    }
    Ok(())
}

fn args(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    let d = ctx.expect_dtype(0, F32)?;
    single(d, ctx.shape(0).clone())
}

/// The gradient ops: `gradients` and `inputs` of one shape.
fn merged_grad_shape(ctx: &InferContext) -> Result<PartialShape> {
    ctx.expect_dtype(0, F32)?;
    ctx.expect_dtype(1, F32)?;
    ctx.shape(0).merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Shapes must be equal rank, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })
}

fn args_gradient(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    single(DType::Float32, merged_grad_shape(ctx)?)
}

fn vars(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    for i in 0..3 {
        ctx.expect_dtype(i, F32)?;
    }
    ctx.expect_rank(1, 0)?;
    ctx.expect_rank(2, 0)?;
    single(DType::Float32, ctx.shape(0).clone())
}

fn vars_gradient(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    let x = merged_grad_shape(ctx)?;
    ctx.expect_dtype(2, F32)?;
    ctx.expect_dtype(3, F32)?;
    ctx.expect_rank(2, 0)?;
    ctx.expect_rank(3, 0)?;
    Ok(vec![
        OutputInfo::new(DType::Float32, x),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
    ])
}

/// The channel count (last dimension of `x`), checked against `min`/`max`.
fn channels(ctx: &InferContext, x: &PartialShape, first_range: usize) -> Result<Option<usize>> {
    if let Some(r) = x.rank() {
        if !(1..=4).contains(&r) {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank 1 and at most rank 4 but is rank {r}"
            )));
        }
    }
    let mut depth = x.rank().and_then(|r| x.dim(r - 1));
    for i in first_range..first_range + 2 {
        ctx.expect_dtype(i, F32)?;
        ctx.expect_rank(i, 1)?;
        match (depth, ctx.shape(i).dim(0)) {
            (Some(a), Some(b)) if a != b => {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}"))
                )
            }
            (None, Some(b)) => depth = Some(b),
            _ => {}
        }
    }
    Ok(depth)
}

fn per_channel(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    ctx.expect_dtype(0, F32)?;
    channels(ctx, ctx.shape(0), 1)?;
    single(DType::Float32, ctx.shape(0).clone())
}

fn per_channel_gradient(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    check_bits(ctx)?;
    let x = merged_grad_shape(ctx)?;
    let depth = channels(ctx, &x, 2)?;
    let d = PartialShape::from_dims(vec![depth]);
    Ok(vec![
        OutputInfo::new(DType::Float32, x),
        OutputInfo::new(DType::Float32, d.clone()),
        OutputInfo::new(DType::Float32, d),
    ])
}

/// The fake-quant op definitions.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("FakeQuantWithMinMaxArgs", &["inputs"], args),
        OpDef::new(
            "FakeQuantWithMinMaxArgsGradient",
            &["gradients", "inputs"],
            args_gradient,
        ),
        OpDef::new("FakeQuantWithMinMaxVars", &["inputs", "min", "max"], vars),
        OpDef::new(
            "FakeQuantWithMinMaxVarsGradient",
            &["gradients", "inputs", "min", "max"],
            vars_gradient,
        ),
        OpDef::new(
            "FakeQuantWithMinMaxVarsPerChannel",
            &["inputs", "min", "max"],
            per_channel,
        ),
        OpDef::new(
            "FakeQuantWithMinMaxVarsPerChannelGradient",
            &["gradients", "inputs", "min", "max"],
            per_channel_gradient,
        ),
    ]
}
