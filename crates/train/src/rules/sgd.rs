//! Plain gradient descent: `var -= lr * grad`.

use super::Rule;
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &[];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr"];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], _slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let lr = h[0];
    for (v, &g) in var.iter_mut().zip(g) {
        *v = v.sub(g.mul(lr));
    }
}
