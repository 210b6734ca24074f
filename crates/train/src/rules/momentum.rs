//! Momentum, optionally Nesterov: `accum = accum * momentum + grad`.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["momentum"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "momentum"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyMomentum",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "momentum"],
        grad: 3,
        indices: None,
        hypers: &[At(2), At(4)],
    },
    TfApply {
        op: "SparseApplyMomentum",
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "indices", "momentum"],
        grad: 3,
        indices: Some(4),
        hypers: &[At(2), At(5)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, mu) = (h[0], h[1]);
    let [acc] = slots else { unreachable!() };
    if r.opts.nesterov {
        for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
            *a = a.mul(mu).add(g);
            *v = v.sub(g.mul(lr).add(a.mul(mu).mul(lr)));
        }
    } else {
        for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
            *a = a.mul(mu).add(g);
            *v = v.sub(a.mul(lr));
        }
    }
}

/// Sparse update of one row (`g` is the row's summed gradient).
#[inline(always)]
pub(super) fn row<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, mu) = (h[0], h[1]);
    let lr_mu = lr.mul(mu);
    let [acc] = slots else { unreachable!() };
    for ((v, a), &g) in var.iter_mut().zip(acc.iter_mut()).zip(g) {
        *a = a.mul(mu).add(g);
        *v = if r.opts.nesterov {
            v.sub(lr.mul(g).add(lr_mu.mul(*a)))
        } else {
            v.sub(lr.mul(*a))
        };
    }
}
