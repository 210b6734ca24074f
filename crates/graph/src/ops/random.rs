//! Random ops. All are stateful: each run draws fresh values.

use super::{single, InferContext, OpDef, FLOATS, INDEX};
use crate::graph::OutputInfo;
use ferroflow_tensor::Result;

fn random_float(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let d = ctx.type_attr("dtype")?;
    if !FLOATS.contains(&d) {
        return Err(ferroflow_tensor::Error::type_error(format!(
            "{}: dtype must be a floating type, got {d}",
            ctx.def.name
        )));
    }
    single(d, ctx.shape_value(0))
}

fn random_int(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let d = ctx.expect_dtype(1, INDEX)?;
    ctx.expect_same(1, 2)?;
    single(d, ctx.shape_value(0))
}

fn shuffle(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("RandomStandardNormal", &["shape"], random_float).stateful(),
        OpDef::new("RandomUniform", &["shape"], random_float).stateful(),
        OpDef::new("TruncatedNormal", &["shape"], random_float).stateful(),
        OpDef::new(
            "RandomUniformInt",
            &["shape", "minval", "maxval"],
            random_int,
        )
        .stateful(),
        OpDef::new("RandomShuffle", &["value"], shuffle).stateful(),
    ]
}
