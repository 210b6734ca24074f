//! Adadelta: step sizes from running averages of squared gradients and updates.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["accum", "accum_update"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "rho", "epsilon"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyAdadelta",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var",
            "accum",
            "accum_update",
            "lr",
            "rho",
            "epsilon",
            "grad",
        ],
        grad: 6,
        indices: None,
        hypers: &[At(3), At(4), At(5)],
    },
    TfApply {
        op: "SparseApplyAdadelta",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var",
            "accum",
            "accum_update",
            "lr",
            "rho",
            "epsilon",
            "grad",
            "indices",
        ],
        grad: 6,
        indices: Some(7),
        hypers: &[At(3), At(4), At(5)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, rho, eps) = (h[0], h[1], h[2]);
    let k = T::one().sub(rho);
    let [acc, au] = slots else { unreachable!() };
    for (((v, a), u_acc), &g) in var.iter_mut().zip(acc.iter_mut()).zip(au.iter_mut()).zip(g) {
        *a = a.mul(rho).add(g.mul(g).mul(k));
        let u = u_acc.add(eps).sqrt().mul(a.add(eps).rsqrt()).mul(g);
        *v = v.sub(u.mul(lr));
        *u_acc = u_acc.mul(rho).add(u.mul(u).mul(k));
    }
}
