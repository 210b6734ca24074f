//! Special functions of `tf.math` (inverse trigonometric and hyperbolic
//! functions, erf and its inverses, lgamma, digamma, polygamma, the
//! incomplete gamma and beta functions, Hurwitz zeta, modified Bessel
//! functions) and the elementwise ops around them (`Xlogy`, `MulNoNan`,
//! `NextAfter`, `TruncateDiv`, ...), with TensorFlow's values at the edges.
//!
//! Where TensorFlow calls the C library (`std::acos`, `std::lgamma`, ...)
//! these call the same algorithms (the platform's `f32`/`f64` functions, or
//! the `libm` crate's port of the same FreeBSD/musl code). The Cephes
//! functions TensorFlow takes from Eigen (`ndtri`, the Bessel functions,
//! `betainc`, `erfc`) come from the `spec_math` crate, a Rust port of Cephes.
//! Digamma, zeta, polygamma and the incomplete gamma functions are written
//! here after Eigen's formulation of the Cephes algorithms because
//! TensorFlow's results differ from scipy-style Cephes at the edges (poles,
//! `a = 0`, infinite arguments) and because `IgammaGradA` needs the
//! derivative of the same series and continued fraction.
//!
//! `f16`/`bf16` compute in `f32`; `f32` computes in `f32` where TensorFlow
//! does (the C library functions, digamma, zeta, igamma) and otherwise in
//! `f64`, rounded once.

use super::broadcast::Broadcast;
use super::elementwise::{binary, cast, BinaryOp};
use super::parallel;
use super::scalar::Float;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Element, Tensor};
use spec_math::cephes64 as cephes;

/// Elementwise special functions of one tensor.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SpecialUnary {
    Acos,
    Asin,
    Atan,
    Acosh,
    Asinh,
    Atanh,
    Sinh,
    Cosh,
    Erf,
    Erfc,
    Erfinv,
    Ndtri,
    Lgamma,
    Digamma,
    BesselI0,
    BesselI0e,
    BesselI1,
    BesselI1e,
    Rint,
}

impl SpecialUnary {
    /// TensorFlow's op type.
    pub fn op_type(self) -> &'static str {
        use SpecialUnary::*;
        match self {
            Acos => "Acos",
            Asin => "Asin",
            Atan => "Atan",
            Acosh => "Acosh",
            Asinh => "Asinh",
            Atanh => "Atanh",
            Sinh => "Sinh",
            Cosh => "Cosh",
            Erf => "Erf",
            Erfc => "Erfc",
            Erfinv => "Erfinv",
            Ndtri => "Ndtri",
            Lgamma => "Lgamma",
            Digamma => "Digamma",
            BesselI0 => "BesselI0",
            BesselI0e => "BesselI0e",
            BesselI1 => "BesselI1",
            BesselI1e => "BesselI1e",
            Rint => "Rint",
        }
    }

    /// Every op, for registration.
    pub const ALL: [SpecialUnary; 19] = [
        SpecialUnary::Acos,
        SpecialUnary::Asin,
        SpecialUnary::Atan,
        SpecialUnary::Acosh,
        SpecialUnary::Asinh,
        SpecialUnary::Atanh,
        SpecialUnary::Sinh,
        SpecialUnary::Cosh,
        SpecialUnary::Erf,
        SpecialUnary::Erfc,
        SpecialUnary::Erfinv,
        SpecialUnary::Ndtri,
        SpecialUnary::Lgamma,
        SpecialUnary::Digamma,
        SpecialUnary::BesselI0,
        SpecialUnary::BesselI0e,
        SpecialUnary::BesselI1,
        SpecialUnary::BesselI1e,
        SpecialUnary::Rint,
    ];
}

/// Elementwise special functions of two broadcast tensors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SpecialBinary {
    Xlogy,
    Xlog1py,
    Xdivy,
    MulNoNan,
    NextAfter,
    TruncateDiv,
    Igamma,
    Igammac,
    IgammaGradA,
    Polygamma,
    Zeta,
}

impl SpecialBinary {
    /// TensorFlow's op type.
    pub fn op_type(self) -> &'static str {
        use SpecialBinary::*;
        match self {
            Xlogy => "Xlogy",
            Xlog1py => "Xlog1py",
            Xdivy => "Xdivy",
            MulNoNan => "MulNoNan",
            NextAfter => "NextAfter",
            TruncateDiv => "TruncateDiv",
            Igamma => "Igamma",
            Igammac => "Igammac",
            IgammaGradA => "IgammaGradA",
            Polygamma => "Polygamma",
            Zeta => "Zeta",
        }
    }

    /// Every op, for registration.
    pub const ALL: [SpecialBinary; 11] = [
        SpecialBinary::Xlogy,
        SpecialBinary::Xlog1py,
        SpecialBinary::Xdivy,
        SpecialBinary::MulNoNan,
        SpecialBinary::NextAfter,
        SpecialBinary::TruncateDiv,
        SpecialBinary::Igamma,
        SpecialBinary::Igammac,
        SpecialBinary::IgammaGradA,
        SpecialBinary::Polygamma,
        SpecialBinary::Zeta,
    ];
}

/// The floating-point types special functions compute in: the C library's
/// functions and Cephes' constants for each.
pub trait Real: Float + Element + Send + Sync {
    /// Cephes' `MACHEP` (half the type's epsilon).
    const MACHEP: Self;
    /// Rescaling threshold of the continued fractions.
    const BIG: Self;
    /// `1 / BIG`.
    const BIGINV: Self;
    /// `ln` of the largest finite value.
    const MAXLOG: Self;
    /// The smallest positive normal value.
    const TINY: Self;
    /// The lowest finite value.
    const LOWEST: Self;
    /// `lgamma` of the C library.
    fn lgamma(self) -> Self;
    /// `nextafter` of the C library.
    fn next_after(self, to: Self) -> Self;
    /// Digamma's asymptotic series `sum B_2k / (2k s^2k)` (Eigen's
    /// per-type polynomial and cut-off).
    fn digamma_tail(s: Self) -> Self;
}

impl Real for f64 {
    const MACHEP: f64 = 1.110_223_024_625_156_5e-16;
    const BIG: f64 = 4.503_599_627_370_496e15;
    const BIGINV: f64 = 2.220_446_049_250_313e-16;
    const MAXLOG: f64 = 7.097_827_128_933_84e2;
    const TINY: f64 = f64::MIN_POSITIVE;
    const LOWEST: f64 = f64::MIN;
    fn lgamma(self) -> f64 {
        libm::lgamma(self)
    }
    fn next_after(self, to: f64) -> f64 {
        libm::nextafter(self, to)
    }
    fn digamma_tail(s: f64) -> f64 {
        // B_2k / 2k in z = 1/s^2, highest power first (Cephes' table).
        const A: [f64; 7] = [
            1.0 / 12.0,
            -691.0 / 32760.0,
            1.0 / 132.0,
            -1.0 / 240.0,
            1.0 / 252.0,
            -1.0 / 120.0,
            1.0 / 12.0,
        ];
        if s < 1.0e17 {
            let z = 1.0 / (s * s);
            z * polevl(z, &A)
        } else {
            0.0
        }
    }
}

impl Real for f32 {
    const MACHEP: f32 = 5.960_464_5e-8;
    const BIG: f32 = 16_777_216.0;
    const BIGINV: f32 = 5.960_464_5e-8;
    const MAXLOG: f32 = 88.722_84;
    const TINY: f32 = f32::MIN_POSITIVE;
    const LOWEST: f32 = f32::MIN;
    fn lgamma(self) -> f32 {
        libm::lgammaf(self)
    }
    fn next_after(self, to: f32) -> f32 {
        libm::nextafterf(self, to)
    }
    fn digamma_tail(s: f32) -> f32 {
        const A: [f32; 4] = [-1.0 / 240.0, 1.0 / 252.0, -1.0 / 120.0, 1.0 / 12.0];
        if s < 1.0e8 {
            let z = 1.0 / (s * s);
            z * polevl(z, &A)
        } else {
            0.0
        }
    }
}

/// `c[0] x^(n-1) + ... + c[n-1]` by Horner's rule.
fn polevl<T: Real>(x: T, c: &[T]) -> T {
    c.iter().fold(T::zero(), |acc, &k| acc * x + k)
}

/// Digamma (psi): reflection for x <= 0, recurrence up to 10, asymptotic
/// series (Eigen's formulation of Cephes `psi`; NaN at 0 and at the
/// negative integers).
pub fn digamma<T: Real>(x: T) -> T {
    let (zero, one, half) = (T::zero(), T::one(), T::lit(0.5));
    let pi = T::lit(std::f64::consts::PI);
    let mut x = x;
    let mut reflect = None;
    if x <= zero {
        let q = x;
        let mut p = q.floor();
        if p == q {
            return T::lit(f64::NAN);
        }
        // Subtract the nearest integer so tan(pi nz) has no zero.
        let mut nz = q - p;
        if nz != half {
            if nz > half {
                p = p + one;
                nz = q - p;
            }
            nz = pi / (pi * nz).tan();
        } else {
            nz = zero;
        }
        reflect = Some(nz);
        x = one - x;
    }
    let mut s = x;
    let mut w = zero;
    while s < T::lit(10.0) {
        w = w + one / s;
        s = s + one;
    }
    let y = s.ln() - half / s - T::digamma_tail(s) - w;
    match reflect {
        Some(nz) => y - nz,
        None => y,
    }
}

/// `(2j+2)! / B_(2j+2)` for j = 0..12: the Euler-Maclaurin coefficients of
/// the Hurwitz zeta function.
fn zeta_coefficients() -> [f64; 12] {
    // Bernoulli numbers B_2 .. B_24 as fractions.
    const B: [(f64, f64); 12] = [
        (1.0, 6.0),
        (-1.0, 30.0),
        (1.0, 42.0),
        (-1.0, 30.0),
        (5.0, 66.0),
        (-691.0, 2730.0),
        (7.0, 6.0),
        (-3617.0, 510.0),
        (43867.0, 798.0),
        (-174_611.0, 330.0),
        (854_513.0, 138.0),
        (-236_364_091.0, 2730.0),
    ];
    let mut out = [0.0; 12];
    let mut fact = 1.0f64;
    let mut n = 0.0;
    for (j, (num, den)) in B.iter().enumerate() {
        n += 1.0;
        fact *= n;
        n += 1.0;
        fact *= n;
        out[j] = fact * den / num;
    }
    out
}

/// Hurwitz zeta `sum_k (k + q)^-x` (Cephes `zeta` as Eigen has it: +inf at
/// x = 1, NaN for x < 1, and TensorFlow's values for q <= 0 and x = inf).
pub fn zeta<T: Real>(x: T, q: T) -> T {
    let (zero, one, half) = (T::zero(), T::one(), T::lit(0.5));
    let inf = T::lit(f64::INFINITY);
    let nan = T::lit(f64::NAN);
    if x == one {
        return inf;
    }
    if x < one || Scalar::is_nan(x) || Scalar::is_nan(q) {
        return nan;
    }
    if x.is_infinite() {
        // q^-x: everything but the first term vanishes.
        return if q < one {
            inf
        } else if q == one {
            one
        } else {
            zero
        };
    }
    if q.is_infinite() && q > zero {
        return zero;
    }
    if q <= zero {
        if q == q.floor() {
            let even = x == x.floor() && (x.to_f64() as i64) % 2 == 0;
            return if even { inf } else { nan };
        }
        if x != x.floor() {
            return nan;
        }
    }
    let coef = zeta_coefficients();
    let mut s = q.powf(-x);
    if s == zero && q > zero {
        // The first and largest term underflows: so does the sum.
        return zero;
    }
    let mut a = q;
    let mut i = 0;
    let mut b = zero;
    while i < 9 || a <= T::lit(9.0) {
        i += 1;
        a = a + one;
        b = a.powf(-x);
        s = s + b;
        if Scalar::abs(b / s) < T::MACHEP {
            return s;
        }
    }
    let w = a;
    s = s + b * w / (x - one);
    s = s - half * b;
    let mut a = one;
    let mut k = zero;
    for c in coef {
        a = a * (x + k);
        b = b / w;
        let t = a * b / T::lit(c);
        s = s + t;
        if Scalar::abs(t / s) < T::MACHEP {
            return s;
        }
        k = k + one;
        a = a * (x + k);
        b = b / w;
        k = k + one;
    }
    s
}

use super::scalar::Scalar;

/// Polygamma `psi^(n)(x)`: digamma for n = 0, else
/// `(-1)^(n+1) n! zeta(n + 1, x)`; NaN for a non-integer n.
pub fn polygamma<T: Real>(n: T, x: T) -> T {
    if n != n.floor() || Scalar::is_nan(n) {
        return T::lit(f64::NAN);
    }
    if n == T::zero() {
        return digamma(x);
    }
    let np1 = n + T::one();
    let factorial = np1.lgamma().exp();
    let sign = if (np1.to_f64() as i64) % 2 == 0 {
        T::one()
    } else {
        -T::one()
    };
    sign * factorial * zeta(np1, x)
}

/// What the incomplete-gamma routines return: the value or its derivative
/// in `a`.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Mode {
    Value,
    DerivativeA,
}

/// `x^a e^-x / Gamma(a)`, 0 when it underflows.
fn igamma_factor<T: Real>(a: T, x: T) -> T {
    let logax = a * x.ln() - x - a.lgamma();
    if logax < -T::MAXLOG || Scalar::is_nan(logax) {
        return T::zero();
    }
    logax.exp()
}

/// Power series of P(a, x) (or its derivative in a), for x < a + 1.
fn igamma_series<T: Real>(a: T, x: T, mode: Mode) -> T {
    let (zero, one) = (T::zero(), T::one());
    let ax = igamma_factor(a, x);
    if ax == zero {
        return zero;
    }
    let ax = ax / a;
    let mut r = a;
    let mut c = one;
    let mut ans = one;
    let mut dc_da = zero;
    let mut dans_da = zero;
    for _ in 0..2000 {
        r = r + one;
        let term = x / r;
        let dterm_da = -x / (r * r);
        dc_da = term * dc_da + dterm_da * c;
        dans_da = dans_da + dc_da;
        c = c * term;
        ans = ans + c;
        let done = match mode {
            Mode::Value => c <= T::MACHEP * ans,
            Mode::DerivativeA => Scalar::abs(dc_da) <= T::MACHEP * Scalar::abs(dans_da),
        };
        if done {
            break;
        }
    }
    match mode {
        Mode::Value => ans * ax,
        Mode::DerivativeA => {
            let dlogax_da = x.ln() - digamma(a + one);
            ans * ax * dlogax_da + dans_da * ax
        }
    }
}

/// Continued fraction of Q(a, x) (or its derivative in a), for x > a + 1.
fn igammac_cf<T: Real>(a: T, x: T, mode: Mode) -> T {
    let (zero, one, two) = (T::zero(), T::one(), T::lit(2.0));
    if x.is_infinite() {
        return zero;
    }
    let ax = igamma_factor(a, x);
    if ax == zero {
        return zero;
    }
    let mut y = one - a;
    let mut z = x + y + one;
    let mut c = zero;
    let (mut pkm2, mut qkm2, mut pkm1, mut qkm1) = (one, x, x + one, z * x);
    let mut ans = pkm1 / qkm1;
    let (mut dpkm2, mut dqkm2, mut dpkm1, mut dqkm1) = (zero, zero, zero, -x);
    let mut dans = (dpkm1 - ans * dqkm1) / qkm1;
    for _ in 0..2000 {
        c = c + one;
        y = y + one;
        z = z + two;
        let yc = y * c;
        let pk = pkm1 * z - pkm2 * yc;
        let qk = qkm1 * z - qkm2 * yc;
        let dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
        let dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
        if qk != zero {
            let prev = ans;
            ans = pk / qk;
            let dprev = dans;
            dans = (dpk - ans * dqk) / qk;
            let done = match mode {
                Mode::Value => Scalar::abs(prev - ans) <= T::MACHEP * Scalar::abs(ans),
                Mode::DerivativeA => Scalar::abs(dans - dprev) <= T::MACHEP,
            };
            if done {
                break;
            }
        }
        pkm2 = pkm1;
        pkm1 = pk;
        qkm2 = qkm1;
        qkm1 = qk;
        dpkm2 = dpkm1;
        dpkm1 = dpk;
        dqkm2 = dqkm1;
        dqkm1 = dqk;
        if Scalar::abs(pk) > T::BIG {
            pkm2 = pkm2 * T::BIGINV;
            pkm1 = pkm1 * T::BIGINV;
            qkm2 = qkm2 * T::BIGINV;
            qkm1 = qkm1 * T::BIGINV;
            dpkm2 = dpkm2 * T::BIGINV;
            dpkm1 = dpkm1 * T::BIGINV;
            dqkm2 = dqkm2 * T::BIGINV;
            dqkm1 = dqkm1 * T::BIGINV;
        }
    }
    match mode {
        Mode::Value => ans * ax,
        Mode::DerivativeA => {
            let dlogax_da = x.ln() - digamma(a);
            ans * ax * dlogax_da + dans * ax
        }
    }
}

fn igamma_generic<T: Real>(a: T, x: T, mode: Mode) -> T {
    let zero = T::zero();
    if x == zero {
        return zero;
    }
    if x < zero || a <= zero || Scalar::is_nan(a) || Scalar::is_nan(x) {
        return T::lit(f64::NAN);
    }
    if x > T::one() && x > a {
        let q = igammac_cf(a, x, mode);
        return match mode {
            Mode::Value => T::one() - q,
            Mode::DerivativeA => -q,
        };
    }
    igamma_series(a, x, mode)
}

/// Regularized lower incomplete gamma P(a, x).
pub fn igamma<T: Real>(a: T, x: T) -> T {
    igamma_generic(a, x, Mode::Value)
}

/// dP(a, x)/da (`IgammaGradA`).
pub fn igamma_grad_a<T: Real>(a: T, x: T) -> T {
    igamma_generic(a, x, Mode::DerivativeA)
}

/// Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x).
pub fn igammac<T: Real>(a: T, x: T) -> T {
    let zero = T::zero();
    if x < zero || a <= zero || Scalar::is_nan(a) || Scalar::is_nan(x) {
        return T::lit(f64::NAN);
    }
    if x < T::one() || x < a {
        return T::one() - igamma_series(a, x, Mode::Value);
    }
    igammac_cf(a, x, Mode::Value)
}

/// `erf` of a double: Cephes, with TensorFlow's NaN where `x * x` overflows
/// (its rational form divides infinities there).
fn erf64(x: f64) -> f64 {
    if (x * x).is_infinite() {
        return f64::NAN;
    }
    cephes::erf(x)
}

fn acosh64(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    libm::acosh(x)
}

fn acosh32(x: f32) -> f32 {
    if x < 1.0 {
        return f32::NAN;
    }
    libm::acoshf(x)
}

/// Regularized incomplete beta I_x(a, b) (Cephes `incbet`; NaN outside
/// a, b > 0 and 0 <= x <= 1).
pub fn betainc64(a: f64, b: f64, x: f64) -> f64 {
    // TensorFlow's order: a or b <= 0 is NaN, then x = 0 and x = 1 are exact
    // even when a or b is NaN.
    if a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    if x == 1.0 {
        return 1.0;
    }
    if a.is_nan() || b.is_nan() || !(0.0..1.0).contains(&x) {
        return f64::NAN;
    }
    cephes::incbet(a, b, x)
}

fn unary64(op: SpecialUnary, x: f64) -> f64 {
    use SpecialUnary::*;
    match op {
        Acos => x.acos(),
        Asin => x.asin(),
        Atan => x.atan(),
        Acosh => acosh64(x),
        Asinh => libm::asinh(x),
        Atanh => libm::atanh(x),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Erf => erf64(x),
        Erfc => cephes::erfc(x),
        Erfinv => cephes::ndtri((x + 1.0) * 0.5) * std::f64::consts::FRAC_1_SQRT_2,
        Ndtri => cephes::ndtri(x),
        Lgamma => libm::lgamma(x),
        Digamma => digamma(x),
        BesselI0 => cephes::i0(x),
        BesselI0e => cephes::i0e(x),
        BesselI1 => cephes::i1(x),
        BesselI1e => cephes::i1e(x),
        Rint => x.round_ties_even(),
    }
}

fn unary32(op: SpecialUnary, x: f32) -> f32 {
    use SpecialUnary::*;
    match op {
        Acos => x.acos(),
        Asin => x.asin(),
        Atan => x.atan(),
        Acosh => acosh32(x),
        Asinh => libm::asinhf(x),
        Atanh => libm::atanhf(x),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Lgamma => libm::lgammaf(x),
        Digamma => digamma(x),
        Rint => x.round_ties_even(),
        // TensorFlow halves x + 1 in float before its inverse normal CDF.
        Erfinv => {
            let p = (x + 1.0) * 0.5;
            (cephes::ndtri(p as f64) * std::f64::consts::FRAC_1_SQRT_2) as f32
        }
        Erf => cephes::erf(x as f64) as f32,
        // TensorFlow scales the exponentially scaled function back in
        // float, so these overflow to inf where exp(|x|) does (|x| > 88.7).
        BesselI0 => (cephes::i0e(x as f64) as f32) * x.abs().exp(),
        BesselI1 => (cephes::i1e(x as f64) as f32) * x.abs().exp(),
        _ => unary64(op, x as f64) as f32,
    }
}

/// TensorFlow's CPU kernels run with denormals flushed (FTZ/DAZ), as
/// ferroflow's do; where a function returns a subnormal argument's bits
/// untouched, TensorFlow's vectorized forms (atan, atanh, float asin, and the
/// binary ops here) still write zero, its scalar C library calls (asinh,
/// sinh, double asin) the subnormal. This reproduces both.
fn flushed<T: Real>(v: T) -> T {
    let a = Scalar::abs(v);
    if a > T::zero() && a < T::TINY {
        v * T::zero()
    } else {
        v
    }
}

fn unsupported(op: &str, dtype: DType) -> Error {
    Error::invalid_argument(format!("{op} is not supported for {dtype} tensors"))
}

/// Applies a special function elementwise (float types only).
pub fn special_unary(op: SpecialUnary, x: &Tensor) -> Result<Tensor> {
    let dtype = x.dtype();
    match dtype {
        DType::Float64 => {
            let out = parallel::map(x.as_slice::<f64>()?, |v| {
                let y = unary64(op, v);
                if matches!(op, SpecialUnary::Atan | SpecialUnary::Atanh) {
                    flushed(y)
                } else {
                    y
                }
            });
            Tensor::from_vec(x.shape().clone(), out)
        }
        DType::Float32 => {
            let out = parallel::map(x.as_slice::<f32>()?, |v| {
                let y = unary32(op, v);
                if matches!(
                    op,
                    SpecialUnary::Atan | SpecialUnary::Atanh | SpecialUnary::Asin
                ) {
                    flushed(y)
                } else {
                    y
                }
            });
            Tensor::from_vec(x.shape().clone(), out)
        }
        DType::Float16 | DType::BFloat16 => {
            let wide = special_unary(op, &cast(x, DType::Float32)?)?;
            cast(&wide, dtype)
        }
        _ => Err(unsupported(op.op_type(), dtype)),
    }
}

fn binary_real<T: Real>(op: SpecialBinary, a: T, b: T) -> T {
    use SpecialBinary::*;
    let zero = T::zero();
    match op {
        // x = 0 gives x (signed zero) whatever y is, NaN included.
        Xlogy => {
            if a == zero {
                a
            } else {
                a * b.ln()
            }
        }
        Xlog1py => {
            if a == zero {
                a
            } else {
                a * b.ln_1p()
            }
        }
        Xdivy => {
            if a == zero {
                a
            } else {
                a / b
            }
        }
        MulNoNan => {
            if b == zero {
                zero
            } else {
                a * b
            }
        }
        // Under DAZ a subnormal compares equal to zero, so stepping from 0
        // towards a subnormal (or back) returns the target itself.
        NextAfter => {
            if flushed(a) == flushed(b) {
                b
            } else {
                a.next_after(b)
            }
        }
        TruncateDiv => {
            let q = a / b;
            if q < zero {
                q.ceil()
            } else {
                q.floor()
            }
        }
        Igamma => igamma(a, b),
        Igammac => igammac(a, b),
        IgammaGradA => igamma_grad_a(a, b),
        Polygamma => polygamma(a, b),
        Zeta => zeta(a, b),
    }
}

fn allowed(op: SpecialBinary, dtype: DType) -> bool {
    use SpecialBinary::*;
    match op {
        TruncateDiv | MulNoNan | Xlogy | Xlog1py | Xdivy | Igamma | Igammac => {
            dtype.is_floating()
                || (op == TruncateDiv && dtype != DType::Bool && dtype != DType::String)
        }
        NextAfter | IgammaGradA | Polygamma | Zeta => {
            matches!(dtype, DType::Float32 | DType::Float64)
        }
    }
}

/// Applies a special binary op with broadcasting.
pub fn special_binary(op: SpecialBinary, a: Tensor, b: Tensor) -> Result<Tensor> {
    let (da, db) = (a.dtype(), b.dtype());
    let name = op.op_type();
    if da != db {
        return Err(Error::invalid_argument(format!(
            "{name}: both inputs must have one dtype, got {da} and {db}"
        )));
    }
    if !allowed(op, da) {
        return Err(unsupported(name, da));
    }
    if op == SpecialBinary::TruncateDiv && !da.is_floating() {
        // Integer division already truncates toward zero (and refuses 0).
        return binary(BinaryOp::Div, a, b);
    }
    let plan = Broadcast::new(a.dims(), b.dims(), &name)?;
    fn go<T: Real>(op: SpecialBinary, a: &Tensor, b: &Tensor, plan: &Broadcast) -> Result<Tensor> {
        let out = plan.map(a.as_slice::<T>()?, b.as_slice::<T>()?, |x, y| {
            if op == SpecialBinary::NextAfter {
                // Bit stepping, no arithmetic to flush.
                binary_real(op, x, y)
            } else {
                flushed(binary_real(op, flushed(x), flushed(y)))
            }
        });
        Tensor::from_vec(plan.out.clone(), out)
    }
    // The incomplete gamma functions lose digits in float32 (a log x - x -
    // lgamma(a) cancels); they compute in float64 and round once.
    let wide = matches!(
        op,
        SpecialBinary::Igamma | SpecialBinary::Igammac | SpecialBinary::IgammaGradA
    );
    match da {
        DType::Float64 => go::<f64>(op, &a, &b, &plan),
        DType::Float32 if wide => cast(
            &go::<f64>(
                op,
                &cast(&a, DType::Float64)?,
                &cast(&b, DType::Float64)?,
                &plan,
            )?,
            da,
        ),
        DType::Float32 => go::<f32>(op, &a, &b, &plan),
        _ => {
            let wide = go::<f32>(
                op,
                &cast(&a, DType::Float32)?,
                &cast(&b, DType::Float32)?,
                &plan,
            )?;
            cast(&wide, da)
        }
    }
}

/// `Betainc(a, b, x)`: each input has the output's shape or is a scalar
/// (TensorFlow broadcasts nothing else).
pub fn betainc(a: &Tensor, b: &Tensor, x: &Tensor) -> Result<Tensor> {
    let dtype = a.dtype();
    if b.dtype() != dtype || x.dtype() != dtype {
        return Err(Error::invalid_argument(format!(
            "Betainc: a, b and x must have one dtype, got {dtype}, {} and {}",
            b.dtype(),
            x.dtype()
        )));
    }
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        return Err(unsupported("Betainc", dtype));
    }
    let shapes = [a.shape(), b.shape(), x.shape()];
    let mut out: Option<&Shape> = None;
    for s in shapes {
        if s.rank() == 0 {
            continue;
        }
        match out {
            None => out = Some(s),
            Some(o) if o != s => {
                return Err(Error::invalid_argument(format!(
                    "Shapes of a, b and x are inconsistent: {} vs. {} vs. {}",
                    a.shape(),
                    b.shape(),
                    x.shape()
                )))
            }
            _ => {}
        }
    }
    let out_shape = out.cloned().unwrap_or_else(|| Shape::new(&[]));
    let n = out_shape.num_elements();
    let (a64, b64, x64) = (
        cast(a, DType::Float64)?,
        cast(b, DType::Float64)?,
        cast(x, DType::Float64)?,
    );
    let (av, bv, xv) = (
        a64.as_slice::<f64>()?,
        b64.as_slice::<f64>()?,
        x64.as_slice::<f64>()?,
    );
    let at = |v: &[f64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let idx: Vec<usize> = (0..n).collect();
    let vals = parallel::map(&idx, |i| betainc64(at(av, i), at(bv, i), at(xv, i)));
    let t = Tensor::from_vec(out_shape, vals)?;
    if dtype == DType::Float64 {
        Ok(t)
    } else {
        cast(&t, dtype)
    }
}

/// `CumulativeLogsumexp`: `log(cumsum(exp(x)))` along `axis`, computed
/// stably as a running log-add-exp (TensorFlow's scan), with its
/// `exclusive` (first element -inf) and `reverse` forms.
pub fn cumulative_logsumexp(
    x: &Tensor,
    axis: i64,
    exclusive: bool,
    reverse: bool,
) -> Result<Tensor> {
    let dtype = x.dtype();
    let ax = crate::shape::normalize_axis(axis, x.rank(), "CumulativeLogsumexp")?;
    let dims = x.dims();
    let outer: usize = dims[..ax].iter().product();
    let len = dims[ax];
    let inner: usize = dims[ax + 1..].iter().product();
    /// TensorFlow's reducer: `log1p(exp(min - max)) + max` with Eigen's
    /// min/max (the accumulator wins a comparison with NaN), and the max
    /// itself when it is below the lowest finite value (-inf).
    fn log_add_exp<T: Real>(acc: T, v: T) -> T {
        let ma = if acc < v { v } else { acc };
        let mi = if v < acc { v } else { acc };
        if ma < T::LOWEST {
            return ma;
        }
        (mi - ma).exp().ln_1p() + ma
    }
    fn go<T: Real>(v: &[T], outer: usize, len: usize, inner: usize, ex: bool, rev: bool) -> Vec<T> {
        let ninf = T::lit(f64::NEG_INFINITY);
        let mut out = vec![ninf; v.len()];
        for o in 0..outer {
            for i in 0..inner {
                let mut acc = ninf;
                for k in 0..len {
                    let r = if rev { len - 1 - k } else { k };
                    let at = (o * len + r) * inner + i;
                    if ex {
                        out[at] = acc;
                    }
                    acc = log_add_exp(acc, v[at]);
                    if !ex {
                        out[at] = acc;
                    }
                }
            }
        }
        out
    }
    match dtype {
        DType::Float64 => Tensor::from_vec(
            x.shape().clone(),
            go(x.as_slice::<f64>()?, outer, len, inner, exclusive, reverse),
        ),
        DType::Float32 => Tensor::from_vec(
            x.shape().clone(),
            go(x.as_slice::<f32>()?, outer, len, inner, exclusive, reverse),
        ),
        DType::Float16 | DType::BFloat16 => {
            let wide = cumulative_logsumexp(&cast(x, DType::Float32)?, axis, exclusive, reverse)?;
            cast(&wide, dtype)
        }
        _ => Err(unsupported("CumulativeLogsumexp", dtype)),
    }
}

/// `Bincount`/`DenseBincount`: counts (or sums `weights` of) each value of
/// a 1-D `arr` in `[0, size)`, or of each row of a 2-D one. Values at or
/// past `size` are dropped; negative values are an error. An empty
/// `weights` counts in `out_dtype`; `binary_output` records presence.
pub fn bincount(
    op: &str,
    arr: &Tensor,
    size: i64,
    weights: &Tensor,
    binary_output: bool,
) -> Result<Tensor> {
    if size < 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: size ({size}) must be non-negative"
        )));
    }
    let size = size as usize;
    // The old `Bincount` counts every element whatever its shape.
    let rank = if op == "Bincount" { 1 } else { arr.rank() };
    if rank > 2 {
        return Err(Error::invalid_argument(format!(
            "{op}: input must be at most rank 2, got shape {}",
            arr.shape()
        )));
    }
    let values = arr.to_i64_vec()?;
    if let Some(v) = values.iter().find(|&&v| v < 0) {
        return Err(Error::invalid_argument(format!(
            "{op}: Input arr must be non-negative! (got {v})"
        )));
    }
    let has_weights = weights.num_elements() > 0;
    let same = if op == "Bincount" {
        weights.num_elements() == arr.num_elements()
    } else {
        weights.shape() == arr.shape()
    };
    if has_weights && !same {
        return Err(Error::invalid_argument(format!(
            "{op}: weights and input must have the same shape, got {} and {}",
            weights.shape(),
            arr.shape()
        )));
    }
    let (rows, cols) = if rank == 2 {
        (arr.dims()[0], arr.dims()[1])
    } else {
        (1, values.len())
    };
    let out_shape = if rank == 2 {
        Shape::new(&[rows, size])
    } else {
        Shape::new(&[size])
    };
    let total = rows
        .checked_mul(size)
        .ok_or_else(|| Error::invalid_argument(format!("{op}: output too large")))?;
    let dtype = weights.dtype();
    let w = cast(weights, DType::Float64)?;
    let wv = w.as_slice::<f64>()?;
    let mut acc = vec![0.0f64; total];
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            let v = values[i] as usize;
            if v >= size {
                continue;
            }
            let slot = &mut acc[r * size + v];
            if binary_output {
                *slot = 1.0;
            } else if has_weights {
                *slot += wv[i];
            } else {
                *slot += 1.0;
            }
        }
    }
    let t = Tensor::from_vec(out_shape, acc)?;
    cast(&t, dtype)
}

/// `EuclideanNorm`: `sqrt(sum(x^2))` over `axes` (integers truncate the
/// root, as TensorFlow's integer square root does).
pub fn euclidean_norm(x: &Tensor, axes: &[i64], keep_dims: bool) -> Result<Tensor> {
    use super::reduce::{reduce, ReduceOp};
    let dtype = x.dtype();
    if matches!(dtype, DType::Bool | DType::String) {
        return Err(unsupported("EuclideanNorm", dtype));
    }
    let sq = binary(BinaryOp::Mul, x.clone(), x.clone())?;
    let s = reduce(ReduceOp::Sum, &sq, Some(axes), keep_dims)?;
    match dtype {
        DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16 => {
            super::elementwise::unary(super::elementwise::UnaryOp::Sqrt, s)
        }
        _ => {
            let f = cast(&s, DType::Float64)?;
            let r: Vec<f64> = f
                .as_slice::<f64>()?
                .iter()
                .map(|v| v.sqrt().trunc())
                .collect();
            cast(&Tensor::from_vec(f.shape().clone(), r)?, dtype)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rtol: f64) -> bool {
        (a - b).abs() <= rtol * b.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn digamma_known_values() {
        // psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi(-1/2) = psi(1/2) + 2.
        let g = 0.577_215_664_901_532_9;
        assert!(close(digamma(1.0), -g, 1e-15));
        assert!(close(digamma(0.5), -g - 2.0 * 2f64.ln(), 1e-15));
        assert!(close(digamma(-0.5), -g - 2.0 * 2f64.ln() + 2.0, 1e-14));
        assert!(digamma(0.0f64).is_nan() && digamma(-3.0f64).is_nan());
        assert!(close(digamma(1.0f32) as f64, -g, 1e-6));
    }

    #[test]
    fn zeta_and_polygamma_known_values() {
        let pi2 = std::f64::consts::PI.powi(2);
        assert!(close(zeta(2.0, 1.0), pi2 / 6.0, 1e-15));
        assert!(close(zeta(4.0, 1.0), pi2 * pi2 / 90.0, 1e-15));
        // psi'(1) = pi^2/6, psi''(1) = -2 zeta(3).
        assert!(close(polygamma(1.0, 1.0), pi2 / 6.0, 1e-14));
        assert!(close(
            polygamma(2.0, 1.0),
            -2.0 * 1.202_056_903_159_594_2,
            1e-14
        ));
        assert!(zeta(0.5f64, 1.0).is_nan());
        assert_eq!(zeta(1.0f64, 3.0), f64::INFINITY);
        assert!(polygamma(1.5f64, 2.0).is_nan());
    }

    #[test]
    fn incomplete_gamma_identities_and_derivative() {
        // P(1, x) = 1 - e^-x; P + Q = 1.
        for &x in &[0.1f64, 0.9, 2.0, 7.5, 30.0] {
            assert!(close(igamma(1.0, x), 1.0 - (-x).exp(), 1e-14), "{x}");
            assert!(close(igamma(2.5, x) + igammac(2.5, x), 1.0, 1e-14));
        }
        // dP/da against a central difference.
        for &(a, x) in &[(0.7, 0.4), (2.0, 3.0), (5.0, 9.0), (3.0, 1.0)] {
            let h = 1e-6;
            let fd = (igamma(a + h, x) - igamma(a - h, x)) / (2.0 * h);
            assert!(close(igamma_grad_a(a, x), fd, 1e-7), "{a} {x}");
        }
        assert_eq!(igamma(0.0f64, 0.0), 0.0);
        assert!(igamma(0.0f64, 1.0).is_nan() && igammac(1.0f64, -1.0).is_nan());
    }

    #[test]
    fn binary_edges_follow_tensorflow() {
        use SpecialBinary::*;
        assert_eq!(binary_real(Xlogy, 0.0f64, 0.0), 0.0);
        // x = 0 wins over a NaN y, as in TensorFlow.
        assert_eq!(binary_real(Xlogy, 0.0f64, f64::NAN), 0.0);
        assert!(binary_real(Xlogy, 1.0f64, f64::NAN).is_nan());
        assert_eq!(binary_real(MulNoNan, f64::INFINITY, 0.0), 0.0);
        assert_eq!(binary_real(TruncateDiv, -7.0f64, 2.0), -3.0);
        assert_eq!(binary_real(NextAfter, 1.0f32, 2.0), 1.0 + f32::EPSILON);
    }

    #[test]
    fn tensors_broadcast_and_check_types() {
        let a = Tensor::from_vec([2, 1], vec![1.0f64, 2.0]).unwrap();
        let x = Tensor::from_vec([3], vec![0.5f64, 1.0, 2.0]).unwrap();
        let y = special_binary(SpecialBinary::Igamma, a, x).unwrap();
        assert_eq!(y.dims(), &[2, 3]);
        let i = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
        assert!(special_unary(SpecialUnary::Erf, &i).is_err());
        let c = cumulative_logsumexp(
            &Tensor::from_vec([3], vec![0.0f64, 0.0, 0.0]).unwrap(),
            0,
            false,
            false,
        )
        .unwrap();
        let v = c.as_slice::<f64>().unwrap();
        assert!(close(v[2], 3f64.ln(), 1e-15));
        let arr = Tensor::from_vec([4], vec![1i32, 1, 3, 7]).unwrap();
        let w = Tensor::from_vec([0], Vec::<i32>::new()).unwrap();
        let b = bincount("DenseBincount", &arr, 4, &w, false).unwrap();
        assert_eq!(b.as_slice::<i32>().unwrap(), &[0, 2, 0, 1]);
    }
}
