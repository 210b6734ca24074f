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
//! Gradients: a `While` whose gradient is taken records, per iteration, the
//! loop variables its gradient reads and, when the gradient asked for it
//! (a `saving_body`), the forward values the backward body reads (gate
//! activations, say), by running a variant of the body that also returns
//! them. `WhileGrad` walks the iterations backwards calling the body's
//! gradient function; with saved values it skips recomputing the forward
//! body, otherwise it recomputes it from the recorded loop variables.
//! Records hold the tensors themselves (no copies), so shapes may vary.

use super::boxed;
use crate::kernel::{factory, Kernel, KernelFactory, KernelInit, LoopHistory, OpContext, Value};
use crate::plan::Plan;
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::{DType, Error, Result, Tensor};
use std::sync::Arc;

/// Compiles the function named by attribute `attr` of the node.
fn compile(init: &KernelInit<'_>, attr: &str) -> Result<(Arc<ferroflow_graph::Function>, Plan)> {
    compile_named(init, &init.node.attrs.string(attr)?)
}

/// Compiles function `name` of the node's graph's library.
fn compile_named(
    init: &KernelInit<'_>,
    name: &str,
) -> Result<(Arc<ferroflow_graph::Function>, Plan)> {
    let f = init.graph.function(name)?.clone();
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
    /// The node has a history output (index `num_outputs`), read by its
    /// `IfGrad`: the saving variant of each branch it asked for.
    history: Option<usize>,
    then_saving: Option<(String, Plan)>,
    else_saving: Option<(String, Plan)>,
}

impl Kernel for If {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let pred = truth(ctx.input(0)?)?;
        let args: Vec<Value> = (1..ctx.num_inputs()).map(|i| ctx.take_value(i)).collect();
        let (plan, saving) = if pred {
            (&self.then_plan, &self.then_saving)
        } else {
            (&self.else_plan, &self.else_saving)
        };
        let Some(num_outputs) = self.history else {
            let out = plan.run_function(ctx.session, args)?;
            return output_all(ctx, out);
        };
        let mut history = LoopHistory::default();
        let out = match saving.as_ref().filter(|_| ctx.output_wanted(num_outputs)) {
            Some((name, saving_plan)) => {
                let mut out = saving_plan.run_function(ctx.session, args)?;
                history.saved.push(out.split_off(num_outputs));
                history.saved_by.clone_from(name);
                out
            }
            None => plan.run_function(ctx.session, args)?,
        };
        output_all(ctx, out)?;
        ctx.output_value(Value::History(Arc::new(history)));
        Ok(())
    }

    fn wants_output_mask(&self) -> bool {
        self.history.is_some()
    }

    /// A branch that dequeues makes the `If` wait too.
    fn may_block(&self) -> bool {
        self.then_plan.may_block() || self.else_plan.may_block()
    }
}

/// The gradient of an `If` that kept what its taken branch's gradient
/// reads: runs that branch's gradient function on the saved values, or
/// the recomputing one when nothing was saved.
struct IfGrad {
    then_grad: Plan,
    else_grad: Plan,
    then_saved: Option<(Plan, String)>,
    else_saved: Option<(Plan, String)>,
}

impl Kernel for IfGrad {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let pred = truth(ctx.input(0)?)?;
        let last = ctx.num_inputs() - 1;
        let history = match ctx.take_value(last) {
            Value::History(h) => h,
            _ => return Err(Error::internal("IfGrad expects the If's history")),
        };
        let mut args: Vec<Value> = (1..last).map(|i| ctx.take_value(i)).collect();
        let (plan, saved) = if pred {
            (&self.then_grad, &self.then_saved)
        } else {
            (&self.else_grad, &self.else_saved)
        };
        let out = match saved
            .as_ref()
            .filter(|(_, by)| *by == history.saved_by && history.saved.len() == 1)
        {
            Some((saved_plan, _)) => {
                args.extend(history.saved[0].iter().cloned());
                saved_plan.run_function(ctx.session, args)?
            }
            None => plan.run_function(ctx.session, args)?,
        };
        output_all(ctx, out)
    }
}

struct While {
    cond: Plan,
    body: Plan,
    /// Whether the node has history outputs (read by its gradient).
    history: bool,
    /// The body that also returns the values its gradient reads, when a
    /// `WhileGrad` of this loop asked for one: `(name, plan)`.
    saving: Option<(String, Plan)>,
}

impl Kernel for While {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let n = ctx.num_inputs();
        let mut vars: Vec<Value> = (0..n).map(|i| ctx.take_value(i)).collect();
        let record: Vec<bool> = (0..n)
            .map(|i| self.history && ctx.output_wanted(n + i))
            .collect();
        let recording = record.iter().any(|&r| r);
        let saving = self.saving.as_ref().filter(|_| recording);
        let mut history = LoopHistory {
            columns: vec![Vec::new(); n],
            ..LoopHistory::default()
        };
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
                        history.columns[i].push(match v {
                            Value::Ref(var) => Value::Tensor(var.read()?),
                            other => other.clone(),
                        });
                    }
                }
            }
            match saving {
                Some((_, plan)) => {
                    let mut out = plan.run_function(ctx.session, vars)?;
                    history.saved.push(out.split_off(n));
                    vars = out;
                }
                None => vars = self.body.run_function(ctx.session, vars)?,
            }
        }
        output_all(ctx, vars)?;
        if self.history {
            if let Some((name, _)) = saving {
                history.saved_by.clone_from(name);
            }
            let h = Arc::new(history);
            for _ in 0..n {
                ctx.output_value(Value::History(h.clone()));
            }
        }
        Ok(())
    }

    fn wants_output_mask(&self) -> bool {
        self.history
    }

    /// A body that dequeues (a decoding loop reading a queue) makes the
    /// loop wait too.
    fn may_block(&self) -> bool {
        self.cond.may_block() || self.body.may_block()
    }
}

struct WhileGrad {
    body_grad: Plan,
    /// The gradient body taking the forward values the loop saved, and the
    /// name of the forward body that saves them.
    from_saved: Option<(Plan, String)>,
    /// Loop variables whose per-iteration values come from the history
    /// (the others are fed the loop's input on every iteration).
    from_history: Vec<bool>,
}

impl Kernel for WhileGrad {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let n = ctx.num_inputs() / 3;
        let first = self
            .from_history
            .iter()
            .position(|&h| h)
            .ok_or_else(|| Error::internal("WhileGrad reads no loop history"))?;
        let history = match ctx.take_value(n + first) {
            Value::History(h) => h,
            _ => return Err(Error::internal("WhileGrad expects loop histories")),
        };
        let iterations = history.columns[first].len();
        let saved = self
            .from_saved
            .as_ref()
            .filter(|(_, by)| *by == history.saved_by && history.saved.len() == iterations);
        let forward: Vec<Value> = (0..n).map(|i| ctx.take_value(i)).collect();
        let mut grads: Vec<Value> = (0..n).map(|i| ctx.take_value(2 * n + i)).collect();
        for k in (0..iterations).rev() {
            let mut args: Vec<Value> = Vec::with_capacity(2 * n);
            for (i, fwd) in forward.iter().enumerate() {
                args.push(if self.from_history[i] {
                    history.columns[i][k].clone()
                } else {
                    fwd.clone()
                });
            }
            args.extend(grads);
            grads = match saved {
                Some((plan, _)) => {
                    args.extend(history.saved[k].iter().cloned());
                    plan.run_function(ctx.session, args)?
                }
                None => self.body_grad.run_function(ctx.session, args)?,
            };
        }
        output_all(ctx, grads)
    }
}

/// Compiles the function named by attribute `attr` when the node has it.
fn compile_optional(init: &KernelInit<'_>, attr: &str) -> Result<Option<(String, Plan)>> {
    if !init.node.attrs.contains_key(attr) {
        return Ok(None);
    }
    let (_, plan) = compile(init, attr)?;
    Ok(Some((init.node.attrs.string(attr)?, plan)))
}

/// The gradient node (`op`) reading output `index` of this node, if any.
fn gradient_reading<'g>(
    init: &KernelInit<'g>,
    op: &str,
    from_index: usize,
) -> Option<&'g ferroflow_graph::Node> {
    let id = init.node.id;
    init.graph.nodes().iter().find(|g| {
        g.op == op
            && g.inputs
                .iter()
                .any(|o| o.node == id && o.index >= from_index)
    })
}

/// Compiles a saving variant named by attribute `attr` of `grad`.
fn compile_saving(
    init: &KernelInit<'_>,
    grad: Option<&ferroflow_graph::Node>,
    attr: &str,
) -> Result<Option<(String, Plan)>> {
    let Some(name) = grad.and_then(|g| g.attrs.string(attr).ok()) else {
        return Ok(None);
    };
    let (_, plan) = compile_named(init, &name)?;
    Ok(Some((name, plan)))
}

/// A function call: one run of the function's plan.
struct Call {
    plan: Plan,
}

impl Kernel for Call {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let args: Vec<Value> = (0..ctx.num_inputs()).map(|i| ctx.take_value(i)).collect();
        let out = self.plan.run_function(ctx.session, args)?;
        output_all(ctx, out)
    }

    fn may_block(&self) -> bool {
        self.plan.may_block()
    }
}

fn call_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, plan) = compile(init, "f")?;
    Ok(Box::new(Call { plan }))
}

fn if_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, then_plan) = compile(init, "then_branch")?;
    let (_, else_plan) = compile(init, "else_branch")?;
    let num_outputs = init.node.attrs.dtypes("Tout")?.len();
    let history = init
        .node
        .attrs
        .bool_or("_history", false)?
        .then_some(num_outputs);
    let grad = gradient_reading(init, "IfGrad", num_outputs);
    Ok(Box::new(If {
        then_plan,
        else_plan,
        history,
        then_saving: compile_saving(init, grad, "then_saving")?,
        else_saving: compile_saving(init, grad, "else_saving")?,
    }))
}

fn if_grad_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, then_grad) = compile(init, "then_grad")?;
    let (_, else_grad) = compile(init, "else_grad")?;
    let saved = |grad_attr: &str, saving_attr: &str| -> Result<Option<(Plan, String)>> {
        Ok(match compile_optional(init, grad_attr)? {
            Some((_, plan)) => Some((plan, init.node.attrs.string(saving_attr)?)),
            None => None,
        })
    };
    Ok(Box::new(IfGrad {
        then_grad,
        else_grad,
        then_saved: saved("then_grad_saved", "then_saving")?,
        else_saved: saved("else_grad_saved", "else_saving")?,
    }))
}

fn while_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, cond) = compile(init, "cond")?;
    let (_, body) = compile(init, "body")?;
    // A gradient of this loop may ask it to keep the values the backward
    // body reads (see autodiff's `saving_functions`).
    let n = init.node.inputs.len();
    let grad = gradient_reading(init, "WhileGrad", n);
    let saving = compile_saving(init, grad, "saving_body")?;
    Ok(Box::new(While {
        cond,
        body,
        history: init.node.attrs.bool_or("_history", false)?,
        saving,
    }))
}

fn while_grad_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, body_grad) = compile(init, "body_grad")?;
    let from_saved = match init.node.attrs.get("body_grad_saved") {
        Some(_) => {
            let (_, plan) = compile(init, "body_grad_saved")?;
            Some((plan, init.node.attrs.string("saving_body")?))
        }
        None => None,
    };
    Ok(Box::new(WhileGrad {
        body_grad,
        from_saved,
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
    reg("IfGrad", factory(if_grad_kernel));
    reg("PartitionedCall", factory(call_kernel));
    reg("StatefulPartitionedCall", factory(call_kernel));
}
