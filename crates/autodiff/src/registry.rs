//! Gradient functions, registered per op type.

use crate::Builder;
use crate::Grad;
use ferroflow_graph::{Node, Output};
use ferroflow_tensor::Result;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Computes the gradients of one node's inputs from the gradients of its
/// outputs. `grads[i]` is the gradient of output `i` (None if nothing
/// downstream depends on it). Returns one entry per input (None: no gradient).
pub type GradFn = fn(&mut Builder<'_>, &Node, &[Option<Output>]) -> Result<Vec<Option<Grad>>>;

/// How an op type takes part in differentiation.
#[derive(Clone, Copy)]
pub enum GradEntry {
    /// Differentiated by this function.
    Func(GradFn),
    /// Its inputs never receive gradient (comparisons, shapes, random numbers).
    NotDifferentiable,
}

static REGISTRY: LazyLock<RwLock<HashMap<&'static str, GradEntry>>> = LazyLock::new(|| {
    let mut m = HashMap::new();
    crate::grads::register_all(&mut |op: &'static str, e: GradEntry| {
        m.insert(op, e);
    });
    RwLock::new(m)
});

/// Registers (or replaces) the gradient of an op type.
pub fn register_gradient(op: &'static str, f: GradFn) {
    REGISTRY.write().insert(op, GradEntry::Func(f));
}

/// Declares that an op type has no gradient (`tf.NotDifferentiable`).
pub fn not_differentiable(op: &'static str) {
    REGISTRY.write().insert(op, GradEntry::NotDifferentiable);
}

/// The gradient entry of an op type, if any.
pub fn lookup(op: &str) -> Option<GradEntry> {
    REGISTRY.read().get(op).copied()
}
