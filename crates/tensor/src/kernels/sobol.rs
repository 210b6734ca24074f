//! `SobolSample` (`tf.math.sobol_sample`): points of the Sobol sequence
//! with Joe and Kuo's direction numbers, as TensorFlow's CPU kernel computes
//! them (Gray-code order, the first point skipped, `int32` arithmetic).
//!
//! The direction numbers come from `sobol_directions.bin` (written by
//! `tools/make_sobol_data.py` from S. Joe and F. Y. Kuo's
//! "new-joe-kuo-6.21201" table and checked there against TensorFlow): per
//! dimension the primitive polynomial and the initial direction integers,
//! from which the rest follow by Joe and Kuo's recurrence.
//!
//! Past 2^30 points TensorFlow's kernel overflows `int32` (`1 << 31` makes
//! its scale factor negative); ferroflow computes the same values, as TF does
//! when one thread computes the whole range.

use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::DType;

static DIRECTIONS: &[u8] = include_bytes!("sobol_directions.bin");
/// TensorFlow's largest dimension.
pub const MAX_DIM: usize = 21200;
/// Direction integers per dimension (31-digit points at most).
const DIGITS: usize = 31;

/// Reads the packed table's fields in order.
struct BitReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl BitReader<'_> {
    fn take(&mut self, width: usize) -> u64 {
        let mut v = 0u64;
        for i in 0..width {
            let bit = (self.bytes[(self.pos + i) / 8] >> ((self.pos + i) % 8)) & 1;
            v |= u64::from(bit) << i;
        }
        self.pos += width;
        v
    }
}

/// The direction integers `m_k` (`k < 31`) of the first `dim` dimensions.
fn direction_integers(dim: usize) -> Vec<[i64; DIGITS]> {
    let mut r = BitReader {
        bytes: &DIRECTIONS[12..],
        pos: 0,
    };
    let mut out = Vec::with_capacity(dim);
    for _ in 0..dim {
        let s = r.take(5) as usize;
        let mut m = [1i64; DIGITS];
        if s > 0 {
            let inner = r.take(s - 1);
            for (k, mk) in m.iter_mut().enumerate().take(s) {
                *mk = r.take(k + 1) as i64;
            }
            for k in s..DIGITS {
                let mut v = m[k - s] ^ (m[k - s] << s);
                for i in 1..s {
                    if (inner >> (s - 1 - i)) & 1 == 1 {
                        v ^= m[k - i] << i;
                    }
                }
                m[k] = v;
            }
        }
        out.push(m);
    }
    out
}

/// Number of binary digits of `n` (`n >= 1`).
fn digits(n: i64) -> u32 {
    64 - n.leading_zeros()
}

/// Position of the rightmost zero bit of `n`.
fn rightmost_zero(n: i64) -> usize {
    (!n).trailing_zeros() as usize
}

/// `SobolSample`: `[num_results, dim]` points (float32 or float64) after
/// the first `skip` (and the all-zero first point).
pub fn sobol_sample(dim: i64, num_results: i64, skip: i64, dtype: DType) -> Result<Tensor> {
    if dim < 1 {
        return Err(Error::invalid_argument("dim must be at least one"));
    }
    if dim > MAX_DIM as i64 {
        return Err(Error::invalid_argument(format!(
            "dim must be at most {MAX_DIM}"
        )));
    }
    if num_results < 1 {
        return Err(Error::invalid_argument("num_results must be at least one"));
    }
    if skip < 0 {
        return Err(Error::invalid_argument("skip must be non-negative"));
    }
    if num_results >= i64::from(i32::MAX) - skip {
        return Err(Error::invalid_argument(format!(
            "num_results+skip must be less than {}",
            i32::MAX
        )));
    }
    let (dim, n) = (dim as usize, num_results as usize);
    Tensor::check_allocation("SobolSample", dtype, &[n, dim])?;
    let nd = digits(skip + num_results + 1);
    // TF: `int` direction numbers shifted into `nd` digits, and
    // `1. / (1 << nd)` (negative when nd is 31).
    let scale = 1.0 / f64::from(1i32.wrapping_shl(nd));
    let dirs: Vec<Vec<i32>> = direction_integers(dim)
        .iter()
        .map(|m| {
            (0..nd as usize)
                .map(|k| (m[k] as i32).wrapping_shl(nd - k as u32 - 1))
                .collect()
        })
        .collect();
    let mut seq: Vec<i32> = if skip > 0 {
        let i = skip + 1;
        let gray = i ^ (i >> 1);
        dirs.iter()
            .map(|d| {
                (0..digits(i) as usize)
                    .filter(|&k| (gray >> k) & 1 == 1)
                    .fold(0i32, |acc, k| acc ^ d[k])
            })
            .collect()
    } else {
        dirs.iter().map(|d| d[0]).collect()
    };
    let mut out = Vec::with_capacity(n * dim);
    out.extend(seq.iter().map(|&v| f64::from(v)));
    for i in 1..n {
        let k = rightmost_zero(i as i64 + skip);
        for (v, d) in seq.iter_mut().zip(&dirs) {
            *v ^= d[k];
            out.push(f64::from(*v));
        }
    }
    match dtype {
        DType::Float64 => {
            let v: Vec<f64> = out.into_iter().map(|x| x * scale).collect();
            Tensor::from_vec(vec![n, dim], v)
        }
        DType::Float32 => {
            let s = scale as f32;
            let v: Vec<f32> = out.into_iter().map(|x| x as f32 * s).collect();
            Tensor::from_vec(vec![n, dim], v)
        }
        d => Err(Error::invalid_argument(format!(
            "SobolSample: dtype must be float32 or float64, got {d}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_points_are_the_van_der_corput_and_joe_kuo_ones() {
        let t = sobol_sample(2, 4, 0, DType::Float64).unwrap();
        assert_eq!(
            t.as_slice::<f64>().unwrap(),
            &[0.5, 0.5, 0.75, 0.25, 0.25, 0.75, 0.375, 0.375]
        );
        assert_eq!(&DIRECTIONS[..8], b"SOBOLJK1");
        assert!(sobol_sample(MAX_DIM as i64 + 1, 1, 0, DType::Float32).is_err());
    }
}
