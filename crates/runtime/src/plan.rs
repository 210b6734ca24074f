//! Compiling a (feeds, fetches, targets) signature into a run plan.
//!
//! The plan holds only the nodes the fetches and targets need (a fed
//! tensor cuts the graph above it), in node-id order — a topological order,
//! since the graph is append-only and inputs always precede their
//! consumers. Every output gets a slot; each slot knows how many readers it
//! has so the last reader can take the value instead of cloning it, which
//! lets kernels reuse input buffers in place. Constants and variables, whose
//! output never changes, skip the slots: each consumer holds the value,
//! bound when the plan is compiled (see `Source`).

use crate::check_numerics::{Checked, CHECK_NUMERICS_ATTR};
use crate::kernel::{kernel_factory, Input, Kernel, KernelInit, OpContext, Value};
use crate::resources::SessionState;
use crate::trace::{rel_nanos, thread_id, NodeTiming, StepTrace, TraceClock};
use ferroflow_graph::{AttrsExt, Graph, NodeId, Output, PartialShape};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Shape, Tensor};
use smallvec::SmallVec;
use std::collections::HashMap;

/// Where a step's input comes from.
enum Source {
    /// A slot written by a feed or an earlier step.
    Slot(usize),
    /// The unchanging output of a constant or variable node, bound when the
    /// plan is compiled: no slot is written or read for it on each run.
    Fixed(Value),
}

struct InputSlot {
    source: Source,
    /// The producer yields a variable reference but this input wants its value.
    deref: bool,
}

struct Step {
    name: String,
    /// `name = Op(inputs)`, reported when a run is traced.
    label: String,
    kernel: Box<dyn Kernel>,
    /// The kernel's [`Kernel::fixed_output`], copied here.
    fixed: Option<Value>,
    /// The kernel [forwards its input](Kernel::forwards_input).
    forward: bool,
    /// The kernel [asks which outputs are read](Kernel::wants_output_mask).
    needs_mask: bool,
    inputs: SmallVec<[InputSlot; 4]>,
    out_base: usize,
    num_outputs: usize,
}

/// True when a control edge from `node` asks for nothing to run: `node` is a
/// placeholder whose value is fed. TensorFlow's feed rewrite hands such edges
/// to the node that delivers the fed value, so a `control_dependencies` on a
/// fed placeholder holds; other fed nodes keep their control edges and run.
///
/// Public for the cluster master, which marks a step's nodes the same way.
pub fn control_satisfied_by_feed(
    graph: &Graph,
    node: NodeId,
    is_fed: impl Fn(&Output) -> bool,
) -> bool {
    matches!(
        graph.node(node).op.as_str(),
        "Placeholder" | "PlaceholderV2"
    ) && is_fed(&Output::new(node, 0))
}

/// The needed nodes in an order that runs every node after its inputs and
/// control inputs: node-id order when that already holds (a graph is
/// append-only, so it does unless a rewrite appended nodes that earlier nodes
/// now read, as the bfloat16 pass's casts are), else a topological order that
/// stays as close to id order as it can. Inputs that are fed (in `fed`)
/// impose no order.
///
/// Public for the cluster master, which orders a step before splitting it.
pub fn execution_order(
    graph: &Graph,
    needed: &[bool],
    is_fed: impl Fn(&Output) -> bool,
) -> Vec<NodeId> {
    let preds = |id: NodeId| {
        let node = graph.node(id);
        node.inputs
            .iter()
            .filter(|o| !is_fed(o))
            .map(|o| o.node)
            .chain(node.control_inputs.iter().copied())
            .filter(|&p| needed[p])
            .collect::<SmallVec<[NodeId; 4]>>()
    };
    let ids: Vec<NodeId> = (0..needed.len()).filter(|&id| needed[id]).collect();
    if ids.iter().all(|&id| preds(id).iter().all(|&p| p < id)) {
        return ids;
    }
    let mut waiting = vec![0usize; needed.len()];
    let mut readers: Vec<Vec<NodeId>> = vec![Vec::new(); needed.len()];
    for &id in &ids {
        for p in preds(id) {
            waiting[id] += 1;
            readers[p].push(id);
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<NodeId>> = ids
        .iter()
        .filter(|&&id| waiting[id] == 0)
        .map(|&id| std::cmp::Reverse(id))
        .collect();
    let mut order = Vec::with_capacity(ids.len());
    while let Some(std::cmp::Reverse(id)) = ready.pop() {
        order.push(id);
        for &r in &readers[id] {
            waiting[r] -= 1;
            if waiting[r] == 0 {
                ready.push(std::cmp::Reverse(r));
            }
        }
    }
    if order.len() == ids.len() {
        order
    } else {
        // A cycle (a malformed graph): keep id order, whose missing input
        // then fails the compile with a message instead of dropping nodes.
        ids
    }
}

/// What a fed tensor must look like.
struct FeedSpec {
    name: String,
    dtype: DType,
    shape: PartialShape,
    slot: usize,
}

/// A compiled, reusable plan for one run signature.
pub struct Plan {
    steps: Vec<Step>,
    num_slots: usize,
    feeds: Vec<FeedSpec>,
    fetch_slots: Vec<usize>,
    use_counts: Vec<u32>,
    /// Per-step nanoseconds and run count, when `FERROFLOW_PROFILE` is set;
    /// printed (slowest first) when the plan is dropped.
    profile: Option<Profile>,
    /// Some kernel [may block](Kernel::may_block).
    may_block: bool,
    /// The slot vectors of the last finished run, reused by the next (a
    /// loop body's plan runs once per iteration).
    scratch: parking_lot::Mutex<Option<Scratch>>,
}

/// A run's value slots and their remaining read counts.
struct Scratch {
    slots: Vec<Option<Value>>,
    remaining: Vec<u32>,
}

struct Profile {
    nanos: Vec<std::sync::atomic::AtomicU64>,
    runs: std::sync::atomic::AtomicU64,
}

impl Drop for Plan {
    fn drop(&mut self) {
        let Some(p) = &self.profile else { return };
        use std::sync::atomic::Ordering::Relaxed;
        let runs = p.runs.load(Relaxed).max(1);
        let mut rows: Vec<(u64, &str)> = p
            .nanos
            .iter()
            .zip(&self.steps)
            .map(|(n, s)| (n.load(Relaxed), s.name.as_str()))
            .collect();
        let total: u64 = rows.iter().map(|r| r.0).sum();
        rows.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
        eprintln!(
            "ferroflow profile: {} steps, {runs} runs, {:.1} us/run in kernels",
            self.steps.len(),
            total as f64 / runs as f64 / 1e3
        );
        for (n, name) in rows.iter().take(25) {
            eprintln!(
                "  {:9.2} us  {:5.1}%  {name}",
                *n as f64 / runs as f64 / 1e3,
                100.0 * *n as f64 / total.max(1) as f64
            );
        }
    }
}

/// TensorFlow's timeline label of a node: `name = Op(x, y:1, ^ctrl)`.
fn timeline_label(graph: &Graph, node: &ferroflow_graph::Node) -> String {
    let mut inputs: Vec<String> = node
        .inputs
        .iter()
        .map(|o| {
            let name = &graph.node(o.node).name;
            if o.index == 0 {
                name.clone()
            } else {
                format!("{name}:{}", o.index)
            }
        })
        .collect();
    inputs.extend(
        node.control_inputs
            .iter()
            .map(|&c| format!("^{}", graph.node(c).name)),
    );
    format!("{} = {}({})", node.name, node.op, inputs.join(", "))
}

/// Python-style shape text, as TensorFlow prints feed errors: `(2, 3)`.
fn tuple_text(s: &Shape) -> String {
    PartialShape::from(s).to_string()
}

impl Plan {
    /// Compiles a plan against the graph as it is now.
    pub fn compile(
        graph: &Graph,
        session: &SessionState,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<Plan> {
        Plan::compile_within(graph, session, feeds, fetches, targets, None)
    }

    /// [`Plan::compile`] restricted to the nodes marked in `members` (when
    /// given): the walk from the fetches and targets stops at other nodes,
    /// whose data must then be fed (an `InvalidArgument` error names the
    /// first that is not) and whose control edges are dropped.
    pub fn compile_within(
        graph: &Graph,
        session: &SessionState,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
        members: Option<&[bool]>,
    ) -> Result<Plan> {
        let check = |o: &Output| -> Result<()> {
            match graph.get(o.node) {
                Some(n) if o.index < n.outputs.len() => Ok(()),
                _ => Err(Error::invalid_argument(format!(
                    "tensor {}:{} is not in the graph",
                    o.node, o.index
                ))),
            }
        };
        feeds.iter().chain(fetches).try_for_each(check)?;
        if let Some(t) = targets.iter().find(|&&t| t >= graph.len()) {
            bail!(invalid_argument, "operation {t} is not in the graph");
        }
        let mut slot_of: HashMap<Output, usize> = HashMap::new();
        let mut feed_specs = Vec::with_capacity(feeds.len());
        for (i, &f) in feeds.iter().enumerate() {
            if slot_of.insert(f, i).is_some() {
                bail!(
                    invalid_argument,
                    "{} is fed more than once",
                    graph.output_name(f)
                );
            }
            let info = graph.output(f);
            feed_specs.push(FeedSpec {
                name: graph.output_name(f),
                dtype: info.dtype,
                shape: info.shape.clone(),
                slot: i,
            });
        }
        // Mark what the fetches and targets need, stopping at fed tensors.
        let mut needed = vec![false; graph.len()];
        let mut stack: Vec<NodeId> = fetches
            .iter()
            .filter(|o| !slot_of.contains_key(o))
            .map(|o| o.node)
            .chain(targets.iter().copied())
            .collect();
        let member = |n: NodeId| members.is_none_or(|m| m.get(n).copied().unwrap_or(false));
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut needed[n], true) {
                continue;
            }
            let node = graph.node(n);
            ensure!(
                member(n),
                invalid_argument,
                "node '{}' is outside the partition being compiled, and its output is not fed",
                node.name
            );
            stack.extend(
                node.inputs
                    .iter()
                    .filter(|o| !slot_of.contains_key(o))
                    .map(|o| o.node),
            );
            stack.extend(node.control_inputs.iter().copied().filter(|&c| {
                member(c) && !control_satisfied_by_feed(graph, c, |o| slot_of.contains_key(o))
            }));
        }
        let mut next = feeds.len();
        let mut steps = Vec::new();
        // The fixed output of each node compiled so far, by node id.
        let mut fixed_of: Vec<Option<Value>> = vec![None; graph.len()];
        for id in execution_order(graph, &needed, |o| slot_of.contains_key(o)) {
            let node = graph.node(id);
            let out_base = next;
            next += node.outputs.len();
            for i in 0..node.outputs.len() {
                slot_of.entry(Output::new(id, i)).or_insert(out_base + i);
            }
            let def = ferroflow_graph::lookup(&node.op);
            let inputs = node
                .inputs
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let slot = slot_of[o];
                    let fed = slot < feeds.len();
                    InputSlot {
                        source: match &fixed_of[o.node] {
                            Some(v) if !fed => Source::Fixed(v.clone()),
                            _ => Source::Slot(slot),
                        },
                        deref: graph.output(*o).is_ref
                            && !def.is_some_and(|d| d.takes_ref(i, &node.attrs)),
                    }
                })
                .collect();
            let factory = kernel_factory(&node.op).ok_or_else(|| {
                Error::unimplemented(format!(
                    "No kernel is registered for op '{}' (node '{}')",
                    node.op, node.name
                ))
            })?;
            let kernel = factory(&KernelInit {
                node,
                graph,
                session,
            })
            .map_err(|e| e.at_node(&node.name))?;
            let kernel = if node.attrs.bool_or(CHECK_NUMERICS_ATTR, false)? {
                Checked::wrap(kernel, &node.op)
            } else {
                kernel
            };
            let fixed = kernel.fixed_output().cloned();
            fixed_of[id].clone_from(&fixed);
            steps.push(Step {
                name: node.name.clone(),
                label: timeline_label(graph, node),
                forward: kernel.forwards_input() && node.inputs.len() == 1,
                needs_mask: kernel.wants_output_mask(),
                fixed,
                kernel,
                inputs,
                out_base,
                num_outputs: node.outputs.len(),
            });
        }
        let fetch_slots: Vec<usize> = fetches.iter().map(|o| slot_of[o]).collect();
        let mut use_counts = vec![0u32; next];
        for s in &steps {
            for i in &s.inputs {
                if let Source::Slot(slot) = i.source {
                    use_counts[slot] += 1;
                }
            }
        }
        for &s in &fetch_slots {
            use_counts[s] += 1;
        }
        let profile = std::env::var_os("FERROFLOW_PROFILE").map(|_| Profile {
            nanos: (0..steps.len())
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
            runs: std::sync::atomic::AtomicU64::new(0),
        });
        let may_block = steps.iter().any(|s| s.kernel.may_block());
        Ok(Plan {
            may_block,
            steps,
            num_slots: next,
            feeds: feed_specs,
            fetch_slots,
            use_counts,
            profile,
            scratch: parking_lot::Mutex::new(None),
        })
    }

    /// Whether a run may wait for another run (a queue or iterator op).
    pub fn may_block(&self) -> bool {
        self.may_block
    }

    /// Number of nodes the plan runs.
    pub fn num_steps(&self) -> usize {
        self.steps.len()
    }

    /// Checks fed values against the tensors they replace.
    fn check_feeds(&self, feeds: &[Tensor]) -> Result<()> {
        ensure!(
            feeds.len() == self.feeds.len(),
            internal,
            "plan expects {} fed values, got {}",
            self.feeds.len(),
            feeds.len()
        );
        for (spec, t) in self.feeds.iter().zip(feeds) {
            // (A quantized tensor is fed as the integers of its width.)
            ensure!(
                t.dtype() == spec.dtype.storage(),
                invalid_argument,
                "Cannot feed a {} value to Tensor '{}', which has dtype {}",
                t.dtype(),
                spec.name,
                spec.dtype
            );
            ensure!(
                spec.shape.is_compatible_with_shape(t.shape()),
                value,
                "Cannot feed value of shape {} for Tensor '{}', which has shape '{}'",
                tuple_text(t.shape()),
                spec.name,
                spec.shape
            );
        }
        Ok(())
    }

    /// Runs the plan once.
    pub fn run(&self, session: &SessionState, feeds: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.execute(session, feeds, None)
    }

    /// Runs the plan of a function body once: the arguments are values
    /// (variable references included) whose types the graph already checked,
    /// and an argument returned as it is comes back as it went in (a
    /// reference stays a reference); other results are tensors or lists.
    pub fn run_function(&self, session: &SessionState, args: Vec<Value>) -> Result<Vec<Value>> {
        ensure!(
            args.len() == self.feeds.len(),
            internal,
            "function expects {} arguments, got {}",
            self.feeds.len(),
            args.len()
        );
        let mut scratch = self.take_scratch();
        self.execute_steps(session, args, None, &mut scratch)?;
        let num_args = self.feeds.len();
        let Scratch { slots, remaining } = &mut scratch;
        let out = self
            .fetch_slots
            .iter()
            .map(|&s| {
                let v = take(s, slots, remaining)?;
                if s < num_args {
                    Ok(v)
                } else {
                    v.deref_variable()
                }
            })
            .collect();
        self.put_scratch(scratch);
        out
    }

    /// Slot vectors for a run: the cached ones, or new ones.
    fn take_scratch(&self) -> Scratch {
        let mut s = self.scratch.lock().take().unwrap_or_else(|| Scratch {
            slots: (0..self.num_slots).map(|_| None).collect(),
            remaining: vec![0; self.num_slots],
        });
        s.remaining.copy_from_slice(&self.use_counts);
        s
    }

    /// Keeps a finished run's slot vectors for the next run, emptied.
    fn put_scratch(&self, mut s: Scratch) {
        for slot in s.slots.iter_mut().filter(|x| x.is_some()) {
            *slot = None;
        }
        *self.scratch.lock() = Some(s);
    }

    /// Runs the plan once, recording when each node started and ended.
    pub fn run_traced(
        &self,
        session: &SessionState,
        feeds: Vec<Tensor>,
    ) -> Result<(Vec<Tensor>, StepTrace)> {
        let mut trace = StepTrace::new();
        let out = self.execute(session, feeds, Some(&mut trace))?;
        Ok((out, trace))
    }

    fn execute(
        &self,
        session: &SessionState,
        feeds: Vec<Tensor>,
        trace: Option<&mut StepTrace>,
    ) -> Result<Vec<Tensor>> {
        self.check_feeds(&feeds)?;
        let feeds = feeds.into_iter().map(Value::Tensor).collect();
        let mut scratch = self.take_scratch();
        self.execute_steps(session, feeds, trace, &mut scratch)?;
        let Scratch { slots, remaining } = &mut scratch;
        let out = self
            .fetch_slots
            .iter()
            .map(|&s| take(s, slots, remaining)?.into_tensor())
            .collect();
        self.put_scratch(scratch);
        out
    }

    /// Runs every step with `feeds` in the feed slots of `scratch`, leaving
    /// the fetched values in its slots for the caller to take.
    fn execute_steps(
        &self,
        session: &SessionState,
        feeds: Vec<Value>,
        mut trace: Option<&mut StepTrace>,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let clock = trace.as_ref().map(|_| TraceClock::start());
        let Scratch { slots, remaining } = scratch;
        for (spec, v) in self.feeds.iter().zip(feeds) {
            slots[spec.slot] = Some(v);
        }
        // One input of a step, read as the step wants it.
        let read = |inp: &InputSlot,
                    slots: &mut [Option<Value>],
                    remaining: &mut [u32]|
         -> Result<Value> {
            match (&inp.source, inp.deref) {
                (Source::Slot(slot), false) => take(*slot, slots, remaining),
                (Source::Slot(slot), true) => {
                    Ok(Value::Tensor(take(*slot, slots, remaining)?.into_tensor()?))
                }
                (Source::Fixed(Value::Ref(var)), true) => Ok(Value::Tensor(var.read()?)),
                (Source::Fixed(v), _) => Ok(v.clone()),
            }
        };
        if let Some(p) = &self.profile {
            p.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        // Traced and profiled runs time every node, fixed ones included.
        let timed = clock.is_some() || self.profile.is_some();
        for (step_index, step) in self.steps.iter().enumerate() {
            if !timed {
                if let Some(v) = &step.fixed {
                    if remaining[step.out_base] > 0 {
                        slots[step.out_base] = Some(v.clone());
                    }
                    continue;
                }
                if step.forward {
                    let v = read(&step.inputs[0], slots, remaining)
                        .map_err(|e| e.at_node(&step.name))?;
                    if remaining[step.out_base] > 0 {
                        slots[step.out_base] = Some(v);
                    }
                    continue;
                }
            }
            let all_start = clock.as_ref().map(|_| std::time::Instant::now());
            let mut inputs: SmallVec<[Input<'_>; 4]> = SmallVec::with_capacity(step.inputs.len());
            for inp in &step.inputs {
                inputs.push(match (&inp.source, inp.deref) {
                    (Source::Fixed(v), false) => Input::Lent(v),
                    _ => Input::Owned(
                        read(inp, slots, remaining).map_err(|e| e.at_node(&step.name))?,
                    ),
                });
            }
            let mut wanted = u64::MAX;
            if step.needs_mask {
                wanted = 0;
                for i in 0..step.num_outputs.min(64) {
                    if remaining[step.out_base + i] > 0 {
                        wanted |= 1 << i;
                    }
                }
            }
            let mut ctx = OpContext {
                inputs,
                outputs: SmallVec::new(),
                node: &step.name,
                session,
                wanted,
            };
            let started =
                (self.profile.is_some() || all_start.is_some()).then(std::time::Instant::now);
            step.kernel
                .compute(&mut ctx)
                .map_err(|e| e.into_runtime().at_node(&step.name))?;
            let op_end = all_start.map(|_| std::time::Instant::now());
            if let (Some(p), Some(t)) = (&self.profile, started) {
                p.nanos[step_index].fetch_add(
                    t.elapsed().as_nanos() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            let outs = ctx.take_outputs();
            ensure!(
                outs.len() == step.num_outputs,
                internal,
                "kernel of '{}' produced {} outputs, expected {}",
                step.name,
                outs.len(),
                step.num_outputs
            );
            for (i, v) in outs.into_iter().enumerate() {
                let s = step.out_base + i;
                if remaining[s] > 0 {
                    slots[s] = Some(v);
                }
            }
            if let (Some(tr), Some(clock), Some(a), Some(o), Some(e)) =
                (trace.as_deref_mut(), &clock, all_start, started, op_end)
            {
                let tid = thread_id();
                tr.note_thread(tid);
                tr.nodes.push(NodeTiming {
                    node_name: step.name.clone(),
                    timeline_label: step.label.clone(),
                    all_start_nanos: clock.epoch_nanos(a),
                    op_start_rel_nanos: rel_nanos(a, o),
                    op_end_rel_nanos: rel_nanos(a, e),
                    all_end_rel_nanos: rel_nanos(a, std::time::Instant::now()),
                    thread_id: tid,
                });
            }
        }
        Ok(())
    }
}

/// Reads a slot: the last reader takes its value, earlier readers clone it.
fn take(slot: usize, slots: &mut [Option<Value>], remaining: &mut [u32]) -> Result<Value> {
    remaining[slot] = remaining[slot].saturating_sub(1);
    let v = if remaining[slot] == 0 {
        slots[slot].take()
    } else {
        slots[slot].clone()
    };
    v.ok_or_else(|| Error::internal(format!("slot {slot} read before it was written")))
}
