//! Vectorized float32 `tanh`, `sigmoid` and `exp` for the activation kernels.
//!
//! libm's scalar `tanhf` costs about 25 ns an element; recurrent cells call
//! tanh and sigmoid on every step. These are branch-free polynomial
//! approximations that the compiler vectorizes, compiled three times: for
//! the baseline target, with AVX2+FMA and with AVX-512, chosen at run time.
//! Every version computes the same bits (the same operations per lane).
//!
//! - `tanh`: Cephes' `tanhf` scheme (an odd polynomial below 0.625, else
//!   through `exp`), within 2 ulp of the exact value.
//! - `exp`: Cephes-style range reduction `x = n ln2 + r` and a degree-6
//!   polynomial, within 2 ulp over the float range.
//! - `sigmoid`: `1 / (1 + exp(-x))` with that `exp`.

/// tanh of one value (inlined into the vectorized loops below): an odd
/// polynomial near zero, `1 - 2 / (exp(2|x|) + 1)` elsewhere (Cephes'
/// `tanhf` scheme), within 2 ulp.
#[inline(always)]
fn tanh1(x: f32) -> f32 {
    const P0: f32 = -5.704_988_7e-3;
    const P1: f32 = 2.063_909e-2;
    const P2: f32 = -5.373_971_6e-2;
    const P3: f32 = 1.333_144_2e-1;
    const P4: f32 = -3.333_328e-1;
    let a = x.abs().min(9.0);
    let e = exp1(2.0 * a);
    let big = if a >= 9.0 { 1.0 } else { 1.0 - 2.0 / (e + 1.0) };
    let big = if x < 0.0 { -big } else { big };
    let z = x * x;
    let mut p = P0 * z + P1;
    p = p * z + P2;
    p = p * z + P3;
    p = p * z + P4;
    // (x itself at zero keeps the sign of -0.0.)
    let small = if z == 0.0 { x } else { p * z * x + x };
    if x.abs() < 0.625 {
        small
    } else if x.is_nan() {
        x
    } else {
        big
    }
}

/// exp of one value.
#[inline(always)]
fn exp1(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P0: f32 = 1.987_569_1e-4;
    const P1: f32 = 1.398_2e-3;
    const P2: f32 = 8.333_452e-3;
    const P3: f32 = 4.166_579_6e-2;
    const P4: f32 = 1.666_666_5e-1;
    const P5: f32 = 5e-1;
    let nan = x.is_nan();
    // A NaN (whose result is picked at the end) is reduced as 0, so `n` is
    // always a small integer and converts without `as`: its saturating
    // conversion compiles to one scalar instruction and fix-ups per lane.
    let c = if nan {
        0.0
    } else {
        x.clamp(-87.336_55, 88.376_26)
    };
    let n = (c * LOG2E + 0.5).floor();
    let r = c - n * LN2_HI - n * LN2_LO;
    let mut y = P0 * r + P1;
    y = y * r + P2;
    y = y * r + P3;
    y = y * r + P4;
    y = y * r + P5;
    y = y * r * r + r + 1.0;
    // 2^n; n + 127 stays within 1..=254 for the clamped range, so 2^n is normal.
    // SAFETY: `c` is finite and clamped, so `n` is an integer in -126..=128.
    let n_int: i32 = unsafe { n.to_int_unchecked() };
    let scale = f32::from_bits(((n_int + 127) as u32) << 23);
    let v = y * scale;
    let v = if x > 88.376_26 { f32::INFINITY } else { v };
    // Below the smallest normal result, flush to zero as the kernels do.
    let v = if x < -87.336_55 { 0.0 } else { v };
    if nan {
        x
    } else {
        v
    }
}

#[inline(always)]
fn sigmoid1(x: f32) -> f32 {
    1.0 / (1.0 + exp1(-x))
}

macro_rules! dispatched {
    ($(#[$doc:meta])* $name:ident, $one:ident, $avx2:ident, $avx512:ident) => {
        $(#[$doc])*
        pub fn $name(v: &mut [f32]) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has the features the function was compiled for.
                unsafe { $avx512(v) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has the features the function was compiled for.
                unsafe { $avx2(v) };
                return;
            }
            for x in v.iter_mut() {
                *x = $one(*x);
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx2(v: &mut [f32]) {
            for x in v.iter_mut() {
                *x = $one(*x);
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx2,fma")]
        fn $avx512(v: &mut [f32]) {
            for x in v.iter_mut() {
                *x = $one(*x);
            }
        }
    };
}

dispatched!(
    /// `tanh` of every element, in place.
    tanh_in_place, tanh1, tanh_avx2, tanh_avx512
);
dispatched!(
    /// `1 / (1 + exp(-x))` of every element, in place.
    sigmoid_in_place, sigmoid1, sigmoid_avx2, sigmoid_avx512
);
dispatched!(
    /// `exp` of every element, in place.
    exp_in_place, exp1, exp_avx2, exp_avx512
);

#[cfg(test)]
mod tests {
    use super::*;

    fn max_rel_err(f: fn(&mut [f32]), reference: fn(f64) -> f64, lo: f32, hi: f32) -> f64 {
        let n = 200_001;
        let mut xs: Vec<f32> = (0..n)
            .map(|i| lo + (hi - lo) * i as f32 / (n - 1) as f32)
            .collect();
        let orig = xs.clone();
        f(&mut xs);
        orig.iter()
            .zip(&xs)
            .map(|(&x, &y)| {
                let want = reference(x as f64);
                ((y as f64 - want).abs() / want.abs().max(1e-30))
                    .min((y as f64 - want).abs() / 1e-7)
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn tanh_sigmoid_and_exp_are_accurate() {
        assert!(max_rel_err(tanh_in_place, f64::tanh, -12.0, 12.0) < 2e-6);
        assert!(max_rel_err(sigmoid_in_place, |x| 1.0 / (1.0 + (-x).exp()), -30.0, 30.0) < 2e-6);
        assert!(max_rel_err(exp_in_place, f64::exp, -80.0, 80.0) < 2e-6);
    }

    #[test]
    fn every_dispatched_version_gives_the_scalar_bits() {
        let xs: Vec<f32> = (0..40_000)
            .map(|i| (i as f32 - 20_000.0) * 0.0047)
            .collect();
        for (f, one) in [
            (tanh_in_place as fn(&mut [f32]), tanh1 as fn(f32) -> f32),
            (sigmoid_in_place, sigmoid1),
            (exp_in_place, exp1),
        ] {
            let mut v = xs.clone();
            f(&mut v);
            for (&x, &y) in xs.iter().zip(&v) {
                assert_eq!(y.to_bits(), one(x).to_bits(), "at {x}");
            }
        }
    }

    #[test]
    fn edge_values() {
        let mut v = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-6,
            100.0,
        ];
        tanh_in_place(&mut v);
        assert!(v[0].is_nan());
        assert_eq!(&v[1..], &[1.0, -1.0, 0.0, -0.0, 1e-6, 1.0]);
        let mut e = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, 89.0];
        exp_in_place(&mut e);
        assert!(e[0].is_nan());
        assert_eq!(&e[1..], &[f32::INFINITY, 0.0, 1.0, f32::INFINITY]);
        let mut s = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0];
        sigmoid_in_place(&mut s);
        assert!(s[0].is_nan());
        assert_eq!(&s[1..], &[1.0, 0.0, 0.5]);
    }
}
