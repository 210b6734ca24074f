//! Kernels of the fused LSTM ops (`BlockLSTM`, `BlockLSTMV2` and their
//! gradients) over `ferroflow_tensor::kernels::lstm`.

use super::boxed;
use crate::kernel::{factory, KernelFactory, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::lstm::{self, GateLayout, LstmBackInputs, LstmInputs, LstmParams};
use ferroflow_tensor::Result;

/// Inputs 1..=8 (after `seq_len_max`).
fn inputs<'a>(ctx: &'a OpContext<'_>) -> Result<LstmInputs<'a>> {
    Ok(LstmInputs {
        x: ctx.input(1)?,
        cs_prev: ctx.input(2)?,
        h_prev: ctx.input(3)?,
        w: ctx.input(4)?,
        wci: ctx.input(5)?,
        wcf: ctx.input(6)?,
        wco: ctx.input(7)?,
        b: ctx.input(8)?,
    })
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (name, layout) in [
        ("BlockLSTM", GateLayout::Icfo),
        ("BlockLSTMV2", GateLayout::Ifco),
    ] {
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let v2 = layout == GateLayout::Ifco;
                let p = LstmParams {
                    // V2 has no forget_bias attr: its forget gate adds nothing.
                    forget_bias: if v2 {
                        0.0
                    } else {
                        a.float_or("forget_bias", 1.0)? as f32
                    },
                    cell_clip: a.float_or("cell_clip", if v2 { 0.0 } else { 3.0 })? as f32,
                    use_peephole: a.bool_or("use_peephole", false)?,
                    layout,
                };
                boxed(move |ctx| {
                    let o = lstm::block_lstm(name, ctx.input(0)?, &inputs(ctx)?, &p)?;
                    for t in [o.i, o.cs, o.f, o.o, o.ci, o.co, o.h] {
                        ctx.output(t);
                    }
                    Ok(())
                })
            }),
        );
    }
    for (name, layout) in [
        ("BlockLSTMGrad", GateLayout::Icfo),
        ("BlockLSTMGradV2", GateLayout::Ifco),
    ] {
        reg(
            name,
            factory(move |init| {
                let use_peephole = init.node.attrs.bool_or("use_peephole", false)?;
                boxed(move |ctx| {
                    let g = {
                        let back = LstmBackInputs {
                            i: ctx.input(9)?,
                            cs: ctx.input(10)?,
                            f: ctx.input(11)?,
                            o: ctx.input(12)?,
                            ci: ctx.input(13)?,
                            co: ctx.input(14)?,
                            h: ctx.input(15)?,
                            cs_grad: ctx.input(16)?,
                            h_grad: ctx.input(17)?,
                        };
                        lstm::block_lstm_grad(
                            name,
                            ctx.input(0)?,
                            &inputs(ctx)?,
                            &back,
                            use_peephole,
                            layout,
                        )?
                    };
                    for t in [g.x, g.cs_prev, g.h_prev, g.w, g.wci, g.wcf, g.wco, g.b] {
                        ctx.output(t);
                    }
                    Ok(())
                })
            }),
        );
    }
}
