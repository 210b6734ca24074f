//! Arithmetic traits over the element types that compute natively.
//!
//! Integer arithmetic wraps (as TensorFlow's does) instead of panicking on
//! overflow. `f16`/`bf16` do not implement these: kernels compute them in
//! `f32` and round back after each op, which is what TensorFlow does too.

use crate::tensor::Element;
use std::fmt::Debug;

/// A number with native arithmetic: f32, f64 and the integer types.
pub trait Scalar: Element + Copy + PartialOrd + Default + Debug {
    const IS_FLOAT: bool;
    const IS_SIGNED: bool;
    fn zero() -> Self;
    fn one() -> Self;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Division truncating toward zero for integers (callers check for zero).
    fn div(self, o: Self) -> Self;
    /// Remainder with the sign of the dividend (C semantics).
    fn rem(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn max_value() -> Self;
    fn min_value() -> Self;
    /// True for NaN (never for integers).
    fn is_nan(self) -> bool;
}

macro_rules! impl_int_scalar {
    ($($t:ty: $signed:expr),*) => {$(
        impl Scalar for $t {
            const IS_FLOAT: bool = false;
            const IS_SIGNED: bool = $signed;
            #[inline(always)] fn zero() -> Self { 0 }
            #[inline(always)] fn one() -> Self { 1 }
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)] fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)] fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn div(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_div(o) } }
            #[inline(always)] fn rem(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_rem(o) } }
            #[inline(always)] fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline(always)] fn abs(self) -> Self { if self < (0 as $t) { self.neg() } else { self } }
            #[inline(always)] fn max_value() -> Self { <$t>::MAX }
            #[inline(always)] fn min_value() -> Self { <$t>::MIN }
            #[inline(always)] fn is_nan(self) -> bool { false }
        }
    )*};
}

impl_int_scalar!(i8: true, i16: true, i32: true, i64: true, u8: false, u16: false, u32: false, u64: false);

macro_rules! impl_float_scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const IS_FLOAT: bool = true;
            const IS_SIGNED: bool = true;
            #[inline(always)] fn zero() -> Self { 0.0 }
            #[inline(always)] fn one() -> Self { 1.0 }
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)] fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)] fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
            #[inline(always)] fn rem(self, o: Self) -> Self { self % o }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn abs(self) -> Self { <$t>::abs(self) }
            #[inline(always)] fn max_value() -> Self { <$t>::INFINITY }
            #[inline(always)] fn min_value() -> Self { <$t>::NEG_INFINITY }
            #[inline(always)] fn is_nan(self) -> bool { <$t>::is_nan(self) }
        }
    )*};
}

impl_float_scalar!(f32, f64);

/// Transcendental functions for f32 and f64.
pub trait Float:
    Scalar
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const EPSILON: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn exp_m1(self) -> Self;
    fn sqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn is_finite(self) -> bool;
    fn is_infinite(self) -> bool;
    fn lit(v: f64) -> Self;
}

macro_rules! impl_float {
    ($($t:ident),*) => {$(
        impl Float for $t {
            const EPSILON: Self = $t::EPSILON;
            #[inline(always)] fn exp(self) -> Self { $t::exp(self) }
            #[inline(always)] fn ln(self) -> Self { $t::ln(self) }
            #[inline(always)] fn ln_1p(self) -> Self { $t::ln_1p(self) }
            #[inline(always)] fn exp_m1(self) -> Self { $t::exp_m1(self) }
            #[inline(always)] fn sqrt(self) -> Self { $t::sqrt(self) }
            #[inline(always)] fn sin(self) -> Self { $t::sin(self) }
            #[inline(always)] fn cos(self) -> Self { $t::cos(self) }
            #[inline(always)] fn tan(self) -> Self { $t::tan(self) }
            #[inline(always)] fn tanh(self) -> Self { $t::tanh(self) }
            #[inline(always)] fn floor(self) -> Self { $t::floor(self) }
            #[inline(always)] fn ceil(self) -> Self { $t::ceil(self) }
            #[inline(always)] fn round_ties_even(self) -> Self { $t::round_ties_even(self) }
            #[inline(always)] fn powf(self, e: Self) -> Self { $t::powf(self, e) }
            #[inline(always)] fn atan2(self, o: Self) -> Self { $t::atan2(self, o) }
            #[inline(always)] fn is_finite(self) -> bool { $t::is_finite(self) }
            #[inline(always)] fn is_infinite(self) -> bool { $t::is_infinite(self) }
            #[inline(always)] fn lit(v: f64) -> Self { v as $t }
        }
    )*};
}

impl_float!(f32, f64);
