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

mod fusion;
mod waiting;

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
    /// The graph node the step runs.
    node: NodeId,
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
    /// Two steps that may block do not wait for each other: they run at the
    /// same time (see `plan/waiting.rs`).
    waits_together: bool,
    /// Which steps wait for which, for [`Plan::run_parallel`].
    flow: Flow,
    /// Dense layers run as one fused product (see `plan/fusion.rs`).
    fused_layers: usize,
    /// The slot vectors of the last finished run, reused by the next (a
    /// loop body's plan runs once per iteration).
    scratch: parking_lot::Mutex<Option<Scratch>>,
}

/// The order a plan's steps must keep: what each waits for (its data
/// producers and control inputs inside the plan). Independent steps may run
/// at the same time.
struct Flow {
    /// How many steps each step waits for.
    waits: Vec<u32>,
    /// The steps waiting for each step.
    readers: Vec<SmallVec<[u32; 4]>>,
}

impl Flow {
    /// The order of `steps`: each waits for the steps that write the slots
    /// it reads and for its `controls`.
    fn of(
        steps: &[Step],
        controls: &[SmallVec<[u32; 4]>],
        num_feeds: usize,
        num_slots: usize,
    ) -> Flow {
        let mut producer = vec![u32::MAX; num_slots];
        for (s, step) in steps.iter().enumerate() {
            producer[step.out_base..step.out_base + step.num_outputs].fill(s as u32);
        }
        let mut readers: Vec<SmallVec<[u32; 4]>> = vec![SmallVec::new(); steps.len()];
        let mut waits = vec![0u32; steps.len()];
        for (s, step) in steps.iter().enumerate() {
            let mut preds: SmallVec<[u32; 4]> = step
                .inputs
                .iter()
                .filter_map(|inp| match inp.source {
                    Source::Slot(slot) if slot >= num_feeds => Some(producer[slot]),
                    _ => None,
                })
                .chain(controls[s].iter().copied())
                .collect();
            preds.sort_unstable();
            preds.dedup();
            waits[s] = preds.len() as u32;
            for p in preds {
                readers[p as usize].push(s as u32);
            }
        }
        Flow { waits, readers }
    }
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
        let order = execution_order(graph, &needed, |o| slot_of.contains_key(o));
        let mut step_of = vec![u32::MAX; graph.len()];
        for (i, &id) in order.iter().enumerate() {
            step_of[id] = i as u32;
        }
        // Each step's control inputs inside the plan, as step indices.
        let controls: Vec<SmallVec<[u32; 4]>> = order
            .iter()
            .map(|&id| {
                graph
                    .node(id)
                    .control_inputs
                    .iter()
                    .map(|&c| step_of[c])
                    .filter(|&c| c != u32::MAX)
                    .collect()
            })
            .collect();
        for id in order {
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
            // Readers take a fixed value in place, without waiting for its
            // step; one with control inputs (a constant made under
            // `control_dependencies`) stays a step they wait for, or they
            // could run before what it waits for.
            if controls[steps.len()].is_empty() {
                fixed_of[id].clone_from(&fixed);
            }
            steps.push(Step {
                node: id,
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
        let fused_layers = fusion::fuse_dense_layers(graph, &mut steps, &fetch_slots, next);
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
        let (steps, controls) = if may_block {
            waiting::blocking_last(steps, controls, feeds.len(), next)
        } else {
            (steps, controls)
        };
        let flow = Flow::of(&steps, &controls, feeds.len(), next);
        let waits_together = may_block && waiting::independent_waits(&steps, &flow);
        Ok(Plan {
            may_block,
            waits_together,
            flow,
            fused_layers,
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

    /// How many `MatMul -> BiasAdd/AddV2 [-> Relu]` chains run as one fused
    /// product.
    pub fn fused_layers(&self) -> usize {
        self.fused_layers
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
        self.place_feeds(feeds, slots);
        // Run serially, such a plan could wait forever: a traced or profiled
        // run of it records no node timings rather than hang.
        if self.waits_together {
            return waiting::run_together(self, session, slots, remaining);
        }
        if let Some(p) = &self.profile {
            p.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        // Traced and profiled runs time every node, fixed ones included.
        let timed = clock.is_some() || self.profile.is_some();
        for (step_index, step) in self.steps.iter().enumerate() {
            if !timed && pass_through(step, slots, remaining)? {
                continue;
            }
            let all_start = clock.as_ref().map(|_| std::time::Instant::now());
            let (inputs, wanted) = gather(step, slots, remaining)?;
            let started =
                (self.profile.is_some() || all_start.is_some()).then(std::time::Instant::now);
            let outs = run_kernel(step, inputs, wanted, session)?;
            let op_end = all_start.map(|_| std::time::Instant::now());
            if let (Some(p), Some(t)) = (&self.profile, started) {
                p.nanos[step_index].fetch_add(
                    t.elapsed().as_nanos() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            store_outputs(step, outs, slots, remaining);
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

    fn place_feeds(&self, feeds: Vec<Value>, slots: &mut [Option<Value>]) {
        for (spec, v) in self.feeds.iter().zip(feeds) {
            slots[spec.slot] = Some(v);
        }
    }

    /// Runs the plan once like [`Plan::run`], with independent steps at the
    /// same time: the calling thread runs steps in plan order (its kernels
    /// use the kernel team), while the threads of `workers` take small
    /// ready steps beside it, each kernel on its worker alone (the workers
    /// must have called [`ferroflow_tensor::team::run_kernels_alone`]).
    /// Every kernel gets the same inputs as in a serial run, so results are
    /// the same; only the order of steps that nothing orders may differ, as
    /// in TensorFlow with `inter_op_parallelism_threads` above 1.
    ///
    /// Plans whose kernels may block, and profiled plans, run serially.
    pub fn run_parallel(
        &self,
        session: &SessionState,
        feeds: Vec<Tensor>,
        workers: &rayon::ThreadPool,
    ) -> Result<Vec<Tensor>> {
        if self.may_block || self.profile.is_some() || self.steps.len() < 3 {
            return self.run(session, feeds);
        }
        self.check_feeds(&feeds)?;
        let mut scratch = self.take_scratch();
        self.place_feeds(
            feeds.into_iter().map(Value::Tensor).collect(),
            &mut scratch.slots,
        );
        {
            let Scratch { slots, remaining } = &mut scratch;
            let board = parking_lot::Mutex::new(Board {
                slots,
                remaining,
                waits: self.flow.waits.clone(),
                ready: (0..self.steps.len() as u32)
                    .filter(|&i| self.flow.waits[i as usize] == 0)
                    .collect(),
                unfinished: self.steps.len(),
                side_workers: 0,
                error: None,
            });
            let crew = Crew {
                plan: self,
                session,
                board: &board,
                wake: parking_lot::Condvar::new(),
                max_side_workers: workers.current_num_threads(),
                side_step_bytes: side_step_bytes(),
            };
            workers.in_place_scope(|scope| crew.take_part(scope, false));
            if let Some(e) = board.into_inner().error {
                return Err(e);
            }
        }
        self.finish_run(scratch)
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
        self.finish_run(scratch)
    }

    /// Takes the fetched values out of a finished run's slots.
    fn finish_run(&self, mut scratch: Scratch) -> Result<Vec<Tensor>> {
        let Scratch { slots, remaining } = &mut scratch;
        let out = self
            .fetch_slots
            .iter()
            .map(|&s| take(s, slots, remaining)?.into_tensor())
            .collect();
        self.put_scratch(scratch);
        out
    }
}

/// Inputs of this many bytes at most make a step small enough for an
/// inter-op worker to run beside the caller's kernel, on one core
/// (`FERROFLOW_INTER_OP_BYTES`, default 256 KiB: an elementwise op or a
/// bias gradient over a 128x512 float batch).
fn side_step_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("FERROFLOW_INTER_OP_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(256 << 10)
    })
}

/// What the threads of a parallel run share, behind one lock.
struct Board<'r> {
    slots: &'r mut [Option<Value>],
    remaining: &'r mut [u32],
    /// Steps each step still waits for.
    waits: Vec<u32>,
    /// Steps whose inputs are all there, not yet taken.
    ready: Vec<u32>,
    /// Steps not yet finished.
    unfinished: usize,
    /// Inter-op workers taking part now.
    side_workers: usize,
    /// The first failure; no step starts after it.
    error: Option<Error>,
}

impl Board<'_> {
    /// Bytes of the tensors a ready step would read.
    fn input_bytes(&self, step: &Step) -> usize {
        let size = |v: &Value| match v {
            Value::Tensor(t) => t.num_elements() * t.dtype().size().unwrap_or(8),
            _ => 0,
        };
        step.inputs
            .iter()
            .map(|inp| match &inp.source {
                Source::Slot(slot) => self.slots[*slot].as_ref().map_or(0, size),
                Source::Fixed(v) => size(v),
            })
            .sum()
    }

    /// Records the end of step `s`: its outputs (`None` when it passed its
    /// value along without its kernel) or its error, and the steps that
    /// became ready.
    fn finish(&mut self, plan: &Plan, s: usize, result: Result<Option<SmallVec<[Value; 2]>>>) {
        match result {
            Err(e) => {
                self.error.get_or_insert(e);
                return;
            }
            Ok(Some(outs)) => store_outputs(&plan.steps[s], outs, self.slots, self.remaining),
            Ok(None) => {}
        }
        self.unfinished -= 1;
        for &r in &plan.flow.readers[s] {
            self.waits[r as usize] -= 1;
            if self.waits[r as usize] == 0 {
                self.ready.push(r);
            }
        }
    }

    /// Removes and returns the lowest ready step (of at most `max_bytes` of
    /// input when given).
    fn pick(&mut self, steps: &[Step], max_bytes: Option<usize>) -> Option<usize> {
        let (at, _) = self
            .ready
            .iter()
            .enumerate()
            .filter(|&(_, &s)| max_bytes.is_none_or(|m| self.input_bytes(&steps[s as usize]) <= m))
            .min_by_key(|&(_, &s)| s)?;
        Some(self.ready.swap_remove(at) as usize)
    }
}

/// The threads of one parallel run: the caller and the inter-op workers it
/// recruits.
struct Crew<'p, 'r> {
    plan: &'p Plan,
    session: &'p SessionState,
    board: &'p parking_lot::Mutex<Board<'r>>,
    /// Wakes the caller when a worker finished a step.
    wake: parking_lot::Condvar,
    max_side_workers: usize,
    side_step_bytes: usize,
}

impl<'p> Crew<'p, '_> {
    /// Runs ready steps until none is left to this thread: the caller takes
    /// any step and waits for workers' steps; a worker (`side`) takes small
    /// steps and leaves when there are none.
    fn take_part<'s>(&'s self, scope: &rayon::Scope<'s>, side: bool) {
        let steps = &self.plan.steps;
        let mut board = self.board.lock();
        loop {
            if board.error.is_some() || board.unfinished == 0 {
                break;
            }
            let limit = side.then_some(self.side_step_bytes);
            let Some(s) = board.pick(steps, limit) else {
                if side {
                    break;
                }
                self.wake.wait(&mut board);
                continue;
            };
            let step = &steps[s];
            let b = &mut *board;
            let result = match pass_through(step, b.slots, b.remaining) {
                Ok(true) => Ok(None),
                Err(e) => Err(e),
                Ok(false) => match gather(step, b.slots, b.remaining) {
                    Err(e) => Err(e),
                    Ok((inputs, wanted)) => {
                        self.recruit(&mut board, scope);
                        parking_lot::MutexGuard::unlocked(&mut board, || {
                            guarded(step, || run_kernel(step, inputs, wanted, self.session))
                                .map(Some)
                        })
                    }
                },
            };
            board.finish(self.plan, s, result);
            if side {
                self.wake.notify_one();
            }
        }
        if side {
            board.side_workers -= 1;
            drop(board);
            self.wake.notify_one();
        }
    }

    /// Starts a worker for each ready step small enough for one, up to the
    /// pool's size.
    fn recruit<'s>(
        &'s self,
        board: &mut parking_lot::MutexGuard<'_, Board<'_>>,
        scope: &rayon::Scope<'s>,
    ) {
        let steps = &self.plan.steps;
        let mut wanted = board
            .ready
            .iter()
            .filter(|&&s| board.input_bytes(&steps[s as usize]) <= self.side_step_bytes)
            .count();
        while wanted > 0 && board.side_workers < self.max_side_workers {
            board.side_workers += 1;
            wanted -= 1;
            scope.spawn(move |scope| self.take_part(scope, true));
        }
    }
}

/// Calls `f`, turning a panic into an internal error naming `step`.
fn guarded<R>(step: &Step, f: impl FnOnce() -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Error::internal(format!(
            "the kernel of '{}' panicked: {}",
            step.name,
            panic_text(&p)
        )))
    })
}

/// The message of a caught panic.
fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// One input of a step, read as the step wants it.
fn read_input(
    inp: &InputSlot,
    slots: &mut [Option<Value>],
    remaining: &mut [u32],
) -> Result<Value> {
    match (&inp.source, inp.deref) {
        (Source::Slot(slot), false) => take(*slot, slots, remaining),
        (Source::Slot(slot), true) => {
            Ok(Value::Tensor(take(*slot, slots, remaining)?.into_tensor()?))
        }
        (Source::Fixed(Value::Ref(var)), true) => Ok(Value::Tensor(var.read()?)),
        (Source::Fixed(v), _) => Ok(v.clone()),
    }
}

/// Moves a step's value along without calling its kernel when it has a
/// fixed output or forwards its input; returns whether it did.
fn pass_through(step: &Step, slots: &mut [Option<Value>], remaining: &mut [u32]) -> Result<bool> {
    let value = if let Some(v) = &step.fixed {
        v.clone()
    } else if step.forward {
        read_input(&step.inputs[0], slots, remaining).map_err(|e| e.at_node(&step.name))?
    } else {
        return Ok(false);
    };
    if remaining[step.out_base] > 0 {
        slots[step.out_base] = Some(value);
    }
    Ok(true)
}

/// A step's inputs, and the mask of its outputs that are read.
fn gather<'p>(
    step: &'p Step,
    slots: &mut [Option<Value>],
    remaining: &mut [u32],
) -> Result<(SmallVec<[Input<'p>; 4]>, u64)> {
    let mut inputs: SmallVec<[Input<'p>; 4]> = SmallVec::with_capacity(step.inputs.len());
    for inp in &step.inputs {
        inputs.push(match (&inp.source, inp.deref) {
            (Source::Fixed(v), false) => Input::Lent(v),
            _ => {
                Input::Owned(read_input(inp, slots, remaining).map_err(|e| e.at_node(&step.name))?)
            }
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
    Ok((inputs, wanted))
}

/// Calls a step's kernel and checks it produced every output.
fn run_kernel<'a>(
    step: &'a Step,
    inputs: SmallVec<[Input<'a>; 4]>,
    wanted: u64,
    session: &'a SessionState,
) -> Result<SmallVec<[Value; 2]>> {
    let mut ctx = OpContext {
        inputs,
        outputs: SmallVec::new(),
        node: &step.name,
        session,
        wanted,
    };
    step.kernel
        .compute(&mut ctx)
        .map_err(|e| e.into_runtime().at_node(&step.name))?;
    let outs = ctx.take_outputs();
    ensure!(
        outs.len() == step.num_outputs,
        internal,
        "kernel of '{}' produced {} outputs, expected {}",
        step.name,
        outs.len(),
        step.num_outputs
    );
    Ok(outs)
}

/// Keeps the outputs that a later step or a fetch reads.
fn store_outputs(
    step: &Step,
    outs: SmallVec<[Value; 2]>,
    slots: &mut [Option<Value>],
    remaining: &[u32],
) {
    for (i, v) in outs.into_iter().enumerate() {
        let s = step.out_base + i;
        if remaining[s] > 0 {
            slots[s] = Some(v);
        }
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
