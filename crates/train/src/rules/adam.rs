//! Adam with TensorFlow 1's epsilon-hat: the bias corrections fold into `alpha`.

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["m", "v"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &[
    "beta1_power",
    "beta2_power",
    "lr",
    "beta1",
    "beta2",
    "epsilon",
];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs. (TensorFlow has no sparse Adam op: its optimizer writes the
/// sparse update out in scatter ops.)
pub(super) const TF_OPS: &[TfApply] = &[TfApply {
    op: "ApplyAdam",
    centered: false,
    shrinkage: false,
    inputs: &[
        "var",
        "m",
        "v",
        "beta1_power",
        "beta2_power",
        "lr",
        "beta1",
        "beta2",
        "epsilon",
        "grad",
    ],
    grad: 9,
    indices: None,
    hypers: &[At(3), At(4), At(5), At(6), At(7), At(8)],
}];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let (alpha, b1c, b2c, eps) = r.adam_scalars();
    let [m, s] = slots else { unreachable!() };
    for (((v, m), s), &g) in var.iter_mut().zip(m.iter_mut()).zip(s.iter_mut()).zip(g) {
        *m = m.add(g.sub(*m).mul(b1c));
        *s = s.add(g.mul(g).sub(*s).mul(b2c));
        *v = v.sub(m.mul(alpha).div(s.sqrt().add(eps)));
    }
}
