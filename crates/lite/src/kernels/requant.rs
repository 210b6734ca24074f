//! Requantization of int32 accumulators to int8 outputs, per output
//! channel, as TFLite's integer kernels do it: `MultiplyByQuantizedMultiplier`
//! (a rounded doubling high product and a rounding right shift, two
//! roundings) plus the output zero point, clamped to the activation range.
//! Scalar, auto-vectorized (AVX-512) and AVX2 forms give the same bits; the
//! AVX2 eight-lane step is also the epilogue of the AVX2 int8 GEMM.

use crate::quant::Multiplier;

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Per-channel requantization of convolution accumulators (TFLite's two
/// roundings, as [`Multiplier::apply`]), laid out for vector code.
///
/// The per-channel vectors are zero padded to a multiple of 8 lanes, so
/// that vector code may load whole vectors at any channel block.
#[derive(Clone)]
pub struct Requant {
    /// Output channels.
    channels: usize,
    q31: Vec<i32>,
    left: Vec<i32>,
    right: Vec<i32>,
    zp: i32,
    lo: i32,
    hi: i32,
    /// No multiplier is `i32::MIN` (only a negative scale can give one),
    /// the one case whose high product saturates: the vector forms skip
    /// that check.
    vector_exact: bool,
}

impl Requant {
    /// The requantization of channels with multipliers `mult` into
    /// `clamp(. + zp, act.0, act.1)`.
    pub fn new(mult: &[Multiplier], zp: i32, act: (i32, i32)) -> Requant {
        let padded = |f: fn(&Multiplier) -> i32| {
            let mut v: Vec<i32> = mult.iter().map(f).collect();
            v.resize(mult.len().div_ceil(8) * 8, 0);
            v
        };
        Requant {
            channels: mult.len(),
            vector_exact: mult.iter().all(|m| m.q31 != i32::MIN),
            q31: padded(|m| m.q31),
            left: padded(|m| m.shift.max(0)),
            right: padded(|m| (-m.shift).clamp(0, 31)),
            zp,
            lo: act.0,
            hi: act.1,
        }
    }

    /// Whether the AVX2 lanes ([`Requant::lanes8_avx2`]) give the scalar
    /// bits: no multiplier is `i32::MIN`.
    pub fn vector_exact(&self) -> bool {
        self.vector_exact
    }

    /// The zero point and activation bounds as vectors, for
    /// [`Requant::lanes8_avx2`].
    ///
    /// # Safety
    /// AVX2 must be present.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn bounds8(&self) -> Bounds8 {
        Bounds8::new(self.zp, self.lo, self.hi)
    }

    /// `dst[c] = clamp(apply(acc[c]) + zp)` for one pixel's channels.
    pub fn store(&self, acc: &[i32], dst: &mut [i8]) {
        #[cfg(target_arch = "x86_64")]
        {
            if super::qgemm::avx512_dq() {
                // SAFETY: the CPU supports these AVX-512 subsets (checked
                // once by `avx512_dq`).
                return unsafe { self.store_avx512(acc, dst) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { self.store_avx2(acc, dst) };
            }
        }
        self.store_plain(acc, dst)
    }

    /// [`Requant::store`] for each row of `dst` (rows of `c` values, `c`
    /// the channel count), reading row `r`'s accumulators at
    /// `acc[r * stride..]`.
    pub fn store_rows(&self, acc: &[i32], stride: usize, dst: &mut [i8]) {
        #[cfg(target_arch = "x86_64")]
        {
            if super::qgemm::avx512_dq() {
                // SAFETY: the CPU supports these AVX-512 subsets (checked
                // once by `avx512_dq`).
                return unsafe { self.store_rows_avx512(acc, stride, dst) };
            }
        }
        let c = self.channels;
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                for (a, d) in acc.chunks(stride).zip(dst.chunks_exact_mut(c)) {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    unsafe { self.store_avx2(&a[..c], d) };
                }
                return;
            }
        }
        for (a, d) in acc.chunks(stride).zip(dst.chunks_exact_mut(c)) {
            self.store(&a[..c], d);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2")]
    unsafe fn store_rows_avx512(&self, acc: &[i32], stride: usize, dst: &mut [i8]) {
        let c = self.channels;
        for (a, d) in acc.chunks(stride).zip(dst.chunks_exact_mut(c)) {
            self.store_plain(&a[..c], d);
        }
    }

    /// The same loop where 64-bit lanes have arithmetic shifts and
    /// multiplies (AVX2 has neither), so the int64 steps vectorize.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2")]
    unsafe fn store_avx512(&self, acc: &[i32], dst: &mut [i8]) {
        self.store_plain(acc, dst)
    }

    /// Eight channels per step ([`Requant::lanes8_avx2`]), the remainder
    /// one at a time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn store_avx2(&self, acc: &[i32], dst: &mut [i8]) {
        let c = dst.len().min(acc.len()).min(self.channels);
        if !self.vector_exact {
            return self.store_plain(acc, dst);
        }
        let bounds = self.bounds8();
        let mut i = 0;
        while i + 8 <= c {
            let y = self.lanes8_avx2(i, load8(acc, i), &bounds);
            store8_avx2(y, dst.as_mut_ptr().add(i));
            i += 8;
        }
        self.store_channels_from(i, &acc[i..c], &mut dst[i..c]);
    }

    #[inline(always)]
    pub fn store_plain(&self, acc: &[i32], dst: &mut [i8]) {
        self.store_channels_from(0, acc, dst)
    }

    /// [`Requant::store_plain`] for channels `first..` (`acc[0]` is
    /// channel `first`).
    #[inline(always)]
    fn store_channels_from(&self, first: usize, acc: &[i32], dst: &mut [i8]) {
        let (zp, lo, hi) = (self.zp, self.lo, self.hi);
        for ((((d, &a), &q), &l), &r) in dst
            .iter_mut()
            .zip(acc)
            .zip(&self.q31[first..])
            .zip(&self.left[first..])
            .zip(&self.right[first..])
        {
            *d = requant_lane(a, q, l, r).wrapping_add(zp).clamp(lo, hi) as i8;
        }
    }
}

/// [`Multiplier::apply`] without branches (so that it vectorizes): `a`
/// shifted left by `left`, the rounded doubling high product with `q`
/// (saturating its one overflow), then a rounding right shift by `right`.
#[inline(always)]
pub fn requant_lane(a: i32, q: i32, left: i32, right: i32) -> i32 {
    let x = a.wrapping_shl(left as u32);
    let ab = x as i64 * q as i64;
    let nudge = if ab >= 0 {
        1i64 << 30
    } else {
        1 - (1i64 << 30)
    };
    let s = ab + nudge;
    // Division by 2^31 truncating toward zero.
    let t = ((s + ((s >> 63) & ((1i64 << 31) - 1))) >> 31) as i32;
    let hm = if x == i32::MIN && q == i32::MIN {
        i32::MAX
    } else {
        t
    };
    let mask = 1u32.wrapping_shl(right as u32).wrapping_sub(1) as i32;
    let rem = hm & mask;
    let threshold = (mask >> 1) + i32::from(hm < 0);
    (hm >> right) + i32::from(rem > threshold)
}

/// The output zero point and activation bounds, as vectors.
#[cfg(target_arch = "x86_64")]
pub struct Bounds8 {
    zp: __m256i,
    lo: __m256i,
    hi: __m256i,
}

#[cfg(target_arch = "x86_64")]
impl Bounds8 {
    /// Broadcasts of `zp`, `lo` and `hi`.
    ///
    /// # Safety
    /// AVX2 must be present.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn new(zp: i32, lo: i32, hi: i32) -> Bounds8 {
        Bounds8 {
            zp: _mm256_set1_epi32(zp),
            lo: _mm256_set1_epi32(lo),
            hi: _mm256_set1_epi32(hi),
        }
    }
}

/// Eight `i32`s from `v[i..]` (which must hold them).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load8(v: &[i32], i: usize) -> __m256i {
    debug_assert!(i + 8 <= v.len());
    _mm256_loadu_si256(v.as_ptr().add(i) as *const __m256i)
}

/// Stores eight values already inside `[-128, 127]` as bytes at `dst`.
///
/// # Safety
/// AVX2 must be present and `dst` valid for 8 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn store8_avx2(y: __m256i, dst: *mut i8) {
    // The saturating packs keep values already in range.
    let bytes16 = _mm256_packs_epi32(y, y);
    let bytes8 = _mm256_packs_epi16(bytes16, bytes16);
    let out = dst as *mut i32;
    out.write_unaligned(_mm_cvtsi128_si32(_mm256_castsi256_si128(bytes8)));
    out.add(1)
        .write_unaligned(_mm_cvtsi128_si32(_mm256_extracti128_si256::<1>(bytes8)));
}

#[cfg(target_arch = "x86_64")]
impl Requant {
    /// Channels `i..i + 8` of accumulators `a` requantized and clamped
    /// (lanes past the channel count take the padding's zero multiplier).
    ///
    /// The 64-bit products are split into even and odd lanes (AVX2 has no
    /// 64-bit arithmetic shift, and none is needed: for a multiplier other
    /// than `i32::MIN`, TFLite's rounded doubling high product equals
    /// `(x * q + 2^30) >> 31`, whose low 32 bits a logical shift gives as
    /// well). Callers check [`Requant::vector_exact`].
    ///
    /// # Safety
    /// AVX2 must be present.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn lanes8_avx2(&self, i: usize, a: __m256i, b: &Bounds8) -> __m256i {
        let one = _mm256_set1_epi32(1);
        let nudge = _mm256_set1_epi64x(1 << 30);
        let (q, left, right) = (
            load8(&self.q31, i),
            load8(&self.left, i),
            load8(&self.right, i),
        );
        let x = _mm256_sllv_epi32(a, left);
        let even = _mm256_add_epi64(_mm256_mul_epi32(x, q), nudge);
        let odd = _mm256_add_epi64(
            _mm256_mul_epi32(_mm256_srli_epi64::<32>(x), _mm256_srli_epi64::<32>(q)),
            nudge,
        );
        let high = _mm256_blend_epi32::<0b1010_1010>(
            _mm256_srli_epi64::<31>(even),
            _mm256_slli_epi64::<1>(odd),
        );
        // Rounding right shift, ties away from zero.
        let mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
        let rem = _mm256_and_si256(high, mask);
        let threshold =
            _mm256_add_epi32(_mm256_srai_epi32::<1>(mask), _mm256_srli_epi32::<31>(high));
        let scaled = _mm256_sub_epi32(
            _mm256_srav_epi32(high, right),
            _mm256_cmpgt_epi32(rem, threshold),
        );
        _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(scaled, b.zp), b.lo), b.hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_requantization_matches_multiplier_apply() {
        let xs = [
            i32::MIN,
            i32::MIN + 1,
            -1 << 20,
            -77777,
            -3,
            -2,
            -1,
            0,
            1,
            2,
            3,
            5,
            123_456,
            1 << 24,
            i32::MAX,
        ];
        for &m in &[
            1e-9f64, 0.0003, 0.013, 0.25, 0.47, 0.5, 0.9999, 1.7, 13.2, 0.0,
        ] {
            let mu = Multiplier::new(m);
            let rq = Requant::new(&[mu; 15], 3, (-128, 127));
            let mut got = [0i8; 15];
            rq.store(&xs, &mut got);
            let mut plain = [0i8; 15];
            rq.store_plain(&xs, &mut plain);
            assert_eq!(got, plain, "m={m}");
            for (&x, &g) in xs.iter().zip(&got) {
                let want = mu.apply(x).wrapping_add(3).clamp(-128, 127) as i8;
                assert_eq!(g, want, "m={m} x={x}");
                if mu.shift <= 0 {
                    let lane = requant_lane(x, mu.q31, mu.shift.max(0), (-mu.shift).clamp(0, 31));
                    assert_eq!(lane, mu.apply(x), "m={m} x={x}");
                }
            }
        }
    }

    #[test]
    fn per_channel_vector_requantization_is_exact() {
        // 37 channels (four vectors of 8 and a remainder), multipliers
        // with left and right shifts, accumulators scaled so that most
        // results land inside the int8 range, near-ties included.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let c = 37;
        let mults: Vec<Multiplier> = (0..c)
            .map(|i| {
                let m = [3e-6, 0.0004, 0.0071, 0.031, 0.5, 0.74, 1.3, 2.9][i % 8];
                Multiplier::new(m * (1.0 + (next() % 1000) as f64 / 1000.0))
            })
            .collect();
        let rq = Requant::new(&mults, -5, (-128, 127));
        for round in 0..200 {
            let acc: Vec<i32> = (0..c)
                .map(|i| {
                    let m = mults[i].q31 as f64 * 2f64.powi(mults[i].shift - 31);
                    let target = (next() % 300) as f64 - 150.0;
                    let near = (target / m.max(1e-12)).clamp(-2e9, 2e9) as i64;
                    let jitter = (next() % 9) as i64 - 4;
                    // Some rounds use the extremes.
                    if round % 50 == 0 {
                        [i32::MIN, i32::MAX, 0, -1][i % 4]
                    } else {
                        (near + jitter).clamp(i32::MIN as i64, i32::MAX as i64) as i32
                    }
                })
                .collect();
            let want: Vec<i8> = acc
                .iter()
                .zip(&mults)
                .map(|(&a, m)| m.apply(a).wrapping_add(-5).clamp(-128, 127) as i8)
                .collect();
            let mut got = vec![0i8; c];
            rq.store(&acc, &mut got);
            assert_eq!(got, want, "round {round}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut avx2 = vec![0i8; c];
                // SAFETY: AVX2 is present (checked just above).
                unsafe { rq.store_avx2(&acc, &mut avx2) };
                assert_eq!(avx2, want, "AVX2, round {round}");
            }
        }
    }
}
