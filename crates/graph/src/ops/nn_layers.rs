//! The layer ops of TF1 convnets beyond `Conv2D`: depthwise convolution
//! (`DepthwiseConv2dNative` and its two backprops) and fused batch
//! normalization (`FusedBatchNorm`, `V2`, `V3` and their gradients), with
//! TensorFlow's op names, inputs, outputs and attrs; also `LRN`/`LRNGrad`
//! `SpaceToDepth`/`DepthToSpace` and `MaxPoolWithArgmax` with its gradients.

use super::conv::{conv_params, dims4, pool_params, pooled, require_nhwc, sizes_input, spatial};
use super::{single, InferContext, OpDef, FLOATS, INDEX, NUMERIC};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

fn depthwise(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    require_nhwc(ctx)?;
    let p = conv_params(ctx)?;
    let x = dims4(ctx, 0)?;
    let f = dims4(ctx, 1)?;
    if let (Some(a), Some(b)) = (x[3], f[2]) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    let (s, dl) = (p.strides, p.dilations);
    let oh = spatial(ctx, x[1], f[0], s[1], dl[1], p.padding, 0)?;
    let ow = spatial(ctx, x[2], f[1], s[2], dl[2], p.padding, 1)?;
    let oc = match (x[3].or(f[2]), f[3]) {
        (Some(c), Some(m)) => Some(c * m),
        _ => None,
    };
    single(d, PartialShape::from_dims(vec![x[0], oh, ow, oc]))
}

fn depthwise_backprop_input(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(1, FLOATS)?;
    ctx.expect_same(1, 2)?;
    require_nhwc(ctx)?;
    conv_params(ctx)?;
    let sizes = sizes_input(ctx, 0)?;
    let f = dims4(ctx, 1)?;
    let dy = dims4(ctx, 2)?;
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0].or(dy[0]), s[1], s[2], s[3].or(f[2])];
    single(d, PartialShape::from_dims(out))
}

fn depthwise_backprop_filter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 2)?;
    require_nhwc(ctx)?;
    conv_params(ctx)?;
    let sizes = sizes_input(ctx, 1)?;
    let x = dims4(ctx, 0)?;
    dims4(ctx, 2)?;
    let s = sizes.dims().unwrap_or(&[]);
    let out = vec![s[0], s[1], s[2].or(x[3]), s[3]];
    single(d, PartialShape::from_dims(out))
}

/// The channel count of a `[C]` vector input merged into `c`.
fn merge_channels(ctx: &InferContext, i: usize, c: &mut Option<usize>) -> Result<()> {
    ctx.expect_rank(i, 1)?;
    if let Some(k) = ctx.shape(i).dim(0) {
        match *c {
            Some(have) if have != k => {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {have} and {k}"))
                )
            }
            _ => *c = Some(k),
        }
    }
    Ok(())
}

/// `NHWC` or `NCHW`: the channel dimension of the rank-4 `x`.
fn channel_dim(ctx: &InferContext) -> Result<usize> {
    match ctx.attrs().str_or("data_format", "NHWC")?.as_str() {
        "NHWC" => Ok(3),
        "NCHW" => Ok(1),
        f => Err(ctx.shape_error(format!("Invalid data format {f}"))),
    }
}

/// `x`'s type (`T`) and the float32 statistics' type (`U`).
fn bn_types(ctx: &InferContext, x: usize, stats: &[usize]) -> Result<(DType, DType)> {
    let t = if ctx.def.name.ends_with("Norm") || ctx.def.name.ends_with("Grad") {
        ctx.expect_dtype(x, &[DType::Float32])?
    } else {
        ctx.expect_dtype(x, &[DType::Float16, DType::BFloat16, DType::Float32])?
    };
    for &i in stats {
        ctx.expect_dtype(i, &[DType::Float32])?;
    }
    Ok((t, DType::Float32))
}

/// FusedBatchNorm(V2/V3)(x, scale, offset, mean, variance) ->
/// (y, batch_mean, batch_variance, reserve_space_1, reserve_space_2
/// [, reserve_space_3]).
fn fused_batch_norm(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let (t, u) = bn_types(ctx, 0, &[1, 2, 3, 4])?;
    let cd = channel_dim(ctx)?;
    ctx.expect_rank(0, 4)?;
    let x = ctx.shape(0).clone();
    let mut c = x.dim(cd);
    merge_channels(ctx, 1, &mut c)?;
    merge_channels(ctx, 2, &mut c)?;
    let training = ctx.bool_or("is_training", true)?;
    let factor = ctx.attrs().float_or("exponential_avg_factor", 1.0)?;
    if !training || factor != 1.0 {
        merge_channels(ctx, 3, &mut c)?;
        merge_channels(ctx, 4, &mut c)?;
    } else {
        ctx.expect_rank(3, 1)?;
        ctx.expect_rank(4, 1)?;
    }
    let x = match (x.dims(), c) {
        (Some(d), Some(c)) => {
            let mut d = d.to_vec();
            d[cd] = Some(c);
            PartialShape::from_dims(d)
        }
        _ => x,
    };
    let vec = || OutputInfo::new(u, PartialShape::from_dims(vec![c]));
    let mut out = vec![OutputInfo::new(t, x), vec(), vec(), vec(), vec()];
    if ctx.def.name == "FusedBatchNormV3" {
        out.push(OutputInfo::new(u, PartialShape::unknown()));
    }
    Ok(out)
}

/// FusedBatchNormGrad(V2/V3)(y_backprop, x, scale, reserve_space_1,
/// reserve_space_2[, reserve_space_3]) -> (x_backprop, scale_backprop,
/// offset_backprop, reserve_space_3/4, reserve_space_4/5).
fn fused_batch_norm_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let (t, u) = bn_types(ctx, 0, &[2, 3, 4])?;
    ctx.expect_same(0, 1)?;
    let cd = channel_dim(ctx)?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 4)?;
    let x = ctx
        .shape(0)
        .merge(ctx.shape(1))
        .ok_or_else(|| ctx.shape_error("y_backprop and x must have the same shape"))?;
    let mut c = x.dim(cd);
    for i in [2, 3, 4] {
        merge_channels(ctx, i, &mut c)?;
    }
    let vec = || OutputInfo::new(u, PartialShape::from_dims(vec![c]));
    let empty = || OutputInfo::new(u, PartialShape::from_dims(vec![Some(0)]));
    Ok(vec![OutputInfo::new(t, x), vec(), vec(), empty(), empty()])
}

fn lrn(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, &[DType::Float16, DType::BFloat16, DType::Float32])?;
    for i in 1..ctx.num_inputs() {
        ctx.expect_same(0, i)?;
    }
    let mut s = ctx.shape(0).clone();
    for i in 0..ctx.num_inputs() {
        ctx.expect_rank(i, 4)?;
        s = s
            .merge(ctx.shape(i))
            .ok_or_else(|| ctx.shape_error("the inputs must have the same shape"))?;
    }
    if s.rank().is_none() {
        s = PartialShape::unknown_dims(4);
    }
    single(d, s)
}

/// SpaceToDepth and DepthToSpace (NHWC).
fn space_depth(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    require_nhwc(ctx)?;
    let b = ctx.int("block_size")?;
    if b < 2 {
        return Err(ctx.shape_error(format!(
            "Value for attr 'block_size' of {b} must be at least minimum 2"
        )));
    }
    let b = b as usize;
    let x = dims4(ctx, 0)?;
    let divide = |v: Option<usize>, by: usize| -> Result<Option<usize>> {
        match v {
            Some(v) if v % by != 0 => Err(ctx.shape_error(format!(
                "Dimension size must be evenly divisible by {by} but is {v}"
            ))),
            v => Ok(v.map(|v| v / by)),
        }
    };
    let out = if ctx.def.name == "SpaceToDepth" {
        vec![
            x[0],
            divide(x[1], b)?,
            divide(x[2], b)?,
            x[3].map(|c| c * b * b),
        ]
    } else {
        vec![
            x[0],
            x[1].map(|h| h * b),
            x[2].map(|w| w * b),
            divide(x[3], b * b)?,
        ]
    };
    single(ctx.dtype(0), PartialShape::from_dims(out))
}

fn max_pool_with_argmax(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC)?;
    let p = pool_params(ctx)?;
    let idx = ctx.type_or("Targmax", DType::Int64)?;
    if !INDEX.contains(&idx) {
        return Err(Error::type_error(format!(
            "Value for attr 'Targmax' of {idx} is not in the list of allowed values: int32, int64"
        )));
    }
    let s = pooled(ctx, 0, &p)?;
    Ok(vec![OutputInfo::new(d, s.clone()), OutputInfo::new(idx, s)])
}

/// MaxPoolGradWithArgmax(input, grad, argmax) -> input's shape;
/// MaxPoolGradGradWithArgmax(input, grad, argmax) -> the pooled shape.
fn max_pool_grad_with_argmax(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_dtype(2, INDEX)?;
    let p = pool_params(ctx)?;
    let y = pooled(ctx, 0, &p)?;
    let x = ctx.shape(0).clone();
    let (grad_shape, out) = if ctx.def.name == "MaxPoolGradWithArgmax" {
        (y.clone(), x)
    } else {
        (x, y.clone())
    };
    if !ctx.shape(1).is_compatible_with(&grad_shape) || !ctx.shape(2).is_compatible_with(&y) {
        return Err(ctx.shape_error(format!(
            "grad must have shape {grad_shape} and argmax shape {y}"
        )));
    }
    single(d, out)
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("MaxPoolWithArgmax", &["input"], max_pool_with_argmax),
        OpDef::new(
            "MaxPoolGradWithArgmax",
            &["input", "grad", "argmax"],
            max_pool_grad_with_argmax,
        ),
        OpDef::new(
            "MaxPoolGradGradWithArgmax",
            &["input", "grad", "argmax"],
            max_pool_grad_with_argmax,
        ),
        OpDef::new("LRN", &["input"], lrn),
        OpDef::new(
            "LRNGrad",
            &["input_grads", "input_image", "output_image"],
            lrn,
        ),
        OpDef::new("SpaceToDepth", &["input"], space_depth),
        OpDef::new("DepthToSpace", &["input"], space_depth),
        OpDef::new("DepthwiseConv2dNative", &["input", "filter"], depthwise),
        OpDef::new(
            "DepthwiseConv2dNativeBackpropInput",
            &["input_sizes", "filter", "out_backprop"],
            depthwise_backprop_input,
        ),
        OpDef::new(
            "DepthwiseConv2dNativeBackpropFilter",
            &["input", "filter_sizes", "out_backprop"],
            depthwise_backprop_filter,
        ),
        OpDef::new(
            "FusedBatchNorm",
            &["x", "scale", "offset", "mean", "variance"],
            fused_batch_norm,
        ),
        OpDef::new(
            "FusedBatchNormV2",
            &["x", "scale", "offset", "mean", "variance"],
            fused_batch_norm,
        ),
        OpDef::new(
            "FusedBatchNormV3",
            &["x", "scale", "offset", "mean", "variance"],
            fused_batch_norm,
        ),
        OpDef::new(
            "FusedBatchNormGrad",
            &[
                "y_backprop",
                "x",
                "scale",
                "reserve_space_1",
                "reserve_space_2",
            ],
            fused_batch_norm_grad,
        ),
        OpDef::new(
            "FusedBatchNormGradV2",
            &[
                "y_backprop",
                "x",
                "scale",
                "reserve_space_1",
                "reserve_space_2",
            ],
            fused_batch_norm_grad,
        ),
        OpDef::new(
            "FusedBatchNormGradV3",
            &[
                "y_backprop",
                "x",
                "scale",
                "reserve_space_1",
                "reserve_space_2",
                "reserve_space_3",
            ],
            fused_batch_norm_grad,
        ),
    ]
}
