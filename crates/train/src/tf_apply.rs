//! TensorFlow's own per-variable update ops (`ApplyAdam`, `ApplyMomentum`,
//! ..., and the sparse `SparseApplyAdagrad`, `SparseApplyMomentum`, ...),
//! so that a graph TensorFlow wrote with a training op in it imports and
//! trains. Each runs the same fused rule as `ApplyFused` (or, for the sparse
//! ones, `SparseApplyFused`) for one variable, and outputs the variable's
//! reference as TensorFlow's does.
//!
//! TensorFlow's sparse optimizers sum the rows of duplicate indices in the
//! graph (`Unique` and `UnsortedSegmentSum`) before the update op; fed
//! duplicate indices directly, these ops sum them as well, where
//! TensorFlow's kernels would apply them one after another.

use crate::ops::{check_hyper, update_one_sparse, update_one_variable, LockOrder};
use crate::rules::{RuleKind, RuleOptions};
use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext, Value};
use ferroflow_tensor::{bail, DType, Result, Shape, Tensor};
use parking_lot::Mutex;

/// Where one of the rule's hyper-parameters comes from.
#[derive(Copy, Clone)]
enum Hyper {
    /// Input `i` of the TensorFlow op.
    At(usize),
    /// The op has no such input; the rule gets zero (`ApplyFtrl` has no
    /// l2 shrinkage).
    Zero,
}

/// How a TensorFlow update op's inputs map onto a fused rule.
struct TfApply {
    op: &'static str,
    kind: RuleKind,
    centered: bool,
    shrinkage: bool,
    /// TensorFlow's input names, in order: the variable and its slots
    /// first (the references), then the rest.
    inputs: &'static [&'static str],
    grad: usize,
    /// The row indices of a sparse update's gradient (`None`: dense).
    indices: Option<usize>,
    /// The rule's hyper-parameters in [`RuleKind::hyper_names`] order.
    hypers: &'static [Hyper],
}

use Hyper::{At, Zero};

const TF_APPLY: &[TfApply] = &[
    TfApply {
        op: "ApplyGradientDescent",
        kind: RuleKind::Sgd,
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "delta"],
        grad: 2,
        indices: None,
        hypers: &[At(1)],
    },
    TfApply {
        op: "ApplyProximalGradientDescent",
        kind: RuleKind::ProximalSgd,
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "l1", "l2", "delta"],
        grad: 4,
        indices: None,
        hypers: &[At(1), At(2), At(3)],
    },
    TfApply {
        op: "ApplyMomentum",
        kind: RuleKind::Momentum,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "momentum"],
        grad: 3,
        indices: None,
        hypers: &[At(2), At(4)],
    },
    TfApply {
        op: "ApplyAdagrad",
        kind: RuleKind::Adagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad"],
        grad: 3,
        indices: None,
        hypers: &[At(2)],
    },
    TfApply {
        op: "ApplyProximalAdagrad",
        kind: RuleKind::ProximalAdagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "l1", "l2", "grad"],
        grad: 5,
        indices: None,
        hypers: &[At(2), At(3), At(4)],
    },
    TfApply {
        op: "ApplyAdagradDA",
        kind: RuleKind::AdagradDa,
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
        op: "ApplyAdadelta",
        kind: RuleKind::Adadelta,
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
        op: "ApplyAdam",
        kind: RuleKind::Adam,
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
    },
    TfApply {
        op: "ApplyFtrl",
        kind: RuleKind::Ftrl,
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
        kind: RuleKind::Ftrl,
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
        op: "ApplyRMSProp",
        kind: RuleKind::RmsProp,
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
        kind: RuleKind::RmsProp,
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
        op: "SparseApplyProximalGradientDescent",
        kind: RuleKind::ProximalSgd,
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "l1", "l2", "grad", "indices"],
        grad: 4,
        indices: Some(5),
        hypers: &[At(1), At(2), At(3)],
    },
    TfApply {
        op: "SparseApplyMomentum",
        kind: RuleKind::Momentum,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "indices", "momentum"],
        grad: 3,
        indices: Some(4),
        hypers: &[At(2), At(5)],
    },
    TfApply {
        op: "SparseApplyAdagrad",
        kind: RuleKind::Adagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "indices"],
        grad: 3,
        indices: Some(4),
        hypers: &[At(2)],
    },
    TfApply {
        op: "SparseApplyProximalAdagrad",
        kind: RuleKind::ProximalAdagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "l1", "l2", "grad", "indices"],
        grad: 5,
        indices: Some(6),
        hypers: &[At(2), At(3), At(4)],
    },
    TfApply {
        op: "SparseApplyAdagradDA",
        kind: RuleKind::AdagradDa,
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
    TfApply {
        op: "SparseApplyAdadelta",
        kind: RuleKind::Adadelta,
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
    TfApply {
        op: "SparseApplyFtrl",
        kind: RuleKind::Ftrl,
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
        kind: RuleKind::Ftrl,
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
    TfApply {
        op: "SparseApplyRMSProp",
        kind: RuleKind::RmsProp,
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
        kind: RuleKind::RmsProp,
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

/// TensorFlow's update ops and how each maps onto a fused rule.
pub fn tf_update_ops() -> Vec<TfUpdateOp> {
    TF_APPLY
        .iter()
        .map(|s| TfUpdateOp {
            op: s.op,
            rule: s.kind.name(),
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

fn spec(op: &str) -> &'static TfApply {
    TF_APPLY
        .iter()
        .find(|s| s.op == op)
        .expect("only registered for the ops in TF_APPLY")
}

impl TfApply {
    fn slots(&self) -> usize {
        self.kind.slots(self.centered)
    }
}

fn infer(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    // (The graph has checked the number of inputs against `spec.inputs`.)
    let spec = spec(ctx.def.name);
    let dtype = ctx.dtype(0);
    let var = ctx.shape(0);
    for i in (1..=spec.slots()).chain([spec.grad]) {
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
    for (name, hyper) in spec.kind.hyper_names().iter().zip(spec.hypers) {
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
    TF_APPLY
        .iter()
        .map(|s| OpDef::new(s.op, s.inputs, infer).refs(REFS[s.slots()]))
        .collect()
}

/// The kernels of TensorFlow's update ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    TF_APPLY
        .iter()
        .map(|spec| {
            let f = factory(move |init| {
                let a = &init.node.attrs;
                let nesterov = a.bool_or("use_nesterov", false)?;
                if nesterov && spec.kind != RuleKind::Momentum {
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
                    let s = spec.slots();
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
                    for (name, hyper) in spec.kind.hyper_names().iter().zip(spec.hypers) {
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
                        update_one_sparse(&mut fused, dtype, spec.kind, opts, s)?;
                    } else {
                        update_one_variable(&mut fused, dtype, spec.kind, opts, s, &lock_order)?;
                    }
                    ctx.output_ref(var);
                    Ok(())
                }) as Box<dyn ferroflow_runtime::Kernel>)
            });
            (spec.op, f)
        })
        .collect()
}
