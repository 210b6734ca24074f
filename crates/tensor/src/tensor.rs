//! Runtime tensor values: a shape plus a reference-counted, contiguous,
//! row-major buffer.
//!
//! Cloning a [`Tensor`] is cheap (it shares the buffer). Writers call
//! [`Tensor::make_mut`], which copies only when another clone still holds the
//! buffer: copy-on-write is what lets a variable be read without a copy and
//! updated in place when nothing else holds the old value.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::fmt;
use std::sync::Arc;

/// A typed buffer. Each variant holds one dtype's elements.
#[derive(Clone)]
pub enum Data {
    F32(Arc<Vec<f32>>),
    F64(Arc<Vec<f64>>),
    F16(Arc<Vec<f16>>),
    BF16(Arc<Vec<bf16>>),
    I8(Arc<Vec<i8>>),
    I16(Arc<Vec<i16>>),
    I32(Arc<Vec<i32>>),
    I64(Arc<Vec<i64>>),
    U8(Arc<Vec<u8>>),
    U16(Arc<Vec<u16>>),
    U32(Arc<Vec<u32>>),
    U64(Arc<Vec<u64>>),
    Bool(Arc<Vec<bool>>),
    Str(Arc<Vec<Vec<u8>>>),
    /// `complex64`: pairs of `f32` (num-complex's `Complex<f32>`, laid out
    /// as TensorFlow's `std::complex<float>`: real, then imaginary).
    C64(Arc<Vec<Complex32>>),
    /// `complex128`: pairs of `f64`.
    C128(Arc<Vec<Complex64>>),
}

/// Runs `$body` with `$v` bound to the `Arc<Vec<T>>` of whichever variant
/// `$data` is. The body is compiled once per dtype, so it may call generic
/// functions.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::Data::F32($v) => $body,
            $crate::Data::F64($v) => $body,
            $crate::Data::F16($v) => $body,
            $crate::Data::BF16($v) => $body,
            $crate::Data::I8($v) => $body,
            $crate::Data::I16($v) => $body,
            $crate::Data::I32($v) => $body,
            $crate::Data::I64($v) => $body,
            $crate::Data::U8($v) => $body,
            $crate::Data::U16($v) => $body,
            $crate::Data::U32($v) => $body,
            $crate::Data::U64($v) => $body,
            $crate::Data::Bool($v) => $body,
            $crate::Data::Str($v) => $body,
            $crate::Data::C64($v) => $body,
            $crate::Data::C128($v) => $body,
        }
    };
}

/// Like [`with_data!`] but only for dtypes with native arithmetic (f32, f64
/// and the integers); other dtypes evaluate `$other`.
#[macro_export]
macro_rules! with_real {
    ($data:expr, $v:ident => $body:expr, _ => $other:expr) => {
        match $data {
            $crate::Data::F32($v) => $body,
            $crate::Data::F64($v) => $body,
            $crate::Data::I8($v) => $body,
            $crate::Data::I16($v) => $body,
            $crate::Data::I32($v) => $body,
            $crate::Data::I64($v) => $body,
            $crate::Data::U8($v) => $body,
            $crate::Data::U16($v) => $body,
            $crate::Data::U32($v) => $body,
            $crate::Data::U64($v) => $body,
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}

/// A Rust type that can be a tensor element.
pub trait Element: Clone + Send + Sync + 'static {
    const DTYPE: DType;
    /// The buffer, if `data` holds this type.
    fn buffer(data: &Data) -> Option<&Arc<Vec<Self>>>;
    /// The mutable buffer handle, if `data` holds this type.
    fn buffer_mut(data: &mut Data) -> Option<&mut Arc<Vec<Self>>>;
    /// Wraps a vector as tensor data.
    fn wrap(v: Vec<Self>) -> Data;
}

macro_rules! impl_element {
    ($t:ty, $variant:ident, $dtype:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
            fn buffer(data: &Data) -> Option<&Arc<Vec<Self>>> {
                match data {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn buffer_mut(data: &mut Data) -> Option<&mut Arc<Vec<Self>>> {
                match data {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(v: Vec<Self>) -> Data {
                Data::$variant(Arc::new(v))
            }
        }
    };
}

impl_element!(f32, F32, Float32);
impl_element!(f64, F64, Float64);
impl_element!(f16, F16, Float16);
impl_element!(bf16, BF16, BFloat16);
impl_element!(i8, I8, Int8);
impl_element!(i16, I16, Int16);
impl_element!(i32, I32, Int32);
impl_element!(i64, I64, Int64);
impl_element!(u8, U8, UInt8);
impl_element!(u16, U16, UInt16);
impl_element!(u32, U32, UInt32);
impl_element!(u64, U64, UInt64);
impl_element!(bool, Bool, Bool);
impl_element!(Vec<u8>, Str, String);
impl_element!(Complex32, C64, Complex64);
impl_element!(Complex64, C128, Complex128);

impl Data {
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::Float32,
            Data::F64(_) => DType::Float64,
            Data::F16(_) => DType::Float16,
            Data::BF16(_) => DType::BFloat16,
            Data::I8(_) => DType::Int8,
            Data::I16(_) => DType::Int16,
            Data::I32(_) => DType::Int32,
            Data::I64(_) => DType::Int64,
            Data::U8(_) => DType::UInt8,
            Data::U16(_) => DType::UInt16,
            Data::U32(_) => DType::UInt32,
            Data::U64(_) => DType::UInt64,
            Data::Bool(_) => DType::Bool,
            Data::Str(_) => DType::String,
            Data::C64(_) => DType::Complex64,
            Data::C128(_) => DType::Complex128,
        }
    }

    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` default elements (zeros, `false`, empty strings) of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Data {
        match dtype {
            DType::Float32 => Data::F32(Arc::new(vec![0.0; n])),
            DType::Float64 => Data::F64(Arc::new(vec![0.0; n])),
            DType::Float16 => Data::F16(Arc::new(vec![f16::ZERO; n])),
            DType::BFloat16 => Data::BF16(Arc::new(vec![bf16::ZERO; n])),
            DType::Int8 => Data::I8(Arc::new(vec![0; n])),
            DType::Int16 => Data::I16(Arc::new(vec![0; n])),
            DType::Int32 => Data::I32(Arc::new(vec![0; n])),
            DType::Int64 => Data::I64(Arc::new(vec![0; n])),
            DType::UInt8 => Data::U8(Arc::new(vec![0; n])),
            DType::UInt16 => Data::U16(Arc::new(vec![0; n])),
            DType::UInt32 => Data::U32(Arc::new(vec![0; n])),
            DType::UInt64 => Data::U64(Arc::new(vec![0; n])),
            DType::Bool => Data::Bool(Arc::new(vec![false; n])),
            DType::Complex64 => Data::C64(Arc::new(vec![Complex32::new(0.0, 0.0); n])),
            DType::Complex128 => Data::C128(Arc::new(vec![Complex64::new(0.0, 0.0); n])),
            DType::QInt8 | DType::QUInt8 | DType::QInt16 | DType::QUInt16 | DType::QInt32 => {
                Data::zeros(dtype.storage(), n)
            }
            // Handles have no tensor form of their own; a tensor standing in
            // for one holds bytes, as TensorFlow serializes a handle.
            DType::String | DType::Resource | DType::Variant => {
                Data::Str(Arc::new(vec![Vec::new(); n]))
            }
        }
    }

    /// The buffer of a fixed-size dtype as its little-endian bytes, without
    /// a copy (checkpoint files and cluster frames write these); `None` for
    /// strings.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        fn bytes<T: Copy>(v: &[T]) -> &[u8] {
            // SAFETY: T is one of the element types (integers, floats,
            // f16/bf16, bool, complex pairs of floats), which have no padding;
            // u8 has alignment 1 and the length covers exactly `v`.
            unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        }
        Some(match self {
            Data::F32(v) => bytes(v),
            Data::F64(v) => bytes(v),
            Data::F16(v) => bytes(v),
            Data::BF16(v) => bytes(v),
            Data::I8(v) => bytes(v),
            Data::I16(v) => bytes(v),
            Data::I32(v) => bytes(v),
            Data::I64(v) => bytes(v),
            Data::U8(v) => bytes(v),
            Data::U16(v) => bytes(v),
            Data::U32(v) => bytes(v),
            Data::U64(v) => bytes(v),
            Data::Bool(v) => bytes(v),
            Data::C64(v) => bytes(v),
            Data::C128(v) => bytes(v),
            Data::Str(_) => return None,
        })
    }

    /// True if `self` and `other` share one buffer.
    pub fn same_buffer(&self, other: &Data) -> bool {
        fn ptr<T>(a: &Arc<Vec<T>>) -> usize {
            Arc::as_ptr(a) as *const u8 as usize
        }
        let a = with_data!(self, v => ptr(v));
        let b = with_data!(other, v => ptr(v));
        a == b
    }

    /// True if no other handle shares this buffer (a write would not copy).
    pub fn is_unique(&mut self) -> bool {
        with_data!(self, v => Arc::get_mut(v).is_some())
    }
}

/// A runtime value: shape, dtype and shared data.
#[derive(Clone)]
pub struct Tensor {
    shape: Shape,
    data: Data,
}

impl Tensor {
    /// Builds a tensor from a shape and matching data.
    pub fn new(shape: Shape, data: Data) -> Result<Tensor> {
        if shape.num_elements() != data.len() {
            return Err(Error::invalid_argument(format!(
                "a tensor of shape {shape} needs {} elements but {} were given",
                shape.num_elements(),
                data.len()
            )));
        }
        Ok(Tensor { shape, data })
    }

    /// Builds a tensor from a shape and a vector of elements.
    pub fn from_vec<T: Element>(shape: impl Into<Shape>, v: Vec<T>) -> Result<Tensor> {
        Tensor::new(shape.into(), T::wrap(v))
    }

    /// A rank-0 tensor.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        Tensor {
            shape: Shape::scalar(),
            data: T::wrap(vec![v]),
        }
    }

    /// A rank-1 tensor.
    pub fn vector<T: Element>(v: Vec<T>) -> Tensor {
        Tensor {
            shape: Shape::new(&[v.len()]),
            data: T::wrap(v),
        }
    }

    /// A tensor of zeros (or `false`, or empty strings).
    pub fn zeros(dtype: DType, shape: impl Into<Shape>) -> Tensor {
        let shape = shape.into();
        let data = Data::zeros(dtype, shape.num_elements());
        Tensor { shape, data }
    }

    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// Checks, before a kernel allocates it, that an output of `dtype` and
    /// `dims` sized by user input (a shape, a range, tile multiples,
    /// paddings...) can exist, so that a huge request fails at once with a
    /// typed error instead of aborting the process or running for minutes:
    ///
    /// * more than 2**63 - 1 elements: `InvalidArgument`, as TensorFlow's
    ///   `TensorShape` says;
    /// * more bytes than the machine's memory and swap together (which no
    ///   allocation could ever fill), or an allocation of that size failing
    ///   now: `ResourceExhausted`, with TensorFlow's "OOM when allocating
    ///   tensor with shape[...] and type ..." naming `op`.
    ///
    /// Requests under 64 MiB are not probed. A probed block goes back to the
    /// allocator, whose buffer cache (see [`crate::alloc`]) hands it to the
    /// kernel's own allocation of the same size.
    pub fn check_allocation(op: &str, dtype: DType, dims: &[usize]) -> Result<()> {
        const PROBE_MIN_BYTES: u128 = 64 << 20;
        let n = dims
            .iter()
            .fold(1u128, |acc, &d| acc.saturating_mul(d as u128));
        let shape = || {
            let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("[{}]", parts.join(","))
        };
        if n > i64::MAX as u128 {
            return Err(Error::invalid_argument(format!(
                "{op}: Shape {} would have more than 2**63 - 1 elements",
                shape()
            )));
        }
        let elem = dtype.size().unwrap_or(std::mem::size_of::<Vec<u8>>()) as u128;
        let bytes = n * elem;
        let oom = || {
            let ty = match dtype {
                DType::Float32 => "float",
                DType::Float64 => "double",
                DType::Float16 => "half",
                other => other.name(),
            };
            Error::resource_exhausted(format!(
                "OOM when allocating tensor with shape{} and type {ty} on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu ({op} needs {bytes} bytes)",
                shape()
            ))
        };
        if bytes > memory_limit() {
            return Err(oom());
        }
        if bytes >= PROBE_MIN_BYTES {
            let layout =
                std::alloc::Layout::from_size_align(bytes as usize, 64).map_err(|_| oom())?;
            // SAFETY: `layout` has a non-zero size; the block is freed with
            // the same layout and never read or written.
            unsafe {
                let p = std::alloc::alloc(layout);
                if p.is_null() {
                    return Err(oom());
                }
                std::alloc::dealloc(p, layout);
            }
        }
        Ok(())
    }

    /// A tensor of zeros (see [`Tensor::zeros`]) whose shape comes from user
    /// input: [`Tensor::check_allocation`] first, naming `op`.
    pub fn try_zeros(op: &str, dtype: DType, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        Tensor::check_allocation(op, dtype, shape.dims())?;
        Ok(Tensor::zeros(dtype, shape))
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    pub fn num_elements(&self) -> usize {
        self.data.len()
    }

    pub fn data(&self) -> &Data {
        &self.data
    }

    pub fn into_data(self) -> Data {
        self.data
    }

    /// Splits into shape and data.
    pub fn into_parts(self) -> (Shape, Data) {
        (self.shape, self.data)
    }

    /// The elements as a slice, or a `TypeError` if the dtype is not `T`'s.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        T::buffer(&self.data)
            .map(|v| v.as_slice())
            .ok_or_else(|| self.dtype_mismatch(T::DTYPE))
    }

    /// Starts loading this tensor's buffer header (reference counts, pointer,
    /// length) into the cache without waiting (see [`crate::prefetch`]).
    #[inline]
    pub fn prefetch_header(&self) {
        with_data!(&self.data, v => crate::prefetch::prefetch_arc(v))
    }

    /// Mutable elements; copies the buffer first if another handle shares it.
    pub fn make_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        let dtype = self.dtype();
        match T::buffer_mut(&mut self.data) {
            Some(v) => Ok(Arc::make_mut(v).as_mut_slice()),
            None => Err(Error::invalid_argument(format!(
                "expected a {} tensor, got {dtype}",
                T::DTYPE
            ))),
        }
    }

    /// Takes the elements out without copying when this is the only handle.
    pub fn into_vec<T: Element>(self) -> Result<Vec<T>> {
        let dtype = self.dtype();
        let mut data = self.data;
        match T::buffer_mut(&mut data) {
            Some(v) => {
                let arc = std::mem::replace(v, Arc::new(Vec::new()));
                Ok(Arc::try_unwrap(arc).unwrap_or_else(|shared| (*shared).clone()))
            }
            None => Err(Error::invalid_argument(format!(
                "expected a {} tensor, got {dtype}",
                T::DTYPE
            ))),
        }
    }

    /// The same data seen with another shape of equal element count (no copy).
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        if shape.num_elements() != self.num_elements() {
            return Err(Error::invalid_argument(format!(
                "Input to reshape is a tensor with {} values, but the requested shape has {}",
                self.num_elements(),
                shape.num_elements()
            )));
        }
        Ok(Tensor {
            shape,
            data: self.data.clone(),
        })
    }

    /// Consuming [`Tensor::reshape`].
    pub fn with_shape(self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        Tensor::new(shape, self.data)
    }

    /// True if both tensors share one buffer.
    pub fn shares_buffer_with(&self, other: &Tensor) -> bool {
        self.data.same_buffer(&other.data)
    }

    /// True if no other handle shares the buffer.
    pub fn is_unique(&mut self) -> bool {
        self.data.is_unique()
    }

    fn dtype_mismatch(&self, want: DType) -> Error {
        Error::invalid_argument(format!("expected a {want} tensor, got {}", self.dtype()))
    }

    /// Reads an integer tensor (int32 or int64) as `i64`s: how shapes, axes
    /// and indices arrive.
    pub fn to_i64_vec(&self) -> Result<Vec<i64>> {
        match &self.data {
            Data::I32(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            Data::I64(v) => Ok(v.to_vec()),
            Data::I16(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            Data::I8(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            Data::U8(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            Data::U16(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            Data::U32(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            // Values above i64::MAX keep their bits (two's complement).
            Data::U64(v) => Ok(v.iter().map(|&x| x as i64).collect()),
            _ => Err(Error::invalid_argument(format!(
                "expected an int32 or int64 tensor, got {}",
                self.dtype()
            ))),
        }
    }

    /// Reads a numeric tensor as `f64`s.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        match &self.data {
            Data::F32(v) => Ok(v.iter().map(|&x| x as f64).collect()),
            Data::F64(v) => Ok(v.to_vec()),
            Data::F16(v) => Ok(v.iter().map(|x| x.to_f64()).collect()),
            Data::BF16(v) => Ok(v.iter().map(|x| x.to_f64()).collect()),
            Data::U64(v) => Ok(v.iter().map(|&x| x as f64).collect()),
            Data::Bool(v) => Ok(v.iter().map(|&x| x as u8 as f64).collect()),
            Data::Str(_) => Err(Error::invalid_argument(
                "expected a numeric tensor, got string",
            )),
            Data::C64(_) | Data::C128(_) => Err(Error::invalid_argument(format!(
                "expected a real numeric tensor, got {}",
                self.dtype()
            ))),
            _ => Ok(self.to_i64_vec()?.into_iter().map(|x| x as f64).collect()),
        }
    }

    /// The single value of a one-element integer tensor.
    pub fn scalar_i64(&self) -> Result<i64> {
        let v = self.to_i64_vec()?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(Error::invalid_argument(format!(
                "expected a scalar, got a tensor of shape {}",
                self.shape
            ))),
        }
    }

    /// The text of a scalar string tensor (bytes that are not UTF-8 replaced); `what` names the
    /// tensor in the error for anything else.
    pub fn scalar_string(&self, what: &str) -> Result<String> {
        match (self.rank(), self.as_slice::<Vec<u8>>()) {
            (0, Ok([s])) => Ok(String::from_utf8_lossy(s).into_owned()),
            _ => Err(Error::invalid_argument(format!(
                "{what} must be a scalar string, got a {} tensor of shape {}",
                self.dtype(),
                self.shape
            ))),
        }
    }

    /// The single value of a one-element numeric tensor.
    pub fn scalar_f64(&self) -> Result<f64> {
        let v = self.to_f64_vec()?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(Error::invalid_argument(format!(
                "expected a scalar, got a tensor of shape {}",
                self.shape
            ))),
        }
    }

    /// The single value of a one-element bool tensor.
    pub fn scalar_bool(&self) -> Result<bool> {
        match self.as_slice::<bool>()? {
            [x] => Ok(*x),
            _ => Err(Error::invalid_argument(format!(
                "expected a scalar bool, got a tensor of shape {}",
                self.shape
            ))),
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor<{}, {}>", self.dtype(), self.shape)?;
        if self.num_elements() <= 16 {
            match &self.data {
                Data::Str(v) => write!(
                    f,
                    "{:?}",
                    v.iter()
                        .map(|s| String::from_utf8_lossy(s))
                        .collect::<Vec<_>>()
                )?,
                Data::Bool(v) => write!(f, "{:?}", v)?,
                Data::C64(v) => write!(f, "{:?}", v)?,
                Data::C128(v) => write!(f, "{:?}", v)?,
                _ => write!(f, "{:?}", self.to_f64_vec().unwrap_or_default())?,
            }
        }
        Ok(())
    }
}

/// The most bytes one tensor may take: physical memory plus swap (on Linux;
/// elsewhere, half the address space). Nothing larger could ever be filled.
fn memory_limit() -> u128 {
    static LIMIT: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `sysinfo` only writes the struct it is given.
            let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
            if unsafe { libc::sysinfo(&mut info) } == 0 {
                let unit = u128::from(info.mem_unit.max(1));
                let total = (info.totalram as u128 + info.totalswap as u128) * unit;
                if total > 0 {
                    return total;
                }
            }
        }
        (isize::MAX as u128) / 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn huge_allocations_are_typed_errors() {
        let e = Tensor::check_allocation("Fill", DType::Float32, &[100000, 100000, 100000])
            .unwrap_err();
        assert_eq!(e.code(), Some(Code::ResourceExhausted));
        assert!(e.message().starts_with(
            "OOM when allocating tensor with shape[100000,100000,100000] and type float on"
        ));
        assert!(e.message().contains("Fill needs 4000000000000000 bytes"));
        // More than 2**63 - 1 elements is an invalid shape, as in TF.
        let e = Tensor::check_allocation("Tile", DType::Int8, &[1 << 40, 1 << 40]).unwrap_err();
        assert_eq!(e.code(), Some(Code::InvalidArgument));
        assert!(e
            .message()
            .contains("would have more than 2**63 - 1 elements"));
        // Byte counts past usize (2**62 doubles) are out of memory, not a panic.
        let e = Tensor::check_allocation("Range", DType::Float64, &[1 << 62]).unwrap_err();
        assert_eq!(e.code(), Some(Code::ResourceExhausted));
        assert!(Tensor::check_allocation("Fill", DType::String, &[3, 0, 1 << 60]).is_ok());
        assert!(Tensor::try_zeros("Fill", DType::Int32, [2, 3]).is_ok());
        // A negative dimension is named.
        let e = Shape::from_i64(&[2, -3]).unwrap_err();
        assert_eq!(
            e.message(),
            "Dimension -3 must be >= 0 (dimension 1 of the shape [2,-3])"
        );
    }

    #[test]
    fn copy_on_write() {
        let mut a = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
        let b = a.clone();
        assert!(a.shares_buffer_with(&b));
        a.make_mut::<f32>().unwrap()[0] = 5.0;
        assert!(!a.shares_buffer_with(&b));
        assert_eq!(b.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
        assert_eq!(a.as_slice::<f32>().unwrap(), &[5.0, 2.0]);
        // Unique now: writing again does not copy.
        let before = a.as_slice::<f32>().unwrap().as_ptr();
        a.make_mut::<f32>().unwrap()[1] = 7.0;
        assert_eq!(a.as_slice::<f32>().unwrap().as_ptr(), before);
    }

    #[test]
    fn reshape_shares_and_checks() {
        let a = Tensor::from_vec([2, 3], vec![0i32; 6]).unwrap();
        let b = a.reshape([3, 2]).unwrap();
        assert!(a.shares_buffer_with(&b));
        assert!(a.reshape([4]).is_err());
        assert!(Tensor::from_vec([2], vec![1u8]).is_err());
    }

    #[test]
    fn wrong_dtype_is_an_error() {
        let a = Tensor::scalar(1.0f64);
        assert!(a.as_slice::<f32>().is_err());
        assert_eq!(a.scalar_f64().unwrap(), 1.0);
    }
}
