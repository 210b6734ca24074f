//! The int8 convolutions' GEMM on CPUs with AVX512-VNNI: `vpdpbusd`
//! multiplies 64 unsigned by signed byte pairs and adds them, four at a
//! time, into 16 int32 lanes.
//!
//! The activations are int8; adding 128 makes them unsigned (a flip of the
//! top bit), and the weights' column sums times 128 come off the bias once,
//! when the weights are packed:
//! `sum (x + 128) * w + (bias - 128 * sum w) = sum x * w + bias`.
//! Integer sums are exact (wrapping), so the result equals the plain int8
//! dot products bit for bit, whatever the blocking.
//!
//! The weights are packed once, when the kernel is built, into panels of
//! [`PANEL`] output channels: per group of four depth values, each
//! channel's four bytes side by side, so one 64-byte load feeds 16 lanes.

/// Output channels per panel of packed weights (four vectors of 16 lanes).
pub const PANEL: usize = 64;

/// Rows of the activations per register tile.
const MR: usize = 6;

/// True when the CPU runs the VNNI kernel (checked once).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vnni")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the CPU has AVX512F, VL, BW and DQ (checked once): the
/// subsets the requantization loop is compiled for.
pub fn avx512_dq() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Int8 weights `[n, k]` packed for [`gemm`], with the bias corrected for
/// the unsigned activations.
pub struct Packed {
    /// Panels of `PANEL` columns (the last one narrower), each
    /// `kp / 4` groups of `width * 4` bytes.
    data: Vec<i8>,
    /// `bias[o] - 128 * sum_k w[o][k]`, zero in the padded columns.
    bias: Vec<i32>,
    /// Depth of the activation rows: `k` rounded up to a multiple of 4.
    pub kp: usize,
    /// Output channels.
    pub n: usize,
    /// `n` rounded up to a multiple of 16: the row length of [`gemm`]'s
    /// accumulators.
    pub np: usize,
}

impl Packed {
    /// Packs the row-major `[n, k]` weights `w` with their int32 `bias`.
    pub fn new(w: &[i8], bias: &[i32], n: usize, k: usize) -> Packed {
        let kp = k.div_ceil(4) * 4;
        let np = n.div_ceil(16) * 16;
        let mut data = vec![0i8; kp * np];
        let mut at = 0;
        let mut n0 = 0;
        while n0 < np {
            let width = (np - n0).min(PANEL);
            for g in 0..kp / 4 {
                for j in 0..width {
                    for t in 0..4 {
                        let (o, kk) = (n0 + j, 4 * g + t);
                        if o < n && kk < k {
                            data[at] = w[o * k + kk];
                        }
                        at += 1;
                    }
                }
            }
            n0 += width;
        }
        let bias = (0..np)
            .map(|o| {
                if o >= n {
                    return 0;
                }
                let s: i32 = w[o * k..(o + 1) * k].iter().map(|&v| v as i32).sum();
                bias[o].wrapping_sub(s.wrapping_mul(128))
            })
            .collect();
        Packed {
            data,
            bias,
            kp,
            n,
            np,
        }
    }
}

/// `acc[r * np + o] = bias[o] + sum_k (a[r * kp + k] - 128) * w[o][k]` for
/// the `m` unsigned rows of `a` (`kp` bytes each, the padding bytes any
/// value) and every column `o < np`; the padded columns `n..np` come out
/// zero (zero weights, zero bias) and are there only so that every tile
/// stores whole vectors.
///
/// Panics when the slices are shorter than the shapes say or the CPU lacks
/// VNNI (callers check [`available`]).
///
/// With `flip`, `a` holds the int8 activations themselves (`kp` must then
/// be their row length, a multiple of 4): the kernel adds 128 as it reads
/// them, so a 1x1 convolution needs no copy of its input.
pub fn gemm(m: usize, a: &[u8], b: &Packed, acc: &mut [i32], flip: bool) {
    let (kp, np) = (b.kp, b.np);
    assert!(available(), "the VNNI GEMM needs AVX512-VNNI");
    assert!(a.len() >= m * kp && acc.len() >= m * np);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX512F and AVX512-VNNI are present (asserted above); `a`
    // holds `m` rows of `kp` bytes, `acc` `m` rows of `np` values, and
    // `b` was packed for `kp` and `np` (checked by the asserts and by
    // construction), which is all the tiles read and write.
    unsafe {
        if flip {
            gemm_vnni::<true>(m, a.as_ptr(), b, acc.as_mut_ptr())
        } else {
            gemm_vnni::<false>(m, a.as_ptr(), b, acc.as_mut_ptr())
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn gemm_vnni<const FLIP: bool>(m: usize, a: *const u8, b: &Packed, acc: *mut i32) {
    let (kp, np) = (b.kp, b.np);
    let mut n0 = 0;
    while n0 < np {
        let width = (np - n0).min(PANEL);
        // SAFETY (all pointer offsets below): the panel at `n0` starts at
        // byte `n0 * kp` and holds `width * kp` bytes; rows `r..r + mr` of
        // `a` and `acc` lie within the `m` rows the caller checked.
        let panel = b.data.as_ptr().add(n0 * kp);
        let bias = b.bias.as_ptr().add(n0);
        let mut r = 0;
        while r < m {
            let mr = (m - r).min(MR);
            let (ar, cr) = (a.add(r * kp), acc.add(r * np + n0));
            macro_rules! tile {
                ($($mr:literal),*) => {
                    match (mr, width / 16) {
                        $(
                            ($mr, 4) => tile_vnni::<$mr, FLIP, 4>(ar, kp, panel, bias, cr, np),
                            ($mr, 3) => tile_vnni::<$mr, FLIP, 3>(ar, kp, panel, bias, cr, np),
                            ($mr, 2) => tile_vnni::<$mr, FLIP, 2>(ar, kp, panel, bias, cr, np),
                            ($mr, _) => tile_vnni::<$mr, FLIP, 1>(ar, kp, panel, bias, cr, np),
                        )*
                        _ => unreachable!(),
                    }
                };
            }
            tile!(1, 2, 3, 4, 5, 6);
            r += mr;
        }
        n0 += width;
    }
}

/// One `R x 16 NV` tile: the accumulators stay in registers over the whole
/// depth; per group of four depth values, `NV` weight loads, `R`
/// broadcasts of four activation bytes and `R * NV` `vpdpbusd`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
#[inline]
#[allow(clippy::needless_range_loop)]
unsafe fn tile_vnni<const R: usize, const FLIP: bool, const NV: usize>(
    a: *const u8,
    kp: usize,
    panel: *const i8,
    bias: *const i32,
    c: *mut i32,
    ldc: usize,
) {
    use std::arch::x86_64::*;
    let mut s = [[_mm512_setzero_si512(); NV]; R];
    for v in 0..NV {
        let bv = _mm512_loadu_si512(bias.add(16 * v) as *const _);
        for row in s.iter_mut() {
            row[v] = bv;
        }
    }
    let step = NV * 64;
    for g in 0..kp / 4 {
        let bp = panel.add(g * step);
        let mut wv = [_mm512_setzero_si512(); NV];
        for v in 0..NV {
            wv[v] = _mm512_loadu_si512(bp.add(64 * v) as *const _);
        }
        for r in 0..R {
            let four = (a.add(r * kp + 4 * g) as *const i32).read_unaligned();
            let mut av = _mm512_set1_epi32(four);
            if FLIP {
                av = _mm512_xor_si512(av, _mm512_set1_epi32(0x8080_8080u32 as i32));
            }
            for v in 0..NV {
                s[r][v] = _mm512_dpbusd_epi32(s[r][v], av, wv[v]);
            }
        }
    }
    for r in 0..R {
        for v in 0..NV {
            _mm512_storeu_si512(c.add(r * ldc + 16 * v) as *mut _, s[r][v]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vnni_gemm_equals_the_int8_dot_products() {
        if !available() {
            eprintln!("skipping: this CPU has no AVX512-VNNI");
            return;
        }
        // Every row tail (1..6), panel widths 16..64 and a second panel,
        // depths that are not multiples of 4, extreme values.
        for (m, n, k) in [
            (1usize, 1usize, 1usize),
            (5, 3, 27),
            (7, 16, 4),
            (13, 70, 33),
            (6, 64, 128),
            (11, 130, 9),
            (2, 48, 1024),
        ] {
            let x: Vec<i8> = (0..m * k)
                .map(|i| match i % 11 {
                    0 => -128,
                    1 => 127,
                    _ => (i * 37 % 256) as u8 as i8,
                })
                .collect();
            let w: Vec<i8> = (0..n * k)
                .map(|i| match i % 7 {
                    0 => -128,
                    1 => 127,
                    _ => (i * 91 % 253) as u8 as i8,
                })
                .collect();
            let bias: Vec<i32> = (0..n as i32).map(|o| o * 1000 - 77).collect();
            let p = Packed::new(&w, &bias, n, k);
            let mut a = vec![0x5au8; m * p.kp];
            for r in 0..m {
                for kk in 0..k {
                    a[r * p.kp + kk] = (x[r * k + kk] as u8) ^ 0x80;
                }
            }
            let mut acc = vec![0; m * p.np];
            gemm(m, &a, &p, &mut acc, false);
            if k % 4 == 0 {
                // The int8 rows read in place, flipped by the kernel.
                let raw: Vec<u8> = x.iter().map(|&v| v as u8).collect();
                let mut flipped = vec![0; m * p.np];
                gemm(m, &raw, &p, &mut flipped, true);
                assert_eq!(flipped, acc, "m={m} n={n} k={k}");
            }
            for r in 0..m {
                for o in 0..n {
                    let want = x[r * k..(r + 1) * k]
                        .iter()
                        .zip(&w[o * k..(o + 1) * k])
                        .fold(bias[o], |s, (&a, &b)| s + a as i32 * b as i32);
                    assert_eq!(acc[r * p.np + o], want, "m={m} n={n} k={k} r={r} o={o}");
                }
            }
        }
    }
}
