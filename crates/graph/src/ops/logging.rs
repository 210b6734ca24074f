//! Ops that print while a graph runs (`tf.Print`, `tf.print`) and read the
//! clock (`tf.timestamp`).

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::DType;
use ferroflow_tensor::Result;

fn print(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn print_v2(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

/// Seconds since the Unix epoch, as a float64 scalar.
fn timestamp(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Float64, PartialShape::scalar())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Print", &["input", "data*"], print).stateful(),
        OpDef::new("PrintV2", &["inputs*"], print_v2).stateful(),
        OpDef::new("Timestamp", &[], timestamp).stateful(),
    ]
}
