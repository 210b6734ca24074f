//! Kernels of the ops that make tensors from a few numbers: `Fill`,
//! `ZerosLike`, `OnesLike`, `Range`, `LinSpace` and `OneHot`.

use super::shape_arg;
use crate::kernel::{factory, KernelFactory};
use crate::kernels::boxed;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array as k;
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::{Result, Tensor};

fn ones_like(x: &Tensor) -> Result<Tensor> {
    let one = cast(&Tensor::scalar(1i64), x.dtype())?;
    k::fill(x.shape(), &one)
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Fill",
        factory(|_| {
            boxed(|ctx| {
                let shape = shape_arg(ctx.input(0)?, "dims")?;
                let y = k::fill(&shape, ctx.input(1)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ZerosLike",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let y = Tensor::zeros(x.dtype(), x.shape().clone());
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "OnesLike",
        factory(|_| {
            boxed(|ctx| {
                let y = ones_like(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "Range",
        factory(|_| {
            boxed(|ctx| {
                let d = ctx.input(0)?.dtype();
                let (s, l, st) = (
                    ctx.input(0)?.scalar_f64()?,
                    ctx.input(1)?.scalar_f64()?,
                    ctx.input(2)?.scalar_f64()?,
                );
                ctx.output(k::range(s, l, st, d)?);
                Ok(())
            })
        }),
    );
    reg(
        "LinSpace",
        factory(|_| {
            boxed(|ctx| {
                let d = ctx.input(0)?.dtype();
                let (s, e, n) = (
                    ctx.input(0)?.scalar_f64()?,
                    ctx.input(1)?.scalar_f64()?,
                    ctx.input(2)?.scalar_i64()?,
                );
                ctx.output(k::linspace(s, e, n, d)?);
                Ok(())
            })
        }),
    );
    reg(
        "OneHot",
        factory(|init| {
            let axis = init.node.attrs.int_or("axis", -1)?;
            boxed(move |ctx| {
                let depth = ctx.input(1)?.scalar_i64()?;
                let y = k::one_hot(ctx.input(0)?, depth, ctx.input(2)?, ctx.input(3)?, axis)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
