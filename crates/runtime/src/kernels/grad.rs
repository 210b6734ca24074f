//! Kernels of the ops gradient graphs are built from.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::SliceMasks;
use ferroflow_tensor::kernels::elementwise::cast;
use ferroflow_tensor::kernels::grad::{self as g, ActivationGrad};
use ferroflow_tensor::{bail, ensure, Tensor};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    use ActivationGrad::*;
    let acts = [
        ("ReluGrad", Relu),
        ("Relu6Grad", Relu6),
        ("EluGrad", Elu),
        ("SeluGrad", Selu),
        ("SoftplusGrad", Softplus),
        ("SoftsignGrad", Softsign),
        ("TanhGrad", Tanh),
        ("SigmoidGrad", Sigmoid),
        ("SqrtGrad", Sqrt),
        ("RsqrtGrad", Rsqrt),
        ("ReciprocalGrad", Reciprocal),
    ];
    for (name, op) in acts {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let a = ctx.take_input(0)?;
                    let b = ctx.take_input(1)?;
                    ctx.output(g::activation_grad(op, a, b)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "LeakyReluGrad",
        factory(|init| {
            let alpha = init.node.attrs.float_or("alpha", 0.2)?;
            boxed(move |ctx| {
                let a = ctx.take_input(0)?;
                let b = ctx.take_input(1)?;
                ctx.output(g::activation_grad(LeakyRelu(alpha), a, b)?);
                Ok(())
            })
        }),
    );
    reg(
        "BroadcastGradientArgs",
        factory(|_| {
            boxed(|ctx| {
                let dt = ctx.input(0)?.dtype();
                let (r0, r1) = g::broadcast_gradient_args(
                    &ctx.input(0)?.to_i64_vec()?,
                    &ctx.input(1)?.to_i64_vec()?,
                )?;
                ctx.output(cast(&Tensor::vector(r0), dt)?);
                ctx.output(cast(&Tensor::vector(r1), dt)?);
                Ok(())
            })
        }),
    );
    reg(
        "ReducedShape",
        factory(|_| {
            boxed(|ctx| {
                let dt = ctx.input(0)?.dtype();
                let s =
                    g::reduced_shape(&ctx.input(0)?.to_i64_vec()?, &ctx.input(1)?.to_i64_vec()?)?;
                ctx.output(cast(&Tensor::vector(s), dt)?);
                Ok(())
            })
        }),
    );
    reg(
        "InvertPermutation",
        factory(|_| {
            boxed(|ctx| {
                let x = ctx.input(0)?;
                let inv = g::invert_permutation(&x.to_i64_vec()?)?;
                let y = cast(&Tensor::vector(inv), x.dtype())?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "UnsortedSegmentSum",
        factory(|_| {
            boxed(|ctx| {
                let num = ctx.input(2)?.scalar_i64()?;
                if num < 0 {
                    bail!(
                        invalid_argument,
                        "num_segments must be non-negative, got {num}"
                    );
                }
                let y = g::unsorted_segment_sum(ctx.input(0)?, ctx.input(1)?, num as usize)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "StridedSliceGrad",
        factory(|init| {
            let a = &init.node.attrs;
            let masks = SliceMasks {
                begin: a.int_or("begin_mask", 0)?,
                end: a.int_or("end_mask", 0)?,
                ellipsis: a.int_or("ellipsis_mask", 0)?,
                new_axis: a.int_or("new_axis_mask", 0)?,
                shrink_axis: a.int_or("shrink_axis_mask", 0)?,
            };
            boxed(move |ctx| {
                let y = g::strided_slice_grad(
                    &ctx.input(0)?.to_i64_vec()?,
                    &ctx.input(1)?.to_i64_vec()?,
                    &ctx.input(2)?.to_i64_vec()?,
                    &ctx.input(3)?.to_i64_vec()?,
                    masks,
                    ctx.input(4)?,
                )?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "ScatterNd",
        factory(|_| {
            boxed(|ctx| {
                let y = g::scatter_nd(ctx.input(0)?, ctx.input(1)?, &ctx.input(2)?.to_i64_vec()?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "MirrorPadGrad",
        factory(|init| {
            let symmetric = match init
                .node
                .attrs
                .str_or("mode", "REFLECT")?
                .to_uppercase()
                .as_str()
            {
                "REFLECT" => false,
                "SYMMETRIC" => true,
                other => bail!(value, "MirrorPadGrad: unknown mode {other}"),
            };
            boxed(move |ctx| {
                let p = ctx.input(1)?.to_i64_vec()?;
                ensure!(
                    p.len() % 2 == 0,
                    invalid_argument,
                    "MirrorPadGrad: paddings must be a [rank, 2] matrix, got {}",
                    ctx.input(1)?.shape()
                );
                let pairs: Vec<(i64, i64)> = p.chunks(2).map(|c| (c[0], c[1])).collect();
                let y = g::mirror_pad_grad(ctx.input(0)?, &pairs, symmetric)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "BiasAddGrad",
        factory(|init| {
            let nchw = init.node.attrs.str_or("data_format", "NHWC")? == "NCHW";
            boxed(move |ctx| {
                let y = g::bias_add_grad(ctx.input(0)?, nchw)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
