//! Ops that print while a graph runs (`tf.Print`, `tf.print`).

use super::{single, InferContext, OpDef};
use crate::graph::OutputInfo;
use ferroflow_tensor::Result;

fn print(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn print_v2(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(Vec::new())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Print", &["input", "data*"], print).stateful(),
        OpDef::new("PrintV2", &["inputs*"], print_v2).stateful(),
    ]
}
