//! Kernels of the convolution and pooling ops (NHWC only; construction
//! already rejected other data formats).

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::conv::{self, Conv2dParams, Pool2dParams};
use ferroflow_tensor::{bail, Error, Result, Tensor};

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

fn pool_params(init: &KernelInit<'_>) -> Result<Pool2dParams> {
    let a = &init.node.attrs;
    Pool2dParams::parse(
        &init.node.op,
        &a.ints("ksize")?,
        &a.ints("strides")?,
        &a.str_or("padding", "")?,
        &a.ints("explicit_paddings")?,
    )
    .map_err(Error::into_runtime)
}

/// A 4-element size vector input (`input_sizes`, `filter_sizes`, ...).
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

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Conv2D",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let y = conv::conv2d(ctx.input(0)?, ctx.input(1)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Conv2DBackpropInput",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(0)?, "Conv2DBackpropInput", "input_sizes")?;
                let dx = conv::conv2d_backprop_input(&s, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "Conv2DBackpropFilter",
        factory(|init| {
            let p = conv_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(1)?, "Conv2DBackpropFilter", "filter_sizes")?;
                let dw = conv::conv2d_backprop_filter(ctx.input(0)?, &s, ctx.input(2)?, &p)?;
                ctx.output(dw);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPool",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y = conv::max_pool(ctx.input(0)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPoolGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let dx = conv::max_pool_grad(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "MaxPoolGradGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y = conv::max_pool_grad_grad(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "AvgPool",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let y = conv::avg_pool(ctx.input(0)?, &p)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "AvgPoolGrad",
        factory(|init| {
            let p = pool_params(init)?;
            boxed(move |ctx| {
                let s = sizes(ctx.input(0)?, "AvgPoolGrad", "orig_input_shape")?;
                let dx = conv::avg_pool_grad(&s, ctx.input(1)?, &p)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
}
