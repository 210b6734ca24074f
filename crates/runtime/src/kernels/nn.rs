//! Kernels for softmax, bias_add, the fused cross-entropies and top-k.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::array::{in_top_k, top_k};
use ferroflow_tensor::kernels::elementwise::{binary, BinaryOp};
use ferroflow_tensor::kernels::nn;
use ferroflow_tensor::{bail, ensure, Shape};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (name, log) in [("Softmax", false), ("LogSoftmax", true)] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let y = nn::softmax(ctx.input(0)?, log)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "BiasAdd",
        factory(|init| {
            let nchw = init.node.attrs.str_or("data_format", "NHWC")? == "NCHW";
            boxed(move |ctx| {
                let value = ctx.take_input(0)?;
                let bias = ctx.take_input(1)?;
                ensure!(
                    bias.rank() == 1,
                    invalid_argument,
                    "Biases must be 1D: {}",
                    bias.shape()
                );
                let channel = if nchw {
                    1
                } else {
                    value.rank().saturating_sub(1)
                };
                if value.rank() < 2 || value.dims()[channel] != bias.dims()[0] {
                    bail!(
                        invalid_argument,
                        "Must provide as many biases as the channel dimension of the input tensor: {} vs. {} in {}",
                        bias.shape(),
                        value.dims().get(channel).copied().unwrap_or(0),
                        value.shape()
                    );
                }
                let bias = if nchw {
                    let mut s = vec![1usize; value.rank() - 1];
                    s[0] = bias.dims()[0];
                    bias.with_shape(Shape::from(s))?
                } else {
                    bias
                };
                ctx.output(binary(BinaryOp::Add, value, bias)?);
                Ok(())
            })
        }),
    );
    reg(
        "SoftmaxCrossEntropyWithLogits",
        factory(|_| {
            boxed(|ctx| {
                let (loss, back) = nn::softmax_cross_entropy(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(loss);
                ctx.output(back);
                Ok(())
            })
        }),
    );
    reg(
        "SparseSoftmaxCrossEntropyWithLogits",
        factory(|_| {
            boxed(|ctx| {
                let (loss, back) = nn::sparse_softmax_cross_entropy(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(loss);
                ctx.output(back);
                Ok(())
            })
        }),
    );
    reg(
        "L2Loss",
        factory(|_| {
            boxed(|ctx| {
                let y = nn::l2_loss(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "TopKV2",
        factory(|_| {
            boxed(|ctx| {
                let k = ctx.input(1)?.scalar_i64()?;
                if k < 0 {
                    bail!(invalid_argument, "Need k >= 0, got {k}");
                }
                let (v, i) = top_k(ctx.input(0)?, k as usize)?;
                ctx.output(v);
                ctx.output(i);
                Ok(())
            })
        }),
    );
    reg(
        "InTopKV2",
        factory(|_| {
            boxed(|ctx| {
                let k = ctx.input(2)?.scalar_i64()?;
                let y = in_top_k(ctx.input(0)?, ctx.input(1)?, k)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
