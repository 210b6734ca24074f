//! Kernels of the special functions and the elementwise ops and reductions
//! around them (`ferroflow_tensor::kernels::special`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::ensure;
use ferroflow_tensor::kernels::special::{
    betainc, bincount, cumulative_logsumexp, euclidean_norm, special_binary, special_unary,
    SpecialBinary, SpecialUnary,
};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for op in SpecialUnary::ALL {
        reg(
            op.op_type(),
            factory(move |_| {
                boxed(move |ctx| {
                    let y = special_unary(op, ctx.input(0)?)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    for op in SpecialBinary::ALL {
        reg(
            op.op_type(),
            factory(move |_| {
                boxed(move |ctx| {
                    let a = ctx.take_input(0)?;
                    let b = ctx.take_input(1)?;
                    ctx.output(special_binary(op, a, b)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "Betainc",
        factory(|_| {
            boxed(|ctx| {
                let y = betainc(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "CumulativeLogsumexp",
        factory(|init| {
            let exclusive = init.node.attrs.bool_or("exclusive", false)?;
            let reverse = init.node.attrs.bool_or("reverse", false)?;
            boxed(move |ctx| {
                let axis = ctx.input(1)?.scalar_i64()?;
                let y = cumulative_logsumexp(ctx.input(0)?, axis, exclusive, reverse)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "EuclideanNorm",
        factory(|init| {
            let keep = init.node.attrs.bool_or("keep_dims", false)?;
            boxed(move |ctx| {
                let axes = ctx.input(1)?.to_i64_vec()?;
                let y = euclidean_norm(ctx.input(0)?, &axes, keep)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for name in ["Bincount", "DenseBincount"] {
        reg(
            name,
            factory(move |init| {
                let binary_output = init.node.attrs.bool_or("binary_output", false)?;
                boxed(move |ctx| {
                    let size_t = ctx.input(1)?;
                    ensure!(
                        size_t.rank() == 0,
                        invalid_argument,
                        "{name}: size must be a scalar, got shape {}",
                        size_t.shape()
                    );
                    let size = size_t.scalar_i64()?;
                    let y = bincount(name, ctx.input(0)?, size, ctx.input(2)?, binary_output)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
}
