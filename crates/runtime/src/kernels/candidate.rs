//! Kernels of the candidate samplers: classes drawn from a log-uniform
//! (Zipfian) or uniform distribution over `[0, range_max)`, from fixed
//! unigram weights (a vocabulary file or a list, with distortion, reserved
//! ids and sharding), from unigram counts learned from the true classes, or
//! every class (`AllCandidateSampler`); with the expected counts sampled
//! losses divide out. Also `ComputeAccidentalHits`.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrValue;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::random::Philox;
use ferroflow_tensor::kernels::stateless_random::{PhiloxRandom, SingleSample};
use ferroflow_tensor::{bail, ensure, Error, Tensor};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

/// The sampling distribution of `LogUniformCandidateSampler` and
/// `UniformCandidateSampler`, drawn as TensorFlow 2.21's CPU kernels draw
/// (`LogUniformSampler` / `UniformSampler` over `SimplePhilox`), so a seeded
/// sampler gives TF's candidates.
#[derive(Copy, Clone)]
enum Dist {
    /// `P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)`.
    LogUniform,
    Uniform,
}

impl Dist {
    /// TF's `Probability`: computed in double, returned as a float.
    fn prob(self, k: i64, range_max: i64) -> f32 {
        match self {
            Dist::LogUniform => {
                (((k as f64 + 2.0) / (k as f64 + 1.0)).ln() / (range_max as f64).ln_1p()) as f32
            }
            Dist::Uniform => (1.0 / range_max as f64) as f32,
        }
    }

    /// TF's `Sample`: `exp(RandDouble() * log1p(range)) - 1` truncated (mod
    /// range), or `Uniform64(range)`.
    fn sample(self, words: &mut SingleSample, range_max: i64) -> i64 {
        match self {
            Dist::LogUniform => {
                let v = (words.rand_double() * (range_max as f64).ln_1p()).exp() as i64 - 1;
                v % range_max
            }
            Dist::Uniform => uniform64(words, range_max as u64) as i64,
        }
    }
}

/// TF's `SimplePhilox::Uniform64`: 64-bit words (low word first), a mask for
/// a power of two, else rejection of the words below `2^64 mod n`.
fn uniform64(words: &mut SingleSample, n: u64) -> u64 {
    let mut rand64 = || {
        let lo = words.next_u32() as u64;
        let hi = words.next_u32() as u64;
        lo | hi << 32
    };
    if n & (n - 1) == 0 {
        return rand64() & (n - 1);
    }
    let rem = (u64::MAX % n) + 1;
    loop {
        let r = rand64();
        if r >= rem {
            return r % n;
        }
    }
}

/// TF's `ExpectedCountHelper`, in float as TF computes it: `p * num_sampled`
/// when every try was kept, else `1 - (1 - p)^tries`.
fn expected_count_f32(p: f32, num_sampled: i64, tries: i64) -> f32 {
    if tries == num_sampled {
        p * num_sampled as f32
    } else {
        -(tries as f32 * (-p).ln_1p()).exp_m1()
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

/// A log-uniform or uniform sampler node's generator, as TF's
/// `GuardedPhiloxRandom`: `PhiloxRandom(seed, seed2)`, of which every run
/// reserves `2048 * num_sampled` words (`ReserveSamples32`).
struct TfSamplerState {
    gen: PhiloxRandom,
    next: AtomicU64,
}

struct SamplerState {
    gen: Philox,
    next: AtomicU64,
}

/// Class weights in a Fenwick tree: O(log n) updates, prefix sums and
/// draws by cumulative weight.
struct Weights {
    tree: Vec<f64>,
    w: Vec<f64>,
    total: f64,
}

impl Weights {
    fn new(w: Vec<f64>) -> Weights {
        let n = w.len();
        let mut tree = vec![0.0; n + 1];
        for (i, &x) in w.iter().enumerate() {
            let mut j = i + 1;
            while j <= n {
                tree[j] += x;
                j += j & j.wrapping_neg();
            }
        }
        let total = w.iter().sum();
        Weights { tree, w, total }
    }

    fn add(&mut self, i: usize, d: f64) {
        self.w[i] += d;
        self.total += d;
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] += d;
            j += j & j.wrapping_neg();
        }
    }

    /// The class whose cumulative-weight interval holds `u * total`.
    fn draw(&self, u: f64) -> i64 {
        let n = self.w.len();
        let mut target = u * self.total;
        let (mut pos, mut step) = (0usize, n.next_power_of_two());
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= target {
                target -= self.tree[next];
                pos = next;
            }
            step >>= 1;
        }
        // Skip zero-weight classes rounding may land on.
        let mut k = pos.min(n - 1);
        while self.w[k] <= 0.0 && k + 1 < n {
            k += 1;
        }
        k as i64
    }

    fn prob(&self, k: i64) -> f64 {
        if k < 0 || k as usize >= self.w.len() || self.total <= 0.0 {
            0.0
        } else {
            self.w[k as usize] / self.total
        }
    }
}

/// A fixed or learned unigram sampler's generator and class weights.
struct UnigramState {
    st: SamplerState,
    weights: Mutex<Weights>,
}

/// The generator of a sampler node (fresh seeds when both attrs are 0).
fn seeded_state(init: &crate::kernel::KernelInit<'_>) -> ferroflow_tensor::Result<SamplerState> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        use std::hash::BuildHasher;
        let h = std::collections::hash_map::RandomState::new();
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    Ok(SamplerState {
        gen: Philox::new(seed, seed2),
        next: AtomicU64::new(0),
    })
}

/// Draws `num_sampled` classes with `draw(u)` (without repeats when
/// `unique`), returning them and the number of tries.
fn draw_batch(
    st: &SamplerState,
    num_sampled: i64,
    unique: bool,
    range_max: i64,
    draw: impl Fn(f64) -> i64,
) -> ferroflow_tensor::Result<(Vec<i64>, i64)> {
    let mut sampled = Vec::with_capacity(num_sampled as usize);
    let mut seen = HashSet::new();
    let mut tries = 0i64;
    while (sampled.len() as i64) < num_sampled {
        let block = st.gen.block(st.next.fetch_add(1, Ordering::Relaxed));
        let u = (((block[0] as u64) << 32 | block[1] as u64) >> 11) as f64 / (1u64 << 53) as f64;
        let k = draw(u);
        tries += 1;
        if !unique || seen.insert(k) {
            sampled.push(k);
        }
        if tries > num_sampled * 1000 + range_max * 100 {
            bail!(internal, "candidate sampler made no progress");
        }
    }
    Ok((sampled, tries))
}

/// The fixed unigram weights: reserved ids weigh 0, then each unigram
/// `u^distortion`; only ids of this shard are kept.
fn fixed_weights(a: &ferroflow_graph::Attrs) -> ferroflow_tensor::Result<Vec<f64>> {
    let range_max = a.int("range_max")?;
    let distortion = a.float_or("distortion", 1.0)?;
    let reserved = a.int_or("num_reserved_ids", 0)?;
    let num_shards = a.int_or("num_shards", 1)?.max(1);
    let shard = a.int_or("shard", 0)?;
    let vocab_file = a.str_or("vocab_file", "")?;
    let unigrams: Vec<f64> = if !vocab_file.is_empty() {
        let text = std::fs::read_to_string(&vocab_file).map_err(|e| {
            Error::not_found(format!(
                "FixedUnigramCandidateSampler: vocab_file {vocab_file}: {e}"
            ))
        })?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let last = l.rsplit(',').next().unwrap_or("").trim();
                last.parse::<f64>().map_err(|_| {
                    Error::invalid_argument(format!(
                        "FixedUnigramCandidateSampler: Error parsing vocab_file {vocab_file} line: {l}"
                    ))
                })
            })
            .collect::<ferroflow_tensor::Result<_>>()?
    } else {
        match a.get("unigrams") {
            Some(AttrValue::FloatList(v)) => v.clone(),
            _ => Vec::new(),
        }
    };
    let mut w = Vec::new();
    for id in 0..reserved {
        if id % num_shards == shard {
            w.push(0.0);
        }
    }
    for (k, &u) in unigrams.iter().enumerate() {
        if (reserved + k as i64) % num_shards == shard {
            w.push(u.powf(distortion));
        }
    }
    if w.len() as i64 != range_max {
        bail!(
            invalid_argument,
            "FixedUnigramCandidateSampler: range_max must equal the number of (reserved + unigram) ids in this shard: range_max {range_max} vs {}",
            w.len()
        );
    }
    Ok(w)
}

fn emit(
    ctx: &mut crate::kernel::OpContext<'_>,
    true_classes: &[i64],
    num_true: i64,
    sampled: Vec<i64>,
    num_sampled: i64,
    tries: i64,
    prob: impl Fn(i64) -> f64,
) -> ferroflow_tensor::Result<()> {
    let te: Vec<f32> = true_classes
        .iter()
        .map(|&k| expected_count(prob(k), num_sampled, tries))
        .collect();
    let se: Vec<f32> = sampled
        .iter()
        .map(|&k| expected_count(prob(k), num_sampled, tries))
        .collect();
    let batch = true_classes.len() / num_true.max(1) as usize;
    ctx.output(Tensor::vector(sampled));
    ctx.output(Tensor::from_vec([batch, num_true as usize], te)?);
    ctx.output(Tensor::vector(se));
    Ok(())
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
                    bail!(
                        invalid_argument,
                        "range_max must be positive, got {range_max}"
                    );
                }
                let (mut seed, mut seed2) =
                    (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
                if seed == 0 && seed2 == 0 {
                    use std::hash::BuildHasher;
                    let h = std::collections::hash_map::RandomState::new();
                    seed = h.hash_one(init.node.id);
                    seed2 = h.hash_one(seed);
                }
                let st = init
                    .session
                    .get_or_create(init.node.id, || TfSamplerState {
                        gen: PhiloxRandom::new(
                            [0, 0, seed2 as u32, (seed2 >> 32) as u32],
                            [seed as u32, (seed >> 32) as u32],
                        ),
                        next: AtomicU64::new(0),
                    })?;
                boxed(move |ctx| {
                    let true_classes = ctx.input(0)?.to_i64_vec()?;
                    if unique && num_sampled > range_max {
                        bail!(
                            invalid_argument,
                            "{name}: Sampler's range is too small (num_sampled {num_sampled} > range_max {range_max} with unique=True)"
                        );
                    }
                    if let Some(&k) = true_classes.iter().find(|&&k| k < 0 || k >= range_max) {
                        bail!(
                            invalid_argument,
                            "{name}: `true_candidate` out of range [0, {range_max}), received {k}"
                        );
                    }
                    // 2048 words per sampled class reserved, in blocks of four.
                    let blocks = (2048 * num_sampled as u64).div_ceil(4);
                    let gen = st.gen.skipped(st.next.fetch_add(blocks, Ordering::Relaxed));
                    let mut words = SingleSample::new(gen);
                    let mut sampled = Vec::with_capacity(num_sampled as usize);
                    let mut seen = HashSet::new();
                    let mut tries = 0i64;
                    while (sampled.len() as i64) < num_sampled {
                        let k = dist.sample(&mut words, range_max);
                        tries += 1;
                        if !unique || seen.insert(k) {
                            sampled.push(k);
                        }
                    }
                    let true_expected: Vec<f32> = true_classes
                        .iter()
                        .map(|&k| expected_count_f32(dist.prob(k, range_max), num_sampled, tries))
                        .collect();
                    let sampled_expected: Vec<f32> = sampled
                        .iter()
                        .map(|&k| expected_count_f32(dist.prob(k, range_max), num_sampled, tries))
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
    reg(
        "AllCandidateSampler",
        factory(|init| {
            let num_true = init.node.attrs.int("num_true")?;
            let num_sampled = init.node.attrs.int("num_sampled")?;
            boxed(move |ctx| {
                let t = ctx.input(0)?;
                let batch = t.dims().first().copied().unwrap_or(0);
                ctx.output(Tensor::vector((0..num_sampled).collect::<Vec<i64>>()));
                ctx.output(Tensor::from_vec(
                    [batch, num_true as usize],
                    vec![1f32; batch * num_true as usize],
                )?);
                ctx.output(Tensor::vector(vec![1f32; num_sampled as usize]));
                Ok(())
            })
        }),
    );
    for learned in [false, true] {
        let name = if learned {
            "LearnedUnigramCandidateSampler"
        } else {
            "FixedUnigramCandidateSampler"
        };
        reg(
            name,
            factory(move |init| {
                let a = &init.node.attrs;
                let num_true = a.int("num_true")?;
                let num_sampled = a.int("num_sampled")?;
                let unique = a.bool_or("unique", false)?;
                let range_max = a.int("range_max")?;
                if range_max <= 0 {
                    bail!(
                        invalid_argument,
                        "{name}: range_max must be positive, got {range_max}"
                    );
                }
                let w = if learned {
                    vec![1.0; range_max as usize]
                } else {
                    fixed_weights(a)?
                };
                let st = seeded_state(init)?;
                let state = init.session.get_or_create(init.node.id, || UnigramState {
                    st,
                    weights: Mutex::new(Weights::new(w)),
                })?;
                boxed(move |ctx| {
                    let true_classes = ctx.input(0)?.to_i64_vec()?;
                    let mut wt = state.weights.lock();
                    if wt.total <= 0.0 {
                        bail!(invalid_argument, "{name}: every class has weight 0");
                    }
                    let (sampled, tries) =
                        draw_batch(&state.st, num_sampled, unique, range_max, |u| wt.draw(u))?;
                    let probs: HashMap<i64, f64> = true_classes
                        .iter()
                        .chain(&sampled)
                        .map(|&k| (k, wt.prob(k)))
                        .collect();
                    if learned {
                        // TensorFlow updates the counts after sampling.
                        for &k in &true_classes {
                            if (0..range_max).contains(&k) {
                                wt.add(k as usize, 1.0);
                            }
                        }
                    }
                    drop(wt);
                    emit(
                        ctx,
                        &true_classes,
                        num_true,
                        sampled,
                        num_sampled,
                        tries,
                        |k| probs.get(&k).copied().unwrap_or(0.0),
                    )
                })
            }),
        );
    }
    reg(
        "ComputeAccidentalHits",
        factory(|_| {
            boxed(|ctx| {
                let t = ctx.input(0)?;
                let s = ctx.input(1)?;
                ensure!(
                    t.rank() == 2,
                    invalid_argument,
                    "ComputeAccidentalHits: true_classes must be a matrix"
                );
                ensure!(
                    s.rank() == 1,
                    invalid_argument,
                    "ComputeAccidentalHits: sampled_candidates must be a vector"
                );
                let num_true = t.dims()[1];
                let mut pos = HashMap::new();
                for (k, &c) in s.to_i64_vec()?.iter().enumerate() {
                    pos.insert(c, k as i64);
                }
                let (mut idx, mut ids, mut w) = (Vec::new(), Vec::new(), Vec::new());
                for (i, &c) in t.to_i64_vec()?.iter().enumerate() {
                    if let Some(&k) = pos.get(&c) {
                        idx.push((i / num_true.max(1)) as i32);
                        ids.push(k);
                        w.push(-f32::MAX);
                    }
                }
                ctx.output(Tensor::vector(idx));
                ctx.output(Tensor::vector(ids));
                ctx.output(Tensor::vector(w));
                Ok(())
            })
        }),
    );
}
