//! Gradient descent followed by the l1/l2 proximal step.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &[];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "l1", "l2"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyProximalGradientDescent",
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "l1", "l2", "delta"],
        grad: 4,
        indices: None,
        hypers: &[At(1), At(2), At(3)],
    },
    TfApply {
        op: "SparseApplyProximalGradientDescent",
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "l1", "l2", "grad", "indices"],
        grad: 4,
        indices: Some(5),
        hypers: &[At(1), At(2), At(3)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], _slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let lr_l1 = lr.mul(l1);
    let den = T::one().add(l2.mul(lr));
    let zero = T::zero();
    for (v, &g) in var.iter_mut().zip(g) {
        let prox = v.sub(g.mul(lr));
        *v = if l1 > zero {
            prox.sign().mul(prox.abs().sub(lr_l1).max(zero)).div(den)
        } else {
            prox.div(den)
        };
    }
}

/// Sparse update of a one-element row (TensorFlow's scalar path).
#[inline(always)]
pub(super) fn scalar<T: Real>(r: &Rule<T>, v: &mut T, _slots: &mut [&mut T], g: T) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let prox = v.sub(lr.mul(g));
    let d = 1.0 + l2.mul(lr).to_f64();
    *v = if l1 > T::zero() {
        T::from_f64(
            prox.sign()
                .mul(prox.abs().sub(lr.mul(l1)).max(T::zero()))
                .to_f64()
                / d,
        )
    } else {
        T::from_f64(prox.to_f64() / d)
    };
}
