//! Kernels of the control-flow ops: `If`, `While` and `WhileGrad`.
//!
//! Design: control flow is functional. A branch or loop body is a
//! [`Function`] of the graph's library, compiled into its own [`Plan`] once,
//! when the plan holding the op is compiled; each branch taken or iteration
//! run is one call of that plan, with no graph lookups, frames or tags. This
//! keeps the executor a straight-line runner (TF1's Switch/Merge/Enter/Exit
//! dataflow would need a dynamic scheduler with per-iteration frames) and
//! makes an iteration cost one plan call: a few hundred nanoseconds plus its
//! kernels. Iterations run one after another, so results never depend on
//! `parallel_iterations` or the thread count.
//!
//! Gradients: a `While` whose gradient is taken records each iteration's
//! loop variables (its history outputs, lists of the tensors themselves:
//! no copies, and shapes may vary); `WhileGrad` walks the history
//! backwards, calling the body's gradient function, which recomputes the
//! body's forward values from the recorded variables.

use super::boxed;
use crate::kernel::{factory, Kernel, KernelFactory, KernelInit, OpContext, Value};
use crate::plan::Plan;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::{DType, Error, Result, Tensor};
use std::sync::Arc;

/// Compiles the function named by attribute `attr` of the node.
fn compile(init: &KernelInit<'_>, attr: &str) -> Result<(Arc<ferroflow_graph::Function>, Plan)> {
    let name = init.node.attrs.string(attr)?;
    let f = init.graph.function(&name)?.clone();
    let plan = Plan::compile(
        &f.graph,
        init.session,
        &f.args,
        &f.outputs,
        &f.control_outputs,
    )
    .map_err(|e| annotate(e, &format!("function '{name}'")))?;
    Ok((f, plan))
}

fn annotate(e: Error, place: &str) -> Error {
    match e {
        Error::Op {
            code,
            message,
            node,
        } => Error::Op {
            code,
            message: format!("{message} (in {place})"),
            node,
        },
        other => other,
    }
}

/// TensorFlow's truth value of a predicate: a bool scalar as it is, a
/// number scalar when nonzero, any other tensor when it is not empty.
fn truth(t: &Tensor) -> Result<bool> {
    if t.rank() != 0 {
        return Ok(t.num_elements() > 0);
    }
    match t.dtype() {
        DType::Bool => t.scalar_bool(),
        DType::String => Ok(true),
        _ => Ok(
            ferroflow_tensor::kernels::elementwise::cast(t, DType::Float64)?.as_slice::<f64>()?[0]
                != 0.0,
        ),
    }
}

/// Pushes function results as the op's outputs, reading variable references.
fn output_all(ctx: &mut OpContext<'_>, values: Vec<Value>) -> Result<()> {
    for v in values {
        ctx.output_value(v.deref_variable()?);
    }
    Ok(())
}

struct If {
    then_plan: Plan,
    else_plan: Plan,
}

impl Kernel for If {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let pred = truth(ctx.input(0)?)?;
        let args: Vec<Value> = (1..ctx.num_inputs()).map(|i| ctx.take_value(i)).collect();
        let plan = if pred {
            &self.then_plan
        } else {
            &self.else_plan
        };
        let out = plan.run_function(ctx.session, args)?;
        output_all(ctx, out)
    }
}

struct While {
    cond: Plan,
    body: Plan,
    /// Whether the node has history outputs (read by its gradient).
    history: bool,
}

impl Kernel for While {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let n = ctx.num_inputs();
        let mut vars: Vec<Value> = (0..n).map(|i| ctx.take_value(i)).collect();
        let record: Vec<bool> = (0..n)
            .map(|i| self.history && ctx.output_wanted(n + i))
            .collect();
        let recording = record.iter().any(|&r| r);
        let mut history: Vec<Vec<Value>> = vec![Vec::new(); if recording { n } else { 0 }];
        loop {
            let pred = self.cond.run_function(ctx.session, vars.clone())?;
            let pred = pred
                .into_iter()
                .next()
                .ok_or_else(|| Error::internal("a while loop's condition returned nothing"))?
                .into_tensor()?;
            if !truth(&pred)? {
                break;
            }
            if recording {
                for (i, v) in vars.iter().enumerate() {
                    if record[i] {
                        history[i].push(match v {
                            Value::Ref(var) => Value::Tensor(var.read()?),
                            other => other.clone(),
                        });
                    }
                }
            }
            vars = self.body.run_function(ctx.session, vars)?;
        }
        output_all(ctx, vars)?;
        if self.history {
            history.resize(n, Vec::new());
            for h in history {
                ctx.output_value(Value::History(Arc::new(h)));
            }
        }
        Ok(())
    }

    fn wants_output_mask(&self) -> bool {
        self.history
    }
}

struct WhileGrad {
    body_grad: Plan,
    /// Loop variables whose per-iteration values come from the history
    /// (the others are fed the loop's input on every iteration).
    from_history: Vec<bool>,
}

impl Kernel for WhileGrad {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let n = ctx.num_inputs() / 3;
        let mut per_iteration: Vec<Option<Arc<Vec<Value>>>> = Vec::with_capacity(n);
        let mut iterations = 0;
        for i in 0..n {
            if !self.from_history[i] {
                per_iteration.push(None);
            } else {
                let h = match ctx.take_value(n + i) {
                    Value::History(h) => h,
                    _ => return Err(Error::internal("WhileGrad expects loop histories")),
                };
                iterations = h.len();
                per_iteration.push(Some(h));
            }
        }
        let forward: Vec<Value> = (0..n).map(|i| ctx.take_value(i)).collect();
        let mut grads: Vec<Value> = (0..n).map(|i| ctx.take_value(2 * n + i)).collect();
        for k in (0..iterations).rev() {
            let mut args: Vec<Value> = Vec::with_capacity(2 * n);
            for i in 0..n {
                args.push(match &per_iteration[i] {
                    Some(h) => h[k].clone(),
                    None => forward[i].clone(),
                });
            }
            args.extend(grads);
            grads = self.body_grad.run_function(ctx.session, args)?;
        }
        output_all(ctx, grads)
    }
}

fn if_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, then_plan) = compile(init, "then_branch")?;
    let (_, else_plan) = compile(init, "else_branch")?;
    Ok(Box::new(If {
        then_plan,
        else_plan,
    }))
}

fn while_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, cond) = compile(init, "cond")?;
    let (_, body) = compile(init, "body")?;
    Ok(Box::new(While {
        cond,
        body,
        history: init.node.attrs.bool_or("_history", false)?,
    }))
}

fn while_grad_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, body_grad) = compile(init, "body_grad")?;
    Ok(Box::new(WhileGrad {
        body_grad,
        from_history: init.node.attrs.bools("from_history")?,
    }))
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "_Arg",
        factory(|init| {
            let msg = format!(
                "function argument '{}' was not passed a value",
                init.node.name
            );
            boxed(move |_| Err(Error::internal(msg.clone())))
        }),
    );
    reg("If", factory(if_kernel));
    reg("While", factory(while_kernel));
    reg("WhileGrad", factory(while_grad_kernel));
}
