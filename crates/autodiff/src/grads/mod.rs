//! Gradient functions of the built-in ops, one module per family.

mod array;
mod math;
mod nn;

use crate::registry::GradEntry;
use crate::Grad;
use ferroflow_graph::Output;

/// Ops whose inputs never receive gradient.
const NOT_DIFFERENTIABLE: &[&str] = &[
    "Shape",
    "Size",
    "Rank",
    "ZerosLike",
    "OnesLike",
    "Range",
    "LinSpace",
    "Const",
    "Placeholder",
    "VariableV2",
    "Assign",
    "AssignAdd",
    "AssignSub",
    "ScatterUpdate",
    "ScatterAdd",
    "ScatterSub",
    "IsVariableInitialized",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "IsFinite",
    "IsInf",
    "IsNan",
    "ArgMax",
    "ArgMin",
    "RandomStandardNormal",
    "RandomUniform",
    "RandomUniformInt",
    "TruncatedNormal",
    "RandomShuffle",
    "Where",
    "OneHot",
    "FloorDiv",
    "TruncateMod",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "InTopKV2",
    "Assert",
    "NoOp",
    "BroadcastGradientArgs",
    "InvertPermutation",
    "PrintV2",
    "CheckNumerics",
];

pub(crate) fn register_all(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in NOT_DIFFERENTIABLE {
        reg(op, GradEntry::NotDifferentiable);
    }
    math::register(reg);
    array::register(reg);
    nn::register(reg);
}

/// One dense gradient.
pub(crate) fn d(o: Output) -> Option<Grad> {
    Some(Grad::Dense(o))
}
