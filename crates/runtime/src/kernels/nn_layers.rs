//! Kernels of the depthwise convolution, fused batch norm, LRN and
//! space/depth ops, and max pooling with argmax. The depthwise and space/depth ops are NHWC only
//! (construction rejects NCHW); fused batch norm also runs NCHW, transposed
//! around the channels-last kernel.

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::transpose;
use ferroflow_tensor::kernels::batch_norm::{self, BatchNormParams};
use ferroflow_tensor::kernels::conv::{Conv2dParams, Pool2dParams};
use ferroflow_tensor::kernels::depthwise;
use ferroflow_tensor::kernels::lrn::{self, LrnParams};
use ferroflow_tensor::kernels::pool_argmax;
use ferroflow_tensor::{bail, DType, Error, Result, Tensor};

fn conv_params(init: &KernelInit<'_>) -> Result<Conv2dParams> {
    let a = &init.node.attrs;
    Conv2dParams::parse(
        &init.node.op,
        &a.ints("strides")?,
        &a.ints("dilations")?,
        &a.str_or("padding", "")?,
        &a.ints("explicit_paddings")?,
    )
    .map_err(Error::into_runtime)
}

/// A 4-element size vector input (`input_sizes`, `filter_sizes`).
fn sizes(t: &Tensor, op: &str, what: &str) -> Result<Vec<usize>> {
    let v = t.to_i64_vec()?;
    if t.rank() != 1 || v.len() != 4 || v.iter().any(|&d| d < 0) {
        bail!(
            invalid_argument,
            "{op}: {what} must be a vector of 4 non-negative sizes, got {v:?} of shape {}",
            t.shape()
        );
    }
    Ok(v.into_iter().map(|d| d as usize).collect())
}

const TO_NHWC: [usize; 4] = [0, 2, 3, 1];
const TO_NCHW: [usize; 4] = [0, 3, 1, 2];

/// Whether the node's `data_format` is NCHW (else NHWC).
fn nchw(init: &KernelInit<'_>) -> Result<bool> {
    match init.node.attrs.str_or("data_format", "NHWC")?.as_str() {
        "NHWC" => Ok(false),
        "NCHW" => Ok(true),
        f => Err(Error::invalid_argument(format!(
            "{}: invalid data_format {f}",
            init.node.op
        ))),
    }
}

/// `t` channels-last: transposed from NCHW when `nchw` (rank 4 only).
fn to_nhwc(t: &Tensor, nchw: bool) -> Result<Tensor> {
    if nchw && t.rank() == 4 {
        transpose(t, &TO_NHWC)
    } else {
        Ok(t.clone())
    }
}

fn from_nhwc(t: Tensor, nchw: bool) -> Result<Tensor> {
    if nchw {
        transpose(&t, &TO_NCHW)
    } else {
        Ok(t)
    }
}

fn lrn_params(init: &KernelInit<'_>) -> Result<LrnParams> {
    let a = &init.node.attrs;
    let r = a.int_or("depth_radius", 5)?;
    if r < 0 {
        bail!(
            invalid_argument,
            "{}: depth_radius must be non-negative, got {r}",
            init.node.op
        );
    }
    Ok(LrnParams {
        depth_radius: r as usize,
        bias: a.float_or("bias", 1.0)? as f32,
        alpha: a.float_or("alpha", 1.0)? as f32,
        beta: a.float_or("beta", 0.5)? as f32,
    })
}

fn pool_params(init: &KernelInit<'_>) -> Result<(Pool2dParams, bool)> {
    let a = &init.node.attrs;
    let p = Pool2dParams::parse(
        &init.node.op,
        &a.ints("ksize")?,
        &a.ints("strides")?,
        &a.str_or("padding", "")?,
        &a.ints("explicit_paddings")?,
    )
    .map_err(Error::into_runtime)?;
    Ok((p, a.bool_or("include_batch_in_index", false)?))
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "MaxPoolWithArgmax",
        factory(|init| {
            let (p, batch) = pool_params(init)?;
            let idx = init.node.attrs.dtype_or("Targmax", DType::Int64)?;
            boxed(move |ctx| {
                let (y, i) = pool_argmax::max_pool_with_argmax(ctx.input(0)?, &p, batch, idx)?;
                ctx.output(y);
                ctx.output(i);
                Ok(())
            })
        }),
    );
    for (name, grad_grad) in [
        ("MaxPoolGradWithArgmax", false),
        ("MaxPoolGradGradWithArgmax", true),
    ] {
        reg(
            name,
            factory(move |init| {
                let (p, batch) = pool_params(init)?;
                boxed(move |ctx| {
                    let (x, g, i) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                    let y = if grad_grad {
                        pool_argmax::max_pool_grad_grad_with_argmax(x, g, i, &p, batch)?
                    } else {
                        pool_argmax::max_pool_grad_with_argmax(x, g, i, &p, batch)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "LRN",
        factory(|init| {
            let p = lrn_params(init)?;
            boxed(move |ctx| {
                let y = lrn::lrn(ctx.input(0)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "LRNGrad",
        factory(|init| {
            let p = lrn_params(init)?;
            boxed(move |ctx| {
                let dx = lrn::lrn_grad(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    for (name, to_depth) in [("SpaceToDepth", true), ("DepthToSpace", false)] {
        reg(
            name,
            factory(move |init| {
                let b = init.node.attrs.int("block_size")?.max(0) as usize;
                boxed(move |ctx| {
                    let x = ctx.input(0)?;
                    let y = if to_depth {
                        lrn::space_to_depth(x, b)?
                    } else {
                        lrn::depth_to_space(x, b)?
                    };
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "DepthwiseConv2dNative",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let y = depthwise::depthwise_conv2d(ctx.input(0)?, ctx.input(1)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "DepthwiseConv2dNativeBackpropInput",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let op = "DepthwiseConv2dNativeBackpropInput";
                let s = sizes(ctx.input(0)?, op, "input_sizes")?;
                let dx = depthwise::depthwise_conv2d_backprop_input(
                    &s,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    &p,
                )?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "DepthwiseConv2dNativeBackpropFilter",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let op = "DepthwiseConv2dNativeBackpropFilter";
                let s = sizes(ctx.input(1)?, op, "filter_sizes")?;
                let dw = depthwise::depthwise_conv2d_backprop_filter(
                    ctx.input(0)?,
                    &s,
                    ctx.input(2)?,
                    &p,
                )?;
                ctx.output(dw);
                Ok(())
            })
        }),
    );
    for (name, v3) in [
        ("FusedBatchNorm", false),
        ("FusedBatchNormV2", false),
        ("FusedBatchNormV3", true),
    ] {
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let p = BatchNormParams {
                    epsilon: a.float_or("epsilon", 1e-4)? as f32,
                    exponential_avg_factor: a.float_or("exponential_avg_factor", 1.0)? as f32,
                    is_training: a.bool_or("is_training", true)?,
                };
                let nchw = nchw(init)?;
                boxed(move |ctx| {
                    let x = to_nhwc(ctx.input(0)?, nchw)?;
                    let o = batch_norm::fused_batch_norm(
                        name,
                        &x,
                        ctx.input(1)?,
                        ctx.input(2)?,
                        ctx.input(3)?,
                        ctx.input(4)?,
                        &p,
                    )?;
                    ctx.output(from_nhwc(o.y, nchw)?);
                    ctx.output(o.batch_mean);
                    ctx.output(o.batch_variance);
                    ctx.output(o.saved_mean);
                    ctx.output(o.saved_variance);
                    if v3 {
                        // TensorFlow's CPU kernel leaves reserve_space_3 a scalar 0.
                        ctx.output(Tensor::scalar(0f32));
                    }
                    Ok(())
                })
            }),
        );
    }
    for name in [
        "FusedBatchNormGrad",
        "FusedBatchNormGradV2",
        "FusedBatchNormGradV3",
    ] {
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let epsilon = a.float_or("epsilon", 1e-4)? as f32;
                let is_training = a.bool_or("is_training", true)?;
                let nchw = nchw(init)?;
                boxed(move |ctx| {
                    let dy = to_nhwc(ctx.input(0)?, nchw)?;
                    let x = to_nhwc(ctx.input(1)?, nchw)?;
                    let g = batch_norm::fused_batch_norm_grad(
                        name,
                        &dy,
                        &x,
                        ctx.input(2)?,
                        ctx.input(3)?,
                        ctx.input(4)?,
                        epsilon,
                        is_training,
                    )?;
                    ctx.output(from_nhwc(g.x_backprop, nchw)?);
                    ctx.output(g.scale_backprop);
                    ctx.output(g.offset_backprop);
                    ctx.output(Tensor::from_vec([0], Vec::<f32>::new())?);
                    ctx.output(Tensor::from_vec([0], Vec::<f32>::new())?);
                    Ok(())
                })
            }),
        );
    }
}
