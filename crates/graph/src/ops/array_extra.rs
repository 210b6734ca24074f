//! The remaining array ops, with TensorFlow's names, inputs, attrs and
//! shape functions: `UniqueWithCounts`, `Roll`, `ReverseSequence`,
//! `SpaceToBatchND`/`BatchToSpaceND` (and the 4-D `SpaceToBatch`/
//! `BatchToSpace` with a `block_size` attr), `HistogramFixedWidth`,
//! `UnravelIndex`, `LowerBound`/`UpperBound`, `ExtractVolumePatches`,
//! `EditDistance`, `IdentityN`, `EnsureShape` and `BroadcastArgs`.

use super::{single, InferContext, OpDef, INDEX, NUMERIC};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::array_extra::VolumeWindows;
use ferroflow_tensor::{Code, DType, Error, Result};

type Infer = Result<Vec<OutputInfo>>;

/// `[2,?,3]`: a partial shape as TensorFlow's shape functions print it.
fn text(s: &PartialShape) -> String {
    match s.dims() {
        None => "?".to_string(),
        Some(d) => format!(
            "[{}]",
            d.iter()
                .map(|x| x.map_or("?".to_string(), |v| v.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// TensorFlow's `Merge` of two shapes, with its messages.
fn merge(ctx: &InferContext, a: &PartialShape, b: &PartialShape) -> Result<PartialShape> {
    if let (Some(x), Some(y)) = (a.dims(), b.dims()) {
        if x.len() != y.len() {
            return Err(ctx.shape_error(format!(
                "Shapes must be equal rank, but are {} and {}",
                x.len(),
                y.len()
            )));
        }
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            if let (Some(p), Some(q)) = (p, q) {
                if p != q {
                    return Err(ctx.shape_error(format!(
                        "Dimension {i} in both shapes must be equal, but are {p} and {q}. Shapes are {} and {}.",
                        text(a),
                        text(b)
                    )));
                }
            }
        }
    }
    Ok(a.merge(b).unwrap_or_else(PartialShape::unknown))
}

/// Requires input `i` to have rank at most `r` when known.
fn rank_at_most(ctx: &InferContext, i: usize, r: usize) -> Result<()> {
    match ctx.shape(i).rank() {
        Some(k) if k > r => {
            Err(ctx.shape_error(format!("Shape must be at most rank {r} but is rank {k}")))
        }
        _ => Ok(()),
    }
}

/// Requires input `i` to have rank at least `r` when known.
fn rank_at_least(ctx: &InferContext, i: usize, r: usize) -> Result<()> {
    match ctx.shape(i).rank() {
        Some(k) if k < r => {
            Err(ctx.shape_error(format!("Shape must be at least rank {r} but is rank {k}")))
        }
        _ => Ok(()),
    }
}

/// No rank check at construction: TensorFlow's shape function has none
/// (the kernel refuses a non-vector).
fn unique_with_counts(ctx: &InferContext) -> Infer {
    let idx = ctx.type_or("out_idx", DType::Int32)?;
    let any = PartialShape::from_dims(vec![None]);
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), any.clone()),
        OutputInfo::new(idx, ctx.shape(0).clone()),
        OutputInfo::new(idx, any),
    ])
}

fn roll(ctx: &InferContext) -> Infer {
    rank_at_least(ctx, 0, 1)?;
    rank_at_most(ctx, 1, 1)?;
    rank_at_most(ctx, 2, 1)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    merge(ctx, ctx.shape(1), ctx.shape(2))?;
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn reverse_sequence(ctx: &InferContext) -> Infer {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(1, 1)?;
    let seq = ctx.int("seq_dim")?;
    let batch = ctx.int_or("batch_dim", 0)?;
    let x = ctx.shape(0);
    let Some(dims) = x.dims() else {
        return single(ctx.dtype(0), x.clone());
    };
    let rank = dims.len() as i64;
    if batch >= rank {
        return Err(ctx.shape_error(format!(
            "batch_dim must be < input rank: {batch} vs. {rank}"
        )));
    }
    if seq >= rank {
        return Err(ctx.shape_error(format!("seq_dim must be < input rank: {seq} vs. {rank}")));
    }
    let mut out = dims.to_vec();
    if batch >= 0 {
        let b = batch as usize;
        match (dims[b], ctx.shape(1).dim(0)) {
            (Some(p), Some(q)) if p != q => {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {p} and {q}"))
                )
            }
            (p, q) => out[b] = p.or(q),
        }
    }
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

/// The block sizes and `[m, 2]` pads/crops of a space-batch op, as far as
/// they are known at construction: `(m, block, pairs)`.
type BlockInfo = (usize, Option<Vec<i64>>, Option<Vec<i64>>);

/// Block shape and paddings (or crops) of `SpaceToBatchND`/`BatchToSpaceND`.
fn nd_blocks(ctx: &InferContext) -> Result<BlockInfo> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 2)?;
    let Some(m) = ctx.shape(1).dim(0) else {
        return Err(ctx.shape_error("block_shape must have known size."));
    };
    if let Some(d) = ctx.shape(2).dims() {
        if d[0].is_some_and(|r| r != m) || d[1].is_some_and(|c| c != 2) {
            return Err(ctx.shape_error(format!(
                "Dimension 0 in both shapes must be equal, but are {} and {m}",
                d[0].map_or("?".to_string(), |r| r.to_string())
            )));
        }
    }
    let block = ctx.const_ints(1);
    if let Some(b) = &block {
        if let Some((i, v)) = b.iter().enumerate().find(|(_, &v)| v < 1) {
            return Err(ctx.shape_error(format!("block_shape must be positive, got {v} at {i}")));
        }
    }
    let pairs = ctx.const_ints(2);
    if let Some(p) = &pairs {
        if p.iter().any(|&v| v < 0) {
            return Err(ctx.shape_error("paddings and crops must be non-negative"));
        }
    }
    Ok((m, block, pairs))
}

/// The 4-D ops' `block_size` attr as a two-dimensional block; their
/// paddings/crops input is the second one.
fn block_size_blocks(ctx: &InferContext) -> Result<BlockInfo> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 2)?;
    let b = ctx.int("block_size")?;
    if b < 2 {
        return Err(ctx.shape_error(format!(
            "Value for attr 'block_size' of {b} must be at least minimum 2"
        )));
    }
    Ok((2, Some(vec![b, b]), ctx.const_ints(1)))
}

fn space_batch(ctx: &InferContext) -> Infer {
    let (m, block, pairs) = match ctx.def.name {
        "SpaceToBatch" | "BatchToSpace" => block_size_blocks(ctx)?,
        _ => nd_blocks(ctx)?,
    };
    let to_batch = ctx.def.name.starts_with("SpaceToBatch");
    let x = ctx.shape(0);
    let Some(dims) = x.dims() else {
        return single(ctx.dtype(0), x.clone());
    };
    if dims.len() < 1 + m {
        return Err(ctx.shape_error(format!(
            "Shape must be at least rank {} but is rank {}",
            1 + m,
            dims.len()
        )));
    }
    let mut out = dims.to_vec();
    let prod = block.as_ref().map(|b| b.iter().product::<i64>() as usize);
    out[0] = match (dims[0], &block) {
        (Some(n), Some(_)) if to_batch => Some(n * prod.unwrap_or(1)),
        (Some(mut n), Some(b)) => {
            for &k in b {
                let k = k as usize;
                if n % k != 0 {
                    return Err(ctx.shape_error(format!(
                        "Dimension size must be evenly divisible by {k} but is {n}"
                    )));
                }
                n /= k;
            }
            Some(n)
        }
        _ => None,
    };
    for d in 0..m {
        out[d + 1] = match (dims[d + 1], &block, &pairs) {
            (Some(s), Some(b), Some(p)) => {
                let (k, lo, hi) = (b[d], p[2 * d], p[2 * d + 1]);
                if to_batch {
                    let padded = s as i64 + lo + hi;
                    if padded % k != 0 {
                        return Err(ctx.shape_error(format!(
                            "Dimension size must be evenly divisible by {k} but is {padded}"
                        )));
                    }
                    Some((padded / k) as usize)
                } else {
                    let full = s as i64 * k;
                    if full - lo < 0 {
                        return Err(ctx.shape_error(format!(
                            "Negative dimension size caused by subtracting {lo} from {full}"
                        )));
                    }
                    if full - lo - hi < 0 {
                        return Err(ctx.shape_error(format!(
                            "Negative dimension size caused by subtracting {hi} from {}",
                            full - lo
                        )));
                    }
                    Some((full - lo - hi) as usize)
                }
            }
            _ => None,
        };
    }
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

fn histogram_fixed_width(ctx: &InferContext) -> Infer {
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
    let n = ctx
        .const_value(2)
        .and_then(|t| t.scalar_i64().ok())
        .and_then(|v| usize::try_from(v).ok());
    single(out, PartialShape::from_dims(vec![n]))
}

fn unravel_index(ctx: &InferContext) -> Infer {
    let d = ctx.expect_dtype(0, INDEX)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(1, 1)?;
    let n = ctx.shape(1).dim(0);
    let shape = match ctx.shape(0).rank() {
        Some(0) => PartialShape::from_dims(vec![n]),
        Some(1) => PartialShape::from_dims(vec![n, ctx.shape(0).dim(0)]),
        // Higher ranks fail when run, as in TensorFlow.
        _ => PartialShape::unknown(),
    };
    single(d, shape)
}

fn search_sorted(ctx: &InferContext) -> Infer {
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 2)?;
    let out = ctx.type_or("out_type", DType::Int32)?;
    single(out, ctx.shape(1).clone())
}

fn extract_volume_patches(ctx: &InferContext) -> Infer {
    ctx.expect_rank(0, 5)?;
    let a = ctx.attrs();
    let parsed = VolumeWindows::parse(
        &a.ints("ksizes")?,
        &a.ints("strides")?,
        &a.string("padding")?,
    );
    let w = match parsed {
        Ok(w) => Some(w),
        // Windows across batch or depth fail when run (UnimplementedError),
        // as in TensorFlow.
        Err(e) if e.code() == Some(Code::Unimplemented) => None,
        Err(e) => return Err(ctx.shape_error(e.message())),
    };
    let dims = match (ctx.shape(0).dims(), w) {
        (None, _) | (_, None) => vec![None; 5],
        (Some(d), Some(w)) => {
            let mut out = vec![d[0]];
            for k in 0..3 {
                out.push(d[k + 1].map(|n| w.along(k, n).0));
            }
            out.push(d[4].map(|c| c * w.ksize.iter().product::<usize>()));
            out
        }
    };
    single(ctx.dtype(0), PartialShape::from_dims(dims))
}

fn edit_distance(ctx: &InferContext) -> Infer {
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

fn identity_n(ctx: &InferContext) -> Infer {
    Ok((0..ctx.num_inputs())
        .map(|i| OutputInfo::new(ctx.dtype(i), ctx.shape(i).clone()))
        .collect())
}

fn ensure_shape(ctx: &InferContext) -> Infer {
    let want = ctx.attrs().shape("shape")?;
    let s = merge(ctx, &want, ctx.shape(0))?;
    single(ctx.dtype(0), s)
}

fn broadcast_args(ctx: &InferContext) -> Infer {
    let d = ctx.expect_dtype(0, INDEX)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 1)?;
    let n = match (ctx.shape(0).dim(0), ctx.shape(1).dim(0)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    single(d, PartialShape::from_dims(vec![n]))
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("UniqueWithCounts", &["x"], unique_with_counts),
        OpDef::new("Roll", &["input", "shift", "axis"], roll),
        OpDef::new(
            "ReverseSequence",
            &["input", "seq_lengths"],
            reverse_sequence,
        ),
        OpDef::new(
            "SpaceToBatchND",
            &["input", "block_shape", "paddings"],
            space_batch,
        ),
        OpDef::new(
            "BatchToSpaceND",
            &["input", "block_shape", "crops"],
            space_batch,
        ),
        OpDef::new("SpaceToBatch", &["input", "paddings"], space_batch),
        OpDef::new("BatchToSpace", &["input", "crops"], space_batch),
        OpDef::new(
            "HistogramFixedWidth",
            &["values", "value_range", "nbins"],
            histogram_fixed_width,
        ),
        OpDef::new("UnravelIndex", &["indices", "dims"], unravel_index),
        OpDef::new("LowerBound", &["sorted_inputs", "values"], search_sorted),
        OpDef::new("UpperBound", &["sorted_inputs", "values"], search_sorted),
        OpDef::new("ExtractVolumePatches", &["input"], extract_volume_patches),
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
        OpDef::new("IdentityN", &["input*"], identity_n),
        OpDef::new("EnsureShape", &["input"], ensure_shape),
        OpDef::new("BroadcastArgs", &["s0", "s1"], broadcast_args),
    ]
}
