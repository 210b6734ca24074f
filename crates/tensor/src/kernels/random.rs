//! Seeded random numbers from the Philox4x32-10 counter-based generator
//! (the generator TensorFlow's random ops use).
//!
//! Each value is a pure function of (seed, seed2, position), so generation
//! splits across threads with results independent of the thread count, and
//! a stateful op only needs to remember how many blocks it has used.

use super::parallel;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::Tensor;

/// A Philox4x32-10 key and the high half of its counter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Philox {
    key: [u32; 2],
    stream: [u32; 2],
}

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

impl Philox {
    /// A generator keyed by the op's two seeds.
    pub fn new(seed: u64, seed2: u64) -> Philox {
        Philox {
            key: [seed as u32, (seed >> 32) as u32],
            stream: [seed2 as u32, (seed2 >> 32) as u32],
        }
    }

    /// The four 32-bit words of block `index`.
    #[inline]
    pub fn block(&self, index: u64) -> [u32; 4] {
        let mut ctr = [
            index as u32,
            (index >> 32) as u32,
            self.stream[0],
            self.stream[1],
        ];
        let mut key = self.key;
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

    /// A derived generator for independent retries (rejection sampling).
    fn retry(&self, attempt: u32) -> Philox {
        Philox {
            key: [
                self.key[0] ^ attempt.wrapping_mul(0x85EB_CA6B),
                self.key[1].wrapping_add(attempt),
            ],
            stream: self.stream,
        }
    }
}

/// A uniform f32 in [0, 1) from 23 random bits (exact binary fractions).
#[inline]
fn unit_f32(x: u32) -> f32 {
    f32::from_bits((x >> 9) | 0x3F80_0000) - 1.0
}

/// A uniform f64 in [0, 1) from 52 random bits.
#[inline]
fn unit_f64(hi: u32, lo: u32) -> f64 {
    let bits = (((hi as u64) << 32 | lo as u64) >> 12) | 0x3FF0_0000_0000_0000;
    f64::from_bits(bits) - 1.0
}

/// Two standard normals from two uniform words (Box-Muller).
#[inline]
fn box_muller(a: u32, b: u32) -> (f64, f64) {
    let u1 = unit_f64(a, b.rotate_left(16)).max(1e-300);
    let v = std::f64::consts::TAU * unit_f64(b, a.rotate_left(16));
    let r = (-2.0 * u1.ln()).sqrt();
    (r * v.sin(), r * v.cos())
}

/// The distribution a random op samples.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform floats in [0, 1).
    Uniform,
    /// Standard normal.
    Normal,
    /// Standard normal with values beyond two standard deviations redrawn.
    TruncatedNormal,
    /// Uniform integers in [lo, hi).
    UniformInt { lo: i64, hi: i64 },
}

impl Distribution {
    /// Philox blocks consumed for `n` values.
    pub fn blocks_for(self, n: usize, dtype: DType) -> u64 {
        match self {
            Distribution::Uniform if dtype != DType::Float64 => n.div_ceil(4) as u64,
            Distribution::Uniform => n.div_ceil(2) as u64,
            Distribution::Normal => n.div_ceil(2) as u64,
            Distribution::TruncatedNormal | Distribution::UniformInt { .. } => n as u64,
        }
    }
}

/// The last Philox block (and its Box-Muller pair) a worker computed, so
/// consecutive samples that share a block do not recompute it.
struct BlockMemo {
    index: u64,
    block: [u32; 4],
    normals: Option<(f64, f64)>,
}

impl BlockMemo {
    fn new() -> BlockMemo {
        BlockMemo {
            index: u64::MAX,
            block: [0; 4],
            normals: None,
        }
    }

    fn block(&mut self, gen: &Philox, index: u64) -> [u32; 4] {
        if self.index != index {
            self.index = index;
            self.block = gen.block(index);
            self.normals = None;
        }
        self.block
    }

    fn normals(&mut self, gen: &Philox, index: u64) -> (f64, f64) {
        let b = self.block(gen, index);
        *self.normals.get_or_insert_with(|| box_muller(b[0], b[1]))
    }
}

fn sample_f64(gen: &Philox, dist: Distribution, base: u64, i: usize, memo: &mut BlockMemo) -> f64 {
    match dist {
        Distribution::Uniform => {
            let b = memo.block(gen, base + (i / 4) as u64);
            unit_f32(b[i % 4]) as f64
        }
        Distribution::Normal => {
            let (z0, z1) = memo.normals(gen, base + (i / 2) as u64);
            if i.is_multiple_of(2) {
                z0
            } else {
                z1
            }
        }
        Distribution::TruncatedNormal => {
            for attempt in 0.. {
                let g = if attempt == 0 {
                    *gen
                } else {
                    gen.retry(attempt)
                };
                let b = g.block(base + i as u64);
                let (z0, z1) = box_muller(b[0], b[1]);
                if z0.abs() < 2.0 {
                    return z0;
                }
                if z1.abs() < 2.0 {
                    return z1;
                }
            }
            unreachable!()
        }
        Distribution::UniformInt { .. } => unreachable!("integers are drawn in `sample`"),
    }
}

/// `n` samples from blocks `base..`, as a tensor of `dtype` and `shape`.
pub fn sample(
    gen: &Philox,
    dist: Distribution,
    base: u64,
    shape: &Shape,
    dtype: DType,
) -> Result<Tensor> {
    let n = shape.num_elements();
    match (dist, dtype) {
        (Distribution::UniformInt { lo, hi }, DType::Int32 | DType::Int64) => {
            if lo >= hi {
                return Err(Error::invalid_argument(format!(
                    "Need minval < maxval: {lo} >= {hi}"
                )));
            }
            // Drawn in integers: f64 cannot hold every i64.
            let range = hi.wrapping_sub(lo) as u64;
            let mut v = vec![0i64; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                for (k, x) in chunk.iter_mut().enumerate() {
                    let b = gen.block(base + (start + k) as u64);
                    *x = lo.wrapping_add((((b[0] as u64) << 32 | b[1] as u64) % range) as i64);
                }
            });
            super::elementwise::cast(&Tensor::from_vec(shape.clone(), v)?, dtype)
        }
        (Distribution::UniformInt { .. }, d) => Err(Error::invalid_argument(format!(
            "RandomUniformInt needs int32 or int64, got {d}"
        ))),
        (Distribution::Uniform, DType::Float16 | DType::BFloat16) => {
            // Uniform bits straight into the narrow type's mantissa, so values
            // stay below 1 (rounding an f32 sample could give exactly 1).
            let bits = if dtype == DType::Float16 { 10 } else { 7 };
            let mut v = vec![0f32; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                let mut memo = BlockMemo::new();
                for (k, x) in chunk.iter_mut().enumerate() {
                    let i = start + k;
                    let b = memo.block(gen, base + (i / 4) as u64)[i % 4];
                    *x = (b >> (32 - bits)) as f32 / (1u32 << bits) as f32;
                }
            });
            super::elementwise::cast(&Tensor::from_vec(shape.clone(), v)?, dtype)
        }
        (_, DType::Float32 | DType::Float16 | DType::BFloat16) => {
            let mut v = vec![0f32; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                let mut memo = BlockMemo::new();
                for (k, x) in chunk.iter_mut().enumerate() {
                    *x = sample_f64(gen, dist, base, start + k, &mut memo) as f32;
                }
            });
            super::elementwise::cast(&Tensor::from_vec(shape.clone(), v)?, dtype)
        }
        (_, DType::Float64) => {
            let mut v = vec![0f64; n];
            parallel::fill_indexed(&mut v, |start, chunk| {
                let mut memo = BlockMemo::new();
                for (k, x) in chunk.iter_mut().enumerate() {
                    *x = match dist {
                        Distribution::Uniform => {
                            let i = start + k;
                            let b = memo.block(gen, base + (i / 2) as u64);
                            unit_f64(b[2 * (i % 2)], b[2 * (i % 2) + 1])
                        }
                        _ => sample_f64(gen, dist, base, start + k, &mut memo),
                    };
                }
            });
            Tensor::from_vec(shape.clone(), v)
        }
        (_, d) => Err(Error::invalid_argument(format!(
            "random floats need a floating dtype, got {d}"
        ))),
    }
}

/// A permutation of `0..n` (Fisher-Yates) drawn from blocks `base..`.
pub fn permutation(gen: &Philox, base: u64, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let b = gen.block(base + i as u64);
        let r = ((b[0] as u64) << 32 | b[1] as u64) % (i as u64 + 1);
        p.swap(i, r as usize);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answer() {
        // Known-answer vectors of the Random123 distribution (philox4x32, 10 rounds).
        let g = Philox {
            key: [0, 0],
            stream: [0, 0],
        };
        assert_eq!(g.block(0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        let g = Philox {
            key: [0xa4093822, 0x299f31d0],
            stream: [0x13198a2e, 0x03707344],
        };
        assert_eq!(
            g.block(0x85a308d3_243f6a88),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn samples_are_deterministic_and_plausible() {
        let g = Philox::new(7, 3);
        let s = Shape::new(&[100_000]);
        let a = sample(&g, Distribution::Normal, 0, &s, DType::Float32).unwrap();
        let b = sample(&g, Distribution::Normal, 0, &s, DType::Float32).unwrap();
        assert_eq!(a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
        let v = a.as_slice::<f32>().unwrap();
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(
            mean.abs() < 0.02 && (var - 1.0).abs() < 0.03,
            "{mean} {var}"
        );
        let t = sample(&g, Distribution::TruncatedNormal, 0, &s, DType::Float64).unwrap();
        assert!(t.as_slice::<f64>().unwrap().iter().all(|x| x.abs() < 2.0));
        let u = sample(&g, Distribution::Uniform, 5, &s, DType::Float32).unwrap();
        assert!(u
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .all(|&x| (0.0..1.0).contains(&x)));
        let i = sample(
            &g,
            Distribution::UniformInt { lo: -3, hi: 4 },
            0,
            &s,
            DType::Int32,
        )
        .unwrap();
        assert!(i
            .as_slice::<i32>()
            .unwrap()
            .iter()
            .all(|&x| (-3..4).contains(&x)));
        let other = sample(
            &Philox::new(8, 3),
            Distribution::Normal,
            0,
            &s,
            DType::Float32,
        )
        .unwrap();
        assert_ne!(
            a.as_slice::<f32>().unwrap(),
            other.as_slice::<f32>().unwrap()
        );
    }

    #[test]
    fn permutations_are_permutations() {
        let mut p = permutation(&Philox::new(1, 2), 0, 1000);
        assert_ne!(p, (0..1000).collect::<Vec<_>>());
        p.sort();
        assert_eq!(p, (0..1000).collect::<Vec<_>>());
    }
}
