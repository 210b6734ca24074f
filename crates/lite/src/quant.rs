//! TensorFlow Lite's fixed-point arithmetic for quantized kernels.
//!
//! A real multiplier `m` (a ratio of scales) is stored as a Q31 integer and a
//! power-of-two exponent, and applied to int32 accumulators with two
//! roundings: a rounding doubling high multiply, then a rounding right shift
//! (round half away from zero). These are the exact integer operations of
//! TFLite's reference and optimized kernels (its default build, without
//! `TFLITE_SINGLE_ROUNDING`), so int8 outputs match TFLite bit for bit.

/// A real multiplier as `q31 * 2^(shift - 31)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Multiplier {
    /// Mantissa in Q31, in `[2^30, 2^31)` (or 0).
    pub q31: i32,
    /// Power-of-two exponent: positive shifts left, negative right.
    pub shift: i32,
}

impl Multiplier {
    /// Splits `m` into a Q31 mantissa and an exponent, rounding the mantissa
    /// half away from zero as TFLite's `QuantizeMultiplier` does.
    pub fn new(m: f64) -> Multiplier {
        if m == 0.0 || !m.is_finite() {
            return Multiplier::default();
        }
        let (q, mut shift) = frexp(m);
        let mut q_fixed = (q * (1i64 << 31) as f64).round() as i64;
        if q_fixed == 1i64 << 31 {
            q_fixed /= 2;
            shift += 1;
        }
        if shift < -31 {
            shift = 0;
            q_fixed = 0;
        }
        Multiplier {
            q31: q_fixed as i32,
            shift,
        }
    }

    /// `x * m`, rounded as TFLite's `MultiplyByQuantizedMultiplier`.
    #[inline(always)]
    pub fn apply(self, x: i32) -> i32 {
        let left = self.shift.max(0);
        let right = (-self.shift).max(0);
        rounding_divide_by_pot(
            saturating_rounding_doubling_high_mul(x.wrapping_mul(1 << left), self.q31),
            right,
        )
    }
}

/// `frexp`: `m = q * 2^e` with `0.5 <= |q| < 1`.
fn frexp(m: f64) -> (f64, i32) {
    let bits = m.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let (q, e) = frexp(m * f64::powi(2.0, 64));
        return (q, e - 64);
    }
    let e = exp - 1022;
    let q = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (q, e)
}

/// The high 32 bits of `2 * a * b`, rounded to nearest (ties away from
/// zero), saturating the one overflowing case.
#[inline(always)]
pub fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == b && a == i32::MIN {
        return i32::MAX;
    }
    let ab = a as i64 * b as i64;
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    // Division truncating toward zero, as C++ does.
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// `x / 2^exponent` rounded to nearest, ties away from zero.
#[inline(always)]
pub fn rounding_divide_by_pot(x: i32, exponent: i32) -> i32 {
    debug_assert!((0..=31).contains(&exponent));
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> exponent) + i32::from(remainder > threshold)
}

/// Affine quantization parameters of one tensor (per-tensor) or of each
/// slice along `axis` (per-channel).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QuantParams {
    /// Scales; one, or one per slice along `axis`.
    pub scale: Vec<f32>,
    /// Zero points, as many as `scale`.
    pub zero_point: Vec<i64>,
    /// The quantized dimension for per-channel parameters.
    pub axis: usize,
}

impl QuantParams {
    /// Per-tensor parameters.
    pub fn per_tensor(scale: f32, zero_point: i64) -> QuantParams {
        QuantParams {
            scale: vec![scale],
            zero_point: vec![zero_point],
            axis: 0,
        }
    }

    /// True when the tensor carries quantization parameters.
    pub fn is_quantized(&self) -> bool {
        !self.scale.is_empty()
    }

    /// The per-tensor scale (the first one).
    pub fn scale0(&self) -> f32 {
        self.scale.first().copied().unwrap_or(0.0)
    }

    /// The per-tensor zero point (the first one).
    pub fn zero_point0(&self) -> i32 {
        self.zero_point.first().copied().unwrap_or(0) as i32
    }
}

/// `round(f / scale) + zero_point`, TFLite's quantization of one value
/// (float division, rounding half away from zero), before clamping.
#[inline(always)]
pub fn quantize_value(f: f32, scale: f32, zero_point: i32) -> i32 {
    let q = (f / scale).round();
    // Saturate before the integer conversion: huge inputs clamp later.
    (q.clamp(-2_147_483_000.0, 2_147_483_000.0) as i32).saturating_add(zero_point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplier_matches_frexp_rounding() {
        let m = Multiplier::new(0.5);
        assert_eq!((m.q31, m.shift), (1 << 30, 0));
        let m = Multiplier::new(1.0);
        assert_eq!((m.q31, m.shift), (1 << 30, 1));
        let m = Multiplier::new(0.0);
        assert_eq!((m.q31, m.shift), (0, 0));
        // 0.75 * 2^-3
        let m = Multiplier::new(0.09375);
        assert_eq!((m.q31, m.shift), (3 << 29, -3));
    }

    #[test]
    fn apply_rounds_half_away_from_zero() {
        let half = Multiplier::new(0.5);
        assert_eq!(half.apply(3), 2);
        // The doubling high multiply's nudge sends a negative exact tie
        // toward zero (gemmlowp's arithmetic, which TFLite uses).
        assert_eq!(half.apply(-3), -1);
        assert_eq!(half.apply(4), 2);
        let quarter = Multiplier::new(0.25);
        assert_eq!(quarter.apply(6), 2); // 1.5 -> 2
        assert_eq!(quarter.apply(-6), -2);
        // 1.25: the high multiply rounds 2.5 up to 3, the shift 1.5 up to 2.
        assert_eq!(quarter.apply(5), 2);
    }

    #[test]
    fn apply_is_close_to_real_product() {
        for &m in &[0.0003f64, 0.013, 0.47, 0.9999, 1.7, 13.2] {
            let mult = Multiplier::new(m);
            for &x in &[-100_000i32, -77, -1, 0, 1, 5, 999, 123_456] {
                let exact = x as f64 * m;
                let got = mult.apply(x) as f64;
                assert!(
                    // Two roundings: at most one unit from the exact product.
                    (got - exact).abs() <= 1.0 + 1e-6 * exact.abs(),
                    "{m} {x}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn doubling_high_mul_saturates() {
        assert_eq!(
            saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN),
            i32::MAX
        );
        assert_eq!(
            saturating_rounding_doubling_high_mul(1 << 30, 1 << 30),
            1 << 29
        );
    }

    #[test]
    fn quantize_value_rounds_away_from_zero() {
        assert_eq!(quantize_value(0.5, 1.0, 0), 1);
        assert_eq!(quantize_value(-0.5, 1.0, 0), -1);
        assert_eq!(quantize_value(1.0, 0.5, -128), -126);
    }
}
