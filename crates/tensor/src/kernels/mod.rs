//! CPU kernels over [`Tensor`](crate::Tensor)s, one module per family.

pub mod array;
pub mod array_extra;
pub mod batch_norm;
pub mod bitcast;
pub mod broadcast;
pub mod conv;
pub mod conv3d;
pub mod ctc;
pub mod depthwise;
pub mod einsum;
pub mod elementwise;
pub mod fast_math;
pub mod fractional_pool;
pub mod grad;
pub mod linalg;
pub mod lrn;
pub mod matmul;
pub mod matrix_diag;
pub mod morphology;
pub mod nn;
pub mod parallel;
pub mod pool_argmax;
pub mod random;
pub mod reduce;
pub mod scalar;
pub mod segment;
