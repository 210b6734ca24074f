//! Shape functions of the ops that choose or count elements by their
//! values: `Where`, `Unique`, `UniqueWithCounts`, `LowerBound`/
//! `UpperBound`, `HistogramFixedWidth` and `EditDistance`.

use crate::graph::OutputInfo;
use crate::ops::{single, InferContext, OpDef, INDEX, NUMERIC};
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

fn where_op(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let r = ctx.shape(0).rank();
    single(DType::Int64, PartialShape::from_dims(vec![None, r]))
}

fn unique(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(0, 1)?;
    let idx = ctx.type_or("out_idx", DType::Int32)?;
    if !INDEX.contains(&idx) {
        return Err(Error::type_error(format!(
            "'{}': out_idx must be int32 or int64, got {idx}",
            ctx.name
        )));
    }
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), PartialShape::from_dims(vec![None])),
        OutputInfo::new(idx, ctx.shape(0).clone()),
    ])
}

/// No rank check at construction: TensorFlow's shape function has none
/// (the kernel refuses a non-vector).
fn unique_with_counts(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let idx = ctx.type_or("out_idx", DType::Int32)?;
    let any = PartialShape::from_dims(vec![None]);
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), any.clone()),
        OutputInfo::new(idx, ctx.shape(0).clone()),
        OutputInfo::new(idx, any),
    ])
}

fn search_sorted(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 2)?;
    let out = ctx.type_or("out_type", DType::Int32)?;
    single(out, ctx.shape(1).clone())
}

fn histogram_fixed_width(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, NUMERIC)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 0)?;
    let out = ctx.type_or("dtype", DType::Int32)?;
    if !INDEX.contains(&out) {
        return Err(Error::type_error(format!(
            "Value for attr 'dtype' of {out} is not in the list of allowed values: int32, int64"
        )));
    }
    let n = match ctx.const_value(2).and_then(|t| t.scalar_i64().ok()) {
        Some(v) if v <= 0 => return Err(ctx.shape_error(format!("Requires nbins > 0: {v}"))),
        v => v.map(|v| v as usize),
    };
    single(out, PartialShape::from_dims(vec![n]))
}

fn edit_distance(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_same(1, 4)?;
    for i in [0, 2, 3, 5] {
        ctx.expect_dtype(i, &[DType::Int64])?;
    }
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    ctx.expect_rank(3, 2)?;
    ctx.expect_rank(4, 1)?;
    ctx.expect_rank(5, 1)?;
    let shape = match (ctx.const_ints(2), ctx.const_ints(5)) {
        (Some(h), Some(t)) => {
            if h.len() != t.len() {
                return Err(ctx.shape_error(format!(
                    "Num elements of hypothesis_shape does not match truth_shape: {} vs. {}",
                    h.len(),
                    t.len()
                )));
            }
            PartialShape::from_dims(
                h.iter()
                    .zip(&t)
                    .take(h.len().saturating_sub(1))
                    .map(|(&a, &b)| Some(a.max(b).max(0) as usize))
                    .collect(),
            )
        }
        _ => match (ctx.shape(2).dim(0), ctx.shape(5).dim(0)) {
            (Some(a), Some(b)) if a != b => {
                return Err(ctx.shape_error(format!(
                    "Num elements of hypothesis_shape does not match truth_shape: {a} vs. {b}"
                )))
            }
            (Some(n), _) | (_, Some(n)) => PartialShape::unknown_dims(n.saturating_sub(1)),
            _ => PartialShape::unknown(),
        },
    };
    single(DType::Float32, shape)
}

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Where", &["input"], where_op),
        OpDef::new("Unique", &["x"], unique),
        OpDef::new("UniqueWithCounts", &["x"], unique_with_counts),
        OpDef::new("LowerBound", &["sorted_inputs", "values"], search_sorted),
        OpDef::new("UpperBound", &["sorted_inputs", "values"], search_sorted),
        OpDef::new(
            "HistogramFixedWidth",
            &["values", "value_range", "nbins"],
            histogram_fixed_width,
        ),
        OpDef::new(
            "EditDistance",
            &[
                "hypothesis_indices",
                "hypothesis_values",
                "hypothesis_shape",
                "truth_indices",
                "truth_values",
                "truth_shape",
            ],
            edit_distance,
        ),
    ]
}
