//! Kernels of the complex-number ops
//! (`ferroflow_tensor::kernels::complex`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_tensor::kernels::complex;
use ferroflow_tensor::{Result, Tensor};

/// Registers a kernel of one input computed by `f`.
fn unary(reg: &mut dyn FnMut(&str, KernelFactory), op: &str, f: fn(&Tensor) -> Result<Tensor>) {
    reg(
        op,
        factory(move |_| {
            boxed(move |ctx| {
                let y = f(ctx.input(0)?)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Complex",
        factory(|_| {
            boxed(|ctx| {
                let z = complex::complex(ctx.input(0)?, ctx.input(1)?)?;
                ctx.output(z);
                Ok(())
            })
        }),
    );
    unary(reg, "Real", complex::real);
    unary(reg, "Imag", complex::imag);
    unary(reg, "Angle", complex::angle);
    unary(reg, "ComplexAbs", complex::abs);
    unary(reg, "Conj", complex::conj);
}
