//! FTRL-Proximal, with optional l2 shrinkage (`ApplyFtrlV2`) and learning-rate power.

use super::{
    Rule, TfApply,
    TfHyper::{At, Zero},
};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["accum", "linear"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "l1", "l2", "l2_shrinkage", "lr_power"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyFtrl",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power",
        ],
        grad: 3,
        indices: None,
        hypers: &[At(4), At(5), At(6), Zero, At(7)],
    },
    TfApply {
        op: "ApplyFtrlV2",
        centered: false,
        shrinkage: true,
        inputs: &[
            "var",
            "accum",
            "linear",
            "grad",
            "lr",
            "l1",
            "l2",
            "l2_shrinkage",
            "lr_power",
        ],
        grad: 3,
        indices: None,
        hypers: &[At(4), At(5), At(6), At(7), At(8)],
    },
    TfApply {
        op: "SparseApplyFtrl",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var", "accum", "linear", "grad", "indices", "lr", "l1", "l2", "lr_power",
        ],
        grad: 3,
        indices: Some(4),
        hypers: &[At(5), At(6), At(7), Zero, At(8)],
    },
    TfApply {
        op: "SparseApplyFtrlV2",
        centered: false,
        shrinkage: true,
        inputs: &[
            "var",
            "accum",
            "linear",
            "grad",
            "indices",
            "lr",
            "l1",
            "l2",
            "l2_shrinkage",
            "lr_power",
        ],
        grad: 3,
        indices: Some(4),
        hypers: &[At(5), At(6), At(7), At(8), At(9)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let f = scalars(r);
    let [acc, lin] = slots else { unreachable!() };
    for (((v, a), l), &g) in var
        .iter_mut()
        .zip(acc.iter_mut())
        .zip(lin.iter_mut())
        .zip(g)
    {
        let na = a.add(g.mul(g));
        let gs = if r.opts.shrinkage {
            g.add(f.two_l2s.mul(*v))
        } else {
            g
        };
        let pna = f.p(na);
        *l = l.add(gs.sub(pna.sub(f.p(*a)).div(f.lr).mul(*v)));
        let x = f.l1.mul(l.sign()).sub(*l);
        let y = pna.div(f.lr).add(f.two_l2);
        *v = if l.abs() > f.l1 { x.div(y) } else { T::zero() };
        *a = na;
    }
}

/// Sparse update of one row (`g` is the row's summed gradient).
#[inline(always)]
pub(super) fn row<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let f = scalars(r);
    let [acc, lin] = slots else { unreachable!() };
    for (((v, a), l), &g) in var
        .iter_mut()
        .zip(acc.iter_mut())
        .zip(lin.iter_mut())
        .zip(g)
    {
        let na = a.add(g.mul(g));
        let gs = if r.opts.shrinkage {
            g.add(f.two_l2s.mul(*v))
        } else {
            g
        };
        let pna = f.p(na);
        *l = l.add(gs.sub(pna.sub(f.p(*a)).div(f.lr).mul(*v)));
        let y = pna.div(f.lr).add(f.two_l2);
        *v = l.max(f.l1.neg()).min(f.l1).sub(*l).div(y);
        *a = na;
    }
}

/// Sparse update of a one-element row (TensorFlow's scalar path).
#[inline(always)]
pub(super) fn scalar<T: Real>(r: &Rule<T>, v: &mut T, slots: &mut [&mut T], g: T) {
    let f = scalars(r);
    let [a, l] = slots else { unreachable!() };
    let p = f.lr_power.neg();
    let ge = if r.opts.shrinkage {
        g.add(f.two_l2s.mul(*v))
    } else {
        g
    };
    let na = a.add(g.mul(g));
    let sig = na.powf(p).sub(a.powf(p)).div(f.lr);
    **l = l.add(ge).sub(sig.mul(*v));
    let pna = if f.half_power { na.sqrt() } else { na.powf(p) };
    let quad = pna.div(f.lr).add(f.two_l2);
    *v = l.max(f.l1.neg()).min(f.l1).sub(**l).div(quad);
    **a = na;
}

/// FTRL's per-step scalars, formed once.
#[inline(always)]
fn scalars<T: Real>(r: &Rule<T>) -> Ftrl<T> {
    let h = &r.h;
    let two = T::from_f64(2.0);
    Ftrl {
        lr: h[0],
        l1: h[1],
        two_l2: two.mul(h[2]),
        two_l2s: two.mul(h[3]),
        lr_power: h[4],
        half_power: h[4] == T::from_f64(-0.5),
    }
}

#[derive(Copy, Clone)]
struct Ftrl<T: Real> {
    lr: T,
    l1: T,
    two_l2: T,
    two_l2s: T,
    lr_power: T,
    half_power: bool,
}

impl<T: Real> Ftrl<T> {
    /// `na^(-lr_power)`: sqrt for the default power, libm pow otherwise.
    #[inline(always)]
    fn p(&self, x: T) -> T {
        if self.half_power {
            x.sqrt()
        } else {
            x.powf(self.lr_power.neg())
        }
    }
}
