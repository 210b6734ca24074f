//! TensorFlow's own per-variable update ops (`ApplyAdam`, `ApplyMomentum`,
//! ...), so that a graph TensorFlow wrote with a training op in it imports
//! and trains. Each runs the same fused rule as `ApplyFused`, for one
//! variable, and outputs the variable's reference as TensorFlow's does.

use crate::ops::{check_hyper, update_one_variable, LockOrder};
use crate::rules::{RuleKind, RuleOptions};
use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo};
use ferroflow_runtime::{factory, KernelFactory, OpContext, Value};
use ferroflow_tensor::{Error, Result, Shape, Tensor};
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
        hypers: &[At(1)],
    },
    TfApply {
        op: "ApplyProximalGradientDescent",
        kind: RuleKind::ProximalSgd,
        centered: false,
        shrinkage: false,
        inputs: &["var", "alpha", "l1", "l2", "delta"],
        grad: 4,
        hypers: &[At(1), At(2), At(3)],
    },
    TfApply {
        op: "ApplyMomentum",
        kind: RuleKind::Momentum,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad", "momentum"],
        grad: 3,
        hypers: &[At(2), At(4)],
    },
    TfApply {
        op: "ApplyAdagrad",
        kind: RuleKind::Adagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "grad"],
        grad: 3,
        hypers: &[At(2)],
    },
    TfApply {
        op: "ApplyProximalAdagrad",
        kind: RuleKind::ProximalAdagrad,
        centered: false,
        shrinkage: false,
        inputs: &["var", "accum", "lr", "l1", "l2", "grad"],
        grad: 5,
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
        hypers: &[At(4), At(5), At(6), At(7)],
    },
];

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
            return Err(Error::type_error(format!(
                "'{}': input '{}' must be {dtype}, got {}",
                ctx.name,
                spec.inputs[i],
                ctx.dtype(i)
            )));
        }
        if !var.is_compatible_with(ctx.shape(i)) {
            return Err(ctx.shape_error(format!(
                "var and {} do not have the same shape {var} {}",
                spec.inputs[i],
                ctx.shape(i)
            )));
        }
    }
    for (name, hyper) in spec.kind.hyper_names().iter().zip(spec.hypers) {
        if let At(i) = *hyper {
            check_hyper(ctx, i, name, dtype)?;
        }
    }
    Ok(vec![OutputInfo::reference(dtype, var.clone())])
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
                    return Err(Error::unimplemented(format!(
                        "{}: use_nesterov=True is not supported",
                        spec.op
                    )));
                }
                if !a.bool_or("update_slots", true)? {
                    return Err(Error::unimplemented(format!(
                        "{}: update_slots=False is not supported",
                        spec.op
                    )));
                }
                if a.bool_or("multiply_linear_by_lr", false)? {
                    return Err(Error::unimplemented(format!(
                        "{}: multiply_linear_by_lr=True is not supported",
                        spec.op
                    )));
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
                    // `ApplyFused`'s layout for one variable: references,
                    // gradient, hyper-parameters.
                    let mut values = Vec::with_capacity(2 + s + spec.hypers.len());
                    for i in 0..=s {
                        values.push(Value::Ref(ctx.input_ref(i)?.clone()));
                    }
                    values.push(Value::Tensor(ctx.input(spec.grad)?.clone()));
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
                    update_one_variable(&mut fused, dtype, spec.kind, opts, s, &lock_order)?;
                    ctx.output_ref(var);
                    Ok(())
                }) as Box<dyn ferroflow_runtime::Kernel>)
            });
            (spec.op, f)
        })
        .collect()
}
