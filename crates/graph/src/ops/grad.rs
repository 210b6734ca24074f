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

fn strided_slice_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(4), ctx.shape_value(0))
}

/// `ScatterNd(indices, updates, shape)`: `shape`, with TF's check that `updates` is
/// `indices.shape[:-1] + shape[indices.shape[-1]:]` where the shapes are known.
fn scatter_nd(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    let out = ctx.shape_value(2);
    if let (Some(idx), Some(upd)) = (ctx.shape(0).dims(), ctx.shape(1).dims()) {
        if let Some((Some(depth), outer)) = idx.split_last().map(|(l, o)| (*l, o)) {
            let show = |d: &[Option<usize>]| {
                let parts: Vec<String> = d
                    .iter()
                    .map(|x| x.map_or("?".to_string(), |v| v.to_string()))
                    .collect();
                format!("[{}]", parts.join(","))
            };
            let agree = |a: &[Option<usize>], b: &[Option<usize>]| {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.is_none() || y.is_none() || x == y)
            };
            let k = outer.len();
            if upd.len() < k || !agree(&upd[..k], outer) {
                return Err(ctx.shape_error(format!(
                    "Dimensions [0,{k}) of indices[shape={}] = {} must match dimensions [0,{k}) of \
                     updates[shape={}] = {}",
                    show(idx),
                    show(outer),
                    show(upd),
                    show(&upd[..k.min(upd.len())])
                )));
            }
            if let Some(o) = out.dims() {
                if depth <= o.len() && !agree(&upd[k..], &o[depth..]) {
                    return Err(ctx.shape_error(format!(
                        "Dimensions [{k},{}) of updates[shape={}] = {} must match dimensions \
                         [{depth},{}) of output_shape[shape={}] = {}",
                        upd.len(),
                        show(upd),
                        show(&upd[k..]),
                        o.len(),
                        show(o),
                        show(&o[depth..])
                    )));
                }
            }
        }
    }
    single(ctx.dtype(1), out)
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
