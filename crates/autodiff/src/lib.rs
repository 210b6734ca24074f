//! ferroflow's automatic differentiation: symbolic, on the graph, like TF1.
//!
//! [`gradients`] adds the nodes that compute `d(sum ys)/d xs` to the graph
//! and returns their outputs. Each op type's gradient is a function
//! registered in Rust ([`register_gradient`]); the gradient of a `gather`
//! (an embedding lookup) is sparse, an [`Grad::Sparse`] (TF's
//! `IndexedSlices`), and stays sparse through aggregation.

mod gradients;
mod grads;
mod registry;

pub use ferroflow_graph::Builder;
pub use gradients::{
    gradients, to_dense, ExternalGrad, GradientRun, Options, Step, Unconnected,
    GRADIENT_OP_TYPE_ATTR,
};
pub use registry::{lookup, not_differentiable, register_gradient, GradEntry, GradFn};

use ferroflow_graph::Output;

/// A gradient: a dense tensor, or rows of a tensor (`IndexedSlices`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grad {
    Dense(Output),
    /// `values[i]` is the gradient of row `indices[i]` of a tensor of shape
    /// `dense_shape`; repeated indices add up.
    Sparse {
        values: Output,
        indices: Output,
        dense_shape: Output,
    },
}
