//! Kernels of the candidate samplers: classes drawn from a log-uniform
//! (Zipfian) or uniform distribution over `[0, range_max)`, with the
//! expected counts sampled losses divide out.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::{Error, Tensor};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

/// The sampling distribution.
#[derive(Copy, Clone)]
enum Dist {
    /// `P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)`.
    LogUniform,
    Uniform,
}

impl Dist {
    fn prob(self, k: i64, range_max: i64) -> f64 {
        match self {
            Dist::LogUniform => {
                ((k as f64 + 2.0) / (k as f64 + 1.0)).ln() / (range_max as f64 + 1.0).ln()
            }
            Dist::Uniform => 1.0 / range_max as f64,
        }
    }

    fn draw(self, u: f64, range_max: i64) -> i64 {
        let k = match self {
            Dist::LogUniform => ((u * (range_max as f64 + 1.0).ln()).exp() - 1.0).floor() as i64,
            Dist::Uniform => (u * range_max as f64).floor() as i64,
        };
        k.clamp(0, range_max - 1)
    }
}

/// Expected occurrences of a class of probability `p` among `tries` draws
/// (TensorFlow's formula: exact for sampling with replacement, and the
/// without-replacement form when `unique` needed more tries).
fn expected_count(p: f64, num_sampled: i64, tries: i64) -> f32 {
    if tries == num_sampled {
        (p * num_sampled as f64) as f32
    } else {
        (-(tries as f64 * (-p).ln_1p()).exp_m1()) as f32
    }
}

struct SamplerState {
    gen: Philox,
    next: AtomicU64,
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (name, dist) in [
        ("LogUniformCandidateSampler", Dist::LogUniform),
        ("UniformCandidateSampler", Dist::Uniform),
    ] {
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let num_true = a.int("num_true")?;
                let num_sampled = a.int("num_sampled")?;
                let unique = a.bool_or("unique", false)?;
                let range_max = a.int("range_max")?;
                if range_max <= 0 {
                    return Err(Error::invalid_argument(format!(
                        "range_max must be positive, got {range_max}"
                    )));
                }
                let (mut seed, mut seed2) =
                    (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
                if seed == 0 && seed2 == 0 {
                    use std::hash::BuildHasher;
                    let h = std::collections::hash_map::RandomState::new();
                    seed = h.hash_one(init.node.id);
                    seed2 = h.hash_one(seed);
                }
                let st = init.session.get_or_create(init.node.id, || SamplerState {
                    gen: Philox::new(seed, seed2),
                    next: AtomicU64::new(0),
                })?;
                boxed(move |ctx| {
                    let true_classes = ctx.input(0)?.to_i64_vec()?;
                    let mut sampled = Vec::with_capacity(num_sampled as usize);
                    let mut seen = HashSet::new();
                    let mut tries = 0i64;
                    while (sampled.len() as i64) < num_sampled {
                        let block = st.gen.block(st.next.fetch_add(1, Ordering::Relaxed));
                        let u = (((block[0] as u64) << 32 | block[1] as u64) >> 11) as f64
                            / (1u64 << 53) as f64;
                        let k = dist.draw(u, range_max);
                        tries += 1;
                        if !unique || seen.insert(k) {
                            sampled.push(k);
                        }
                        if tries > num_sampled * 1000 + range_max * 100 {
                            return Err(Error::internal("candidate sampler made no progress"));
                        }
                    }
                    let true_expected: Vec<f32> = true_classes
                        .iter()
                        .map(|&k| expected_count(dist.prob(k, range_max), num_sampled, tries))
                        .collect();
                    let sampled_expected: Vec<f32> = sampled
                        .iter()
                        .map(|&k| expected_count(dist.prob(k, range_max), num_sampled, tries))
                        .collect();
                    let batch = true_classes.len() / num_true.max(1) as usize;
                    ctx.output(Tensor::vector(sampled));
                    ctx.output(Tensor::from_vec([batch, num_true as usize], true_expected)?);
                    ctx.output(Tensor::vector(sampled_expected));
                    Ok(())
                })
            }),
        );
    }
}
