//! Element access shared by the image kernels: every real dtype TensorFlow's
//! image kernels accept is read as `f32` (the kernels compute in `f32`, as
//! TensorFlow's do) and the float dtypes can be written back.

use ferroflow_tensor::{DType, Data, Error, Result, Tensor};
use half::{bf16, f16};

/// A pixel value an image kernel reads (and, for float types, writes).
pub trait Pixel: Copy + Send + Sync + 'static {
    /// The value as `f32`, as TensorFlow's `static_cast<float>`.
    fn to_f32(self) -> f32;
}

macro_rules! pixel_as {
    ($($t:ty),*) => {
        $(impl Pixel for $t {
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
        })*
    };
}
pixel_as!(u8, i8, i16, u16, i32, i64, f32, f64);

impl Pixel for f16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

impl Pixel for bf16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// A float dtype a gradient kernel accumulates into.
pub trait FloatPixel: Pixel + Default + std::ops::AddAssign {
    /// `v` converted to this type (TensorFlow's `T(v)`).
    fn from_f32(v: f32) -> Self;
    /// Wraps a buffer as tensor data.
    fn wrap(v: Vec<Self>) -> Data;
}

impl FloatPixel for f32 {
    #[inline(always)]
    fn from_f32(v: f32) -> f32 {
        v
    }
    fn wrap(v: Vec<f32>) -> Data {
        Data::F32(v.into())
    }
}

impl FloatPixel for f64 {
    #[inline(always)]
    fn from_f32(v: f32) -> f64 {
        v as f64
    }
    fn wrap(v: Vec<f64>) -> Data {
        Data::F64(v.into())
    }
}

impl FloatPixel for f16 {
    #[inline(always)]
    fn from_f32(v: f32) -> f16 {
        f16::from_f32(v)
    }
    fn wrap(v: Vec<f16>) -> Data {
        Data::F16(v.into())
    }
}

impl FloatPixel for bf16 {
    #[inline(always)]
    fn from_f32(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
    fn wrap(v: Vec<bf16>) -> Data {
        Data::BF16(v.into())
    }
}

/// The real dtypes TensorFlow's resize kernels take.
pub const REAL_TYPES: &[DType] = &[
    DType::UInt8,
    DType::Int8,
    DType::Int16,
    DType::UInt16,
    DType::Int32,
    DType::Int64,
    DType::Float16,
    DType::BFloat16,
    DType::Float32,
    DType::Float64,
];

/// Runs `$body` with `$v` bound to the tensor's elements as a slice of their
/// own type, for every dtype in [`REAL_TYPES`]; other dtypes are an
/// `InvalidArgument` naming `$what`.
macro_rules! with_pixels {
    ($t:expr, $what:expr, $v:ident => $body:expr) => {{
        use ferroflow_tensor::Data;
        match $t.data() {
            Data::U8(x) => {
                let $v: &[u8] = x;
                $body
            }
            Data::I8(x) => {
                let $v: &[i8] = x;
                $body
            }
            Data::I16(x) => {
                let $v: &[i16] = x;
                $body
            }
            Data::U16(x) => {
                let $v: &[u16] = x;
                $body
            }
            Data::I32(x) => {
                let $v: &[i32] = x;
                $body
            }
            Data::I64(x) => {
                let $v: &[i64] = x;
                $body
            }
            Data::F16(x) => {
                let $v: &[half::f16] = x;
                $body
            }
            Data::BF16(x) => {
                let $v: &[half::bf16] = x;
                $body
            }
            Data::F32(x) => {
                let $v: &[f32] = x;
                $body
            }
            Data::F64(x) => {
                let $v: &[f64] = x;
                $body
            }
            _ => Err($crate::pixels::unsupported($t, $what)),
        }
    }};
}
pub(crate) use with_pixels;

/// The error for a tensor whose dtype a kernel does not take.
pub fn unsupported(t: &Tensor, what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what}: unsupported dtype {} for an image",
        t.dtype()
    ))
}

/// The dimensions `[batch, height, width, channels]` of a 4-D image tensor.
pub fn image_dims(t: &Tensor, what: &str) -> Result<[usize; 4]> {
    match t.dims() {
        &[b, h, w, c] => Ok([b, h, w, c]),
        _ => Err(Error::invalid_argument(format!(
            "{what} must be 4-dimensional{}",
            t.shape()
        ))),
    }
}
