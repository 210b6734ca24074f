//! RMSProp with momentum, optionally centered (an `mg` slot first).

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["rms", "momentum"];
/// The slots when centered.
pub(super) const CENTERED_SLOTS: &[&str] = &["mg", "rms", "momentum"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "rho", "momentum", "epsilon"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyRMSProp",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
        ],
        grad: 7,
        indices: None,
        hypers: &[At(3), At(4), At(5), At(6)],
    },
    TfApply {
        op: "ApplyCenteredRMSProp",
        centered: true,
        shrinkage: false,
        inputs: &[
            "var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
        ],
        grad: 8,
        indices: None,
        hypers: &[At(4), At(5), At(6), At(7)],
    },
    TfApply {
        op: "SparseApplyRMSProp",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices",
        ],
        grad: 7,
        indices: Some(8),
        hypers: &[At(3), At(4), At(5), At(6)],
    },
    TfApply {
        op: "SparseApplyCenteredRMSProp",
        centered: true,
        shrinkage: false,
        inputs: &[
            "var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices",
        ],
        grad: 8,
        indices: Some(9),
        hypers: &[At(4), At(5), At(6), At(7)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, rho, mu, eps) = (h[0], h[1], h[2], h[3]);
    let k = T::one().sub(rho);
    if r.opts.centered {
        let [mg, ms, mom] = slots else { unreachable!() };
        for ((((v, mg), ms), mom), &g) in var
            .iter_mut()
            .zip(mg.iter_mut())
            .zip(ms.iter_mut())
            .zip(mom.iter_mut())
            .zip(g)
        {
            *ms = ms.add(g.mul(g).sub(*ms).mul(k));
            *mg = mg.add(g.sub(*mg).mul(k));
            let den = ms.sub(mg.mul(*mg)).add(eps);
            *mom = mom.mul(mu).add(g.mul(lr).div(den.sqrt()));
            *v = v.sub(*mom);
        }
    } else {
        let [ms, mom] = slots else { unreachable!() };
        for (((v, ms), mom), &g) in var.iter_mut().zip(ms.iter_mut()).zip(mom.iter_mut()).zip(g) {
            *ms = ms.add(g.mul(g).sub(*ms).mul(k));
            let den = ms.add(eps);
            *mom = mom.mul(mu).add(g.mul(lr).div(den.sqrt()));
            *v = v.sub(*mom);
        }
    }
}

/// Sparse update of one row (`g` is the row's summed gradient).
#[inline(always)]
pub(super) fn row<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, rho, mu, eps) = (h[0], h[1], h[2], h[3]);
    let k = T::one().sub(rho);
    if r.opts.centered {
        let [mg, ms, mom] = slots else { unreachable!() };
        for ((((v, mg), ms), mom), &g) in var
            .iter_mut()
            .zip(mg.iter_mut())
            .zip(ms.iter_mut())
            .zip(mom.iter_mut())
            .zip(g)
        {
            *ms = ms.mul(rho).add(g.mul(g).mul(k));
            *mg = mg.mul(rho).add(g.mul(k));
            let den = ms.add(eps).sub(mg.mul(*mg));
            *mom = mom.mul(mu).add(den.rsqrt().mul(lr).mul(g));
            *v = v.sub(*mom);
        }
    } else {
        let [ms, mom] = slots else { unreachable!() };
        for (((v, ms), mom), &g) in var.iter_mut().zip(ms.iter_mut()).zip(mom.iter_mut()).zip(g) {
            *ms = ms.mul(rho).add(g.mul(g).mul(k));
            let den = ms.add(eps);
            *mom = mom.mul(mu).add(den.rsqrt().mul(lr).mul(g));
            *v = v.sub(*mom);
        }
    }
}
