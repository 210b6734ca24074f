//! Kernels of TensorFlow's bitwise ops (numeric code in
//! `ferroflow_tensor::kernels::bitwise`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_tensor::kernels::bitwise::{bitwise_binary, invert, population_count, BitwiseOp};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for op in [
        BitwiseOp::And,
        BitwiseOp::Or,
        BitwiseOp::Xor,
        BitwiseOp::LeftShift,
        BitwiseOp::RightShift,
    ] {
        reg(
            op.name(),
            factory(move |_| {
                boxed(move |ctx| {
                    let y = bitwise_binary(op, ctx.input(0)?, ctx.input(1)?)?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "Invert",
        factory(|_| {
            boxed(|ctx| {
                let y = invert(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "PopulationCount",
        factory(|_| {
            boxed(|ctx| {
                let y = population_count(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
