//! Adagrad: `accum += grad^2; var -= lr * grad / sqrt(accum)`.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["accumulator"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyAdagrad",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad"],
        grad: 3,
        indices: None,
        hypers: &[At(2)],
    },
    TfApply {
        op: "SparseApplyAdagrad",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "indices"],
        grad: 3,
        indices: Some(4),
        hypers: &[At(2)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let lr = h[0];
    let [acc] = slots else { unreachable!() };
    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
        *a = a.add(g.mul(g));
        *v = v.sub(g.mul(lr).mul(a.rsqrt()));
    }
}

/// Sparse update of one row (`g` is the row's summed gradient).
#[inline(always)]
pub(super) fn row<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let lr = h[0];
    let [acc] = slots else { unreachable!() };
    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
        *a = a.add(g.mul(g));
        *v = v.sub(lr.mul(g).mul(a.rsqrt()));
    }
}

/// Sparse update of a one-element row (TensorFlow's scalar path).
#[inline(always)]
pub(super) fn scalar<T: Real>(r: &Rule<T>, v: &mut T, slots: &mut [&mut T], g: T) {
    let h = &r.h;
    let lr = h[0];
    let [a] = slots else { unreachable!() };
    **a = a.add(g.mul(g));
    *v = v.sub(lr.mul(g).div(a.sqrt()));
}
