//! Ops that gradient graphs are built from.

use super::{single, InferContext, OpDef, FLOATS, INDEX, NUMERIC_WIDE};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

/// Same-shaped float inputs; the output has their shape.
fn activation_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = super::complex::expect_dtype_or_complex(ctx, 0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    let s = ctx.shape(0).merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Shapes must be equal, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })?;
    single(d, s)
}

fn broadcast_gradient_args(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let d = ctx.expect_same(0, 1)?;
    let v = PartialShape::unknown_dims(1);
    Ok(vec![OutputInfo::new(d, v.clone()), OutputInfo::new(d, v)])
}

fn reduced_shape(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn invert_permutation(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, INDEX)?;
    single(d, ctx.shape(0).clone())
}

fn unsorted_segment_sum(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    let num = ctx
        .const_value(2)
        .and_then(|t| t.scalar_i64().ok())
        .map(|v| v.max(0) as usize);
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).rank()) {
        (Some(dd), Some(r)) if dd.len() >= r => {
            let mut out = vec![num];
            out.extend_from_slice(&dd[r..]);
            PartialShape::from_dims(out)
        }
        _ => PartialShape::unknown(),
    };
    single(d, shape)
}

fn strided_slice_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(4), ctx.shape_value(0))
}

fn scatter_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    single(ctx.dtype(1), ctx.shape_value(2))
}

fn bias_add_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    let nchw = matches!(ctx.attrs().get("data_format"), Some(crate::AttrValue::Str(s)) if s.as_slice() == b"NCHW");
    let c = ctx
        .shape(0)
        .dims()
        .and_then(|dd| {
            if nchw {
                dd.get(1).copied()
            } else {
                dd.last().copied()
            }
        })
        .flatten();
    single(d, PartialShape::from_dims(vec![c]))
}

/// The unpadded shape: each dimension less its `paddings` row.
fn mirror_pad_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_dtype(1, INDEX)?;
    let shape = match (ctx.shape(0).dims(), ctx.const_ints(1)) {
        (Some(dims), Some(p)) => {
            if p.len() != 2 * dims.len() {
                return Err(
                    ctx.shape_error(format!("paddings must be a [{}, 2] matrix", dims.len()))
                );
            }
            let mut out = Vec::with_capacity(dims.len());
            for (i, x) in dims.iter().enumerate() {
                out.push(match x {
                    Some(v) => {
                        let r = *v as i64 - p[2 * i] - p[2 * i + 1];
                        if r < 0 {
                            return Err(ctx.shape_error(format!(
                                "paddings {:?} exceed dimension {i} of size {v}",
                                &p[2 * i..2 * i + 2]
                            )));
                        }
                        Some(r as usize)
                    }
                    None => None,
                });
            }
            PartialShape::from_dims(out)
        }
        (Some(dims), None) => PartialShape::unknown_dims(dims.len()),
        _ => PartialShape::unknown(),
    };
    single(d, shape)
}

pub fn ops() -> Vec<OpDef> {
    let mut v: Vec<OpDef> = [
        "ReluGrad",
        "Relu6Grad",
        "EluGrad",
        "SeluGrad",
        "SoftplusGrad",
        "SoftsignGrad",
        "LeakyReluGrad",
        "TanhGrad",
        "SigmoidGrad",
        "SqrtGrad",
        "RsqrtGrad",
        "ReciprocalGrad",
    ]
    .iter()
    .map(|&n| OpDef::new(n, &["a", "b"], activation_grad))
    .collect();
    v.extend([
        OpDef::new(
            "BroadcastGradientArgs",
            &["s0", "s1"],
            broadcast_gradient_args,
        ),
        OpDef::new("ReducedShape", &["input_shape", "axes"], reduced_shape),
        OpDef::new("InvertPermutation", &["x"], invert_permutation),
        OpDef::new(
            "UnsortedSegmentSum",
            &["data", "segment_ids", "num_segments"],
            unsorted_segment_sum,
        ),
        OpDef::new(
            "StridedSliceGrad",
            &["shape", "begin", "end", "strides", "dy"],
            strided_slice_grad,
        ),
        OpDef::new("ScatterNd", &["indices", "updates", "shape"], scatter_nd),
        OpDef::new("BiasAddGrad", &["out_backprop"], bias_add_grad),
        OpDef::new("MirrorPadGrad", &["input", "paddings"], mirror_pad_grad),
    ]);
    let _ = DType::Int32;
    v
}
