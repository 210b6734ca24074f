//! Kernels of TensorFlow's stateful random ops (`RandomUniform`,
//! `RandomStandardNormal`, `TruncatedNormal`, `RandomUniformInt`,
//! `RandomShuffle`), bit-exact with TensorFlow 2.21 on CPU.
//!
//! As TF's `GuardedPhiloxRandom`, each node keeps (per session) one
//! `PhiloxRandom(seed, seed2)` generator: the key is `seed`, the counter's
//! high half is `seed2`. Every run hands the kernel a copy of the generator
//! and skips the shared one past what that run may use: 256 blocks per
//! output element for the distribution ops (TF's `ReserveRandomOutputs(n,
//! 256)`), `ceil((n - 1) / 4)` blocks for a shuffle of `n` rows
//! (`ReserveSamples32(n - 1)`). The values are then those of the stateless
//! kernels (the same distributions and group layout), so they do not depend
//! on the thread count.
//!
//! `seed == seed2 == 0` means "nondeterministic": a fresh seed is drawn per
//! session, as TensorFlow does.

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::stateless_random::{
    stateless_float, stateless_int, FloatDist, PhiloxRandom, SingleSample,
};
use ferroflow_tensor::{ensure, DType, Result, Shape, Tensor};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A node's generator and how many blocks it has handed out.
pub(crate) struct RandomState {
    gen: PhiloxRandom,
    next: AtomicU64,
}

impl RandomState {
    /// The generator positioned after every earlier reservation, reserving
    /// `blocks` more (TF's `ReserveSamples128`).
    fn reserve(&self, blocks: u64) -> PhiloxRandom {
        self.gen
            .skipped(self.next.fetch_add(blocks, Ordering::Relaxed))
    }
}

fn state(init: &KernelInit<'_>) -> Result<Arc<RandomState>> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        // No seed anywhere: TensorFlow draws a fresh one; so do we.
        use std::hash::BuildHasher;
        let h = std::collections::hash_map::RandomState::new();
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    let gen = PhiloxRandom::new(
        [0, 0, seed2 as u32, (seed2 >> 32) as u32],
        [seed as u32, (seed >> 32) as u32],
    );
    init.session.get_or_create(init.node.id, || RandomState {
        gen,
        next: AtomicU64::new(0),
    })
}

/// Blocks TF reserves per output element of a distribution op.
const RESERVED_PER_OUTPUT: u64 = 256;

/// The row permutation of `RandomShuffle` over `n >= 2` rows: TF's forward
/// Fisher-Yates (`swap(i, i + u % (n - i))`) with one 32-bit word per step.
fn shuffle_permutation(gen: PhiloxRandom, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut words = SingleSample::new(gen);
    for i in 0..n - 1 {
        let j = i + (words.next_u32() % (n - i) as u32) as usize;
        p.swap(i, j);
    }
    p
}

fn shape_of(t: &Tensor, op: &str) -> Result<Shape> {
    ensure!(
        t.rank() == 1,
        invalid_argument,
        "{op}: shape must be a vector of {{int32,int64}}, got shape {:?}",
        t.dims()
    );
    Shape::from_i64(&t.to_i64_vec()?)
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    let floats = [
        ("RandomStandardNormal", FloatDist::Normal),
        ("RandomUniform", FloatDist::Uniform),
        ("TruncatedNormal", FloatDist::TruncatedNormal),
    ];
    for (name, dist) in floats {
        reg(
            name,
            factory(move |init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                ensure!(
                    matches!(
                        dtype,
                        DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
                    ),
                    invalid_argument,
                    "{name}: dtype must be half, bfloat16, float or double, got {dtype}"
                );
                let st = state(init)?;
                boxed(move |ctx| {
                    let shape = shape_of(ctx.input(0)?, name)?;
                    Tensor::check_allocation(name, dtype, shape.dims())?;
                    let n = shape.num_elements() as u64;
                    let gen = st.reserve(RESERVED_PER_OUTPUT * n);
                    ctx.output(stateless_float(&gen, dist, &shape, dtype)?);
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
                let op = "RandomUniformInt";
                let shape = shape_of(ctx.input(0)?, op)?;
                let (lo_t, hi_t) = (ctx.input(1)?, ctx.input(2)?);
                ensure!(
                    lo_t.rank() == 0,
                    invalid_argument,
                    "{op}: minval must be 0-D, got shape {:?}",
                    lo_t.dims()
                );
                ensure!(
                    hi_t.rank() == 0,
                    invalid_argument,
                    "{op}: maxval must be 0-D, got shape {:?}",
                    hi_t.dims()
                );
                let dtype = lo_t.dtype();
                ensure!(
                    matches!(dtype, DType::Int32 | DType::Int64),
                    invalid_argument,
                    "{op}: minval and maxval must be int32 or int64, got {dtype}"
                );
                Tensor::check_allocation(op, dtype, shape.dims())?;
                let n = shape.num_elements() as u64;
                if n == 0 {
                    // TF returns before checking the bounds: zero draws are fine.
                    ctx.output(Tensor::zeros(dtype, shape));
                    return Ok(());
                }
                let (lo, hi) = (lo_t.scalar_i64()?, hi_t.scalar_i64()?);
                ensure!(
                    lo < hi,
                    invalid_argument,
                    "{op}: Need minval < maxval: {lo} >= {hi}"
                );
                let gen = st.reserve(RESERVED_PER_OUTPUT * n);
                ctx.output(stateless_int(&gen, &shape, dtype, Some((lo, hi)))?);
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
                if x.rank() == 0 || x.num_elements() <= 1 || x.dims()[0] <= 1 {
                    let y = x.clone();
                    ctx.output(y);
                    return Ok(());
                }
                let n = x.dims()[0];
                ensure!(
                    (n as u64) < u32::MAX as u64,
                    unimplemented,
                    "RandomShuffle: shuffling 2**32 or more rows is not supported"
                );
                let gen = st.reserve((n as u64 - 1).div_ceil(4));
                let perm = shuffle_permutation(gen, n);
                let idx = Tensor::vector(perm.into_iter().map(|p| p as i64).collect());
                let y = ferroflow_tensor::kernels::array::gather(x, &idx, 0, 0)?;
                ctx.output(y);
                Ok(())
            })
        }),
    );
}
