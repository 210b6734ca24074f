//! The update rules of TensorFlow 1's optimizers, one fused pass each.
//!
//! Every formula follows the evaluation order TensorFlow's kernels use
//! (the team's optimizer spec, `specs/optimizers.md`): parenthesised sub-expressions round in
//! the same order, scalars in brackets are formed once per step. The one
//! deliberate difference: `rsqrt` is `1/sqrt(x)` computed exactly, where
//! TensorFlow uses a hardware estimate that differs between CPU models.
//!
//! Each rule has its own module: its slot and hyper-parameter tables, the
//! TensorFlow update ops it stands for with their input layouts (`TF_OPS`,
//! which `tf_apply.rs` registers and runs), and its dense, sparse-row and
//! scalar kernels. [`Rule`] dispatches to them.

use crate::real::Real;

mod adadelta;
mod adagrad;
mod adagrad_da;
mod adam;
mod ftrl;
mod momentum;
mod proximal_adagrad;
mod proximal_sgd;
mod rmsprop;
mod sgd;

/// Which optimizer an update op runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RuleKind {
    Sgd,
    Momentum,
    Adagrad,
    AdagradDa,
    Adadelta,
    Adam,
    Ftrl,
    ProximalSgd,
    ProximalAdagrad,
    RmsProp,
}

impl RuleKind {
    /// The `rule` attr value of this rule's update ops.
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Sgd => "sgd",
            RuleKind::Momentum => "momentum",
            RuleKind::Adagrad => "adagrad",
            RuleKind::AdagradDa => "adagrad_da",
            RuleKind::Adadelta => "adadelta",
            RuleKind::Adam => "adam",
            RuleKind::Ftrl => "ftrl",
            RuleKind::ProximalSgd => "proximal_sgd",
            RuleKind::ProximalAdagrad => "proximal_adagrad",
            RuleKind::RmsProp => "rmsprop",
        }
    }

    /// The rule whose `rule` attr value is `name`.
    pub fn from_name(name: &str) -> Option<RuleKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The slot variables an update op takes after the variable, in input order, under TensorFlow's
    /// slot names (`Optimizer.get_slot(var, name)`); RMSProp adds `mg` first when centered.
    pub fn slot_names(self, centered: bool) -> &'static [&'static str] {
        match self {
            RuleKind::Sgd => sgd::SLOTS,
            RuleKind::Momentum => momentum::SLOTS,
            RuleKind::Adagrad => adagrad::SLOTS,
            RuleKind::AdagradDa => adagrad_da::SLOTS,
            RuleKind::Adadelta => adadelta::SLOTS,
            RuleKind::Adam => adam::SLOTS,
            RuleKind::Ftrl => ftrl::SLOTS,
            RuleKind::ProximalSgd => proximal_sgd::SLOTS,
            RuleKind::ProximalAdagrad => proximal_adagrad::SLOTS,
            RuleKind::RmsProp if centered => rmsprop::CENTERED_SLOTS,
            RuleKind::RmsProp => rmsprop::SLOTS,
        }
    }

    /// Slots per variable (RMSProp: 3 when centered).
    pub fn slots(self, centered: bool) -> usize {
        self.slot_names(centered).len()
    }

    /// Every rule, in declaration order.
    pub const ALL: [RuleKind; 10] = [
        RuleKind::Sgd,
        RuleKind::Momentum,
        RuleKind::Adagrad,
        RuleKind::AdagradDa,
        RuleKind::Adadelta,
        RuleKind::Adam,
        RuleKind::Ftrl,
        RuleKind::ProximalSgd,
        RuleKind::ProximalAdagrad,
        RuleKind::RmsProp,
    ];

    /// Scalar hyper-parameter inputs, in op input order.
    pub fn hyper_names(self) -> &'static [&'static str] {
        match self {
            RuleKind::Sgd => sgd::HYPERS,
            RuleKind::Momentum => momentum::HYPERS,
            RuleKind::Adagrad => adagrad::HYPERS,
            RuleKind::AdagradDa => adagrad_da::HYPERS,
            RuleKind::Adadelta => adadelta::HYPERS,
            RuleKind::Adam => adam::HYPERS,
            RuleKind::Ftrl => ftrl::HYPERS,
            RuleKind::ProximalSgd => proximal_sgd::HYPERS,
            RuleKind::ProximalAdagrad => proximal_adagrad::HYPERS,
            RuleKind::RmsProp => rmsprop::HYPERS,
        }
    }

    /// TensorFlow's update ops that run this rule (`ApplyAdam`,
    /// `SparseApplyMomentum`, ...) and how each lays out its inputs.
    pub(crate) fn tf_ops(self) -> &'static [TfApply] {
        match self {
            RuleKind::Sgd => sgd::TF_OPS,
            RuleKind::Momentum => momentum::TF_OPS,
            RuleKind::Adagrad => adagrad::TF_OPS,
            RuleKind::AdagradDa => adagrad_da::TF_OPS,
            RuleKind::Adadelta => adadelta::TF_OPS,
            RuleKind::Adam => adam::TF_OPS,
            RuleKind::Ftrl => ftrl::TF_OPS,
            RuleKind::ProximalSgd => proximal_sgd::TF_OPS,
            RuleKind::ProximalAdagrad => proximal_adagrad::TF_OPS,
            RuleKind::RmsProp => rmsprop::TF_OPS,
        }
    }

    /// Sparse updates sum duplicate indices first (all but plain SGD).
    pub fn dedups(self) -> bool {
        self != RuleKind::Sgd
    }
}

/// Where one of TensorFlow's update ops takes one of the rule's
/// hyper-parameters.
#[derive(Copy, Clone, Debug)]
pub(crate) enum TfHyper {
    /// Input `i` of the TensorFlow op.
    At(usize),
    /// The op has no such input; the rule gets zero (`ApplyFtrl` has no
    /// l2 shrinkage).
    Zero,
}

/// How one of TensorFlow's update ops maps its inputs onto the rule it
/// runs (each rule module lists its own in `TF_OPS`).
pub(crate) struct TfApply {
    pub op: &'static str,
    pub centered: bool,
    pub shrinkage: bool,
    /// TensorFlow's input names, in order: the variable and its slots
    /// first (the references), then the rest.
    pub inputs: &'static [&'static str],
    pub grad: usize,
    /// The row indices of a sparse update's gradient (`None`: dense).
    pub indices: Option<usize>,
    /// The rule's hyper-parameters in [`RuleKind::hyper_names`] order.
    pub hypers: &'static [TfHyper],
}

/// Flags that change a rule's formula.
#[derive(Copy, Clone, Debug, Default)]
pub struct RuleOptions {
    pub nesterov: bool,
    pub centered: bool,
    /// Ftrl with l2 shrinkage (TensorFlow's `ApplyFtrlV2`).
    pub shrinkage: bool,
}

/// A rule with its hyper-parameters resolved in the variable's dtype.
#[derive(Copy, Clone, Debug)]
pub struct Rule<T: Real> {
    pub kind: RuleKind,
    pub opts: RuleOptions,
    /// Hyper-parameters in `kind.hyper_names()` order, as `T` (the graph
    /// already cast them, as TensorFlow does).
    pub h: [T; 6],
    /// AdagradDA's `t = global_step + 1`.
    pub t: i64,
}

impl<T: Real> Rule<T> {
    /// Dense update of one contiguous run.
    #[inline(always)]
    pub fn dense(&self, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
        match self.kind {
            RuleKind::Sgd => sgd::dense(self, var, slots, g),
            RuleKind::Momentum => momentum::dense(self, var, slots, g),
            RuleKind::Adagrad => adagrad::dense(self, var, slots, g),
            RuleKind::AdagradDa => adagrad_da::dense(self, var, slots, g),
            RuleKind::Adadelta => adadelta::dense(self, var, slots, g),
            RuleKind::Adam => adam::dense(self, var, slots, g),
            RuleKind::Ftrl => ftrl::dense(self, var, slots, g),
            RuleKind::ProximalSgd => proximal_sgd::dense(self, var, slots, g),
            RuleKind::ProximalAdagrad => proximal_adagrad::dense(self, var, slots, g),
            RuleKind::RmsProp => rmsprop::dense(self, var, slots, g),
        }
    }

    /// `(alpha, 1 - beta1, 1 - beta2, epsilon)` of Adam, formed once per step.
    #[inline(always)]
    pub fn adam_scalars(&self) -> (T, T, T, T) {
        let h = &self.h;
        let (p1, p2, lr, b1, b2, eps) = (h[0], h[1], h[2], h[3], h[4], h[5]);
        let one = T::one();
        let alpha = lr.mul(one.sub(p2).sqrt()).div(one.sub(p1));
        (alpha, one.sub(b1), one.sub(b2), eps)
    }

    /// Sparse update of one row (rows longer than one element, and rules
    /// without a scalar path). `g` is the summed gradient of the row.
    #[inline(always)]
    pub fn row(&self, var: &mut [T], slots: &mut [&mut [T]], g: &[T]) {
        match self.kind {
            RuleKind::Momentum => momentum::row(self, var, slots, g),
            RuleKind::Adagrad => adagrad::row(self, var, slots, g),
            RuleKind::AdagradDa => adagrad_da::row(self, var, slots, g),
            RuleKind::Ftrl => ftrl::row(self, var, slots, g),
            RuleKind::RmsProp => rmsprop::row(self, var, slots, g),
            // Adadelta, ProximalSgd and ProximalAdagrad rows use the dense
            // formula; Sgd and Adam sparse updates do not come through here.
            _ => self.dense(var, slots, g),
        }
    }

    /// True if rows of one element take TensorFlow's separate scalar path.
    pub fn has_scalar_path(&self) -> bool {
        matches!(
            self.kind,
            RuleKind::Adagrad
                | RuleKind::AdagradDa
                | RuleKind::Ftrl
                | RuleKind::ProximalSgd
                | RuleKind::ProximalAdagrad
        )
    }

    /// Sparse update of a one-element row (the scalar path).
    #[inline(always)]
    pub fn scalar(&self, v: &mut T, slots: &mut [&mut T], g: T) {
        match self.kind {
            RuleKind::Adagrad => adagrad::scalar(self, v, slots, g),
            RuleKind::AdagradDa => adagrad_da::scalar(self, v, slots, g),
            RuleKind::Ftrl => ftrl::scalar(self, v, slots, g),
            RuleKind::ProximalSgd => proximal_sgd::scalar(self, v, slots, g),
            RuleKind::ProximalAdagrad => proximal_adagrad::scalar(self, v, slots, g),
            _ => {
                let mut one = [*v];
                let mut slot_vals: Vec<T> = slots.iter().map(|s| **s).collect();
                {
                    let mut refs: Vec<&mut [T]> =
                        slot_vals.iter_mut().map(std::slice::from_mut).collect();
                    self.row(&mut one, &mut refs, &[g]);
                }
                *v = one[0];
                for (s, val) in slots.iter_mut().zip(slot_vals) {
                    **s = val;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RuleKind, TfHyper};
    use std::collections::HashSet;

    /// Each rule module's TensorFlow ops agree with its slot and hyper-parameter tables: the
    /// variable and its slots lead, and every other input is the gradient, its indices or exactly
    /// one of the rule's hyper-parameters.
    #[test]
    fn tf_ops_agree_with_their_rule() {
        let mut names = HashSet::new();
        for kind in RuleKind::ALL {
            assert!(!kind.tf_ops().is_empty(), "{}", kind.name());
            for op in kind.tf_ops() {
                assert!(names.insert(op.op), "{} listed twice", op.op);
                assert_eq!(op.inputs[0], "var", "{}", op.op);
                assert_eq!(op.hypers.len(), kind.hyper_names().len(), "{}", op.op);
                let refs = 1 + kind.slots(op.centered);
                let mut taken: Vec<usize> = (0..refs).chain([op.grad]).collect();
                taken.extend(op.indices);
                taken.extend(op.hypers.iter().filter_map(|h| match *h {
                    TfHyper::At(i) => Some(i),
                    TfHyper::Zero => None,
                }));
                taken.sort_unstable();
                let all: Vec<usize> = (0..op.inputs.len()).collect();
                assert_eq!(taken, all, "{}", op.op);
                if let Some(i) = op.indices {
                    assert_eq!(op.inputs[i], "indices", "{}", op.op);
                }
            }
        }
        assert_eq!(names.len(), 22);
    }
}
