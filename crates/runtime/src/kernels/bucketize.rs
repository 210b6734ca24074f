//! Kernel of `Bucketize` (numeric code in
//! `ferroflow_tensor::kernels::bucketize`).

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrValue;
use ferroflow_tensor::kernels::bucketize::{bucketize, check_boundaries};
use ferroflow_tensor::{Error, Result};

/// The `boundaries` attr as float32 values (TensorFlow stores `list(float)`
/// as floats); an empty list may arrive untyped.
fn boundaries(a: &ferroflow_graph::Attrs) -> Result<Vec<f32>> {
    match a.get("boundaries") {
        Some(AttrValue::FloatList(v)) => Ok(v.iter().map(|&b| b as f32).collect()),
        Some(AttrValue::IntList(v)) => Ok(v.iter().map(|&b| b as f32).collect()),
        None => Err(Error::invalid_argument(
            "Bucketize: missing attr 'boundaries'",
        )),
        Some(other) => Err(Error::invalid_argument(format!(
            "Bucketize: attr 'boundaries' must be a list of floats, got {other:?}"
        ))),
    }
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Bucketize",
        factory(|init| {
            let b = boundaries(&init.node.attrs)?;
            check_boundaries(&b)?;
            boxed(move |ctx| {
                let y = bucketize(ctx.input(0)?, &b)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
