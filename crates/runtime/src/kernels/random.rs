//! Kernels for seeded random ops. Each node keeps, per session, how many
//! Philox blocks it has used, so successive runs draw fresh numbers and a
//! given (graph seed, op seed) pair always replays the same sequence.

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::random::{permutation, sample, Distribution, Philox};
use ferroflow_tensor::{Result, Shape, Tensor};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A node's generator and its position in the stream.
pub(crate) struct RandomState {
    gen: Philox,
    next: AtomicU64,
}

impl RandomState {
    /// Reserves `blocks` blocks and returns the first one's index.
    fn reserve(&self, blocks: u64) -> u64 {
        self.next.fetch_add(blocks, Ordering::Relaxed)
    }
}

fn state(init: &KernelInit<'_>) -> Result<Arc<RandomState>> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        // No seed anywhere: TensorFlow draws a fresh one; so do we.
        let h = std::collections::hash_map::RandomState::new();
        use std::hash::BuildHasher;
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    init.session.get_or_create(init.node.id, || RandomState {
        gen: Philox::new(seed, seed2),
        next: AtomicU64::new(0),
    })
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    let floats = [
        ("RandomStandardNormal", Distribution::Normal),
        ("RandomUniform", Distribution::Uniform),
        ("TruncatedNormal", Distribution::TruncatedNormal),
    ];
    for (name, dist) in floats {
        reg(
            name,
            factory(move |init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                let st = state(init)?;
                boxed(move |ctx| {
                    let shape = Shape::from_i64(&ctx.input(0)?.to_i64_vec()?)?;
                    Tensor::check_allocation(name, dtype, shape.dims())?;
                    let base = st.reserve(dist.blocks_for(shape.num_elements(), dtype));
                    ctx.output(sample(&st.gen, dist, base, &shape, dtype)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "RandomUniformInt",
        factory(|init| {
            let st = state(init)?;
            boxed(move |ctx| {
                let shape = Shape::from_i64(&ctx.input(0)?.to_i64_vec()?)?;
                let (lo, hi) = (ctx.input(1)?.scalar_i64()?, ctx.input(2)?.scalar_i64()?);
                let dtype = ctx.input(1)?.dtype();
                Tensor::check_allocation("RandomUniformInt", dtype, shape.dims())?;
                let dist = Distribution::UniformInt { lo, hi };
                let base = st.reserve(dist.blocks_for(shape.num_elements(), dtype));
                ctx.output(sample(&st.gen, dist, base, &shape, dtype)?);
                Ok(())
            })
        }),
    );
    reg(
        "RandomShuffle",
        factory(|init| {
            let st = state(init)?;
            boxed(move |ctx| {
                let x = ctx.input(0)?;
                if x.rank() == 0 || x.dims()[0] <= 1 {
                    let y = x.clone();
                    ctx.output(y);
                    return Ok(());
                }
                let n = x.dims()[0];
                let perm = permutation(&st.gen, st.reserve(n as u64), n);
                let idx =
                    ferroflow_tensor::Tensor::vector(perm.into_iter().map(|p| p as i64).collect());
                let y = ferroflow_tensor::kernels::array::gather(x, &idx, 0, 0)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
