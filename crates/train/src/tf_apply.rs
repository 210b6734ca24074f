//! TensorFlow's own per-variable update ops (`ApplyAdam`, `ApplyMomentum`,
//! ..., and the sparse `SparseApplyAdagrad`, `SparseApplyMomentum`, ...),
//! so that a graph TensorFlow wrote with a training op in it imports and
//! trains. Each runs the same fused rule as `ApplyFused` (or, for the sparse
//! ones, `SparseApplyFused`) for one variable, and outputs the variable's
//! reference as TensorFlow's does. Which ops run which rule, and where
//! each op takes the rule's inputs, is part of the rule's own module
//! (`rules::*::TF_OPS`); this module registers and runs them.
//!
//! TensorFlow's sparse optimizers sum the rows of duplicate indices in the
//! graph (`Unique` and `UnsortedSegmentSum`) before the update op; fed
//! duplicate indices directly, these ops sum them as well, where
//! TensorFlow's kernels would apply them one after another.

use crate::ops::{check_hyper, update_one_sparse, update_one_variable, LockOrder};
use crate::rules::TfHyper::{At, Zero};
use crate::rules::{RuleKind, RuleOptions, TfApply};
use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext, Value};
use ferroflow_tensor::{bail, DType, Result, Shape, Tensor};
use parking_lot::Mutex;

/// How one of TensorFlow's update ops lays out a fused rule's inputs, for
/// writing ferroflow's fused updates as TensorFlow's ops.
#[derive(Clone, Debug)]
pub struct TfUpdateOp {
    /// The op type (`ApplyMomentum`, `SparseApplyAdagrad`, ...).
    pub op: &'static str,
    /// The fused rule's name (`RuleKind::name`).
    pub rule: &'static str,
    pub centered: bool,
    pub shrinkage: bool,
    /// Input names; the first `1 + slots` are the variable and its slots,
    /// in the order `ApplyFused` takes them.
    pub inputs: &'static [&'static str],
    pub grad: usize,
    pub indices: Option<usize>,
    /// For each of the rule's hyper-parameters (`RuleKind::hyper_names`
    /// order), its input position, or `None` if the op has no such input.
    pub hypers: Vec<Option<usize>>,
}

/// Every rule's TensorFlow update ops, with the rule each runs.
fn all() -> impl Iterator<Item = (RuleKind, &'static TfApply)> {
    RuleKind::ALL
        .into_iter()
        .flat_map(|kind| kind.tf_ops().iter().map(move |spec| (kind, spec)))
}

/// TensorFlow's update ops and how each maps onto a fused rule.
pub fn tf_update_ops() -> Vec<TfUpdateOp> {
    all()
        .map(|(kind, s)| TfUpdateOp {
            op: s.op,
            rule: kind.name(),
            centered: s.centered,
            shrinkage: s.shrinkage,
            inputs: s.inputs,
            grad: s.grad,
            indices: s.indices,
            hypers: s
                .hypers
                .iter()
                .map(|h| match *h {
                    At(i) => Some(i),
                    Zero => None,
                })
                .collect(),
        })
        .collect()
}

/// The variable and its slots: the leading references of each op.
const REFS: [&[usize]; 4] = [&[0], &[0, 1], &[0, 1, 2], &[0, 1, 2, 3]];

/// The rule and input layout of the update op `op`.
fn spec(op: &str) -> (RuleKind, &'static TfApply) {
    all()
        .find(|(_, s)| s.op == op)
        .expect("only registered for the rules' TF_OPS")
}

fn infer(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    // (The graph has checked the number of inputs against `spec.inputs`.)
    let (kind, spec) = spec(ctx.def.name);
    let dtype = ctx.dtype(0);
    let var = ctx.shape(0);
    for i in (1..=kind.slots(spec.centered)).chain([spec.grad]) {
        if ctx.dtype(i) != dtype {
            bail!(
                type_error,
                "'{}': input '{}' must be {dtype}, got {}",
                ctx.name,
                spec.inputs[i],
                ctx.dtype(i)
            );
        }
        let fits = if i == spec.grad && spec.indices.is_some() {
            rows_fit(var, ctx.shape(i))
        } else {
            var.is_compatible_with(ctx.shape(i))
        };
        if !fits {
            return Err(ctx.shape_error(format!(
                "var and {} do not have the same shape {var} {}",
                spec.inputs[i],
                ctx.shape(i)
            )));
        }
    }
    if let Some(k) = spec.indices {
        ctx.expect_dtype(k, &[DType::Int32, DType::Int64])?;
        ctx.expect_rank(k, 1)?;
        let rows = |i: usize| {
            ctx.shape(i)
                .dims()
                .and_then(|d| d.first().copied().flatten())
        };
        if let (Some(g), Some(n)) = (rows(spec.grad), rows(k)) {
            if g != n {
                return Err(ctx.shape_error(format!(
                    "grad must be the same size as indices in the first dimension: {g} vs {n}"
                )));
            }
        }
    }
    for (name, hyper) in kind.hyper_names().iter().zip(spec.hypers) {
        if let At(i) = *hyper {
            check_hyper(ctx, i, name, dtype)?;
        }
    }
    Ok(vec![OutputInfo::reference(dtype, var.clone())])
}

/// Whether gradient rows of shape `grad` (a leading row count, then one
/// row) fit a variable of shape `var`.
fn rows_fit(var: &PartialShape, grad: &PartialShape) -> bool {
    match (var.dims(), grad.dims()) {
        (Some(v), Some(g)) => {
            v.len() == g.len()
                && !v.is_empty()
                && v[1..]
                    .iter()
                    .zip(&g[1..])
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b)
        }
        _ => true,
    }
}

/// The graph-level definitions of TensorFlow's update ops.
pub fn op_defs() -> Vec<OpDef> {
    all()
        .map(|(kind, s)| OpDef::new(s.op, s.inputs, infer).refs(REFS[kind.slots(s.centered)]))
        .collect()
}

/// The kernels of TensorFlow's update ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    all()
        .map(|(kind, spec)| {
            let f = factory(move |init| {
                let a = &init.node.attrs;
                let nesterov = a.bool_or("use_nesterov", false)?;
                if nesterov && kind != RuleKind::Momentum {
                    bail!(
                        unimplemented,
                        "{}: use_nesterov=True is not supported",
                        spec.op
                    );
                }
                if !a.bool_or("update_slots", true)? {
                    bail!(
                        unimplemented,
                        "{}: update_slots=False is not supported",
                        spec.op
                    );
                }
                if a.bool_or("multiply_linear_by_lr", false)? {
                    bail!(
                        unimplemented,
                        "{}: multiply_linear_by_lr=True is not supported",
                        spec.op
                    );
                }
                let opts = RuleOptions {
                    nesterov,
                    centered: spec.centered,
                    shrinkage: spec.shrinkage,
                };
                let dtype = init.graph.output(init.node.inputs[0]).dtype;
                let lock_order = Mutex::new(LockOrder::default());
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let s = kind.slots(spec.centered);
                    // `ApplyFused`'s layout for one variable (references,
                    // gradient, hyper-parameters), or `SparseApplyFused`'s
                    // (the gradient's indices after its values).
                    let mut values = Vec::with_capacity(2 + s + spec.hypers.len());
                    for i in 0..=s {
                        values.push(Value::Ref(ctx.input_ref(i)?.clone()));
                    }
                    values.push(Value::Tensor(ctx.input(spec.grad)?.clone()));
                    if let Some(k) = spec.indices {
                        values.push(Value::Tensor(ctx.input(k)?.clone()));
                    }
                    for (name, hyper) in kind.hyper_names().iter().zip(spec.hypers) {
                        values.push(Value::Tensor(match *hyper {
                            // TensorFlow feeds the step number counting from
                            // 1 (global_step + 1); `ApplyFused` adds the 1.
                            At(i) if *name == "global_step" => {
                                Tensor::scalar(ctx.input(i)?.scalar_i64()? - 1)
                            }
                            At(i) => ctx.input(i)?.clone(),
                            Zero => Tensor::zeros(dtype, Shape::new(&[])),
                        }));
                    }
                    let var = ctx.input_ref(0)?.clone();
                    let mut fused = OpContext::new(ctx.node, ctx.session, values);
                    if spec.indices.is_some() {
                        update_one_sparse(&mut fused, dtype, kind, opts, s)?;
                    } else {
                        update_one_variable(&mut fused, dtype, kind, opts, s, &lock_order)?;
                    }
                    ctx.output_ref(var);
                    Ok(())
                }) as Box<dyn ferroflow_runtime::Kernel>)
            });
            (spec.op, f)
        })
        .collect()
}
