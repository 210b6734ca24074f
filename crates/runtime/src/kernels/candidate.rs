//! Kernels of the candidate samplers: classes drawn from a log-uniform
//! (Zipfian) or uniform distribution over `[0, range_max)`, from fixed
//! unigram weights (a vocabulary file or a list, with distortion, reserved
//! ids and sharding), from unigram counts learned from the true classes, or
//! every class (`AllCandidateSampler`); with the expected counts sampled
//! losses divide out. Also `ComputeAccidentalHits`.
//!
//! Every sampler draws as TensorFlow 2.21's CPU kernels do (`SimplePhilox`
//! over the node's `GuardedPhiloxRandom`; Walker's alias table for fixed
//! unigrams, the integer `WeightedPicker` for learned ones), so a seeded
//! sampler gives TF's candidates and expected counts bit for bit.

use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrValue;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::stateless_random::{u32_to_float, PhiloxRandom, SingleSample};
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

/// A log-uniform or uniform sampler node's generator, as TF's
/// `GuardedPhiloxRandom`: `PhiloxRandom(seed, seed2)`, of which every run
/// reserves `2048 * num_sampled` words (`ReserveSamples32`).
struct TfSamplerState {
    gen: PhiloxRandom,
    next: AtomicU64,
}

/// TF's `ExactUniformInt<uint32>` (`SimplePhilox::Uniform`, the weighted
/// picker's `UnbiasedUniform`): a mask for a power of two, else rejection of
/// the words below `2^32 mod n`.
fn uniform32(words: &mut SingleSample, n: u32) -> u32 {
    if n == 0 {
        words.next_u32();
        return 0;
    }
    if n & (n - 1) == 0 {
        return words.next_u32() & (n - 1);
    }
    let rem = (u32::MAX % n) + 1;
    loop {
        let r = words.next_u32();
        if r >= rem {
            return r % n;
        }
    }
}

/// The generator of a sampler node: `GuardedPhiloxRandom(seed, seed2)`,
/// fresh seeds when both attrs are 0.
fn guarded_philox(
    init: &crate::kernel::KernelInit<'_>,
) -> ferroflow_tensor::Result<TfSamplerState> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        use std::hash::BuildHasher;
        let h = std::collections::hash_map::RandomState::new();
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    Ok(TfSamplerState {
        gen: PhiloxRandom::new(
            [0, 0, seed2 as u32, (seed2 >> 32) as u32],
            [seed as u32, (seed >> 32) as u32],
        ),
        next: AtomicU64::new(0),
    })
}

/// One run's draws (TF's `SampleBatchGetExpectedCountAvoid`): a fresh
/// stretch of `2048 * num_sampled` words (`ReserveSamples32`), `sample`
/// called until `num_sampled` classes are kept (repeats dropped when
/// `unique`); returns them and the number of tries.
fn sample_batch(
    st: &TfSamplerState,
    num_sampled: i64,
    unique: bool,
    mut sample: impl FnMut(&mut SingleSample) -> i64,
) -> (Vec<i64>, i64) {
    let blocks = (2048 * num_sampled as u64).div_ceil(4);
    let gen = st.gen.skipped(st.next.fetch_add(blocks, Ordering::Relaxed));
    let mut words = SingleSample::new(gen);
    let mut sampled = Vec::with_capacity(num_sampled as usize);
    let mut seen = HashSet::new();
    let mut tries = 0i64;
    while (sampled.len() as i64) < num_sampled {
        let k = sample(&mut words);
        tries += 1;
        if !unique || seen.insert(k) {
            sampled.push(k);
        }
    }
    (sampled, tries)
}

/// The checks every sampler's run makes (TF's `BaseCandidateSamplerOp`).
fn check_run(
    name: &str,
    true_classes: &[i64],
    unique: bool,
    num_sampled: i64,
    range_max: i64,
) -> ferroflow_tensor::Result<()> {
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
    Ok(())
}

/// Writes the three outputs: the sampled classes and the expected counts of
/// the true and sampled classes under `prob` (TF's float formula).
fn emit(
    ctx: &mut crate::kernel::OpContext<'_>,
    true_classes: &[i64],
    num_true: i64,
    sampled: Vec<i64>,
    num_sampled: i64,
    tries: i64,
    prob: impl Fn(i64) -> f32,
) -> ferroflow_tensor::Result<()> {
    let te: Vec<f32> = true_classes
        .iter()
        .map(|&k| expected_count_f32(prob(k), num_sampled, tries))
        .collect();
    let se: Vec<f32> = sampled
        .iter()
        .map(|&k| expected_count_f32(prob(k), num_sampled, tries))
        .collect();
    let batch = true_classes.len() / num_true.max(1) as usize;
    ctx.output(Tensor::vector(sampled));
    ctx.output(Tensor::from_vec([batch, num_true as usize], te)?);
    ctx.output(Tensor::vector(se));
    Ok(())
}

/// TF's `FixedUnigramSampler`: float weights (reserved ids weigh 0, then
/// each unigram `powf(u, distortion)`, keeping the ids of this shard), their
/// float total, and Walker's alias table over them (TF's
/// `DistributionSampler`).
struct FixedUnigram {
    weights: Vec<f32>,
    total: f32,
    prob: Vec<f32>,
    alt: Vec<usize>,
}

impl FixedUnigram {
    fn new(a: &ferroflow_graph::Attrs) -> ferroflow_tensor::Result<FixedUnigram> {
        let range_max = a.int("range_max")?;
        let distortion = a.float_or("distortion", 1.0)? as f32;
        let reserved = a.int_or("num_reserved_ids", 0)?;
        let num_shards = a.int_or("num_shards", 1)?.max(1);
        let shard = a.int_or("shard", 0)?;
        let vocab_file = a.str_or("vocab_file", "")?;
        let listed = matches!(a.get("unigrams"), Some(AttrValue::FloatList(v)) if !v.is_empty());
        if vocab_file.is_empty() != listed {
            bail!(
                invalid_argument,
                "FixedUnigramCandidateSampler: {}",
                if listed {
                    "Must only provide one of vocab_file and unigrams."
                } else {
                    "Must provide either vocab_file or unigrams."
                }
            );
        }
        let unigrams: Vec<f32> = if !vocab_file.is_empty() {
            let text = std::fs::read_to_string(&vocab_file).map_err(|e| {
                Error::not_found(format!(
                    "FixedUnigramCandidateSampler: vocab_file {vocab_file}: {e}"
                ))
            })?;
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let last = l.rsplit(',').next().unwrap_or("").trim();
                    last.parse::<f32>().map_err(|_| {
                        Error::invalid_argument(format!(
                            "FixedUnigramCandidateSampler: Wrong vocabulary format at line: {l}"
                        ))
                    })
                })
                .collect::<ferroflow_tensor::Result<_>>()?
        } else {
            match a.get("unigrams") {
                Some(AttrValue::FloatList(v)) => v.iter().map(|&u| u as f32).collect(),
                _ => Vec::new(),
            }
        };
        let mut weights = Vec::new();
        for id in 0..reserved {
            if id % num_shards == shard {
                weights.push(0.0f32);
            }
        }
        // As TF: the unigrams' ids count on from the reserved ids this shard kept.
        let mut total = 0.0f32;
        let first_id = weights.len() as i64;
        for (k, &u) in unigrams.iter().enumerate() {
            if (first_id + k as i64) % num_shards == shard {
                let w = u.powf(distortion);
                total += w;
                weights.push(w);
            }
        }
        if weights.len() as i64 != range_max {
            bail!(
                invalid_argument,
                "FixedUnigramCandidateSampler: range is {range_max} must be equal to weights size {}",
                weights.len()
            );
        }
        let (prob, alt) = alias_table(&weights);
        Ok(FixedUnigram {
            weights,
            total,
            prob,
            alt,
        })
    }

    /// TF's `DistributionSampler::Sample`: a float, then a bucket.
    fn sample(&self, words: &mut SingleSample) -> i64 {
        let r = u32_to_float(words.next_u32());
        let idx = uniform32(words, self.prob.len() as u32) as usize;
        if r < self.prob[idx] {
            idx as i64
        } else {
            self.alt[idx] as i64
        }
    }

    fn probability(&self, k: i64) -> f32 {
        match usize::try_from(k).ok().and_then(|k| self.weights.get(k)) {
            Some(&w) => w / self.total,
            None => 0.0,
        }
    }
}

/// Walker's alias table as TF's `DistributionSampler` builds it: scaled
/// weights `w * n / sum` (the product in float), short and long buckets
/// paired from the back of their lists, leftovers kept with probability 1.
fn alias_table(weights: &[f32]) -> (Vec<f32>, Vec<usize>) {
    let n = weights.len();
    let sum: f64 = weights.iter().map(|&w| w as f64).sum();
    let mut alt: Vec<Option<usize>> = vec![None; n];
    let mut pr = vec![0f64; n];
    let (mut high, mut low) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (i, &w) in weights.iter().enumerate() {
        let p = (w * n as f32) as f64 / sum;
        pr[i] = p;
        if p < 1.0 {
            low.push(i);
        } else {
            high.push(i);
        }
    }
    while let (Some(&l), Some(&h)) = (low.last(), high.last()) {
        low.pop();
        high.pop();
        alt[l] = Some(h);
        let remaining = pr[h] - (1.0 - pr[l]);
        pr[h] = remaining;
        if remaining < 1.0 {
            low.push(h);
        } else {
            high.push(h);
        }
    }
    let mut prob: Vec<f32> = pr.iter().map(|&p| p as f32).collect();
    for &i in high.iter().chain(&low) {
        prob[i] = 1.0;
        alt[i] = Some(i);
    }
    // Every bucket was paired or kept whole above.
    let alt = alt
        .into_iter()
        .enumerate()
        .map(|(i, a)| a.unwrap_or(i))
        .collect();
    (prob, alt)
}

/// A learned unigram sampler node's generator and counts (kept across runs).
struct LearnedState {
    st: TfSamplerState,
    counts: Mutex<LearnedUnigram>,
}

/// TF's `UnigramSampler` (a `WeightedPicker` of int32 counts, each class
/// starting at 1): a class drawn by an unbiased uniform index into the
/// cumulative counts, its probability `count / total` in float, and the
/// counts raised by one per true class after each run.
struct LearnedUnigram {
    /// Counts in a Fenwick tree for O(log n) updates and draws.
    tree: Vec<i64>,
    counts: Vec<i32>,
    total: i32,
}

impl LearnedUnigram {
    fn new(n: usize) -> LearnedUnigram {
        let mut tree = vec![0i64; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        LearnedUnigram {
            tree,
            counts: vec![1; n],
            total: n as i32,
        }
    }

    /// The class holding cumulative position `index` (`WeightedPicker::PickAt`).
    fn pick_at(&self, index: i64) -> i64 {
        let n = self.counts.len();
        let mut remaining = index;
        let (mut pos, mut step) = (0usize, n.next_power_of_two());
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= remaining {
                remaining -= self.tree[next];
                pos = next;
            }
            step >>= 1;
        }
        pos as i64
    }

    fn sample(&self, words: &mut SingleSample) -> i64 {
        if self.total == 0 {
            return -1;
        }
        self.pick_at(uniform32(words, self.total as u32) as i64)
    }

    fn probability(&self, k: i64) -> f32 {
        self.counts[k as usize] as f32 / self.total as f32
    }

    /// TF's `Update`: one more count per value, while the total stays an int32.
    fn update(&mut self, values: &[i64]) {
        let room = (i32::MAX - self.total).max(0) as usize;
        for &v in values.iter().take(room) {
            let k = v as usize;
            self.counts[k] += 1;
            self.total += 1;
            let mut j = k + 1;
            while j < self.tree.len() {
                self.tree[j] += 1;
                j += j & j.wrapping_neg();
            }
        }
    }
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
                let st = guarded_philox(init)?;
                let st = init.session.get_or_create(init.node.id, || st)?;
                boxed(move |ctx| {
                    let true_classes = ctx.input(0)?.to_i64_vec()?;
                    check_run(name, &true_classes, unique, num_sampled, range_max)?;
                    let (sampled, tries) =
                        sample_batch(&st, num_sampled, unique, |w| dist.sample(w, range_max));
                    emit(
                        ctx,
                        &true_classes,
                        num_true,
                        sampled,
                        num_sampled,
                        tries,
                        |k| dist.prob(k, range_max),
                    )
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
    reg(
        "FixedUnigramCandidateSampler",
        factory(|init| {
            let name = "FixedUnigramCandidateSampler";
            let a = &init.node.attrs;
            let num_true = a.int("num_true")?;
            let num_sampled = a.int("num_sampled")?;
            let unique = a.bool_or("unique", false)?;
            let range_max = a.int("range_max")?;
            let sampler = std::sync::Arc::new(FixedUnigram::new(a)?);
            let st = guarded_philox(init)?;
            let st = init.session.get_or_create(init.node.id, || st)?;
            boxed(move |ctx| {
                let true_classes = ctx.input(0)?.to_i64_vec()?;
                check_run(name, &true_classes, unique, num_sampled, range_max)?;
                let (sampled, tries) =
                    sample_batch(&st, num_sampled, unique, |w| sampler.sample(w));
                emit(
                    ctx,
                    &true_classes,
                    num_true,
                    sampled,
                    num_sampled,
                    tries,
                    |k| sampler.probability(k),
                )
            })
        }),
    );
    reg(
        "LearnedUnigramCandidateSampler",
        factory(|init| {
            let name = "LearnedUnigramCandidateSampler";
            let a = &init.node.attrs;
            let num_true = a.int("num_true")?;
            let num_sampled = a.int("num_sampled")?;
            let unique = a.bool_or("unique", false)?;
            let range_max = a.int("range_max")?;
            if range_max <= 0 || range_max >= i32::MAX as i64 {
                bail!(
                    invalid_argument,
                    "{name}: range_max must be positive and less than {} for unigram samplers, got {range_max}",
                    i32::MAX
                );
            }
            let st = guarded_philox(init)?;
            let state = init.session.get_or_create(init.node.id, || LearnedState {
                st,
                counts: Mutex::new(LearnedUnigram::new(range_max as usize)),
            })?;
            boxed(move |ctx| {
                let true_classes = ctx.input(0)?.to_i64_vec()?;
                check_run(name, &true_classes, unique, num_sampled, range_max)?;
                let mut counts = state.counts.lock();
                let (sampled, tries) =
                    sample_batch(&state.st, num_sampled, unique, |w| counts.sample(w));
                let probs: HashMap<i64, f32> = true_classes
                    .iter()
                    .chain(&sampled)
                    .map(|&k| (k, counts.probability(k)))
                    .collect();
                // TensorFlow counts the true classes after sampling.
                counts.update(&true_classes);
                drop(counts);
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
