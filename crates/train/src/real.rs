//! The arithmetic the update rules are written in.
//!
//! `f32`/`f64` use plain IEEE operations (one rounding per operation, no
//! fused multiply-add), which is what TensorFlow's CPU kernels compute.
//! `H16`/`B16` compute each operation in `f32` and round back, as Eigen's
//! half types do, so one generic rule serves every float dtype.

use half::{bf16, f16};

/// A float type an update rule runs in.
pub trait Real: Copy + Send + Sync + PartialOrd + 'static {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn zero() -> Self {
        Self::from_f64(0.0)
    }
    fn one() -> Self {
        Self::from_f64(1.0)
    }
    /// `1/sqrt(x)` computed exactly (IEEE sqrt, IEEE divide) on every CPU,
    /// where TensorFlow uses a CPU-specific hardware estimate.
    #[inline(always)]
    fn rsqrt(self) -> Self {
        Self::one().div(self.sqrt())
    }
    /// -1, 0 or 1 (and NaN for NaN).
    #[inline(always)]
    fn sign(self) -> Self {
        let z = Self::zero();
        if self > z {
            Self::one()
        } else if self < z {
            Self::zero().sub(Self::one())
        } else {
            self
        }
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        if self > o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        if self < o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Self::zero().sub(self)
    }
}

macro_rules! native {
    ($t:ty) => {
        impl Real for $t {
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn powf(self, e: Self) -> Self {
                <$t>::powf(self, e)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
        }
    };
}

native!(f32);
native!(f64);

macro_rules! narrow {
    ($t:ty, $inner:ty) => {
        impl Real for $t {
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$inner>::from_f64(v).into()
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.0.to_f64()
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32() + o.0.to_f32()))
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32() - o.0.to_f32()))
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32() * o.0.to_f32()))
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32() / o.0.to_f32()))
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32().sqrt()))
            }
            #[inline(always)]
            fn abs(self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32().abs()))
            }
            #[inline(always)]
            fn powf(self, e: Self) -> Self {
                Self(<$inner>::from_f32(self.0.to_f32().powf(e.0.to_f32())))
            }
        }

        impl From<$inner> for $t {
            fn from(v: $inner) -> Self {
                Self(v)
            }
        }

        impl PartialOrd for $t {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                self.0.partial_cmp(&o.0)
            }
        }

        impl PartialEq for $t {
            fn eq(&self, o: &Self) -> bool {
                self.0 == o.0
            }
        }
    };
}

/// `f16` with TensorFlow's half arithmetic (compute in f32, round each op).
#[derive(Copy, Clone, Debug)]
#[repr(transparent)]
pub struct H16(pub f16);

/// `bf16` with the same per-operation rounding.
#[derive(Copy, Clone, Debug)]
#[repr(transparent)]
pub struct B16(pub bf16);

narrow!(H16, f16);
narrow!(B16, bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_rounds_every_operation() {
        let a = H16(f16::from_f32(1.0));
        let b = H16(f16::from_f32(0.0001));
        // 1 + 0.0001 is not representable in half: it rounds back to 1.
        assert_eq!(a.add(b).0, f16::from_f32(1.0));
        assert_eq!(4f32.rsqrt(), 0.5);
        assert_eq!((-3f64).sign(), -1.0);
        assert_eq!(0f32.sign(), 0.0);
    }
}
