//! Shape functions of the ops that choose parts of a tensor by position:
//! `Slice`, `StridedSlice` (through the strided-slice plan the kernel
//! uses), `GatherV2`, `GatherNd`, `UnravelIndex` and
//! `ExtractVolumePatches`.

use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::ops::{axis_in, single, InferContext, OpDef, INDEX};
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::array::{strided_slice_plan_partial, SliceMasks, VolumeWindows};
use ferroflow_tensor::{Code, Result};

fn slice(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let (Some(dims), Some(b), Some(s)) =
        (ctx.shape(0).dims(), ctx.const_ints(1), ctx.const_ints(2))
    else {
        // Known sizes other than -1 give known dims even when begin is unknown.
        let r = ctx.shape(0).rank().or_else(|| ctx.shape(2).dim(0));
        return single(
            d,
            match (r, ctx.const_ints(2)) {
                (Some(r), Some(s)) if s.len() == r => {
                    PartialShape::from_dims(s.iter().map(|&x| usize::try_from(x).ok()).collect())
                }
                (Some(r), _) => PartialShape::unknown_dims(r),
                _ => PartialShape::unknown(),
            },
        );
    };
    if b.len() != dims.len() || s.len() != dims.len() {
        return Err(ctx.shape_error(format!(
            "begin and size must have length {} (the input's rank)",
            dims.len()
        )));
    }
    let mut out = Vec::with_capacity(dims.len());
    for i in 0..dims.len() {
        out.push(if s[i] == -1 {
            dims[i].map(|x| (x as i64 - b[i]).max(0) as usize)
        } else {
            // As TF's shape function: a begin or size outside the input is the
            // kernel's InvalidArgumentError, only a negative size is checked here.
            if s[i] < 0 {
                return Err(ctx.shape_error(format!("Expected size[{i}] >= -1, but got {}", s[i])));
            }
            Some(s[i] as usize)
        });
    }
    single(d, PartialShape::from_dims(out))
}

fn strided_slice(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    let masks = SliceMasks {
        begin: ctx.int_or("begin_mask", 0)?,
        end: ctx.int_or("end_mask", 0)?,
        ellipsis: ctx.int_or("ellipsis_mask", 0)?,
        new_axis: ctx.int_or("new_axis_mask", 0)?,
        shrink_axis: ctx.int_or("shrink_axis_mask", 0)?,
    };
    // Like TensorFlow, known strides and input rank suffice: unknown begin/end
    // leave the dimensions they bound unknown.
    let (Some(dims), Some(s)) = (ctx.shape(0).dims(), ctx.const_ints(3)) else {
        return single(d, PartialShape::unknown());
    };
    let (b, e) = (ctx.const_ints(1), ctx.const_ints(2));
    let plan = strided_slice_plan_partial(dims, b.as_deref(), e.as_deref(), &s, masks)
        .map_err(|e| ctx.shape_error(e.message()))?;
    single(d, PartialShape::from_dims(plan.final_shape))
}

fn gather(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let batch = ctx.int_or("batch_dims", 0)?;
    let (p, i) = (ctx.shape(0), ctx.shape(1));
    let axis = ctx.const_value(2).and_then(|t| t.scalar_i64().ok());
    let shape = match (p.dims(), i.dims(), axis) {
        (Some(pd), Some(id), Some(ax)) => {
            let a = axis_in(ctx, ax, pd.len())?;
            let b = if batch < 0 {
                batch + id.len() as i64
            } else {
                batch
            } as usize;
            if b > a || b > id.len() {
                return Err(ctx.shape_error(format!(
                    "batch_dims ({batch}) must be at most axis and indices rank"
                )));
            }
            let out: Vec<Option<usize>> = pd[..a]
                .iter()
                .chain(&id[b..])
                .chain(&pd[a + 1..])
                .copied()
                .collect();
            PartialShape::from_dims(out)
        }
        (Some(pd), Some(id), None) if pd.len() + id.len() > batch.max(0) as usize => {
            PartialShape::unknown_dims(pd.len() + id.len() - 1 - batch.max(0) as usize)
        }
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn gather_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).dims()) {
        (Some(pd), Some(id)) if !id.is_empty() => match id[id.len() - 1] {
            Some(k) if k <= pd.len() => {
                PartialShape::from_dims(id[..id.len() - 1].iter().chain(&pd[k..]).copied().collect())
            }
            Some(k) => {
                return Err(ctx.shape_error(format!(
                    "indices.shape[-1] must be <= params.rank, but saw indices.shape[-1] = {k} and params.rank = {}",
                    pd.len()
                )))
            }
            None => PartialShape::unknown(),
        },
        _ => PartialShape::unknown(),
    };
    single(ctx.dtype(0), shape)
}

fn unravel_index(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
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

fn extract_volume_patches(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
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

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Slice", &["input", "begin", "size"], slice),
        OpDef::new(
            "StridedSlice",
            &["input", "begin", "end", "strides"],
            strided_slice,
        ),
        OpDef::new("GatherV2", &["params", "indices", "axis"], gather),
        OpDef::new("GatherNd", &["params", "indices"], gather_nd),
        OpDef::new("UnravelIndex", &["indices", "dims"], unravel_index),
        OpDef::new("ExtractVolumePatches", &["input"], extract_volume_patches),
    ]
}
