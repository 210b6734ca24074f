//! Candidate samplers (for sampled losses such as `nce_loss`).

use super::{InferContext, OpDef, INDEX};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn sampler(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    ctx.expect_rank(0, 2)?;
    let num_true = ctx.int("num_true")?;
    let num_sampled = ctx.int("num_sampled")?;
    if num_sampled <= 0 || num_true <= 0 {
        return Err(ctx.shape_error("num_true and num_sampled must be positive"));
    }
    if let Some(k) = ctx.shape(0).dim(1) {
        if k as i64 != num_true {
            return Err(ctx.shape_error(format!(
                "true_classes must have num_true = {num_true} columns, got {k}"
            )));
        }
    }
    let range_max = ctx.int("range_max")?;
    if ctx.bool_or("unique", false)? && num_sampled > range_max {
        return Err(ctx.shape_error(format!(
            "Sampler's range is too small: num_sampled {num_sampled} > range_max {range_max} with unique=True"
        )));
    }
    let s = Some(num_sampled as usize);
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![s])),
        OutputInfo::new(
            DType::Float32,
            PartialShape::from_dims(vec![ctx.shape(0).dim(0), Some(num_true as usize)]),
        ),
        OutputInfo::new(DType::Float32, PartialShape::from_dims(vec![s])),
    ])
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("LogUniformCandidateSampler", &["true_classes"], sampler).stateful(),
        OpDef::new("UniformCandidateSampler", &["true_classes"], sampler).stateful(),
    ]
}
