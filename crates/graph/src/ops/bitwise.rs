//! TensorFlow's bitwise ops: `BitwiseAnd`, `BitwiseOr`, `BitwiseXor`,
//! `LeftShift`, `RightShift` (two inputs of one integer type `T`,
//! broadcasting), `Invert` (`T` unchanged) and `PopulationCount` (uint8 of
//! the input's shape).

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use ferroflow_tensor::kernels::bitwise::BITWISE_TYPES;
use ferroflow_tensor::{DType, Result};

fn binary(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, BITWISE_TYPES)?;
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

fn invert(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, BITWISE_TYPES)?;
    single(d, ctx.shape(0).clone())
}

fn population_count(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, BITWISE_TYPES)?;
    single(DType::UInt8, ctx.shape(0).clone())
}

/// The op definitions of this module.
pub fn ops() -> Vec<OpDef> {
    let mut v: Vec<OpDef> = [
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "LeftShift",
        "RightShift",
    ]
    .into_iter()
    .map(|name| OpDef::new(name, &["x", "y"], binary))
    .collect();
    v.push(OpDef::new("Invert", &["x"], invert));
    v.push(OpDef::new("PopulationCount", &["x"], population_count));
    v
}
