//! CPU kernels over [`Tensor`](crate::Tensor)s, one module per family.

pub mod array;
pub mod batch_norm;
pub mod bitcast;
pub mod broadcast;
pub mod conv;
pub mod depthwise;
pub mod elementwise;
pub mod fast_math;
pub mod grad;
pub mod lrn;
pub mod matmul;
pub mod nn;
pub mod parallel;
pub mod pool_argmax;
pub mod random;
pub mod reduce;
pub mod scalar;
