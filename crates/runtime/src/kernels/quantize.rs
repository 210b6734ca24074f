//! Kernels of the quantization ops (`ferroflow_tensor::kernels::quantize`).

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::quantize::{
    dequantize, quantize_and_dequantize, quantize_and_dequantize_v4_grad, quantize_v2,
    quantized_concat, DequantizeAttrs, QdqAttrs, QuantizeMode, QuantizeV2Attrs,
};
use ferroflow_tensor::{bail, ensure, DType, Result, Tensor};

fn mode(init: &KernelInit) -> Result<QuantizeMode> {
    let m = init.node.attrs.str_or("mode", "MIN_COMBINED")?;
    QuantizeMode::parse(&init.node.op, &m)
}

fn quantize_attrs(init: &KernelInit) -> Result<(DType, QuantizeV2Attrs)> {
    let attrs = &init.node.attrs;
    let a = QuantizeV2Attrs::new(
        mode(init)?,
        &attrs.str_or("round_mode", "HALF_AWAY_FROM_ZERO")?,
        attrs.bool_or("narrow_range", false)?,
        attrs.int_or("axis", -1)?,
        attrs.float_or("ensure_minimum_range", 0.01)? as f32,
    )?;
    Ok((attrs.dtype("T")?, a))
}

fn dequantize_attrs(init: &KernelInit) -> Result<(DType, DequantizeAttrs)> {
    let attrs = &init.node.attrs;
    let a = DequantizeAttrs::new(
        mode(init)?,
        attrs.bool_or("narrow_range", false)?,
        attrs.int_or("axis", -1)?,
        attrs.dtype_or("dtype", DType::Float32)?,
    )?;
    Ok((attrs.dtype("T")?, a))
}

/// V2/V3/V4's attrs; V3's `num_bits` is an input, read at run time.
fn qdq_attrs(init: &KernelInit) -> Result<QdqAttrs> {
    let attrs = &init.node.attrs;
    let half_to_even = match attrs.str_or("round_mode", "HALF_TO_EVEN")?.as_str() {
        "HALF_TO_EVEN" => true,
        "HALF_UP" => false,
        other => {
            bail!(
                invalid_argument,
                "Round mode string must be 'HALF_UP' or 'HALF_TO_EVEN', is '{other}'"
            )
        }
    };
    let a = QdqAttrs {
        signed_input: attrs.bool_or("signed_input", true)?,
        num_bits: attrs.int_or("num_bits", 8)?,
        range_given: attrs.bool_or("range_given", false)?,
        half_to_even,
        narrow_range: attrs.bool_or("narrow_range", false)?,
        axis: attrs.int_or("axis", -1)?,
    };
    if init.node.op != "QuantizeAndDequantizeV3" {
        a.check_bits(&init.node.op)?;
    }
    Ok(a)
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "QuantizeV2",
        factory(|init| {
            let (t, a) = quantize_attrs(init)?;
            boxed(move |ctx| {
                let (y, lo, hi) = quantize_v2(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, t, &a)?;
                ctx.output(y);
                ctx.output(lo);
                ctx.output(hi);
                Ok(())
            })
        }),
    );
    reg(
        "Dequantize",
        factory(|init| {
            let (t, a) = dequantize_attrs(init)?;
            boxed(move |ctx| {
                let y = dequantize(ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, t, &a)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
    for op in [
        "QuantizeAndDequantizeV2",
        "QuantizeAndDequantizeV3",
        "QuantizeAndDequantizeV4",
    ] {
        reg(
            op,
            factory(move |init| {
                let a = qdq_attrs(init)?;
                boxed(move |ctx| {
                    let mut a = a;
                    if op == "QuantizeAndDequantizeV3" {
                        let bits = ctx.input(3)?;
                        ensure!(
                            bits.rank() == 0,
                            invalid_argument,
                            "{op}: num_bits must be a scalar, got shape {}",
                            bits.shape()
                        );
                        a.num_bits = bits.scalar_i64()?;
                    }
                    let y = quantize_and_dequantize(
                        op,
                        ctx.input(0)?,
                        ctx.input(1)?,
                        ctx.input(2)?,
                        &a,
                    )?;
                    ctx.output(y);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "QuantizeAndDequantizeV4Grad",
        factory(|init| {
            let axis = init.node.attrs.int_or("axis", -1)?;
            boxed(move |ctx| {
                let (dx, dmin, dmax) = quantize_and_dequantize_v4_grad(
                    ctx.input(0)?,
                    ctx.input(1)?,
                    ctx.input(2)?,
                    ctx.input(3)?,
                    axis,
                )?;
                ctx.output(dx);
                ctx.output(dmin);
                ctx.output(dmax);
                Ok(())
            })
        }),
    );
    reg(
        "QuantizedConcat",
        factory(|init| {
            let t = init.node.attrs.dtype("T")?;
            boxed(move |ctx| {
                let n = (ctx.num_inputs() - 1) / 3;
                let axis = ctx.input(0)?;
                ensure!(
                    axis.rank() == 0,
                    invalid_argument,
                    "Concat dim tensor should be a scalar integer, but got shape {}",
                    axis.shape()
                );
                let axis = axis.scalar_i64()?;
                let all = (1..1 + 3 * n)
                    .map(|i| ctx.input(i))
                    .collect::<Result<Vec<&Tensor>>>()?;
                let (values, rest) = all.split_at(n);
                let (mins, maxes) = rest.split_at(n);
                let (y, lo, hi) = quantized_concat(axis, values, mins, maxes, t)?;
                ctx.output(y);
                ctx.output(Tensor::scalar(lo));
                ctx.output(Tensor::scalar(hi));
                Ok(())
            })
        }),
    );
}
