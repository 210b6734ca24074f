//! Adagrad dual averaging with l1/l2 regularization (`t = global_step + 1`).

use super::{Rule, TfApply, TfHyper::At};
use crate::real::Real;

/// The slot variables, in update-op input order (TensorFlow's slot names).
pub(super) const SLOTS: &[&str] = &["gradient_accumulator", "gradient_squared_accumulator"];
/// The scalar hyper-parameter inputs, in op input order.
pub(super) const HYPERS: &[&str] = &["lr", "l1", "l2", "global_step"];

/// TensorFlow's update ops that run this rule, and where each takes the
/// rule's inputs.
pub(super) const TF_OPS: &[TfApply] = &[
    TfApply {
        op: "ApplyAdagradDA",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var",
            "gradient_accumulator",
            "gradient_squared_accumulator",
            "grad",
            "lr",
            "l1",
            "l2",
            "global_step",
        ],
        grad: 3,
        indices: None,
        hypers: &[At(4), At(5), At(6), At(7)],
    },
    TfApply {
        op: "SparseApplyAdagradDA",
        centered: false,
        shrinkage: false,
        inputs: &[
            "var",
            "gradient_accumulator",
            "gradient_squared_accumulator",
            "grad",
            "indices",
            "lr",
            "l1",
            "l2",
            "global_step",
        ],
        grad: 3,
        indices: Some(4),
        hypers: &[At(5), At(6), At(7), At(8)],
    },
];

/// Dense update of one contiguous run.
#[inline(always)]
pub(super) fn dense<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let tf = T::from_f64(r.t as f32 as f64);
    let tlr = tf.mul(lr);
    let tl1 = tf.mul(l1);
    let neg_lr = lr.mul(T::from_f64(-1.0));
    let [ga, gg] = slots else { unreachable!() };
    let zero = T::zero();
    for (((v, a), s), &g) in var.iter_mut().zip(ga.iter_mut()).zip(gg.iter_mut()).zip(g) {
        *a = a.add(g);
        *s = s.add(g.mul(g));
        let den = l2.mul(tlr).add(s.sqrt());
        *v = if l1 > zero {
            neg_lr
                .mul(a.sign())
                .mul(a.abs().sub(tl1).max(zero))
                .div(den)
        } else {
            lr.mul(*a).mul(T::from_f64(-1.0)).div(den)
        };
    }
}

/// Sparse update of one row (`g` is the row's summed gradient).
#[inline(always)]
pub(super) fn row<T: Real>(r: &Rule<T>, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
    let h = &r.h;
    let (lr, l1, l2) = (h[0], h[1], h[2]);
    let tt = T::from_f64(r.t as f64);
    let s = tt.mul(lr);
    let zero = T::zero();
    let minus_one = T::from_f64(-1.0);
    let [ga, gg] = slots else { unreachable!() };
    for (((v, a), sq), &g) in var.iter_mut().zip(ga.iter_mut()).zip(gg.iter_mut()).zip(g) {
        *a = a.add(g);
        *sq = sq.add(g.mul(g));
        let den = l2.add(sq.sqrt().div(s));
        *v = if l1 > zero {
            minus_one
                .mul(a.sign())
                .mul(a.abs().div(tt).sub(l1).max(zero))
                .div(den)
        } else {
            minus_one.mul(a.div(tt)).div(den)
        };
    }
}

/// Sparse update of a one-element row (TensorFlow's scalar path).
#[inline(always)]
pub(super) fn scalar<T: Real>(r: &Rule<T>, v: &mut T, slots: &mut [&mut T], g: T) {
    let h = &r.h;
    // TensorFlow computes this path in double, even for float32.
    let (lr, l1, l2) = (h[0].to_f64(), h[1].to_f64(), h[2].to_f64());
    let t = r.t as f64;
    let [ga, gg] = slots else { unreachable!() };
    let gd = g.to_f64();
    **ga = T::from_f64(ga.to_f64() + gd);
    **gg = T::from_f64(gg.to_f64() + gd * gd);
    let q = gg.sqrt().to_f64();
    let a = (t * l2) * lr;
    let nga = ga.neg();
    *v = if h[1] > T::zero() {
        let m = (ga.abs().to_f64() - t * l1).max(0.0);
        T::from_f64(((nga.sign().to_f64() * lr) * m) / (a + q))
    } else {
        T::from_f64((nga.to_f64() * lr) / (a + q))
    };
}
