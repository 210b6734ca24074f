//! Reverse-mode differentiation over the graph (`tf.gradients`).
//!
//! Like TensorFlow's: find the ops on paths from `xs` to `ys`, seed the
//! `ys` with `grad_ys` (ones by default), then visit those ops in TF's order
//! (breadth-first from the ys, an op once all the ops it feeds are done),
//! summing the gradients each output received and calling the op's gradient
//! function.
//! Sparse gradients (`IndexedSlices`) pass through identities untouched and
//! are summed by concatenation; anything else that needs a dense gradient
//! gets one (an `UnsortedSegmentSum`).

use crate::registry::{lookup, GradEntry};
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Graph, NodeId, Output};
use ferroflow_tensor::{DType, Error, Result};
use std::collections::{HashMap, HashSet, VecDeque};

/// What to return for an `x` that `ys` do not depend on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Unconnected {
    #[default]
    None,
    Zero,
}

/// Options of [`gradients`].
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The name scope of the new nodes (e.g. `gradients`), already unique.
    pub scope: String,
    /// Tensors treated as constants.
    pub stop_gradients: Vec<Output>,
    pub unconnected: Unconnected,
    /// Control inputs every gradient node waits for.
    pub control_inputs: Vec<NodeId>,
    /// Gradient types the caller computes ([`GradientRun`] stops at ops
    /// whose gradient type is one of them).
    pub external: HashSet<String>,
    /// TensorFlow's `gate_gradients=True` (what `Optimizer.GATE_OP` asks
    /// for): an op's input gradients, when more than one, are made available
    /// together through a `<op>_grad/tuple` of `control_dependency` identities
    /// gated on one `group_deps` no-op.
    pub gate_gradients: bool,
}

fn is_differentiable_dtype(d: DType) -> bool {
    // TensorFlow back-propagates through floating and complex tensors.
    d.is_floating() || d.is_complex()
}

/// Symbolic partial derivatives of `sum(ys)` with respect to each of `xs`.
///
/// Every op on the way must have a gradient registered in Rust; a caller
/// that can supply gradients from elsewhere (Python's `tf.RegisterGradient`)
/// drives a [`GradientRun`] instead.
pub fn gradients(
    graph: &mut Graph,
    ys: &[Output],
    xs: &[Output],
    grad_ys: &[Option<Output>],
    opts: &Options,
) -> Result<Vec<Option<Grad>>> {
    let mut run = GradientRun::new(graph, ys, xs, grad_ys, opts.clone())?;
    match run.run(graph)? {
        Step::Done(result) => Ok(result),
        Step::External(req) => Err(no_gradient(graph, req.node, &req.grad_type)),
    }
}

fn no_gradient(graph: &Graph, node: NodeId, grad_type: &str) -> Error {
    Error::Value(format!(
        "No gradient defined for operation '{}' (op type: {grad_type})",
        graph.node(node).name
    ))
}

/// Where a [`GradientRun`] stands after [`GradientRun::run`].
#[derive(Debug)]
pub enum Step {
    /// Finished: one entry per `x`.
    Done(Vec<Option<Grad>>),
    /// Waiting for the gradient of one op that the caller supplies
    /// ([`GradientRun::resume`]).
    External(ExternalGrad),
}

/// An op whose gradient comes from outside the Rust registry: its gradient
/// type (the op type, or the node's `_gradient_op_type` attr set by
/// `gradient_override_map`) is one of [`Options::external`].
#[derive(Debug, Clone)]
pub struct ExternalGrad {
    pub node: NodeId,
    pub grad_type: String,
    /// The summed gradient of each output (None where nothing flows back).
    pub out_grads: Vec<Option<Output>>,
    /// A fresh name scope (`<scope>/<op name>_grad`) for the gradient's nodes.
    pub scope: String,
}

/// The op waiting for an external gradient, and what applying it needs.
struct Waiting {
    node: ferroflow_graph::Node,
    wanted: Vec<bool>,
    first_new: NodeId,
    /// The gradient's name scope, handed to the caller.
    scope: String,
}

/// A differentiation that can stop at ops whose gradient the caller
/// computes and resume with their input gradients: `new`, then `run` until
/// it returns [`Step::Done`], calling `resume` after each
/// [`Step::External`]. Nodes are added to the graph as it goes; the graph
/// may grow between calls (the caller's gradient nodes).
pub struct GradientRun {
    xs: Vec<Output>,
    opts: Options,
    reached: Vec<bool>,
    between: Vec<bool>,
    pending_count: Vec<usize>,
    /// Gradient contributions per tensor, in the order they were made.
    pending: HashMap<Output, Vec<Grad>>,
    queue: VecDeque<NodeId>,
    stop: HashSet<Output>,
    xs_set: HashSet<Output>,
    waiting: Option<Waiting>,
}

impl GradientRun {
    /// Finds the ops between `xs` and `ys` and seeds the `ys` with `grad_ys`
    /// (ones by default, added to the graph).
    pub fn new(
        graph: &mut Graph,
        ys: &[Output],
        xs: &[Output],
        grad_ys: &[Option<Output>],
        opts: Options,
    ) -> Result<GradientRun> {
        if !grad_ys.is_empty() && grad_ys.len() != ys.len() {
            return Err(Error::value(format!(
                "Passed {} grad_ys for {} ys",
                grad_ys.len(),
                ys.len()
            )));
        }
        let n = graph.len();
        // Consumers of every node through its float outputs (TF follows only
        // trainable tensors forward from xs).
        let mut consumers: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        for node in graph.nodes() {
            for i in &node.inputs {
                if is_differentiable_dtype(graph.output(*i).dtype) {
                    consumers[i.node].push(node.id);
                }
            }
        }
        // Ops reachable forward from xs.
        let mut reached = vec![false; n];
        let mut stack: Vec<NodeId> = xs.iter().map(|x| x.node).collect();
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut reached[id], true) {
                continue;
            }
            stack.extend(consumers[id].iter().copied());
        }
        // Ops between: reached from xs and reaching ys (breadth-first from ys).
        let mut between = vec![false; n];
        let mut between_list = Vec::new();
        let mut queue: VecDeque<NodeId> = ys.iter().map(|y| y.node).collect();
        while let Some(id) = queue.pop_front() {
            if reached[id] && !between[id] {
                between[id] = true;
                between_list.push(id);
                queue.extend(graph.node(id).inputs.iter().map(|i| i.node));
            }
        }
        // How many input edges of between ops each op feeds: an op is visited
        // once all of them have been (TF's pending counts).
        let mut pending_count = vec![0usize; n];
        for &id in &between_list {
            for i in &graph.node(id).inputs {
                if between[i.node] {
                    pending_count[i.node] += 1;
                }
            }
        }
        let mut b = Builder::new(graph, &opts.scope);
        b.control = opts.control_inputs.clone();
        let mut pending: HashMap<Output, Vec<Grad>> = HashMap::new();
        for (k, &y) in ys.iter().enumerate() {
            let g = match grad_ys.get(k).copied().flatten() {
                Some(g) => {
                    if b.dtype(g) != b.dtype(y) {
                        return Err(Error::type_error(format!(
                            "Gradient type {} generated for op {} does not match input type {}",
                            b.dtype(g),
                            b.graph.node(y.node).name,
                            b.dtype(y)
                        )));
                    }
                    g
                }
                None => {
                    if !is_differentiable_dtype(b.dtype(y)) {
                        continue;
                    }
                    // ones(shape(y)), named like TF's.
                    let shape = b.shape(y)?;
                    let one = b.scalar(b.dtype(y), 1.0)?;
                    let id =
                        b.node_named("Fill", &format!("grad_ys_{k}"), &[shape, one], vec![])?;
                    Output::new(id, 0)
                }
            };
            pending.entry(y).or_default().push(Grad::Dense(g));
        }
        // Visit ops in TF's order: a FIFO queue seeded with the ys' ops, an op
        // joining it once every between op it feeds has been visited. The
        // order decides how contributions are summed (AddN inputs,
        // IndexedSlices rows).
        let mut queue = VecDeque::new();
        for y in ys {
            if between[y.node] && pending_count[y.node] == 0 && !queue.contains(&y.node) {
                queue.push_back(y.node);
            }
        }
        Ok(GradientRun {
            xs: xs.to_vec(),
            stop: opts.stop_gradients.iter().copied().collect(),
            xs_set: xs.iter().copied().collect(),
            opts,
            reached,
            between,
            pending_count,
            pending,
            queue,
            waiting: None,
        })
    }

    fn builder<'g>(&self, graph: &'g mut Graph) -> Builder<'g> {
        let mut b = Builder::new(graph, &self.opts.scope);
        b.control = self.opts.control_inputs.clone();
        b
    }

    /// Visits ops until all are done or one needs an external gradient.
    pub fn run(&mut self, graph: &mut Graph) -> Result<Step> {
        if let Some(w) = &self.waiting {
            return Err(Error::internal(format!(
                "gradient run resumed without the gradient of {}",
                w.node.name
            )));
        }
        let mut b = self.builder(graph);
        while let Some(id) = self.queue.pop_front() {
            let node = b.graph.node(id).clone();
            let mut ctx = VisitCtx {
                pending: &mut self.pending,
                reached: &self.reached,
                stop: &self.stop,
                xs_set: &self.xs_set,
                external: &self.opts.external,
                gate_gradients: self.opts.gate_gradients,
            };
            if let Some((out_grads, grad_type, wanted)) = visit(&mut b, &node, &mut ctx)? {
                let scope = b
                    .graph
                    .unique_name(&b.join(&format!("{}_grad", node.name)), true);
                let first_new = b.graph.len();
                self.waiting = Some(Waiting {
                    node,
                    wanted,
                    first_new,
                    scope: scope.clone(),
                });
                return Ok(Step::External(ExternalGrad {
                    node: id,
                    grad_type,
                    out_grads,
                    scope,
                }));
            }
            self.release_inputs(&node);
        }
        let mut result = Vec::with_capacity(self.xs.len());
        for &x in &self.xs {
            let g = match self.pending.remove(&x) {
                Some(list) if !list.is_empty() => Some(aggregate(&mut b, list)?),
                _ => None,
            };
            let g = match (g, self.opts.unconnected) {
                (Some(g), _) => Some(g),
                (None, Unconnected::Zero) => Some(Grad::Dense(unconnected_zeros(&mut b, x)?)),
                (None, Unconnected::None) => None,
            };
            if let Some(g) = g {
                self.pending.insert(x, vec![g]);
            }
            result.push(g);
        }
        Ok(Step::Done(result))
    }

    /// Supplies the input gradients of the op [`Step::External`] named (one
    /// per input, None for none); call [`GradientRun::run`] next.
    pub fn resume(&mut self, graph: &mut Graph, in_grads: Vec<Option<Grad>>) -> Result<()> {
        let w = self
            .waiting
            .take()
            .ok_or_else(|| Error::internal("no op is waiting for an external gradient"))?;
        let in_grads = if self.opts.gate_gradients {
            let mut scoped = Builder::new(graph, &w.scope);
            scoped.control = self.opts.control_inputs.clone();
            gate(&mut scoped, in_grads)?
        } else {
            in_grads
        };
        let mut b = self.builder(graph);
        add_input_grads(
            &mut b,
            &w.node,
            in_grads,
            &w.wanted,
            w.first_new,
            &mut self.pending,
        )?;
        self.release_inputs(&w.node);
        Ok(())
    }

    /// `node` is done: each between op it reads joins the queue once all
    /// the ops it feeds are done.
    fn release_inputs(&mut self, node: &ferroflow_graph::Node) {
        for i in &node.inputs {
            if self.between[i.node] {
                self.pending_count[i.node] -= 1;
                if self.pending_count[i.node] == 0 {
                    self.queue.push_back(i.node);
                }
            }
        }
    }
}

/// The traversal state [`visit`] reads and updates.
struct VisitCtx<'a> {
    pending: &'a mut HashMap<Output, Vec<Grad>>,
    reached: &'a [bool],
    stop: &'a HashSet<Output>,
    xs_set: &'a HashSet<Output>,
    external: &'a HashSet<String>,
    gate_gradients: bool,
}

/// What an op waiting for an external gradient hands back: its outputs'
/// dense gradients, its gradient type and which inputs want a gradient.
type ExternalNeed = (Vec<Option<Output>>, String, Vec<bool>);

/// Differentiates one op: sums what each of its outputs received and adds
/// its gradient function's results to its inputs' contributions. Returns
/// what the caller must compute when the op's gradient is external.
fn visit(
    b: &mut Builder<'_>,
    node: &ferroflow_graph::Node,
    ctx: &mut VisitCtx<'_>,
) -> Result<Option<ExternalNeed>> {
    let id = node.id;
    let mut out_grads: Vec<Option<Grad>> = Vec::with_capacity(node.outputs.len());
    for i in 0..node.outputs.len() {
        let o = Output::new(id, i);
        let g = match ctx.pending.remove(&o) {
            Some(list) if !list.is_empty() => Some(aggregate(b, list)?),
            _ => None,
        };
        // An x may also be an intermediate: keep its total for the result.
        if let Some(g) = g {
            if ctx.xs_set.contains(&o) {
                ctx.pending.insert(o, vec![g]);
            }
        }
        out_grads.push(g);
    }
    if out_grads.iter().all(Option::is_none) {
        return Ok(None);
    }
    if (0..node.outputs.len()).any(|i| ctx.stop.contains(&Output::new(id, i))) {
        return Ok(None);
    }
    // Inputs that need no gradient: not between xs and ys, or not float.
    let wanted: Vec<bool> = node
        .inputs
        .iter()
        .map(|i| ctx.reached[i.node] && is_differentiable_dtype(b.graph.output(*i).dtype))
        .collect();
    if !wanted.iter().any(|&w| w) {
        return Ok(None);
    }
    // The gradient to use: `gradient_override_map` renames it per node.
    let grad_type = match node.attrs.get(GRADIENT_OP_TYPE_ATTR) {
        Some(AttrValue::Str(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => node.op.clone(),
    };
    // StopGradient has no gradient (TensorFlow's NotDifferentiable): by op type, or
    // named by `gradient_override_map({"Identity": "StopGradient"})`. A StopGradient
    // op overridden to another gradient uses that one, as in TensorFlow.
    if grad_type == "StopGradient" {
        return Ok(None);
    }
    let mut dense = Vec::with_capacity(out_grads.len());
    for g in &out_grads {
        dense.push(match g {
            Some(g) => Some(to_dense(b, *g)?),
            None => None,
        });
    }
    if ctx.external.contains(&grad_type) {
        return Ok(Some((dense, grad_type, wanted)));
    }
    // Nodes from here on are this op's gradient nodes.
    let first_new = b.graph.len();
    let in_grads: Vec<Option<Grad>> = if matches!(grad_type.as_str(), "Identity" | "Snapshot") {
        // Sparse gradients pass an identity untouched.
        vec![out_grads[0]]
    } else {
        let entry = lookup(&grad_type).ok_or_else(|| no_gradient(b.graph, id, &grad_type))?;
        let GradEntry::Func(f) = entry else {
            return Ok(None);
        };
        let scope_name = format!("{}_grad", node.name);
        let gated = ctx.gate_gradients;
        b.with_scope(&scope_name, |b| {
            let in_grads = f(b, node, &dense)?;
            if gated {
                gate(b, in_grads)
            } else {
                Ok(in_grads)
            }
        })
        .map_err(|e| annotate(e, &node.name))?
    };
    add_input_grads(b, node, in_grads, &wanted, first_new, ctx.pending)?;
    Ok(None)
}

/// TensorFlow's `control_flow_ops.tuple` over an op's input gradients, as
/// `gate_gradients=True` builds it under the op's gradient scope: a
/// `tuple/group_deps` no-op waiting for every gradient, and each gradient
/// passed on through a `tuple/control_dependency[_k]` identity that waits
/// for it (a sparse gradient's values; its indices pass as they are). One
/// gradient or none is left alone, and so is a list (a TensorArray's flow).
fn gate(b: &mut Builder<'_>, grads: Vec<Option<Grad>>) -> Result<Vec<Option<Grad>>> {
    if grads.iter().flatten().count() < 2 {
        return Ok(grads);
    }
    // A failure abandons the whole differentiation, so the builder's control
    // context need not be restored on the error paths.
    b.with_scope("tuple", |b| {
        let outer = b.control.clone();
        let mut deps: Vec<NodeId> = Vec::new();
        for g in grads.iter().flatten() {
            let n = match g {
                Grad::Dense(o) => o.node,
                Grad::Sparse { values, .. } => values.node,
            };
            if !deps.contains(&n) {
                deps.push(n);
            }
        }
        b.control = outer.iter().copied().chain(deps).collect();
        let group = b.node_named("NoOp", "group_deps", &[], vec![])?;
        b.control = outer.iter().copied().chain([group]).collect();
        let mut out = Vec::with_capacity(grads.len());
        for g in grads {
            out.push(match g {
                None => None,
                // A TensorArray's flow (a list) has no Identity here: it passes ungated.
                Some(Grad::Dense(o)) if b.graph.output(o).is_list => Some(Grad::Dense(o)),
                Some(Grad::Dense(o)) => {
                    let id = b.node_named("Identity", "control_dependency", &[o], vec![])?;
                    Some(Grad::Dense(Output::new(id, 0)))
                }
                Some(Grad::Sparse {
                    values,
                    indices,
                    dense_shape,
                }) => {
                    let id = b.node_named("Identity", "control_dependency", &[values], vec![])?;
                    Some(Grad::Sparse {
                        values: Output::new(id, 0),
                        indices,
                        dense_shape,
                    })
                }
            });
        }
        b.control = outer;
        Ok(out)
    })
}

/// The node attr naming the gradient to use instead of the op type's
/// (TensorFlow's, set by `Graph.gradient_override_map`).
pub const GRADIENT_OP_TYPE_ATTR: &str = "_gradient_op_type";

/// Adds an op's input gradients to its inputs' contributions.
fn add_input_grads(
    b: &mut Builder<'_>,
    node: &ferroflow_graph::Node,
    in_grads: Vec<Option<Grad>>,
    wanted: &[bool],
    first_new: NodeId,
    pending: &mut HashMap<Output, Vec<Grad>>,
) -> Result<()> {
    if in_grads.len() != node.inputs.len() {
        return Err(Error::value(format!(
            "Num gradients {} generated for op {} do not match num inputs {} (op type: {})",
            in_grads.len(),
            node.name,
            node.inputs.len(),
            node.op
        )));
    }
    for ((input, g), &want) in node.inputs.iter().zip(in_grads).zip(wanted) {
        if let (Some(g), true) = (g, want) {
            if let Grad::Dense(o) = g {
                narrow_shape(b, o, *input, first_new, node)?;
            }
            pending.entry(*input).or_default().push(g);
        }
    }
    Ok(())
}

/// Zeros for an unconnected `x`: a `Fill` of its static shape when that is
/// fully known (TF's `zeros_like` does the same in graph mode, so fetching
/// the result needs no feed of `x`), else `ZerosLike(x)`.
fn unconnected_zeros(b: &mut Builder<'_>, x: Output) -> Result<Output> {
    let info = b.graph.output(x);
    let dtype = info.dtype;
    let known: Option<Vec<i32>> = info
        .shape
        .dims()
        .and_then(|d| d.iter().map(|x| x.map(|v| v as i32)).collect());
    match known {
        Some(dims) => {
            let dims = b.const_i32(dims)?;
            let zero = b.scalar(dtype, 0.0)?;
            b.fill(dims, zero)
        }
        None => b.zeros_like(x),
    }
}

/// A dense gradient has its input's shape: give a node the op's gradient
/// function created (id >= `first_new`) the input's static shape where its
/// own inference lost it (dynamic `Reshape`/`Slice` targets), as TF's
/// `set_shape` calls do. A gradient passed through unchanged (an output's
/// gradient, the caller's `grad_ys`) is shared, and left alone.
fn narrow_shape(
    b: &mut Builder<'_>,
    g: Output,
    input: Output,
    first_new: NodeId,
    node: &ferroflow_graph::Node,
) -> Result<()> {
    if g.node < first_new || b.graph.output(g).shape.is_fully_defined() {
        return Ok(());
    }
    let want = b.graph.output(input).shape.clone();
    b.graph.set_output_shape(g, &want).map_err(|_| {
        Error::value(format!(
            "Incompatible shapes between op input and calculated input gradient. \
             Forward operation: {} ({}). Input: {}. Original input shape: {want}. \
             Calculated input gradient shape: {}",
            node.name,
            node.op,
            b.graph.output_name(input),
            b.graph.output(g).shape
        ))
    })
}

fn annotate(e: Error, node: &str) -> Error {
    match e {
        Error::Value(m) => Error::Value(format!("{m} (while differentiating '{node}')")),
        Error::Type(m) => Error::Type(format!("{m} (while differentiating '{node}')")),
        other => other,
    }
}

/// Sums gradient contributions: dense ones with `AddN`, sparse ones by
/// concatenating their slices (no densifying), mixed ones densified.
fn aggregate(b: &mut Builder<'_>, list: Vec<Grad>) -> Result<Grad> {
    if list.len() == 1 {
        return Ok(list.into_iter().next().expect("one"));
    }
    if list.iter().all(|g| matches!(g, Grad::Sparse { .. })) {
        let mut values = Vec::new();
        let mut indices = Vec::new();
        let mut dense_shape = None;
        for g in &list {
            if let Grad::Sparse {
                values: v,
                indices: i,
                dense_shape: d,
            } = g
            {
                values.push(*v);
                indices.push(*i);
                dense_shape.get_or_insert(*d);
            }
        }
        let axis = b.scalar_i32(0)?;
        let indices = same_index_type(b, indices)?;
        let v = b.concat(&values, axis)?;
        let i = b.concat(&indices, axis)?;
        return Ok(Grad::Sparse {
            values: v,
            indices: i,
            dense_shape: dense_shape.expect("non-empty"),
        });
    }
    let mut dense = Vec::with_capacity(list.len());
    for g in list {
        dense.push(to_dense(b, g)?);
    }
    if b.graph.output(dense[0]).is_list {
        return Ok(Grad::Dense(b.op("ListAddN", &dense, vec![])?));
    }
    let id = b.node(
        "AddN",
        &dense,
        vec![("N", AttrValue::Int(dense.len() as i64))],
    )?;
    Ok(Grad::Dense(Output::new(id, 0)))
}

fn same_index_type(b: &mut Builder<'_>, indices: Vec<Output>) -> Result<Vec<Output>> {
    if indices.iter().all(|&i| b.dtype(i) == b.dtype(indices[0])) {
        return Ok(indices);
    }
    indices
        .into_iter()
        .map(|i| b.cast(i, DType::Int64))
        .collect()
}

/// A dense tensor for a gradient (`tf.convert_to_tensor(IndexedSlices)`).
pub fn to_dense(b: &mut Builder<'_>, g: Grad) -> Result<Output> {
    match g {
        Grad::Dense(o) => Ok(o),
        Grad::Sparse {
            values,
            indices,
            dense_shape,
        } => {
            let rows = b.element(dense_shape, 0)?;
            let rows = b.cast(rows, b.dtype(indices))?;
            let summed = b.op("UnsortedSegmentSum", &[values, indices, rows], vec![])?;
            let shape = b.cast(dense_shape, DType::Int32)?;
            b.reshape(summed, shape)
        }
    }
}
