//! `Bucketize(input) -> output`: the bucket index (int32, same shape) of
//! each value among the sorted float `boundaries` attr, as TensorFlow's op
//! (`T` in int32, int64, float, double; shape unchanged).

use super::{InferContext, OpDef};
use crate::graph::OutputInfo;
use ferroflow_tensor::{DType, Result};

/// `Bucketize(input)`: an int32 tensor of `input`'s shape.
fn bucketize(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(
        0,
        &[DType::Int32, DType::Int64, DType::Float32, DType::Float64],
    )?;
    Ok(vec![OutputInfo::new(DType::Int32, ctx.shape(0).clone())])
}

/// The op definitions of this module.
pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new("Bucketize", &["input"], bucketize)]
}
