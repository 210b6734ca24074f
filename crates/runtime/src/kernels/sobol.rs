//! The `SobolSample` kernel (`ferroflow_tensor::kernels::sobol`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::sobol::sobol_sample;
use ferroflow_tensor::{ensure, DType, Result, Tensor};

fn scalar(t: &Tensor, what: &str) -> Result<i64> {
    ensure!(
        t.rank() == 0,
        invalid_argument,
        "SobolSample: {what} must be a scalar, got shape {}",
        t.shape()
    );
    t.scalar_i64()
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "SobolSample",
        factory(|init| {
            let dtype = init.node.attrs.dtype_or("dtype", DType::Float32)?;
            boxed(move |ctx| {
                let y = sobol_sample(
                    scalar(ctx.input(0)?, "dim")?,
                    scalar(ctx.input(1)?, "num_results")?,
                    scalar(ctx.input(2)?, "skip")?,
                    dtype,
                )?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
