//! The int8 convolutions' GEMM on AVX2 CPUs without VNNI: `vpmaddwd`
//! multiplies 16 pairs of int16 and adds each pair into one of 8 int32
//! lanes.
//!
//! The activations are widened to int16 rows (im2col rows, or a 1x1
//! convolution's input) of `kp` values, `kp` even. The weights are packed
//! once, when the kernel is built, into panels of 8 output channels: per
//! pair of depth values, each channel's two int16 weights side by side, so
//! one 32-byte load holds a depth pair for 8 channels. A broadcast of one
//! activation pair (one 32-bit load) times that vector adds the pair's
//! products into each channel's lane: outer products, no horizontal sums,
//! and 8 channels of a pixel end in one vector.
//!
//! Integer sums are exact (wrapping), so the result equals the plain dot
//! products bit for bit, whatever the blocking. [`gemm_requant`] also
//! requantizes the sums in registers and stores int8 outputs.

use super::requant::Requant;

/// Output channels per panel (one vector of 8 int32 lanes).
pub const PANEL: usize = 8;

/// Rows of the activations per register tile (6 rows x 2 panels = 12
/// accumulators, 2 weight vectors and a broadcast: 15 of 16 registers).
const MR: usize = 6;

/// True when the CPU runs this kernel (std caches the detection).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Int8 weights `[n, k]` widened and packed for [`gemm`], with their bias.
pub struct Packed {
    /// `np / PANEL` panels of `kp / 2` pairs of `2 * PANEL` values.
    data: Vec<i16>,
    /// The bias, zero in the padded columns.
    bias: Vec<i32>,
    /// Depth of the activation rows: `k` rounded up to an even number.
    pub kp: usize,
    /// Output channels.
    pub n: usize,
    /// `n` rounded up to a multiple of [`PANEL`]: the row length of
    /// [`gemm`]'s accumulators.
    pub np: usize,
}

impl Packed {
    /// Packs the row-major `[n, k]` weights `w` with their int32 `bias`.
    pub fn new(w: &[i8], bias: &[i32], n: usize, k: usize) -> Packed {
        let kp = k.div_ceil(2) * 2;
        let np = n.div_ceil(PANEL) * PANEL;
        let mut data = vec![0i16; kp * np];
        for (p, panel) in data.chunks_exact_mut(kp * PANEL).enumerate() {
            for (pair, dst) in panel.chunks_exact_mut(2 * PANEL).enumerate() {
                for c in 0..PANEL {
                    for t in 0..2 {
                        let (o, kk) = (p * PANEL + c, 2 * pair + t);
                        if o < n && kk < k {
                            dst[2 * c + t] = w[o * k + kk] as i16;
                        }
                    }
                }
            }
        }
        let mut b = vec![0; np];
        b[..n].copy_from_slice(&bias[..n]);
        Packed {
            data,
            bias: b,
            kp,
            n,
            np,
        }
    }
}

/// `acc[r * np + o] = bias[o] + sum_k a[r * kp + k] * w[o][k]` (wrapping)
/// for the `m` int16 rows of `a` (`kp` values each, zero past `k`) and
/// every column `o < np`; the padded columns `n..np` come out zero.
///
/// Panics when the slices are shorter than the shapes say or the CPU lacks
/// AVX2 (callers check [`available`]).
pub fn gemm(m: usize, a: &[i16], b: &Packed, acc: &mut [i32]) {
    let (kp, np) = (b.kp, b.np);
    assert!(available(), "the int16 GEMM needs AVX2");
    assert!(a.len() >= m * kp && acc.len() >= m * np);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX2 is present (asserted above); `a` holds `m` rows of `kp`
    // values, `acc` `m` rows of `np` values, and `b` was packed for `kp`
    // and `np`, which is all the tiles read and write.
    unsafe {
        gemm_avx2(m, a.as_ptr(), b, Out::Int32(acc.as_mut_ptr()))
    }
}

/// [`gemm`] followed by `rq`'s requantization, done on the sums while
/// they are in registers: `dst` gets `m` rows of `n` int8 outputs. The same
/// bits as [`gemm`] then [`Requant::store_rows`].
///
/// Panics when the slices are shorter than the shapes say, the CPU lacks
/// AVX2 or `rq` has no exact vector form ([`Requant::vector_exact`]).
pub fn gemm_requant(m: usize, a: &[i16], b: &Packed, rq: &Requant, dst: &mut [i8]) {
    assert!(available(), "the int16 GEMM needs AVX2");
    assert!(
        rq.vector_exact(),
        "a multiplier of i32::MIN has no vector form"
    );
    assert!(a.len() >= m * b.kp && dst.len() >= m * b.n);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX2 is present (asserted above); `a` holds `m` rows of `kp`
    // values, `dst` `m` rows of `n` bytes, and `b` was packed for `kp` and
    // `n`; `rq`'s vectors are padded to whole 8-lane blocks.
    unsafe {
        gemm_avx2(
            m,
            a.as_ptr(),
            b,
            Out::Int8 {
                rq,
                dst: dst.as_mut_ptr(),
            },
        )
    }
}

/// Where a tile's sums go.
#[derive(Clone, Copy)]
enum Out<'a> {
    /// int32 rows of `np` values.
    Int32(*mut i32),
    /// Requantized int8 rows of `n` values.
    Int8 { rq: &'a Requant, dst: *mut i8 },
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gemm_avx2(m: usize, a: *const i16, b: &Packed, out: Out<'_>) {
    let (kp, np) = (b.kp, b.np);
    // Two panels at a time over every row tile: their weights stay in L1
    // while the rows stream past.
    let mut p = 0;
    while p < np / PANEL {
        let panels = (np / PANEL - p).min(2);
        let w = b.data.as_ptr().add(p * PANEL * kp);
        let bias = b.bias.as_ptr().add(p * PANEL);
        let mut r = 0;
        while r < m {
            let rows = (m - r).min(MR);
            let t = Tile {
                a: a.add(r * kp),
                kp,
                w,
                bias,
                out,
                row: r,
                col: p * PANEL,
                np,
                n: b.n,
            };
            match (rows, panels) {
                (6, 2) => t.run::<6, 2>(),
                (5, 2) => t.run::<5, 2>(),
                (4, 2) => t.run::<4, 2>(),
                (3, 2) => t.run::<3, 2>(),
                (2, 2) => t.run::<2, 2>(),
                (1, 2) => t.run::<1, 2>(),
                (6, _) => t.run::<6, 1>(),
                (5, _) => t.run::<5, 1>(),
                (4, _) => t.run::<4, 1>(),
                (3, _) => t.run::<3, 1>(),
                (2, _) => t.run::<2, 1>(),
                _ => t.run::<1, 1>(),
            }
            r += rows;
        }
        p += panels;
    }
}

/// One register tile's operands.
#[cfg(target_arch = "x86_64")]
struct Tile<'a> {
    a: *const i16,
    kp: usize,
    /// The first panel's weights; the second follows `kp * PANEL` later.
    w: *const i16,
    bias: *const i32,
    out: Out<'a>,
    /// The tile's first row and column.
    row: usize,
    col: usize,
    /// Padded and real output channels.
    np: usize,
    n: usize,
}

#[cfg(target_arch = "x86_64")]
impl Tile<'_> {
    /// `R` rows by `P` panels: per depth pair `P` weight loads and `R`
    /// broadcasts feed `R * P` multiply-adds; the sums start at the bias.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn run<const R: usize, const P: usize>(&self) {
        use std::arch::x86_64::*;
        let mut s = [[_mm256_setzero_si256(); P]; R];
        for v in 0..P {
            let bias = _mm256_loadu_si256(self.bias.add(v * PANEL) as *const __m256i);
            for r in 0..R {
                s[r][v] = bias;
            }
        }
        let panel_len = self.kp * PANEL;
        for pair in 0..self.kp / 2 {
            let mut wv = [_mm256_setzero_si256(); P];
            for (v, x) in wv.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(
                    self.w.add(v * panel_len + pair * 2 * PANEL) as *const __m256i
                );
            }
            for r in 0..R {
                let x = (self.a.add(r * self.kp + 2 * pair) as *const i32).read_unaligned();
                let x = _mm256_set1_epi32(x);
                for v in 0..P {
                    s[r][v] = _mm256_add_epi32(s[r][v], _mm256_madd_epi16(x, wv[v]));
                }
            }
        }
        match self.out {
            Out::Int32(acc) => {
                for r in 0..R {
                    for v in 0..P {
                        let at = (self.row + r) * self.np + self.col + v * PANEL;
                        _mm256_storeu_si256(acc.add(at) as *mut __m256i, s[r][v]);
                    }
                }
            }
            Out::Int8 { rq, dst } => {
                let bounds = rq.bounds8();
                for v in 0..P {
                    let col = self.col + v * PANEL;
                    let valid = self.n.saturating_sub(col).min(PANEL);
                    for r in 0..R {
                        let y = rq.lanes8_avx2(col, s[r][v], &bounds);
                        let at = dst.add((self.row + r) * self.n + col);
                        if valid == PANEL {
                            super::requant::store8_avx2(y, at);
                        } else {
                            let mut bytes = [0i8; PANEL];
                            super::requant::store8_avx2(y, bytes.as_mut_ptr());
                            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, valid);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_gemm_matches_the_plain_sums() {
        if !available() {
            eprintln!("skipping: this CPU has no AVX2");
            return;
        }
        // Row tails 1..6 and panel tails, odd depths, extreme values
        // (-128 * -128 pairs), wrapping sums.
        for (m, k, n) in [
            (1usize, 1usize, 1usize),
            (7, 3, 9),
            (13, 32, 24),
            (64, 27, 17),
            (5, 1025, 40),
        ] {
            let w: Vec<i8> = (0..n * k)
                .map(|i| {
                    if i % 11 == 0 {
                        -128
                    } else {
                        (i * 53 % 255) as i8
                    }
                })
                .collect();
            let bias: Vec<i32> = (0..n).map(|o| o as i32 * 1000 - 7000).collect();
            let p = Packed::new(&w, &bias, n, k);
            let mut a = vec![0i16; m * p.kp];
            for r in 0..m {
                for kk in 0..k {
                    a[r * p.kp + kk] = if (r + kk) % 7 == 0 {
                        -128
                    } else {
                        ((r * 31 + kk * 17) % 256) as i16 - 128
                    };
                }
            }
            let mut acc = vec![i32::MIN; m * p.np];
            gemm(m, &a, &p, &mut acc);
            // Requantized in registers: the bits of the separate pass.
            let mults: Vec<_> = (0..n)
                .map(|o| crate::quant::Multiplier::new(0.37 / (1 + o % 5) as f64 * 1e-3))
                .collect();
            let rq = Requant::new(&mults, 3 - n as i32 % 7, (-128, 100));
            let mut fused = vec![0i8; m * n];
            gemm_requant(m, &a, &p, &rq, &mut fused);
            let mut separate = vec![0i8; m * n];
            rq.store_rows(&acc, p.np, &mut separate);
            assert_eq!(fused, separate, "m={m} k={k} n={n}");
            for r in 0..m {
                for o in 0..p.np {
                    let want = if o < n {
                        (0..k).fold(bias[o], |s, kk| {
                            s.wrapping_add(a[r * p.kp + kk] as i32 * w[o * k + kk] as i32)
                        })
                    } else {
                        0
                    };
                    assert_eq!(acc[r * p.np + o], want, "m={m} k={k} n={n} ({r},{o})");
                }
            }
        }
    }
}
