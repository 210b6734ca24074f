//! TensorFlow's bitwise ops on integer tensors: `BitwiseAnd`, `BitwiseOr`,
//! `BitwiseXor`, `LeftShift`, `RightShift` (broadcasting), `Invert` and
//! `PopulationCount`.
//!
//! Shifts follow TensorFlow's CPU functors: the shift amount is clamped to
//! `[0, bits - 1]` (so a negative amount shifts by 0 and an oversized one by
//! `bits - 1`), left shifts wrap as on the unsigned type of the same width,
//! and right shifts of signed values are arithmetic.

use super::broadcast::Broadcast;
use super::parallel;
use crate::{DType, Element, Error, Result, Tensor};

/// The broadcasting binary bitwise ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitwiseOp {
    And,
    Or,
    Xor,
    LeftShift,
    RightShift,
}

impl BitwiseOp {
    /// TensorFlow's op name.
    pub fn name(self) -> &'static str {
        match self {
            BitwiseOp::And => "BitwiseAnd",
            BitwiseOp::Or => "BitwiseOr",
            BitwiseOp::Xor => "BitwiseXor",
            BitwiseOp::LeftShift => "LeftShift",
            BitwiseOp::RightShift => "RightShift",
        }
    }
}

/// The integer element types TensorFlow's bitwise ops accept.
pub const BITWISE_TYPES: &[DType] = &[
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::UInt64,
];

/// What the kernels need of an integer element type.
trait Bits: Element + Copy + Default + Send + Sync {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// The shift amount clamped to `[0, BITS - 1]`.
    fn shift_amount(self) -> u32;
    fn shl(self, by: u32) -> Self;
    fn shr(self, by: u32) -> Self;
    fn ones(self) -> u8;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            #[inline]
            fn and(self, o: Self) -> Self { self & o }
            #[inline]
            fn or(self, o: Self) -> Self { self | o }
            #[inline]
            fn xor(self, o: Self) -> Self { self ^ o }
            #[inline]
            fn not(self) -> Self { !self }
            #[inline]
            fn shift_amount(self) -> u32 {
                // Compare in i128 so that every type's values fit.
                (self as i128).clamp(0, (<$t>::BITS - 1) as i128) as u32
            }
            #[inline]
            fn shl(self, by: u32) -> Self { self.wrapping_shl(by) }
            #[inline]
            fn shr(self, by: u32) -> Self { self >> by }
            #[inline]
            fn ones(self) -> u8 { self.count_ones() as u8 }
        }
    )*};
}

bits!(i8, i16, i32, i64, u8, u16, u32, u64);

fn apply<T: Bits>(op: BitwiseOp, a: &Tensor, b: &Tensor, plan: &Broadcast) -> Result<Tensor> {
    let (x, y) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
    let out = match op {
        BitwiseOp::And => plan.map(x, y, T::and),
        BitwiseOp::Or => plan.map(x, y, T::or),
        BitwiseOp::Xor => plan.map(x, y, T::xor),
        BitwiseOp::LeftShift => plan.map(x, y, |v, s| v.shl(s.shift_amount())),
        BitwiseOp::RightShift => plan.map(x, y, |v, s| v.shr(s.shift_amount())),
    };
    Tensor::from_vec(plan.out.clone(), out)
}

fn type_error(op: &str, dtype: DType) -> Error {
    Error::invalid_argument(format!(
        "{op}: expected an integer tensor (int8, int16, int32, int64, uint8, uint16, uint32 or uint64), got {}",
        dtype.name()
    ))
}

/// `a op b` with broadcasting; `a` and `b` must have the same integer dtype.
pub fn bitwise_binary(op: BitwiseOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "{}: both inputs must have one dtype, got {} and {}",
            op.name(),
            a.dtype().name(),
            b.dtype().name()
        )));
    }
    let plan = Broadcast::new(a.dims(), b.dims(), &op.name())?;
    match a.dtype() {
        DType::Int8 => apply::<i8>(op, a, b, &plan),
        DType::Int16 => apply::<i16>(op, a, b, &plan),
        DType::Int32 => apply::<i32>(op, a, b, &plan),
        DType::Int64 => apply::<i64>(op, a, b, &plan),
        DType::UInt8 => apply::<u8>(op, a, b, &plan),
        DType::UInt16 => apply::<u16>(op, a, b, &plan),
        DType::UInt32 => apply::<u32>(op, a, b, &plan),
        DType::UInt64 => apply::<u64>(op, a, b, &plan),
        other => Err(type_error(op.name(), other)),
    }
}

fn map_bits<T: Bits, O: Element + Copy + Default + Send>(
    x: &Tensor,
    f: impl Fn(T) -> O + Sync,
) -> Result<Tensor> {
    Tensor::from_vec(x.shape().clone(), parallel::map(x.as_slice::<T>()?, f))
}

/// `Invert`: every bit flipped (`~x`), same dtype and shape.
pub fn invert(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Int8 => map_bits::<i8, _>(x, Bits::not),
        DType::Int16 => map_bits::<i16, _>(x, Bits::not),
        DType::Int32 => map_bits::<i32, _>(x, Bits::not),
        DType::Int64 => map_bits::<i64, _>(x, Bits::not),
        DType::UInt8 => map_bits::<u8, _>(x, Bits::not),
        DType::UInt16 => map_bits::<u16, _>(x, Bits::not),
        DType::UInt32 => map_bits::<u32, _>(x, Bits::not),
        DType::UInt64 => map_bits::<u64, _>(x, Bits::not),
        other => Err(type_error("Invert", other)),
    }
}

/// `PopulationCount`: the number of set bits of each element, as uint8.
pub fn population_count(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Int8 => map_bits::<i8, _>(x, Bits::ones),
        DType::Int16 => map_bits::<i16, _>(x, Bits::ones),
        DType::Int32 => map_bits::<i32, _>(x, Bits::ones),
        DType::Int64 => map_bits::<i64, _>(x, Bits::ones),
        DType::UInt8 => map_bits::<u8, _>(x, Bits::ones),
        DType::UInt16 => map_bits::<u16, _>(x, Bits::ones),
        DType::UInt32 => map_bits::<u32, _>(x, Bits::ones),
        DType::UInt64 => map_bits::<u64, _>(x, Bits::ones),
        other => Err(type_error("PopulationCount", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logic_broadcasts() {
        let a = Tensor::from_vec(vec![2, 2], vec![0b1100i32, 0b1010, -1, 7]).unwrap();
        let b = Tensor::vector(vec![0b1010i32, 0b0110]);
        let and = bitwise_binary(BitwiseOp::And, &a, &b).unwrap();
        assert_eq!(
            and.as_slice::<i32>().unwrap(),
            &[0b1000, 0b0010, 0b1010, 0b0110]
        );
        let or = bitwise_binary(BitwiseOp::Or, &a, &b).unwrap();
        assert_eq!(or.as_slice::<i32>().unwrap(), &[0b1110, 0b1110, -1, 7]);
        let xor = bitwise_binary(BitwiseOp::Xor, &a, &b).unwrap();
        assert_eq!(
            xor.as_slice::<i32>().unwrap(),
            &[0b0110, 0b1100, !0b1010, 1]
        );
        assert_eq!(xor.dims(), &[2, 2]);
    }

    #[test]
    fn shifts_clamp_the_amount() {
        let x = Tensor::vector(vec![-3i8, -3, -3, -3, 5, 1]);
        let s = Tensor::vector(vec![-1i8, 0, 1, 9, 7, 100]);
        let l = bitwise_binary(BitwiseOp::LeftShift, &x, &s).unwrap();
        // 5 << 7 wraps to -128; 1 << 100 clamps to 1 << 7
        assert_eq!(l.as_slice::<i8>().unwrap(), &[-3, -3, -6, -128, -128, -128]);
        let r = bitwise_binary(BitwiseOp::RightShift, &x, &s).unwrap();
        assert_eq!(r.as_slice::<i8>().unwrap(), &[-3, -3, -2, -1, 0, 0]);
        let u = bitwise_binary(
            BitwiseOp::RightShift,
            &Tensor::vector(vec![0xffffu16]),
            &Tensor::vector(vec![40u16]),
        )
        .unwrap();
        assert_eq!(u.as_slice::<u16>().unwrap(), &[1]);
    }

    #[test]
    fn wide_unsigned_shifts_and_bits() {
        // TensorFlow 2.21: amounts clamp to 31 (63); the values wrap.
        let x = Tensor::vector(vec![u32::MAX, u32::MAX - 1, 1 << 31, 3]);
        let s = Tensor::vector(vec![32u32, 35, 200, 2]);
        let l = bitwise_binary(BitwiseOp::LeftShift, &x, &s).unwrap();
        assert_eq!(l.as_slice::<u32>().unwrap(), &[1 << 31, 0, 0, 12]);
        let r = bitwise_binary(BitwiseOp::RightShift, &x, &s).unwrap();
        assert_eq!(r.as_slice::<u32>().unwrap(), &[1, 1, 1, 0]);
        let y = Tensor::vector(vec![u64::MAX, 3]);
        let l = bitwise_binary(BitwiseOp::LeftShift, &y, &Tensor::vector(vec![64u64, 31])).unwrap();
        assert_eq!(l.as_slice::<u64>().unwrap(), &[1 << 63, 6_442_450_944]);
        assert_eq!(invert(&y).unwrap().as_slice::<u64>().unwrap(), &[0, !3]);
        assert_eq!(
            population_count(&y).unwrap().as_slice::<u8>().unwrap(),
            &[64, 2]
        );
    }

    #[test]
    fn invert_and_popcount() {
        let x = Tensor::vector(vec![0u8, 1, 255, 0x0f]);
        assert_eq!(
            invert(&x).unwrap().as_slice::<u8>().unwrap(),
            &[255, 254, 0, 0xf0]
        );
        assert_eq!(
            population_count(&x).unwrap().as_slice::<u8>().unwrap(),
            &[0, 1, 8, 4]
        );
        let y = Tensor::vector(vec![-1i64, i64::MIN]);
        assert_eq!(
            population_count(&y).unwrap().as_slice::<u8>().unwrap(),
            &[64, 1]
        );
    }

    #[test]
    fn refuses_floats_and_mixed_types() {
        let f = Tensor::vector(vec![1.0f32]);
        assert!(invert(&f).unwrap_err().to_string().contains("Invert"));
        let e = bitwise_binary(
            BitwiseOp::And,
            &Tensor::vector(vec![1i32]),
            &Tensor::vector(vec![1i64]),
        );
        assert!(e.unwrap_err().to_string().contains("BitwiseAnd"));
        let e = bitwise_binary(
            BitwiseOp::Or,
            &Tensor::vector(vec![1i32, 2]),
            &Tensor::vector(vec![1i32, 2, 3]),
        );
        assert!(e.unwrap_err().to_string().contains("Incompatible shapes"));
    }
}
