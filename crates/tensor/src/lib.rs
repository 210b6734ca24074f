//! ferroflow's runtime values and the kernels that compute on them.
//!
//! * [`DType`] — element types, numbered like TensorFlow's `DataType`.
//! * [`Shape`] — fully known runtime shapes.
//! * [`Tensor`] — a shape plus a shared, copy-on-write buffer.
//! * [`kernels`] — the CPU math: elementwise ops with broadcasting,
//!   reductions, matmul, data movement, softmax/cross-entropy, random.
//! * [`Error`] — the one error type, carrying TensorFlow's status codes.
//! * [`alloc::BufferCache`] — a global allocator that reuses large buffers.
//! * [`team`] — the caller plus spinning helpers, running kernels' parallel parts.

pub mod alloc;
pub mod denormal;
mod dtype;
mod error;
pub mod kernels;
pub mod prefetch;
mod shape;
pub mod team;
mod tensor;

pub use dtype::DType;
pub use error::{Code, Error, Result};
pub use half::{bf16, f16};
pub use num_complex::{self, Complex32, Complex64};
pub use shape::{broadcast_shapes, normalize_axis, Shape};
pub use tensor::{Data, Element, Tensor};
