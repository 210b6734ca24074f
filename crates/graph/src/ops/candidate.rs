//! Candidate samplers (for sampled losses such as `nce_loss`) and
//! `ComputeAccidentalHits`.

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
    // AllCandidateSampler samples every class of [0, num_sampled).
    let range_max = ctx.int_or("range_max", num_sampled)?;
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

fn accidental_hits(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_dtype(1, &[DType::Int64])?;
    ctx.expect_rank(1, 1)?;
    let num_true = ctx.int("num_true")?;
    if let Some(k) = ctx.shape(0).dim(1) {
        if k as i64 != num_true {
            return Err(ctx.shape_error(format!(
                "true_classes must have num_true = {num_true} columns, got {k}"
            )));
        }
    }
    let v = || PartialShape::from_dims(vec![None]);
    Ok(vec![
        OutputInfo::new(DType::Int32, v()),
        OutputInfo::new(DType::Int64, v()),
        OutputInfo::new(DType::Float32, v()),
    ])
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("AllCandidateSampler", &["true_classes"], sampler).stateful(),
        OpDef::new("FixedUnigramCandidateSampler", &["true_classes"], sampler).stateful(),
        OpDef::new("LearnedUnigramCandidateSampler", &["true_classes"], sampler).stateful(),
        OpDef::new(
            "ComputeAccidentalHits",
            &["true_classes", "sampled_candidates"],
            accidental_hits,
        ),
        OpDef::new("LogUniformCandidateSampler", &["true_classes"], sampler).stateful(),
        OpDef::new("UniformCandidateSampler", &["true_classes"], sampler).stateful(),
    ]
}
