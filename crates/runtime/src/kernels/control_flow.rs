//! Kernels of the control-flow ops: `If`, `Case`, `While`, their
//! gradients (`IfGrad`, `CaseGrad`, `WhileGrad`) and function calls.
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
//!
//! `If` is the two-branch `Case` (then = branch 0): both run through
//! [`Branches`], and their gradients through [`BranchGrads`].
//!
//! A gradient function that recomputes forward values re-runs the
//! forward body's reads of `clear_after_read` TensorArrays, which already
//! ran; while one runs, [`replaying`] is set on the thread running the
//! plan (plans run their steps, nested calls included, on one thread) and
//! those reads are not counted.

use super::boxed;
use super::scalar_loop::{ScalarFunction, ScalarLoop};
use crate::kernel::{factory, Kernel, KernelFactory, KernelInit, LoopHistory, OpContext, Value};
use crate::plan::Plan;
use ferroflow_graph::{AttrValue, AttrsExt};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use std::cell::Cell;
use std::sync::Arc;

thread_local! {
    static REPLAYING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the running plan is a gradient function re-running forward
/// ops (list reads then do not count as reads, see the list kernels).
pub(crate) fn replaying() -> bool {
    REPLAYING.with(Cell::get)
}

/// Runs `f` with [`replaying`] set when `on` (restored afterwards, also on error).
pub(crate) fn replay<T>(on: bool, f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            REPLAYING.with(|r| r.set(self.0));
        }
    }
    if !on {
        return f();
    }
    let _restore = Restore(REPLAYING.with(|r| r.replace(true)));
    f()
}

/// Whether the node calls gradient functions (attribute `_gradient`, set
/// by autodiff on the `If` and call ops it builds).
fn is_gradient(init: &KernelInit<'_>) -> Result<bool> {
    init.node.attrs.bool_or("_gradient", false)
}

/// The function names of list attribute `attr` (`""` entries stay).
fn names(init: &KernelInit<'_>, attr: &str) -> Result<Vec<String>> {
    match init.node.attrs.get(attr) {
        Some(AttrValue::StrList(v)) => Ok(v
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()),
        Some(AttrValue::IntList(v)) if v.is_empty() => Ok(Vec::new()),
        _ => Err(Error::invalid_argument(format!(
            "node '{}' ({}) needs attribute '{attr}': a list of function names",
            init.node.name, init.node.op
        ))),
    }
}

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

/// The branches of an `If` (then, else) or a `Case`, and what a gradient
/// asked each to keep.
struct Branches {
    plans: Vec<Plan>,
    /// The node has a history output (index `num_outputs`), read by its
    /// gradient (`IfGrad`, `CaseGrad`): what the taken branch kept.
    history: Option<usize>,
    /// Per branch, the saving variant its gradient asked for.
    saving: Vec<Option<(String, Plan)>>,
    /// The branches are gradient functions (see [`replaying`]).
    replay: bool,
}

impl Branches {
    /// Runs branch `k` on the node's inputs from `first` on.
    fn run(&self, ctx: &mut OpContext<'_>, k: usize, first: usize) -> Result<()> {
        let args: Vec<Value> = (first..ctx.num_inputs())
            .map(|i| ctx.take_value(i))
            .collect();
        let plan = &self.plans[k];
        let Some(num_outputs) = self.history else {
            let out = replay(self.replay, || plan.run_function(ctx.session, args))?;
            return output_all(ctx, out);
        };
        let mut history = LoopHistory::default();
        let out = match self.saving[k]
            .as_ref()
            .filter(|_| ctx.output_wanted(num_outputs))
        {
            Some((name, saving_plan)) => {
                let mut out = replay(self.replay, || saving_plan.run_function(ctx.session, args))?;
                history.saved.push(out.split_off(num_outputs));
                history.saved_by.clone_from(name);
                out
            }
            None => replay(self.replay, || plan.run_function(ctx.session, args))?,
        };
        output_all(ctx, out)?;
        ctx.output_value(Value::History(Arc::new(history)));
        Ok(())
    }

    /// A branch that dequeues makes the op wait too.
    fn may_block(&self) -> bool {
        self.plans.iter().any(Plan::may_block)
    }
}

struct If {
    branches: Branches,
}

impl Kernel for If {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let k = if truth(ctx.input(0)?)? { 0 } else { 1 };
        self.branches.run(ctx, k, 1)
    }

    fn wants_output_mask(&self) -> bool {
        self.branches.history.is_some()
    }

    fn may_block(&self) -> bool {
        self.branches.may_block()
    }
}

/// `Case` (and `StatelessCase`): runs branch `branch_index`; an index out
/// of range runs the last branch, as in TensorFlow.
struct Case {
    branches: Branches,
}

/// The branch a `Case` takes for index input 0.
fn case_branch(ctx: &OpContext<'_>, count: usize) -> Result<usize> {
    let index = ctx.input(0)?;
    ensure!(
        index.rank() == 0,
        invalid_argument,
        "branch_index must be a scalar, but it has shape {} (node {})",
        index.shape(),
        ctx.node
    );
    let i = index.scalar_i64()?;
    Ok(usize::try_from(i)
        .ok()
        .filter(|&k| k < count)
        .unwrap_or(count - 1))
}

impl Kernel for Case {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let k = case_branch(ctx, self.branches.plans.len())?;
        self.branches.run(ctx, k, 1)
    }

    fn wants_output_mask(&self) -> bool {
        self.branches.history.is_some()
    }

    fn may_block(&self) -> bool {
        self.branches.may_block()
    }
}

/// The gradients of the branches of an `If` or a `Case` that kept what its
/// taken branch's gradient reads: runs that branch's gradient function on
/// the saved values, or the recomputing one when nothing was saved.
struct BranchGrads {
    grads: Vec<Plan>,
    /// Per branch: the gradient taking saved values, and the saving
    /// variant of the forward branch that saves them.
    saved: Vec<Option<(Plan, String)>>,
}

impl BranchGrads {
    /// Runs branch `k`'s gradient on inputs `1..` (the last is the
    /// forward op's history).
    fn run(&self, ctx: &mut OpContext<'_>, k: usize) -> Result<()> {
        let last = ctx.num_inputs() - 1;
        let history = match ctx.take_value(last) {
            Value::History(h) => h,
            _ => {
                bail!(internal, "{} expects the forward op's history", ctx.node)
            }
        };
        let mut args: Vec<Value> = (1..last).map(|i| ctx.take_value(i)).collect();
        let out = match self.saved[k]
            .as_ref()
            .filter(|(_, by)| *by == history.saved_by && history.saved.len() == 1)
        {
            Some((saved_plan, _)) => {
                args.extend(history.saved[0].iter().cloned());
                replay(true, || saved_plan.run_function(ctx.session, args))?
            }
            None => replay(true, || self.grads[k].run_function(ctx.session, args))?,
        };
        output_all(ctx, out)
    }
}

struct IfGrad {
    grads: BranchGrads,
}

impl Kernel for IfGrad {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let k = if truth(ctx.input(0)?)? { 0 } else { 1 };
        self.grads.run(ctx, k)
    }
}

struct CaseGrad {
    grads: BranchGrads,
}

impl Kernel for CaseGrad {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let k = case_branch(ctx, self.grads.grads.len())?;
        self.grads.run(ctx, k)
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
    /// The condition and body as register code, when they compute on
    /// scalars only (see [`ScalarLoop`]).
    scalar: Option<ScalarLoop>,
    /// The condition alone as register code, when it computes on scalars
    /// (a counter against a bound) but the body does not.
    scalar_cond: Option<ScalarFunction>,
}

impl While {
    /// Outputs the final loop variables, and the history when the node
    /// has history outputs.
    fn finish(
        &self,
        ctx: &mut OpContext<'_>,
        vars: Vec<Value>,
        history: LoopHistory,
    ) -> Result<()> {
        let n = vars.len();
        output_all(ctx, vars)?;
        if self.history {
            let h = Arc::new(history);
            for _ in 0..n {
                ctx.output_value(Value::History(h.clone()));
            }
        }
        Ok(())
    }
}

impl Kernel for While {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let n = ctx.num_inputs();
        let mut vars: Vec<Value> = (0..n).map(|i| ctx.take_value(i)).collect();
        let record: Vec<bool> = (0..n)
            .map(|i| self.history && ctx.output_wanted(n + i))
            .collect();
        let recording = record.iter().any(|&r| r);
        if let Some(scalar) = self.scalar.as_ref().filter(|_| !recording) {
            match scalar.run(vars) {
                Ok(result) => {
                    let history = LoopHistory {
                        columns: vec![Vec::new(); n],
                        ..LoopHistory::default()
                    };
                    return self.finish(ctx, result?, history);
                }
                Err(not_scalars) => vars = not_scalars,
            }
        }
        let saving = self.saving.as_ref().filter(|_| recording);
        let mut history = LoopHistory {
            columns: vec![Vec::new(); n],
            ..LoopHistory::default()
        };
        let mut cond_registers = Vec::new();
        loop {
            let go = match self
                .scalar_cond
                .as_ref()
                .and_then(|c| c.truth(&vars, &mut cond_registers))
            {
                Some(go) => go?,
                None => {
                    let pred = self.cond.run_function(ctx.session, vars.clone())?;
                    let pred = pred
                        .into_iter()
                        .next()
                        .ok_or_else(|| {
                            Error::internal("a while loop's condition returned nothing")
                        })?
                        .into_tensor()?;
                    truth(&pred)?
                }
            };
            if !go {
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
        if let Some((name, _)) = saving {
            history.saved_by.clone_from(name);
        }
        self.finish(ctx, vars, history)
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
            _ => bail!(internal, "WhileGrad expects loop histories"),
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
            grads = replay(true, || match saved {
                Some((plan, _)) => {
                    args.extend(history.saved[k].iter().cloned());
                    plan.run_function(ctx.session, args)
                }
                None => self.body_grad.run_function(ctx.session, args),
            })?;
        }
        output_all(ctx, grads)
    }
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
    /// The function is a gradient function (see [`replaying`]).
    replay: bool,
}

impl Kernel for Call {
    fn compute(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let args: Vec<Value> = (0..ctx.num_inputs()).map(|i| ctx.take_value(i)).collect();
        let out = replay(self.replay, || self.plan.run_function(ctx.session, args))?;
        output_all(ctx, out)
    }

    fn may_block(&self) -> bool {
        self.plan.may_block()
    }
}

fn call_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (_, plan) = compile(init, "f")?;
    Ok(Box::new(Call {
        plan,
        replay: is_gradient(init)?,
    }))
}

/// The branches named `branch_names`, with the saving variant of branch
/// `k` that the gradient node `grad_op` reading the history output asked
/// for (`saving_of(grad node, k)`, `""` or None for none).
fn branches(
    init: &KernelInit<'_>,
    branch_names: &[String],
    num_outputs: usize,
    grad_op: &str,
    saving_of: impl Fn(&ferroflow_graph::Node, usize) -> Option<String>,
) -> Result<Branches> {
    let plans = branch_names
        .iter()
        .map(|name| Ok(compile_named(init, name)?.1))
        .collect::<Result<Vec<_>>>()?;
    let history = init
        .node
        .attrs
        .bool_or("_history", false)?
        .then_some(num_outputs);
    let grad = gradient_reading(init, grad_op, num_outputs);
    let saving = (0..branch_names.len())
        .map(|k| match grad.and_then(|g| saving_of(g, k)) {
            Some(name) if !name.is_empty() => {
                let (_, plan) = compile_named(init, &name)?;
                Ok(Some((name, plan)))
            }
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Branches {
        plans,
        history,
        saving,
        replay: is_gradient(init)?,
    })
}

fn if_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let names = [
        init.node.attrs.string("then_branch")?,
        init.node.attrs.string("else_branch")?,
    ];
    let num_outputs = init.node.attrs.dtypes("Tout")?.len();
    let branches = branches(init, &names, num_outputs, "IfGrad", |g, k| {
        let attr = if k == 0 { "then_saving" } else { "else_saving" };
        g.attrs.string(attr).ok()
    })?;
    Ok(Box::new(If { branches }))
}

fn case_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let names = names(init, "branches")?;
    if names.is_empty() {
        bail!(
            invalid_argument,
            "Case node '{}' has no branches",
            init.node.name
        );
    }
    let num_outputs = init.node.attrs.dtypes("Tout")?.len();
    let branches = branches(init, &names, num_outputs, "CaseGrad", |g, k| {
        match g.attrs.get("branch_savings") {
            Some(AttrValue::StrList(v)) => {
                v.get(k).map(|s| String::from_utf8_lossy(s).into_owned())
            }
            _ => None,
        }
    })?;
    Ok(Box::new(Case { branches }))
}

/// The gradient functions `grads[k]`, and `grads_saved[k]` (the gradient
/// from saved values, `""` for none) paired with `savings[k]` (the saving
/// branch that keeps them).
fn branch_grads(
    init: &KernelInit<'_>,
    grads: &[String],
    grads_saved: &[String],
    savings: &[String],
) -> Result<BranchGrads> {
    let plans = grads
        .iter()
        .map(|name| Ok(compile_named(init, name)?.1))
        .collect::<Result<Vec<_>>>()?;
    let saved = (0..grads.len())
        .map(|k| match (grads_saved.get(k), savings.get(k)) {
            (Some(g), Some(s)) if !g.is_empty() && !s.is_empty() => {
                Ok(Some((compile_named(init, g)?.1, s.clone())))
            }
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(BranchGrads {
        grads: plans,
        saved,
    })
}

fn if_grad_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let a = &init.node.attrs;
    let opt = |key: &str| a.str_or(key, "");
    let grads = [a.string("then_grad")?, a.string("else_grad")?];
    let saved = [opt("then_grad_saved")?, opt("else_grad_saved")?];
    let savings = [opt("then_saving")?, opt("else_saving")?];
    Ok(Box::new(IfGrad {
        grads: branch_grads(init, &grads, &saved, &savings)?,
    }))
}

fn case_grad_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let grads = names(init, "branch_grads")?;
    let saved = names(init, "branch_grads_saved")?;
    let savings = names(init, "branch_savings")?;
    Ok(Box::new(CaseGrad {
        grads: branch_grads(init, &grads, &saved, &savings)?,
    }))
}

fn while_kernel(init: &KernelInit<'_>) -> Result<Box<dyn Kernel>> {
    let (cond_fn, cond) = compile(init, "cond")?;
    let (body_fn, body) = compile(init, "body")?;
    // A gradient of this loop may ask it to keep the values the backward
    // body reads (see autodiff's `saving_functions`).
    let n = init.node.inputs.len();
    let grad = gradient_reading(init, "WhileGrad", n);
    let saving = compile_saving(init, grad, "saving_body")?;
    let scalar = ScalarLoop::compile(&cond_fn, &body_fn);
    let scalar_cond = match scalar {
        Some(_) => None,
        None => ScalarFunction::compile(&cond_fn),
    };
    Ok(Box::new(While {
        cond,
        body,
        history: init.node.attrs.bool_or("_history", false)?,
        saving,
        scalar,
        scalar_cond,
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
    reg("Case", factory(case_kernel));
    reg("StatelessCase", factory(case_kernel));
    reg("CaseGrad", factory(case_grad_kernel));
    reg("While", factory(while_kernel));
    reg("WhileGrad", factory(while_grad_kernel));
    reg("IfGrad", factory(if_grad_kernel));
    reg("PartitionedCall", factory(call_kernel));
    reg("StatefulPartitionedCall", factory(call_kernel));
}
