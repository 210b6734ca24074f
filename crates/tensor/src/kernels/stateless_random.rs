//! TensorFlow's counter-based random numbers, bit for bit: the Philox4x32-10
//! generator with TF's 128-bit counter and key, its seed scrambling
//! (`GenerateKey`), and the distributions of `random_distributions.h`
//! (uniform from mantissa bits, Box-Muller normals, truncated normals by
//! rejection), plus the samplers built on them (multinomial, gamma, Poisson,
//! binomial). Stateless ops are pure functions of (key, counter), so the
//! same seed gives TensorFlow's values.
//!
//! Where TensorFlow sizes per-output reservations (`Skip(256 * i)`), so do
//! we, which keeps every value independent of how the work is split.

use super::parallel;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::Tensor;
use half::{bf16, f16};

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// TensorFlow's `PhiloxRandom`: a 128-bit counter and a 64-bit key; each
/// call to [`PhiloxRandom::next_block`] returns four words and advances the
/// counter by one.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PhiloxRandom {
    counter: [u32; 4],
    key: [u32; 2],
}

/// Philox4x32-10 of one counter under one key.
#[inline]
pub fn philox4x32_10(mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        let p0 = (M0 as u64) * (ctr[0] as u64);
        let p1 = (M1 as u64) * (ctr[2] as u64);
        ctr = [
            ((p1 >> 32) as u32) ^ ctr[1] ^ key[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ ctr[3] ^ key[1],
            p0 as u32,
        ];
        if round < 9 {
            key[0] = key[0].wrapping_add(W0);
            key[1] = key[1].wrapping_add(W1);
        }
    }
    ctr
}

impl PhiloxRandom {
    /// A generator at `counter` under `key` (TF's word order).
    pub fn new(counter: [u32; 4], key: [u32; 2]) -> PhiloxRandom {
        PhiloxRandom { counter, key }
    }

    /// From the uint64 key and two-word counter of the `...V2` ops.
    pub fn from_key_counter(key: u64, counter: [u64; 2]) -> PhiloxRandom {
        PhiloxRandom {
            counter: [
                counter[0] as u32,
                (counter[0] >> 32) as u32,
                counter[1] as u32,
                (counter[1] >> 32) as u32,
            ],
            key: [key as u32, (key >> 32) as u32],
        }
    }

    /// TF's `GenerateKey`: the two seeds (sign-extended to 64 bits) become a
    /// counter, scrambled once under a fixed key; the result's first two
    /// words are the key, the last two the counter's high half.
    pub fn from_seed(seed0: i64, seed1: i64) -> PhiloxRandom {
        let (s0, s1) = (seed0 as u64, seed1 as u64);
        let mix = philox4x32_10(
            [s0 as u32, (s0 >> 32) as u32, s1 as u32, (s1 >> 32) as u32],
            [0x3ec8_f720, 0x0246_1e29],
        );
        PhiloxRandom {
            counter: [0, 0, mix[2], mix[3]],
            key: [mix[0], mix[1]],
        }
    }

    /// The key as one uint64 (the `key` output of `StatelessRandomGetKeyCounter`).
    pub fn key_u64(&self) -> u64 {
        self.key[0] as u64 | (self.key[1] as u64) << 32
    }

    /// The counter as two uint64s.
    pub fn counter_u64(&self) -> [u64; 2] {
        [
            self.counter[0] as u64 | (self.counter[1] as u64) << 32,
            self.counter[2] as u64 | (self.counter[3] as u64) << 32,
        ]
    }

    /// Advances the 128-bit counter by `count` blocks (TF's `Skip`).
    pub fn skip(&mut self, count: u64) {
        let lo = count as u32;
        let mut hi = (count >> 32) as u32;
        self.counter[0] = self.counter[0].wrapping_add(lo);
        if self.counter[0] < lo {
            hi = hi.wrapping_add(1);
        }
        self.counter[1] = self.counter[1].wrapping_add(hi);
        if self.counter[1] < hi {
            self.counter[2] = self.counter[2].wrapping_add(1);
            if self.counter[2] == 0 {
                self.counter[3] = self.counter[3].wrapping_add(1);
            }
        }
    }

    /// A copy advanced by `count` blocks.
    pub fn skipped(&self, count: u64) -> PhiloxRandom {
        let mut g = *self;
        g.skip(count);
        g
    }

    /// The current block; then the counter moves on by one.
    #[inline]
    pub fn next_block(&mut self) -> [u32; 4] {
        let out = philox4x32_10(self.counter, self.key);
        self.counter[0] = self.counter[0].wrapping_add(1);
        if self.counter[0] == 0 {
            self.counter[1] = self.counter[1].wrapping_add(1);
            if self.counter[1] == 0 {
                self.counter[2] = self.counter[2].wrapping_add(1);
                if self.counter[2] == 0 {
                    self.counter[3] = self.counter[3].wrapping_add(1);
                }
            }
        }
        out
    }
}

/// TF's `SingleSampleAdapter`: hands out a generator's words one at a time.
pub struct SingleSample {
    gen: PhiloxRandom,
    block: [u32; 4],
    used: usize,
}

impl SingleSample {
    /// Words from `gen` onwards.
    pub fn new(gen: PhiloxRandom) -> SingleSample {
        SingleSample {
            gen,
            block: [0; 4],
            used: 4,
        }
    }

    /// The next word.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.block = self.gen.next_block();
            self.used = 0;
        }
        self.used += 1;
        self.block[self.used - 1]
    }

    /// TF's `SimplePhilox::RandDouble`: a double in [0, 1) from two words.
    pub fn rand_double(&mut self) -> f64 {
        let a = self.next_u32();
        let b = self.next_u32();
        u64_to_double(a, b)
    }
}

/// A float in [0, 1) from the low 23 bits (TF's `Uint32ToFloat`).
#[inline]
pub fn u32_to_float(x: u32) -> f32 {
    f32::from_bits(0x3F80_0000 | (x & 0x7F_FFFF)) - 1.0
}

/// A double in [0, 1) from 52 bits, `hi` first (TF's `Uint64ToDouble`).
#[inline]
pub fn u64_to_double(hi: u32, lo: u32) -> f64 {
    let man = ((hi as u64) << 32 | lo as u64) & 0xF_FFFF_FFFF_FFFF;
    f64::from_bits(0x3FF0_0000_0000_0000 | man) - 1.0
}

/// A half in [0, 1) from the low 10 bits (TF's `Uint16ToHalf`).
#[inline]
fn u32_to_half(x: u32) -> f16 {
    // 1.m - 1 is exact in half precision.
    f16::from_bits((15 << 10) | (x & 0x3FF) as u16) - f16::ONE
}

/// A bfloat16 in [0, 1) from the low 7 bits (TF's `Uint16ToGfloat16`).
#[inline]
fn u32_to_bf16(x: u32) -> bf16 {
    bf16::from_f32(bf16::from_bits((127 << 7) | (x & 0x7F) as u16).to_f32() - 1.0)
}

/// TF's `BoxMullerFloat`.
#[inline]
pub fn box_muller_f32(x0: u32, x1: u32) -> (f32, f32) {
    let mut u1 = u32_to_float(x0);
    if u1 < 1.0e-7 {
        u1 = 1.0e-7;
    }
    // `2.0f * M_PI * float` is evaluated in double, then narrowed.
    let v1 = (2.0 * std::f64::consts::PI * u32_to_float(x1) as f64) as f32;
    let u2 = (-2.0f32 * u1.ln()).sqrt();
    (v1.sin() * u2, v1.cos() * u2)
}

/// TF's `BoxMullerDouble`.
#[inline]
pub fn box_muller_f64(x: [u32; 4]) -> (f64, f64) {
    let mut u1 = u64_to_double(x[0], x[1]);
    if u1 < 1.0e-7 {
        u1 = 1.0e-7;
    }
    let v1 = 2.0 * std::f64::consts::PI * u64_to_double(x[2], x[3]);
    let u2 = (-2.0 * u1.ln()).sqrt();
    (v1.sin() * u2, v1.cos() * u2)
}

/// The distributions of TF's stateless float ops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatDist {
    /// `[0, 1)`.
    Uniform,
    /// Standard normal.
    Normal,
    /// Standard normal redrawn beyond two standard deviations.
    TruncatedNormal,
}

/// Values per group (one Philox block, or one rejection run) of `dtype`.
fn group_size(dtype: DType) -> usize {
    if dtype == DType::Float64 {
        2
    } else {
        4
    }
}

/// One group of samples (TF's distribution `operator()`), as f64 for the
/// wide types and as the element type's bits otherwise.
fn float_group(gen: &PhiloxRandom, g: u64, dist: FloatDist, dtype: DType, out: &mut [f64; 4]) {
    match dist {
        FloatDist::Uniform | FloatDist::Normal => {
            let b = gen.skipped(g).next_block();
            match (dist, dtype) {
                (FloatDist::Uniform, DType::Float64) => {
                    out[0] = u64_to_double(b[0], b[1]);
                    out[1] = u64_to_double(b[2], b[3]);
                }
                (FloatDist::Uniform, DType::Float16) => {
                    for k in 0..4 {
                        out[k] = u32_to_half(b[k]).to_f64();
                    }
                }
                (FloatDist::Uniform, DType::BFloat16) => {
                    for k in 0..4 {
                        out[k] = u32_to_bf16(b[k]).to_f64();
                    }
                }
                (FloatDist::Uniform, _) => {
                    for k in 0..4 {
                        out[k] = u32_to_float(b[k]) as f64;
                    }
                }
                (_, DType::Float64) => {
                    let (a, c) = box_muller_f64(b);
                    out[0] = a;
                    out[1] = c;
                }
                _ => {
                    let (a, c) = box_muller_f32(b[0], b[1]);
                    let (d, e) = box_muller_f32(b[2], b[3]);
                    *out = [a as f64, c as f64, d as f64, e as f64];
                }
            }
        }
        FloatDist::TruncatedNormal => {
            // Each group reserves 256 words per value: skip G * 256 / 4 blocks.
            let size = group_size(dtype);
            let mut s = SingleSample::new(gen.skipped(g * (size as u64) * 256 / 4));
            let mut n = 0;
            while n < size {
                let (f0, f1) = if dtype == DType::Float64 {
                    box_muller_f64([s.next_u32(), s.next_u32(), s.next_u32(), s.next_u32()])
                } else {
                    let (a, b) = box_muller_f32(s.next_u32(), s.next_u32());
                    (a as f64, b as f64)
                };
                for f in [f0, f1] {
                    if f.abs() < 2.0 && n < size {
                        out[n] = f;
                        n += 1;
                    }
                }
            }
        }
    }
}

/// Fills `v` (n values of the group layout) through `conv` from f64.
fn fill_float<T: Send + Copy>(
    gen: &PhiloxRandom,
    dist: FloatDist,
    dtype: DType,
    v: &mut [T],
    conv: impl Fn(f64) -> T + Sync,
) {
    let size = group_size(dtype);
    parallel::fill_indexed(v, |start, chunk| {
        let mut memo_g = u64::MAX;
        let mut group = [0f64; 4];
        for (k, x) in chunk.iter_mut().enumerate() {
            let i = start + k;
            let g = (i / size) as u64;
            if g != memo_g {
                float_group(gen, g, dist, dtype, &mut group);
                memo_g = g;
            }
            *x = conv(group[i % size]);
        }
    });
}

/// A float tensor of `dtype` and `shape` from `gen`, as TensorFlow's
/// `StatelessRandomUniform/Normal/TruncatedNormal(V2)` fill it.
pub fn stateless_float(
    gen: &PhiloxRandom,
    dist: FloatDist,
    shape: &Shape,
    dtype: DType,
) -> Result<Tensor> {
    let n = shape.num_elements();
    match dtype {
        DType::Float32 => {
            let mut v = vec![0f32; n];
            fill_float(gen, dist, dtype, &mut v, |x| x as f32);
            Tensor::from_vec(shape.clone(), v)
        }
        DType::Float64 => {
            let mut v = vec![0f64; n];
            fill_float(gen, dist, dtype, &mut v, |x| x);
            Tensor::from_vec(shape.clone(), v)
        }
        // Normals are drawn in f32 and rounded once, as Eigen does.
        DType::Float16 => {
            let mut v = vec![f16::ZERO; n];
            fill_float(gen, dist, dtype, &mut v, |x| f16::from_f32(x as f32));
            Tensor::from_vec(shape.clone(), v)
        }
        DType::BFloat16 => {
            let mut v = vec![bf16::ZERO; n];
            fill_float(gen, dist, dtype, &mut v, |x| bf16::from_f32(x as f32));
            Tensor::from_vec(shape.clone(), v)
        }
        d => Err(Error::invalid_argument(format!(
            "stateless random floats need half, bfloat16, float or double, got {d}"
        ))),
    }
}

/// Uniform integers in `[lo, hi)` (TF's biased `x % range`), or every value
/// of the type when `range` is `None` (`...FullInt`).
pub fn stateless_int(
    gen: &PhiloxRandom,
    shape: &Shape,
    dtype: DType,
    range: Option<(i64, i64)>,
) -> Result<Tensor> {
    let n = shape.num_elements();
    if let Some((lo, hi)) = range {
        if lo >= hi {
            return Err(Error::invalid_argument(format!(
                "Need minval < maxval: {lo} >= {hi}"
            )));
        }
    }
    match dtype {
        DType::Int32 => {
            let mut v = vec![0i32; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                for (k, x) in chunk.iter_mut().enumerate() {
                    let i = start + k;
                    let w = gen.skipped((i / 4) as u64).next_block()[i % 4];
                    *x = match range {
                        None => w as i32,
                        Some((lo, hi)) => {
                            let r = (hi as i32 as u32).wrapping_sub(lo as i32 as u32);
                            (lo as i32).wrapping_add((w % r) as i32)
                        }
                    };
                }
            });
            Tensor::from_vec(shape.clone(), v)
        }
        DType::Int64 => {
            let mut v = vec![0i64; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                for (k, x) in chunk.iter_mut().enumerate() {
                    let i = start + k;
                    let b = gen.skipped((i / 2) as u64).next_block();
                    let bits = b[2 * (i % 2)] as u64 | (b[2 * (i % 2) + 1] as u64) << 32;
                    *x = match range {
                        None => bits as i64,
                        Some((lo, hi)) => {
                            let r = (hi as u64).wrapping_sub(lo as u64);
                            lo.wrapping_add((bits % r) as i64)
                        }
                    };
                }
            });
            Tensor::from_vec(shape.clone(), v)
        }
        // Full-range unsigned draws are the signed draws' bits.
        DType::UInt32 | DType::UInt64 if range.is_none() => {
            let signed = if dtype == DType::UInt32 {
                DType::Int32
            } else {
                DType::Int64
            };
            super::bitcast::bitcast(&stateless_int(gen, shape, signed, None)?, dtype)
        }
        d => Err(Error::invalid_argument(format!(
            "stateless random integers need int32 or int64 (or uint32/uint64 over their full range), got {d}"
        ))),
    }
}

/// TF's multinomial kernel: per row, an unnormalised CDF of `exp(logit -
/// max)` over finite logits (in f64) and `num_samples` draws by
/// `upper_bound(u * total)`. Rows take words consecutively from one
/// `SimplePhilox` stream, as TensorFlow does when the batch is one shard.
pub fn multinomial(
    gen: &PhiloxRandom,
    logits: &[f64],
    batch: usize,
    classes: usize,
    num_samples: usize,
) -> Vec<i64> {
    let mut out = vec![0i64; batch * num_samples];
    let mut s = SingleSample::new(*gen);
    let mut cdf = vec![0f64; classes];
    for b in 0..batch {
        let row = &logits[b * classes..(b + 1) * classes];
        let max = row
            .iter()
            .filter(|x| x.is_finite())
            .fold(f64::MIN, |m, &x| m.max(x));
        let mut total = 0.0;
        for (c, &x) in cdf.iter_mut().zip(row) {
            if x.is_finite() {
                total += (x - max).exp();
            }
            *c = total;
        }
        for j in 0..num_samples {
            let to_find = s.rand_double() * total;
            out[b * num_samples + j] = cdf.partition_point(|&c| c <= to_find) as i64;
        }
    }
    out
}

/// Returns buffered samples last-first, as TF's `SampleBuffer` does.
struct Buffer {
    vals: [f64; 2],
    left: usize,
}

impl Buffer {
    fn new() -> Buffer {
        Buffer {
            vals: [0.0; 2],
            left: 0,
        }
    }

    fn next(&mut self, gen: &mut PhiloxRandom, normal: bool) -> f64 {
        if self.left == 0 {
            let b = gen.next_block();
            self.vals = if normal {
                let (a, c) = box_muller_f64(b);
                [a, c]
            } else {
                [u64_to_double(b[0], b[1]), u64_to_double(b[2], b[3])]
            };
            self.left = 2;
        }
        self.left -= 1;
        self.vals[self.left]
    }
}

/// One Gamma(alpha, 1) sample (TF's Marsaglia-Tsang loop, in f64) from the
/// generator of output `output_idx` (256 blocks reserved per output).
pub fn gamma_sample(gen: &PhiloxRandom, output_idx: u64, alpha: f64) -> f64 {
    let mut g = gen.skipped(256 * output_idx);
    let mut uniform = Buffer::new();
    if alpha == 1.0 {
        let b = g.next_block();
        let u = u64_to_double(b[2], b[3]);
        return -(-u).ln_1p();
    }
    let mut normal = Buffer::new();
    let less = alpha < 1.0;
    let d = alpha + if less { 2.0 / 3.0 } else { -1.0 / 3.0 };
    let c = 1.0 / 3.0 / d.sqrt();
    loop {
        let x = normal.next(&mut g, true);
        let mut v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        v = v * v * v;
        let u = uniform.next(&mut g, false);
        if u < 1.0 - 0.0331 * (x * x) * (x * x) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            let mut res = d * v;
            if less {
                let b = uniform.next(&mut g, false);
                res *= b.powf(1.0 / alpha);
            }
            return res;
        }
    }
}

/// Gamma samples for `num_alphas` alphas, `samples_per_alpha` each, laid out
/// `[samples..., alphas...]` (sample-major) as TensorFlow writes them.
pub fn gamma(gen: &PhiloxRandom, alphas: &[f64], samples_per_alpha: usize) -> Vec<f64> {
    let na = alphas.len();
    let mut out = vec![0f64; na * samples_per_alpha];
    parallel::fill_indexed(&mut out, |start, chunk| {
        for (k, x) in chunk.iter_mut().enumerate() {
            let pos = start + k;
            let (sample, a) = (pos / na, pos % na);
            *x = gamma_sample(gen, (a * samples_per_alpha + sample) as u64, alphas[a]);
        }
    });
    out
}

/// Uniforms handed out last-first from blocks of TF's
/// `UniformDistribution<CT>` (4 floats or 2 doubles per block).
struct UniformBuf {
    vals: [f64; 4],
    left: usize,
    double: bool,
}

impl UniformBuf {
    fn new(double: bool) -> UniformBuf {
        UniformBuf {
            vals: [0.0; 4],
            left: 0,
            double,
        }
    }

    fn next(&mut self, gen: &mut PhiloxRandom) -> f64 {
        if self.left == 0 {
            let b = gen.next_block();
            if self.double {
                self.vals[0] = u64_to_double(b[0], b[1]);
                self.vals[1] = u64_to_double(b[2], b[3]);
                self.left = 2;
            } else {
                for (v, &w) in self.vals.iter_mut().zip(&b) {
                    *v = u32_to_float(w) as f64;
                }
                self.left = 4;
            }
        }
        self.left -= 1;
        self.vals[self.left]
    }
}

fn lgamma_f64(x: f64) -> f64 {
    libm::lgamma(x)
}

/// One Poisson(rate) sample from output `output_idx`'s generator (256 blocks
/// each): Knuth's product method below rate 10, Hormann's transformed
/// rejection above; arithmetic in f32 (`double == false`) or f64 as TF's
/// compute type for the rate dtype.
pub fn poisson_sample(gen: &PhiloxRandom, output_idx: u64, rate: f64, double: bool) -> f64 {
    let mut g = gen.skipped(256 * output_idx);
    let mut un = UniformBuf::new(double);
    if double {
        if rate < 10.0 {
            let exp_neg = (-rate).exp();
            let (mut prod, mut x) = (1.0f64, 0.0f64);
            loop {
                prod *= un.next(&mut g);
                if prod <= exp_neg {
                    return x;
                }
                x += 1.0;
            }
        }
        let log_rate = rate.ln();
        let b = 0.931 + 2.53 * rate.sqrt();
        let a = -0.059 + 0.02483 * b;
        let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
        loop {
            let u = un.next(&mut g) - 0.5;
            let v = un.next(&mut g);
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + rate + 0.43).floor();
            if us >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2.0) {
                return k;
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            let s = (v * inv_alpha / (a / (us * us) + b)).ln();
            let t = -rate + k * log_rate - lgamma_f64(k + 1.0);
            if s <= t {
                return k;
            }
        }
    }
    let rate = rate as f32;
    if rate < 10.0 {
        let exp_neg = (-rate).exp();
        let (mut prod, mut x) = (1.0f32, 0.0f32);
        loop {
            prod *= un.next(&mut g) as f32;
            if prod <= exp_neg {
                return x as f64;
            }
            x += 1.0;
        }
    }
    let log_rate = rate.ln();
    let b = 0.931f32 + 2.53f32 * rate.sqrt();
    let a = -0.059f32 + 0.02483f32 * b;
    let inv_alpha = 1.1239f32 + 1.1328f32 / (b - 3.4f32);
    loop {
        let u = un.next(&mut g) as f32 - 0.5;
        let v = un.next(&mut g) as f32;
        let us = 0.5f32 - u.abs();
        let k = ((2.0f32 * a / us + b) * u + rate + 0.43f32).floor();
        if us >= 0.07f32 && v <= 0.9277f32 - 3.6224f32 / (b - 2.0f32) {
            return k as f64;
        }
        if k < 0.0 || (us < 0.013f32 && v > us) {
            continue;
        }
        let s = (v * inv_alpha / (a / (us * us) + b)).ln();
        let t = -rate + k * log_rate - libm::lgammaf(k + 1.0);
        if s <= t {
            return k as f64;
        }
    }
}

/// Poisson samples for each rate, `samples_per_rate` each, sample-major.
pub fn poisson(
    gen: &PhiloxRandom,
    rates: &[f64],
    samples_per_rate: usize,
    double: bool,
) -> Vec<f64> {
    let nr = rates.len();
    let mut out = vec![0f64; nr * samples_per_rate];
    parallel::fill_indexed(&mut out, |start, chunk| {
        for (k, x) in chunk.iter_mut().enumerate() {
            let pos = start + k;
            let (sample, r) = (pos / nr, pos % nr);
            *x = poisson_sample(
                gen,
                (r * samples_per_rate + sample) as u64,
                rates[r],
                double,
            );
        }
    });
    out
}

fn binomial_inversion(count: f64, prob: f64, gen: &mut PhiloxRandom) -> f64 {
    let mut un = UniformBuf::new(true);
    let (mut geom_sum, mut num_geom) = (0.0f64, 0i64);
    let denom = (-prob).ln_1p();
    loop {
        let u = un.next(gen);
        geom_sum += (u.ln() / denom).ceil();
        if geom_sum > count {
            return num_geom as f64;
        }
        num_geom += 1;
    }
}

fn stirling_tail(k: f64) -> f64 {
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    if k <= 9.0 {
        return TAIL[k as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

fn btrs(count: f64, prob: f64, gen: &mut PhiloxRandom) -> f64 {
    let stddev = (count * prob * (1.0 - prob)).sqrt();
    let b = 1.15 + 2.53 * stddev;
    let a = -0.0873 + 0.0248 * b + 0.01 * prob;
    let c = count * prob + 0.5;
    let v_r = 0.92 - 4.2 / b;
    let r = prob / (1.0 - prob);
    let alpha = (2.83 + 5.1 / b) * stddev;
    let m = ((count + 1.0) * prob).floor();
    let mut un = UniformBuf::new(true);
    loop {
        let u = un.next(gen) - 0.5;
        let mut v = un.next(gen);
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + c).floor();
        if us >= 0.07 && v <= v_r {
            return k;
        }
        if k < 0.0 || k > count {
            continue;
        }
        v = (v * alpha / (a / (us * us) + b)).ln();
        let upper = (m + 0.5) * ((m + 1.0) / (r * (count - m + 1.0))).ln()
            + (count + 1.0) * ((count - m + 1.0) / (count - k + 1.0)).ln()
            + (k + 0.5) * (r * (count - k + 1.0) / (k + 1.0)).ln()
            + stirling_tail(m)
            + stirling_tail(count - m)
            - stirling_tail(k)
            - stirling_tail(count - k);
        if v <= upper {
            return k;
        }
    }
}

/// One Binomial(count, prob) sample for output `output_idx`, TF's way:
/// inversion (42 blocks reserved per output) when `count * min(p, q) < 10`
/// (tested in the parameter dtype, `narrow`), BTRS (256 blocks) otherwise.
pub fn binomial_sample(
    gen: &PhiloxRandom,
    output_idx: u64,
    count: f64,
    prob: f64,
    narrow: impl Fn(f64) -> f64,
) -> f64 {
    if count <= 0.0 || prob <= 0.0 {
        return 0.0;
    }
    if prob >= 1.0 {
        return count;
    }
    if prob.is_nan() {
        return f64::NAN;
    }
    let (p, flip) = if prob <= 0.5 {
        (prob, false)
    } else {
        (narrow(1.0 - prob), true)
    };
    let big = narrow(count * p) >= 10.0;
    let mut g = gen.skipped(if big { 256 } else { 42 } * output_idx);
    let k = if big {
        btrs(count, p, &mut g)
    } else {
        binomial_inversion(count, p, &mut g)
    };
    if flip {
        count - k
    } else {
        k
    }
}

/// Element types TF's parameterized truncated normal computes in, with
/// their uniform and normal groups (4 floats or 2 doubles per block).
pub trait PtnFloat: super::scalar::Float + Send + Sync {
    /// One block of uniforms in `[0, 1)`.
    fn uniform_group(gen: &mut PhiloxRandom) -> Vec<Self>;
    /// One block of standard normals.
    fn normal_group(gen: &mut PhiloxRandom) -> Vec<Self>;
}

impl PtnFloat for f32 {
    fn uniform_group(gen: &mut PhiloxRandom) -> Vec<f32> {
        gen.next_block().iter().map(|&w| u32_to_float(w)).collect()
    }
    fn normal_group(gen: &mut PhiloxRandom) -> Vec<f32> {
        let b = gen.next_block();
        let (a, c) = box_muller_f32(b[0], b[1]);
        let (d, e) = box_muller_f32(b[2], b[3]);
        vec![a, c, d, e]
    }
}

impl PtnFloat for f64 {
    fn uniform_group(gen: &mut PhiloxRandom) -> Vec<f64> {
        let b = gen.next_block();
        vec![u64_to_double(b[0], b[1]), u64_to_double(b[2], b[3])]
    }
    fn normal_group(gen: &mut PhiloxRandom) -> Vec<f64> {
        let (a, c) = box_muller_f64(gen.next_block());
        vec![a, c]
    }
}

/// The parameters of one batch member of a truncated normal.
#[derive(Copy, Clone, Debug)]
pub struct TruncParams<T> {
    /// Mean of the untruncated normal.
    pub mean: T,
    /// Its standard deviation.
    pub stddev: T,
    /// Lower bound.
    pub minval: T,
    /// Upper bound.
    pub maxval: T,
}

/// TF's `TruncatedNormalFunctorV2` run as one shard: outputs in batch-major
/// order from one continuous Philox stream, written sample-major
/// (`out[sample * num_batches + batch]`); `params(b)` gives batch `b`'s
/// parameters. Normal rejection when a bound is 1.3 standard deviations
/// past the mean, else uniform or exponential rejection.
pub fn parameterized_truncated_normal<T: PtnFloat>(
    gen: &PhiloxRandom,
    num_batches: usize,
    samples_per_batch: usize,
    params: impl Fn(usize) -> TruncParams<T>,
) -> Result<Vec<T>> {
    const MAX_ITER: i32 = 1000;
    let l = <T as super::scalar::Float>::lit;
    let mut g = *gen;
    let mut out = vec![T::zero(); num_batches * samples_per_batch];
    let limit = out.len();
    let mut output_idx = 0usize;
    while output_idx < limit {
        let batch = output_idx / samples_per_batch;
        let TruncParams {
            mean,
            mut stddev,
            mut minval,
            mut maxval,
        } = params(batch);
        if !(stddev > T::zero() && minval < maxval && (minval.is_finite() || maxval.is_finite())) {
            return Err(Error::invalid_argument("Invalid parameters"));
        }
        let mut iters = 0;
        if (minval.is_infinite() && minval < T::zero()) || maxval < mean {
            std::mem::swap(&mut minval, &mut maxval);
            stddev = -stddev;
        }
        let norm_min = (minval - mean) / stddev;
        let norm_max = (maxval - mean) / stddev;
        let sqrt_factor = (norm_min * norm_min + l(4.0)).sqrt();
        let cutoff = l(2.0) * (l(0.5) + (norm_min * (norm_min - sqrt_factor)) / l(4.0)).exp()
            / (norm_min + sqrt_factor);
        let diff = norm_max - norm_min;
        let k = l(1.3);
        let mut sample_idx = output_idx % samples_per_batch;
        let mut put = |sample_idx: usize, v: T| out[sample_idx * num_batches + batch] = v;
        if (norm_min < -k && norm_max >= T::zero()) || (norm_max > k && norm_min <= T::zero()) {
            'outer: while sample_idx < samples_per_batch {
                for x in T::normal_group(&mut g) {
                    if x >= norm_min && x <= norm_max {
                        put(sample_idx, x * stddev + mean);
                        sample_idx += 1;
                        output_idx += 1;
                        if sample_idx >= samples_per_batch {
                            break 'outer;
                        }
                        iters = 0;
                    } else {
                        iters += 1;
                        if iters > MAX_ITER {
                            return Err(Error::internal(
                                "TruncatedNormal randn rejection sampler failed to accept a sample.",
                            ));
                        }
                    }
                }
            }
        } else if diff < cutoff {
            let plus = if norm_min < T::zero() {
                T::zero()
            } else {
                norm_min * norm_min
            };
            'outer2: while sample_idx < samples_per_batch {
                let r = T::uniform_group(&mut g);
                let z: Vec<T> = r.iter().map(|&x| x * diff + norm_min).collect();
                let gs: Vec<T> = z.iter().map(|&zz| (plus - zz * zz) / l(2.0)).collect();
                let u = T::uniform_group(&mut g);
                for i in 0..r.len() {
                    let accept = u[i] <= gs[i].exp();
                    if accept || iters + 1 >= MAX_ITER {
                        if !accept {
                            return Err(Error::internal(
                                "TruncatedNormal uniform rejection sampler failed to  accept a sample.",
                            ));
                        }
                        put(sample_idx, z[i] * stddev + mean);
                        sample_idx += 1;
                        output_idx += 1;
                        if sample_idx >= samples_per_batch {
                            break 'outer2;
                        }
                        iters = 0;
                    } else {
                        iters += 1;
                    }
                }
            }
        } else {
            let alpha = (norm_min + (norm_min * norm_min + l(4.0)).sqrt()) / l(2.0);
            'outer3: while sample_idx < samples_per_batch {
                let r = T::uniform_group(&mut g);
                let mut i = 0;
                while i < r.len() {
                    let z = -r[i].ln() / alpha + norm_min;
                    i += 1;
                    let x = if norm_min < alpha {
                        alpha - z
                    } else {
                        norm_min - alpha
                    };
                    let gg = (-x * x / l(2.0)).exp();
                    let u = r[i];
                    i += 1;
                    let accept = u <= gg && z < norm_max;
                    if accept || iters + 1 >= MAX_ITER {
                        if !accept {
                            return Err(Error::internal(
                                "TruncatedNormal exponential distribution rejection sampler failed to accept a sample.",
                            ));
                        }
                        put(sample_idx, z * stddev + mean);
                        sample_idx += 1;
                        output_idx += 1;
                        if sample_idx >= samples_per_batch {
                            break 'outer3;
                        }
                        iters = 0;
                    } else {
                        iters += 1;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// d sample / d alpha of a Gamma(alpha, 1) sample (implicit
/// reparameterization: -dP(a, x)/da / dP(a, x)/dx), as `RandomGammaGrad`.
pub fn gamma_sample_grad(a: f64, x: f64) -> f64 {
    let density = (-x + (a - 1.0) * x.ln() - libm::lgamma(a)).exp();
    -super::special::igamma_grad_a(a, x) / density
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_scrambling_matches_tensorflow() {
        // StatelessRandomGetKeyCounter(seed=[1, 2]) in TensorFlow 2.21.
        let g = PhiloxRandom::from_seed(1, 2);
        assert_eq!(g.key_u64(), 10413732777507651514);
        assert_eq!(g.counter_u64(), [0, 17830669156045600267]);
    }

    #[test]
    fn uniform_matches_tensorflow() {
        // tf.random.stateless_uniform([5], seed=[1, 2]) in TensorFlow 2.21.
        let g = PhiloxRandom::from_seed(1, 2);
        let t = stateless_float(&g, FloatDist::Uniform, &Shape::new(&[5]), DType::Float32).unwrap();
        assert_eq!(
            t.as_slice::<f32>().unwrap(),
            &[0.8440604, 0.19204533, 0.9962232, 0.1603874, 0.27199018]
        );
    }

    #[test]
    fn skip_carries_across_words() {
        let mut g = PhiloxRandom::new([u32::MAX, u32::MAX, u32::MAX, 0], [1, 2]);
        g.skip(1);
        assert_eq!(g.counter, [0, 0, 0, 1]);
        let mut h = PhiloxRandom::new([u32::MAX, 0, 0, 0], [1, 2]);
        h.skip(1 << 32 | 1);
        assert_eq!(h.counter, [0, 2, 0, 0]);
    }

    #[test]
    fn truncated_normals_stay_within_two() {
        let g = PhiloxRandom::from_seed(3, 4);
        for dt in [DType::Float32, DType::Float64] {
            let t =
                stateless_float(&g, FloatDist::TruncatedNormal, &Shape::new(&[999]), dt).unwrap();
            assert!(t.to_f64_vec().unwrap().iter().all(|x| x.abs() < 2.0));
        }
    }

    #[test]
    fn samplers_have_plausible_moments() {
        let g = PhiloxRandom::from_seed(5, 6);
        let n = 20_000;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let gam = gamma(&g, &[0.5, 1.0, 4.0], n);
        for (a, want) in [0.5, 1.0, 4.0].iter().enumerate() {
            let col: Vec<f64> = gam.iter().skip(a).step_by(3).copied().collect();
            assert!(
                (mean(&col) - want).abs() < 0.05 * want.max(1.0),
                "gamma {want}"
            );
        }
        for (rate, double) in [(3.0, false), (40.0, true), (40.0, false)] {
            let p = poisson(&g, &[rate], n, double);
            assert!((mean(&p) - rate).abs() < 0.05 * rate, "poisson {rate}");
        }
        for (count, prob) in [(5.0, 0.3), (200.0, 0.4), (200.0, 0.9)] {
            let v: Vec<f64> = (0..n as u64)
                .map(|i| binomial_sample(&g, i, count, prob, |x| x))
                .collect();
            assert!((mean(&v) - count * prob).abs() < 0.03 * count * prob);
        }
        let m = multinomial(&g, &[0.0, f64::NEG_INFINITY, 2f64.ln()], 1, 3, 3000);
        assert!(!m.contains(&1));
        let twos = m.iter().filter(|&&k| k == 2).count() as f64 / 3000.0;
        assert!((twos - 2.0 / 3.0).abs() < 0.03);
    }
}
