//! Kernels of the fake-quant ops (`ferroflow_tensor::kernels::fake_quant`).

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::fake_quant::{
    fake_quant_args, fake_quant_args_gradient, fake_quant_per_channel,
    fake_quant_per_channel_gradient, fake_quant_vars, fake_quant_vars_gradient, QuantBits,
};
use ferroflow_tensor::Result;

/// The node's `num_bits` / `narrow_range` grid (checked when the plan is built).
fn bits(init: &KernelInit) -> Result<QuantBits> {
    let attrs = &init.node.attrs;
    QuantBits::new(
        &init.node.op,
        attrs.int_or("num_bits", 8)?,
        attrs.bool_or("narrow_range", false)?,
    )
}

/// The `min`/`max` attrs of the `Args` ops, as f32.
fn range(init: &KernelInit) -> Result<(f32, f32)> {
    let attrs = &init.node.attrs;
    Ok((
        attrs.float_or("min", -6.0)? as f32,
        attrs.float_or("max", 6.0)? as f32,
    ))
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "FakeQuantWithMinMaxArgs",
        factory(|init| {
            let (b, (lo, hi)) = (bits(init)?, range(init)?);
            boxed(move |ctx| {
                let y = fake_quant_args(ctx.input(0)?, lo, hi, b)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "FakeQuantWithMinMaxArgsGradient",
        factory(|init| {
            let (b, (lo, hi)) = (bits(init)?, range(init)?);
            boxed(move |ctx| {
                let dx = fake_quant_args_gradient(ctx.input(0)?, ctx.input(1)?, lo, hi, b)?;
                ctx.output(dx);
                Ok(())
            })
        }),
    );
    reg(
        "FakeQuantWithMinMaxVars",
        factory(|init| {
            let b = bits(init)?;
            boxed(move |ctx| {
                let y = fake_quant_vars(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, b)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    reg(
        "FakeQuantWithMinMaxVarsPerChannel",
        factory(|init| {
            let b = bits(init)?;
            boxed(move |ctx| {
                let y = fake_quant_per_channel(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, b)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for (name, per_channel) in [
        ("FakeQuantWithMinMaxVarsGradient", false),
        ("FakeQuantWithMinMaxVarsPerChannelGradient", true),
    ] {
        reg(
            name,
            factory(move |init| {
                let b = bits(init)?;
                boxed(move |ctx| {
                    let f = if per_channel {
                        fake_quant_per_channel_gradient
                    } else {
                        fake_quant_vars_gradient
                    };
                    let (dx, dmin, dmax) = f(
                        ctx.input(0)?,
                        ctx.input(1)?,
                        ctx.input(2)?,
                        ctx.input(3)?,
                        b,
                    )?;
                    ctx.output(dx);
                    ctx.output(dmin);
                    ctx.output(dmax);
                    Ok(())
                })
            }),
        );
    }
}
