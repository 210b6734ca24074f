//! Gradients of the Gamma samplers with respect to alpha (implicit
//! reparameterization, TensorFlow's `random_grad.py` and
//! `stateless_random_ops`' gradients): `sum over the sample dimensions of
//! grad * RandomGammaGrad(alpha, sample)`.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{Node, Output};
use ferroflow_tensor::{DType, Result};

type R = Result<Vec<Option<Grad>>>;

/// `d sample / d alpha` summed over the leading `num_sample_dims` axes.
fn gamma_alpha_grad(
    b: &mut Builder<'_>,
    grad: Output,
    alpha: Output,
    sample: Output,
    num_sample_dims: Output,
) -> Result<Output> {
    // alpha reshaped to [1] * num_sample_dims + shape(alpha).
    let one = b.scalar_i32(1)?;
    let dims = b.pack(&[num_sample_dims], 0)?;
    let ones = b.fill(dims, one)?;
    let ashape = b.shape(alpha)?;
    let axis0 = b.scalar_i32(0)?;
    let new_shape = b.concat(&[ones, ashape], axis0)?;
    let alpha_b = b.reshape(alpha, new_shape)?;
    let partial = b.op("RandomGammaGrad", &[alpha_b, sample], vec![])?;
    let prod = b.mul(grad, partial)?;
    let zero = b.scalar_i32(0)?;
    let step = b.scalar_i32(1)?;
    let axes = b.op("Range", &[zero, num_sample_dims, step], vec![])?;
    b.sum(prod, axes, false)
}

/// The number of elements of the 1-D `shape` input, as int32.
fn shape_len(b: &mut Builder<'_>, shape: Output) -> Result<Output> {
    let s = b.size(shape)?;
    if b.dtype(s) == DType::Int32 {
        Ok(s)
    } else {
        b.cast(s, DType::Int32)
    }
}

fn random_gamma(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let Some(grad) = g[0] else {
        return Ok(vec![None, None]);
    };
    let (shape, alpha) = (n.inputs[0], n.inputs[1]);
    let k = shape_len(b, shape)?;
    let ga = gamma_alpha_grad(b, grad, alpha, Output::new(n.id, 0), k)?;
    Ok(vec![None, d(ga)])
}

fn stateless_gamma(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let alpha_i = n.inputs.len() - 1;
    let Some(grad) = g[0] else {
        return Ok(vec![None; alpha_i + 1]);
    };
    let (shape, alpha) = (n.inputs[0], n.inputs[alpha_i]);
    let len = shape_len(b, shape)?;
    let r = b.rank(alpha)?;
    let k = b.sub(len, r)?;
    let ga = gamma_alpha_grad(b, grad, alpha, Output::new(n.id, 0), k)?;
    let mut out = vec![None; alpha_i];
    out.push(d(ga));
    Ok(out)
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("RandomGamma", GradEntry::Func(random_gamma));
    reg("StatelessRandomGammaV2", GradEntry::Func(stateless_gamma));
    reg("StatelessRandomGammaV3", GradEntry::Func(stateless_gamma));
    for op in [
        "StatelessRandomUniform",
        "StatelessRandomNormal",
        "StatelessTruncatedNormal",
        "StatelessRandomUniformV2",
        "StatelessRandomNormalV2",
        "StatelessTruncatedNormalV2",
        "StatelessRandomUniformInt",
        "StatelessRandomUniformIntV2",
        "StatelessRandomUniformFullInt",
        "StatelessRandomUniformFullIntV2",
        "StatelessRandomGetKeyCounter",
        "StatelessRandomGetKeyCounterAlg",
        "StatelessRandomGetAlg",
        "StatelessMultinomial",
        "StatelessRandomBinomial",
        "StatelessRandomPoisson",
        "Multinomial",
        "RandomPoisson",
        "RandomPoissonV2",
        "RandomIndexShuffle",
        "AllCandidateSampler",
        "FixedUnigramCandidateSampler",
        "LearnedUnigramCandidateSampler",
        "ComputeAccidentalHits",
        "RngReadAndSkip",
        "StatefulRandomBinomial",
    ] {
        reg(op, GradEntry::NotDifferentiable);
    }
}
