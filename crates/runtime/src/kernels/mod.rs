//! Built-in kernels, one module per op family.

mod array;
mod bitwise;
mod bucketize;
mod candidate;
mod complex;
pub(crate) mod control_flow;
mod conv;
mod fake_quant;
mod farmhash;
mod fft;
mod grad;
mod linalg;
mod list;
mod logging;
mod lstm;
mod math;
mod math_special;
mod nn;
mod nn_layers;
mod nn_more;
mod quantize;
mod quantized_nn;
mod ragged;
mod random;
mod scalar_loop;
mod sdca;
mod segment;
mod sets;
mod sobol;
mod sparse;
mod state;
mod stateless_random;
mod strings;
mod sync;
mod unicode_script_table;

use crate::kernel::{Kernel, KernelFactory, OpContext};
use ferroflow_tensor::{DType, Result};

/// Registers every built-in kernel through `reg`.
pub(crate) fn register_builtin(reg: &mut dyn FnMut(&str, KernelFactory)) {
    array::register(reg);
    bitwise::register(reg);
    bucketize::register(reg);
    candidate::register(reg);
    complex::register(reg);
    control_flow::register(reg);
    conv::register(reg);
    fake_quant::register(reg);
    fft::register(reg);
    grad::register(reg);
    linalg::register(reg);
    list::register(reg);
    logging::register(reg);
    lstm::register(reg);
    math::register(reg);
    math_special::register(reg);
    nn::register(reg);
    nn_layers::register(reg);
    nn_more::register(reg);
    quantize::register(reg);
    quantized_nn::register(reg);
    ragged::register(reg);
    random::register(reg);
    sdca::register(reg);
    segment::register(reg);
    sobol::register(reg);
    sets::register(reg);
    sparse::register(reg);
    state::register(reg);
    stateless_random::register(reg);
    strings::register(reg);
    sync::register(reg);
}

/// Boxes a closure as a kernel (helps type inference of the context lifetime).
pub(crate) fn boxed<F>(f: F) -> Result<Box<dyn Kernel>>
where
    F: Fn(&mut OpContext<'_>) -> Result<()> + Send + Sync + 'static,
{
    Ok(Box::new(f))
}

/// TensorFlow's spelling of a dtype in runtime messages (`float`, `double`, ...).
pub(crate) fn tf_type_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "half",
        other => other.name(),
    }
}
