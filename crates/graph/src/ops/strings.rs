//! String ops (`tf.strings` and TF1's top-level string names): TensorFlow's
//! op types, inputs and attrs, with their shape inference.

use super::{single, InferContext, OpDef, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

const S: &[DType] = &[DType::String];

/// A string input `i`; the output is a tensor of `dtype` shaped like it.
fn elementwise(dtype: DType) -> impl Fn(&InferContext) -> Result<Vec<OutputInfo>> {
    move |ctx| {
        ctx.expect_dtype(0, S)?;
        single(dtype, ctx.shape(0).clone())
    }
}

fn string_to_string(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    elementwise(DType::String)(ctx)
}

fn string_to_bool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in 1..ctx.num_inputs() {
        ctx.expect_dtype(i, S)?;
        ctx.expect_rank(i, 0)?;
    }
    elementwise(DType::Bool)(ctx)
}

fn string_to_int64(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    elementwise(DType::Int64)(ctx)
}

fn string_length(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    elementwise(DType::Int32)(ctx)
}

fn regex_replace(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in 1..ctx.num_inputs() {
        ctx.expect_dtype(i, S)?;
        ctx.expect_rank(i, 0)?;
    }
    string_to_string(ctx)
}

fn string_to_number(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let out = ctx.type_or("out_type", DType::Float32)?;
    if !matches!(
        out,
        DType::Float32
            | DType::Float64
            | DType::Int32
            | DType::Int64
            | DType::UInt32
            | DType::UInt64
    ) {
        return Err(ctx.shape_error(format!(
            "out_type must be one of float, double, int32, int64, uint32, uint64, got {out}"
        )));
    }
    elementwise(out)(ctx)
}

fn as_string(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::String, ctx.shape(0).clone())
}

fn split(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    ctx.expect_dtype(1, S)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 0)?;
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None, Some(2)])),
        OutputInfo::new(DType::String, PartialShape::from_dims(vec![None])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![Some(2)])),
    ])
}

fn substr(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_same(1, 2)?;
    let (p, l) = (ctx.shape(1), ctx.shape(2));
    if !p.is_compatible_with(l) {
        return Err(ctx.shape_error("pos and len should have the same shape"));
    }
    let shape = ctx
        .shape(0)
        .broadcast(&p.merge(l).unwrap_or_else(PartialShape::unknown))
        .ok_or_else(|| ctx.shape_error("Incompatible shapes for input and pos"))?;
    single(DType::String, shape)
}

fn reduce_join(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    let keep = ctx.bool_or("keep_dims", false)?;
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(dims), Some(axes)) => {
            let r = dims.len() as i64;
            let mut reduced = vec![false; dims.len()];
            for &a in &axes {
                if a < -r || a >= r {
                    return Err(ctx.shape_error(format!(
                        "Invalid reduction dimension {a} for input with {r} dimensions"
                    )));
                }
                reduced[(if a < 0 { a + r } else { a }) as usize] = true;
            }
            let out = dims
                .iter()
                .zip(&reduced)
                .filter_map(|(&d, &red)| match (red, keep) {
                    (true, true) => Some(Some(1)),
                    (true, false) => None,
                    (false, _) => Some(d),
                })
                .collect();
            PartialShape::from_dims(out)
        }
        _ => PartialShape::unknown(),
    };
    single(DType::String, shape)
}

fn string_format(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let template = ctx.attrs().str_or("template", "%s")?;
    let placeholder = ctx.attrs().str_or("placeholder", "%s")?;
    let n = if placeholder.is_empty() {
        0
    } else {
        template.matches(placeholder.as_str()).count()
    };
    if n != ctx.num_inputs() {
        return Err(ctx.shape_error(format!(
            "num placeholders in template and num inputs must match: {n} vs. {}",
            ctx.num_inputs()
        )));
    }
    single(DType::String, PartialShape::scalar())
}

fn hash_bucket(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.int("num_buckets")? <= 0 {
        return Err(ctx.shape_error("num_buckets must be positive"));
    }
    string_to_int64(ctx)
}

fn fingerprint(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, S)?;
    ctx.expect_rank(1, 0)?;
    let s = ctx.shape(0);
    if s.rank() == Some(0) {
        return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
    }
    let batch = s.dims().and_then(|d| d[0]);
    single(DType::UInt8, PartialShape::from_dims(vec![batch, Some(8)]))
}

fn splits_type(ctx: &InferContext) -> Result<DType> {
    let t = ctx.type_or("Tsplits", DType::Int64)?;
    if !INDEX.contains(&t) {
        return Err(ctx.shape_error(format!("Tsplits must be int32 or int64, got {t}")));
    }
    Ok(t)
}

fn unicode_decode(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    let t = splits_type(ctx)?;
    let n = ctx.shape(0).num_elements().map(|n| n + 1);
    let mut v = vec![
        OutputInfo::new(t, PartialShape::from_dims(vec![n])),
        OutputInfo::new(DType::Int32, PartialShape::from_dims(vec![None])),
    ];
    if ctx.def.name == "UnicodeDecodeWithOffsets" {
        v.push(OutputInfo::new(
            DType::Int64,
            PartialShape::from_dims(vec![None]),
        ));
    }
    Ok(v)
}

fn unicode_encode(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int32])?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 1)?;
    let n = ctx.shape(1).dim(0).map(|n| n.saturating_sub(1));
    single(DType::String, PartialShape::from_dims(vec![n]))
}

fn unicode_script(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int32])?;
    single(DType::Int32, ctx.shape(0).clone())
}

fn ngrams(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 1)?;
    Ok(vec![
        OutputInfo::new(DType::String, PartialShape::from_dims(vec![None])),
        OutputInfo::new(ctx.dtype(1), ctx.shape(1).clone()),
    ])
}

fn unsorted_segment_join(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, S)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_rank(2, 0)?;
    let n = ctx
        .const_value(2)
        .and_then(|t| t.scalar_i64().ok())
        .and_then(|n| usize::try_from(n).ok());
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).rank()) {
        (Some(d), Some(r)) if r <= d.len() => {
            let mut out = vec![n];
            out.extend_from_slice(&d[r..]);
            PartialShape::from_dims(out)
        }
        (Some(d), Some(r)) => {
            return Err(ctx.shape_error(format!(
                "segment_ids (rank {r}) must have rank at most the rank of inputs ({})",
                d.len()
            )))
        }
        _ => PartialShape::unknown(),
    };
    single(DType::String, shape)
}

fn ragged_to_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.num_inputs();
    if n < 2 {
        return Err(ctx.shape_error("RaggedTensorToSparse needs at least one row_splits tensor"));
    }
    let ragged_rank = n - 1;
    for i in 0..ragged_rank {
        ctx.expect_dtype(i, INDEX)?;
        ctx.expect_rank(i, 1)?;
    }
    let values = ctx.shape(n - 1);
    let rank = values.rank().map(|r| r + ragged_rank);
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None, rank])),
        OutputInfo::new(ctx.dtype(n - 1), PartialShape::from_dims(vec![None])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![rank])),
    ])
}

/// `RaggedRange`: `starts`, `limits` and `deltas` (scalars or vectors of one
/// length) give one row each; the outputs are the row splits and the values.
fn ragged_range(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    const NUM: &[DType] = &[
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Int32,
        DType::Int64,
    ];
    let t = ctx.expect_dtype(0, NUM)?;
    let mut rows: Option<usize> = None;
    for i in 0..3 {
        if ctx.dtype(i) != t {
            return Err(ctx.shape_error(format!(
                "RaggedRange: starts, limits and deltas must have one dtype, got {} and {}",
                t.name(),
                ctx.dtype(i).name()
            )));
        }
        match ctx.shape(i).rank() {
            Some(r) if r > 1 => {
                return Err(ctx.shape_error(format!(
                    "Shape must be at most rank 1 but is rank {r} (RaggedRange input {i})"
                )))
            }
            Some(1) => {
                if let Some(n) = ctx.shape(i).dim(0) {
                    if let Some(m) = rows.filter(|&m| m != n) {
                        return Err(ctx.shape_error(format!(
                            "Dimensions must be equal, but are {n} and {m} (RaggedRange starts, limits and deltas)"
                        )));
                    }
                    rows = Some(n);
                }
            }
            _ => {}
        }
    }
    let splits = ctx.type_or("Tsplits", DType::Int64)?;
    let all_scalar = (0..3).all(|i| ctx.shape(i).rank() == Some(0));
    let nsplits = if all_scalar {
        Some(2)
    } else {
        rows.map(|n| n + 1)
    };
    Ok(vec![
        OutputInfo::new(splits, PartialShape::from_dims(vec![nsplits])),
        OutputInfo::new(t, PartialShape::from_dims(vec![None])),
    ])
}

fn string_join(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let mut shape = PartialShape::scalar();
    for i in 0..ctx.num_inputs() {
        ctx.expect_dtype(i, S)?;
        let s = ctx.shape(i);
        if s.rank() == Some(0) {
            continue;
        }
        shape = if shape.rank() == Some(0) {
            s.clone()
        } else {
            shape.merge(s).ok_or_else(|| {
                ctx.shape_error(format!(
                    "StringJoin inputs must be scalars or have the same shape: {shape:?} vs {s:?}"
                ))
            })?
        };
    }
    single(DType::String, shape)
}

/// The string ops' definitions.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("StringSplit", &["input", "delimiter"], split),
        OpDef::new("StringSplitV2", &["input", "sep"], split),
        OpDef::new("StringJoin", &["inputs*"], string_join),
        OpDef::new("StringLength", &["input"], string_length),
        OpDef::new("StringLower", &["input"], string_to_string),
        OpDef::new("StringUpper", &["input"], string_to_string),
        OpDef::new("StringStrip", &["input"], string_to_string),
        OpDef::new("Substr", &["input", "pos", "len"], substr),
        OpDef::new("RegexFullMatch", &["input", "pattern"], string_to_bool),
        OpDef::new("StaticRegexFullMatch", &["input"], string_to_bool),
        OpDef::new(
            "RegexReplace",
            &["input", "pattern", "rewrite"],
            regex_replace,
        ),
        OpDef::new("StaticRegexReplace", &["input"], regex_replace),
        OpDef::new("ReduceJoin", &["inputs", "reduction_indices"], reduce_join),
        OpDef::new("StringFormat", &["inputs*"], string_format),
        OpDef::new("AsString", &["input"], as_string),
        OpDef::new("StringToNumber", &["string_tensor"], string_to_number),
        OpDef::new("StringToHashBucket", &["string_tensor"], hash_bucket),
        OpDef::new("StringToHashBucketFast", &["input"], hash_bucket),
        OpDef::new("StringToHashBucketStrong", &["input"], hash_bucket),
        OpDef::new("Fingerprint", &["data", "method"], fingerprint),
        OpDef::new("UnicodeDecode", &["input"], unicode_decode),
        OpDef::new("UnicodeDecodeWithOffsets", &["input"], unicode_decode),
        OpDef::new(
            "UnicodeEncode",
            &["input_values", "input_splits"],
            unicode_encode,
        ),
        OpDef::new("UnicodeTranscode", &["input"], string_to_string),
        OpDef::new("UnicodeScript", &["input"], unicode_script),
        OpDef::new("StringNGrams", &["data", "data_splits"], ngrams),
        OpDef::new(
            "UnsortedSegmentJoin",
            &["inputs", "segment_ids", "num_segments"],
            unsorted_segment_join,
        ),
        OpDef::new(
            "RaggedTensorToSparse",
            &["rt_nested_splits*", "rt_dense_values"],
            ragged_to_sparse,
        ),
        OpDef::new("RaggedRange", &["starts", "limits", "deltas"], ragged_range),
    ]
}
