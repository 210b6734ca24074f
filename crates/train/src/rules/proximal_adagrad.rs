//! Adagrad followed by the l1/l2 proximal step.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["accumulator"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "l1", "l2"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyProximalAdagrad",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "l1", "l2", "grad"],
        grad: 5,
        indices: None,
        hypers: &[At(2), At(3), At(4)],
    },
    TfApply {
        op: "SparseApplyProximalAdagrad",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "l1", "l2", "grad", "indices"],
        grad: 5,
        indices: Some(6),
        hypers: &[At(2), At(3), At(4)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let zero = T::zero();
    let [acc] = slots else { unreachable!() };
    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
        *a = a.add(g.mul(g));
        let e = lr.mul(a.rsqrt());
        let prox = v.sub(g.mul(e));
        let den = T::one().add(l2.mul(e));
        *v = if l1 > zero {
            prox.sign()
                .mul(prox.abs().sub(e.mul(l1)).max(zero))
                .div(den)
        } else {
            prox.div(den)
        };
    }
}

/// Sparse update of a one-element row (TensorFlow's scalar path).
#[inline(always)]
pub(super) fn scalar<T: Real>(r: &Rule<T>, v: &mut T, slots: &mut [&mut T], g: T) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let [a] = slots else { unreachable!() };
    **a = a.add(g.mul(g));
    let e = lr.div(a.sqrt());
    let prox = v.sub(e.mul(g));
    let d = 1.0 + l2.mul(e).to_f64();
    *v = if l1 > T::zero() {
        T::from_f64(
            prox.sign()
                .mul(prox.abs().sub(e.mul(l1)).max(T::zero()))
                .to_f64()
                / d,
        )
    } else {
        T::from_f64(prox.to_f64() / d)
    };
}
