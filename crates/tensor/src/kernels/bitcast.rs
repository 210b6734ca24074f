//! `Bitcast`: a tensor's bytes reinterpreted as another fixed-size dtype.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use half::{bf16, f16};

/// The dtypes `Bitcast` accepts (TensorFlow's list, less the quantized
/// ones).
pub const BITCAST_TYPES: &[DType] = &[
    DType::Complex64,
    DType::Complex128,
    DType::BFloat16,
    DType::Float16,
    DType::Float32,
    DType::Float64,
    DType::Int64,
    DType::Int32,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::UInt64,
    DType::Int8,
    DType::Int16,
];

/// The output shape of bitcasting `dims` from `from` to `to` (TensorFlow's
/// rule): equal sizes keep the shape; a smaller target appends a dimension of
/// `size(from) / size(to)`; a larger one needs a last dimension of exactly
/// `size(to) / size(from)` and drops it.
pub fn bitcast_shape(dims: &[usize], from: DType, to: DType) -> Result<Vec<usize>> {
    let (a, b) = sizes(from, to)?;
    let mut out = dims.to_vec();
    if a > b {
        out.push(a / b);
    } else if a < b {
        match out.last() {
            Some(&last) if last == b / a => {
                out.pop();
            }
            Some(&last) => {
                return Err(Error::invalid_argument(format!(
                    "Cannot bitcast from {} to {} due to shape. {last} does not match {}",
                    from.as_enum(),
                    to.as_enum(),
                    b / a
                )))
            }
            None => {
                return Err(Error::invalid_argument(
                    "Shape must be at least rank 1 but is rank 0",
                ))
            }
        }
    }
    Ok(out)
}

fn sizes(from: DType, to: DType) -> Result<(usize, usize)> {
    for d in [from, to] {
        if !BITCAST_TYPES.contains(&d) {
            return Err(Error::type_error(format!("Bitcast does not support {d}")));
        }
    }
    Ok((
        from.size().expect("fixed-size dtype"),
        to.size().expect("fixed-size dtype"),
    ))
}

/// Copies the elements of `v` as bytes in memory order (the machine's).
fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(v);
    let mut out = vec![0u8; n];
    // SAFETY: `out` holds exactly the `n` bytes of `v`; the types used here
    // (floats and integers) have no padding, and the buffers do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr() as *const u8, out.as_mut_ptr(), n) };
    out
}

/// Builds `bytes.len() / size_of::<T>()` elements from raw bytes.
fn from_bytes<T: Copy + Default + Element>(bytes: &[u8]) -> Data {
    let n = bytes.len() / std::mem::size_of::<T>();
    let mut v = vec![T::default(); n];
    // SAFETY: `v` holds exactly `n * size_of::<T>()` bytes and every bit
    // pattern is a valid value of the numeric types used here.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            v.as_mut_ptr() as *mut u8,
            n * std::mem::size_of::<T>(),
        )
    };
    T::wrap(v)
}

/// TensorFlow's `Bitcast`: `x`'s bytes as a tensor of `to` (no copy of the
/// values' meaning, only of their bits), shaped by [`bitcast_shape`].
pub fn bitcast(x: &Tensor, to: DType) -> Result<Tensor> {
    let shape = bitcast_shape(x.dims(), x.dtype(), to)?;
    let bytes = match x.data() {
        Data::F32(v) => bytes_of(v),
        Data::F64(v) => bytes_of(v),
        Data::F16(v) => bytes_of(v),
        Data::BF16(v) => bytes_of(v),
        Data::I8(v) => bytes_of(v),
        Data::I16(v) => bytes_of(v),
        Data::I32(v) => bytes_of(v),
        Data::I64(v) => bytes_of(v),
        Data::U8(v) => bytes_of(v),
        Data::U16(v) => bytes_of(v),
        Data::U32(v) => bytes_of(v),
        Data::U64(v) => bytes_of(v),
        Data::C64(v) => bytes_of(v),
        Data::C128(v) => bytes_of(v),
        Data::Bool(_) | Data::Str(_) => unreachable!("refused by bitcast_shape"),
    };
    let data = match to {
        DType::Float32 => from_bytes::<f32>(&bytes),
        DType::Float64 => from_bytes::<f64>(&bytes),
        DType::Float16 => from_bytes::<f16>(&bytes),
        DType::BFloat16 => from_bytes::<bf16>(&bytes),
        DType::Int8 => from_bytes::<i8>(&bytes),
        DType::Int16 => from_bytes::<i16>(&bytes),
        DType::Int32 => from_bytes::<i32>(&bytes),
        DType::Int64 => from_bytes::<i64>(&bytes),
        DType::UInt8 => from_bytes::<u8>(&bytes),
        DType::UInt16 => from_bytes::<u16>(&bytes),
        DType::UInt32 => from_bytes::<u32>(&bytes),
        DType::UInt64 => from_bytes::<u64>(&bytes),
        DType::Complex64 => from_bytes::<crate::Complex32>(&bytes),
        DType::Complex128 => from_bytes::<crate::Complex64>(&bytes),
        other => unreachable!("refused by bitcast_shape: {other}"),
    };
    Tensor::new(Shape::new(&shape), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitcast_follows_tf() {
        let x = Tensor::vector(vec![1.0f32, -2.0]);
        let i = bitcast(&x, DType::Int32).unwrap();
        assert_eq!(i.as_slice::<i32>().unwrap(), &[1065353216, -1073741824]);
        let b = bitcast(&x, DType::UInt8).unwrap();
        assert_eq!(b.dims(), &[2, 4]);
        assert_eq!(b.as_slice::<u8>().unwrap(), &[0, 0, 128, 63, 0, 0, 0, 192]);
        let d = bitcast(&x, DType::Float64).unwrap();
        assert_eq!(d.dims(), &[] as &[usize]);
        assert_eq!(d.as_slice::<f64>().unwrap(), &[-2.000000473111868]);
        // Back again: the bits are unchanged.
        let back = bitcast(&b, DType::Float32).unwrap();
        assert_eq!(back.as_slice::<f32>().unwrap(), &[1.0, -2.0]);
        let e = bitcast(&Tensor::vector(vec![1i32, 2, 3]), DType::Int64).unwrap_err();
        assert!(e.message().contains("Cannot bitcast from 3 to 9"), "{e}");
        assert!(bitcast(&Tensor::scalar(1.0f32), DType::Float64).is_err());
        assert!(bitcast(&Tensor::scalar(true), DType::UInt8).is_err());
    }
}
