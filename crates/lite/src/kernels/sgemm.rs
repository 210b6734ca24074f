//! The float convolutions' GEMM on AVX-512: `c = clamp(a @ w + bias)` for
//! row-major activations `a` (a 1x1 convolution's input as it lies in
//! memory, or im2col rows), with the bias and the fused activation applied
//! while the sums are still in registers.
//!
//! The weights are packed once, when the kernel is built, into panels of
//! [`PANEL`] output channels (`k` rows of `PANEL` floats, zero padded).
//! Tiles of [`MR`] rows by one panel keep their 24 accumulators in
//! registers over the whole depth; each output is one chain of fused
//! multiply-adds in depth order, so results do not depend on the blocking
//! or the thread count.

/// Output channels per panel (two vectors of 16 lanes).
pub const PANEL: usize = 32;

/// Rows per register tile.
const MR: usize = 12;

/// Rows of `a` per task: a block of activations that stays in cache while
/// every panel passes over it.
const ROWS_PER_BLOCK: usize = 8 * MR;

/// True when the CPU runs the AVX-512 kernel (checked once).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Float weights `[k, n]` packed for [`gemm`], with the bias and the
/// activation bounds.
pub struct Packed {
    /// `np / PANEL` panels of `k * PANEL` floats.
    data: Vec<f32>,
    /// `n` values, zero padded to `np`.
    bias: Vec<f32>,
    /// Depth.
    pub k: usize,
    /// Output channels.
    pub n: usize,
    lo: f32,
    hi: f32,
}

impl Packed {
    /// Packs the row-major `[k, n]` matrix `w`; `bias` has `n` values or
    /// none; outputs are clamped to `[lo, hi]`.
    pub fn new(w: &[f32], k: usize, n: usize, bias: &[f32], (lo, hi): (f32, f32)) -> Packed {
        let np = n.div_ceil(PANEL) * PANEL;
        let mut data = vec![0.0; k * np];
        for (p, panel) in data.chunks_exact_mut(k * PANEL.max(1)).enumerate() {
            for (kk, dst) in panel.chunks_exact_mut(PANEL).enumerate() {
                for (j, d) in dst.iter_mut().enumerate() {
                    let o = p * PANEL + j;
                    if o < n {
                        *d = w[kk * n + o];
                    }
                }
            }
        }
        let mut b = vec![0.0; np];
        b[..bias.len().min(n)].copy_from_slice(&bias[..bias.len().min(n)]);
        Packed {
            data,
            bias: b,
            k,
            n,
            lo,
            hi,
        }
    }
}

/// `c[r * n + o] = clamp(bias[o] + sum_k a[r * k + kk] * w[kk][o])` for
/// the `m` rows of `a`, in blocks of rows on ferroflow's kernel team when
/// `threads > 1` and the product is large enough.
///
/// Panics when the slices are shorter than the shapes say or the CPU lacks
/// AVX-512 (callers check [`available`]).
pub fn gemm(threads: usize, m: usize, a: &[f32], w: &Packed, c: &mut [f32]) {
    let (k, n) = (w.k, w.n);
    assert!(available(), "the AVX-512 GEMM needs AVX512F");
    assert!(a.len() >= m * k && c.len() >= m * n);
    if m == 0 || n == 0 {
        return;
    }
    let c = &mut c[..m * n];
    let block = |i: usize, rows: &mut [f32]| {
        let r0 = i * ROWS_PER_BLOCK;
        let mr = rows.len() / n;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX512F is present (asserted above); rows `r0..r0 + mr`
        // of `a` (k floats each) exist since `a` holds `m * k` floats, and
        // `rows` holds their `mr * n` outputs.
        unsafe {
            block_avx512(mr, a[r0 * k..].as_ptr(), w, rows.as_mut_ptr());
        }
    };
    if threads > 1 && m > ROWS_PER_BLOCK && m * n * k >= 1 << 18 {
        ferroflow_tensor::team::for_each_chunk_mut(c, ROWS_PER_BLOCK * n, block);
    } else {
        for (i, rows) in c.chunks_mut(ROWS_PER_BLOCK * n).enumerate() {
            block(i, rows);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn block_avx512(m: usize, a: *const f32, w: &Packed, c: *mut f32) {
    let (k, n) = (w.k, w.n);
    let mut n0 = 0;
    while n0 < n {
        let cols = (n - n0).min(PANEL);
        // SAFETY (all offsets below): panel `n0 / PANEL` holds `k * PANEL`
        // floats; rows `r..r + R` lie within the block's `m` rows of `a`
        // and `c`; stores write `cols` columns from `n0`.
        let panel = w.data.as_ptr().add(n0 * k);
        let bias = w.bias.as_ptr().add(n0);
        let mut r = 0;
        while r < m {
            let rows = (m - r).min(MR);
            let (ar, cr) = (a.add(r * k), c.add(r * n + n0));
            let t = Tile {
                a: ar,
                k,
                panel,
                bias,
                lo: w.lo,
                hi: w.hi,
                c: cr,
                ldc: n,
                cols,
            };
            match rows {
                12 => t.run::<12>(),
                11 => t.run::<11>(),
                10 => t.run::<10>(),
                9 => t.run::<9>(),
                8 => t.run::<8>(),
                7 => t.run::<7>(),
                6 => t.run::<6>(),
                5 => t.run::<5>(),
                4 => t.run::<4>(),
                3 => t.run::<3>(),
                2 => t.run::<2>(),
                _ => t.run::<1>(),
            }
            r += rows;
        }
        n0 += cols;
    }
}

/// One register tile's operands.
#[cfg(target_arch = "x86_64")]
struct Tile {
    a: *const f32,
    k: usize,
    panel: *const f32,
    bias: *const f32,
    lo: f32,
    hi: f32,
    c: *mut f32,
    ldc: usize,
    cols: usize,
}

#[cfg(target_arch = "x86_64")]
impl Tile {
    /// `R` rows by one panel: per depth step two weight loads and `R`
    /// broadcasts feed `2 R` fused multiply-adds; then bias, clamp and a
    /// store masked to the panel's valid columns.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn run<const R: usize>(&self) {
        use std::arch::x86_64::*;
        let mut s = [[_mm512_setzero_ps(); 2]; R];
        let mut b = self.panel;
        for kk in 0..self.k {
            let w0 = _mm512_loadu_ps(b);
            let w1 = _mm512_loadu_ps(b.add(16));
            for r in 0..R {
                let x = _mm512_set1_ps(*self.a.add(r * self.k + kk));
                s[r][0] = _mm512_fmadd_ps(x, w0, s[r][0]);
                s[r][1] = _mm512_fmadd_ps(x, w1, s[r][1]);
            }
            b = b.add(PANEL);
        }
        let (lo, hi) = (_mm512_set1_ps(self.lo), _mm512_set1_ps(self.hi));
        let bias = [
            _mm512_loadu_ps(self.bias),
            _mm512_loadu_ps(self.bias.add(16)),
        ];
        let masks = [
            lane_mask(self.cols.min(16)),
            lane_mask(self.cols.saturating_sub(16)),
        ];
        for r in 0..R {
            for v in 0..2 {
                let y = _mm512_add_ps(s[r][v], bias[v]);
                let y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
                _mm512_mask_storeu_ps(self.c.add(r * self.ldc + 16 * v), masks[v], y);
            }
        }
    }
}

/// The mask of the first `n` (at most 16) lanes.
#[cfg(target_arch = "x86_64")]
fn lane_mask(n: usize) -> u16 {
    if n >= 16 {
        u16::MAX
    } else {
        (1u16 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx512_gemm_matches_float64_sums() {
        if !available() {
            eprintln!("skipping: this CPU has no AVX-512");
            return;
        }
        // Row tails 1..12 and several blocks, panel tails, tiny and deep
        // depths, with and without a bias, clamped and not.
        for (m, k, n, bias, act) in [
            (
                1usize,
                1usize,
                1usize,
                true,
                (f32::NEG_INFINITY, f32::INFINITY),
            ),
            (13, 3, 17, true, (0.0, 6.0)),
            (97, 32, 64, false, (0.0, f32::INFINITY)),
            (250, 27, 40, true, (-1.0, 1.0)),
            (11, 300, 96, true, (f32::NEG_INFINITY, f32::INFINITY)),
        ] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..k * n)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0)
                .collect();
            let b: Vec<f32> = if bias {
                (0..n).map(|o| o as f32 * 0.1 - 1.0).collect()
            } else {
                Vec::new()
            };
            let p = Packed::new(&w, k, n, &b, act);
            for threads in [1, 2] {
                let mut c = vec![f32::NAN; m * n];
                gemm(threads, m, &a, &p, &mut c);
                for r in 0..m {
                    for o in 0..n {
                        let mut s = b.get(o).copied().unwrap_or(0.0) as f64;
                        for kk in 0..k {
                            s += a[r * k + kk] as f64 * w[kk * n + o] as f64;
                        }
                        let want = s.clamp(act.0 as f64, act.1 as f64);
                        let got = c[r * n + o] as f64;
                        assert!(
                            (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                            "m={m} k={k} n={n} ({r},{o}): {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
}
