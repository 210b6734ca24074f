//! Plain gradient descent: `var -= lr * grad`.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &[];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs. (A sparse gradient TensorFlow applies with `ScatterSub`.)
pub(super) const TF_OPS: &[TfApply] = &[TfApply {
    op: "ApplyGradientDescent",
    centered: false,
    shrinkage: false,
    inputs: &["var", "alpha", "delta"],
    grad: 2,
    indices: None,
    hypers: &[At(1)],
}];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], _slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let lr = h[0];
    for (v, &g) in var.iter_mut().zip(g) {
        *v = v.sub(g.mul(lr));
    }
}
