//! Kernels of the quantized NN ops (`ferroflow_tensor::kernels::quantized_nn`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::conv::Pool2dParams;
use ferroflow_tensor::kernels::quantized_nn::{
    quantized_conv2d, quantized_pool, quantized_relu_x, QuantizedConvParams, QuantizedPool,
};
use ferroflow_tensor::{DType, Error, Tensor};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "QuantizedConv2D",
        factory(|init| {
            let a = &init.node.attrs;
            let dilations = match a.ints("dilations")? {
                d if d.is_empty() => vec![1; 4],
                d => d,
            };
            let p = QuantizedConvParams::parse(
                &a.ints("strides")?,
                &dilations,
                &a.str_or("padding", "")?,
            )?;
            let types = (
                a.dtype("Tinput")?,
                a.dtype("Tfilter")?,
                a.dtype_or("out_type", DType::QInt32)?,
            );
            boxed(move |ctx| {
                let ranges = [ctx.input(2)?, ctx.input(3)?, ctx.input(4)?, ctx.input(5)?];
                let (y, lo, hi) =
                    quantized_conv2d(ctx.input(0)?, ctx.input(1)?, ranges, &p, types)?;
                ctx.output(y);
                ctx.output(Tensor::scalar(lo));
                ctx.output(Tensor::scalar(hi));
                Ok(())
            })
        }),
    );
    for (op, pool) in [
        ("QuantizedAvgPool", QuantizedPool::Avg),
        ("QuantizedMaxPool", QuantizedPool::Max),
    ] {
        reg(
            op,
            factory(move |init| {
                let a = &init.node.attrs;
                let p = Pool2dParams::parse(
                    op,
                    &a.ints("ksize")?,
                    &a.ints("strides")?,
                    &a.str_or("padding", "")?,
                    &[],
                )
                .map_err(Error::into_runtime)?;
                let t = a.dtype("T")?;
                boxed(move |ctx| {
                    let (y, lo, hi) =
                        quantized_pool(pool, ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, &p, t)?;
                    ctx.output(y);
                    ctx.output(Tensor::scalar(lo));
                    ctx.output(Tensor::scalar(hi));
                    Ok(())
                })
            }),
        );
    }
    reg(
        "QuantizedReluX",
        factory(|init| {
            let a = &init.node.attrs;
            let t = a.dtype("Tinput")?;
            let out = a.dtype_or("out_type", DType::QUInt8)?;
            boxed(move |ctx| {
                let (y, lo, hi) = quantized_relu_x(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    ctx.input(3)?,
                    t,
                    out,
                )?;
                ctx.output(y);
                ctx.output(Tensor::scalar(lo));
                ctx.output(Tensor::scalar(hi));
                Ok(())
            })
        }),
    );
}
