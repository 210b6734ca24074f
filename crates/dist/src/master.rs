//! A session over a cluster (`tf.Session("grpc://host:port")`).
//!
//! The session's process plays TensorFlow's master: for each run signature
//! it assigns every needed node to a task, cuts the step into partitions
//! (see the crate docs for the staging rule), registers each remote
//! partition with its task once, and on every run executes the partitions
//! stage by stage, the partitions of one stage at the same time. A partition
//! of the task served by this very process (a `tf.train.Server` started
//! here, the usual worker setup) runs in-process on the session's own graph,
//! against that server's resources: no copy, no request.
//!
//! Placement: a node runs on the task its device names (`/job:ps/task:1`;
//! a job without a task means task 0); a node without a job runs on the
//! task the session targets. A node that takes a variable reference or a
//! resource handle runs where that reference's producer runs, as
//! TensorFlow's placer colocates them.

use crate::client::Peer;
use crate::cluster::{parse_device, ClusterSpec, TaskId};
use crate::security::ClientSecurity;
use crate::server::{local_task, Inner};
use crate::wire::{Body, DeregisterGraph, Envelope, RegisterGraph, RunGraph};
use ferroflow_graph::{AttrValue, Graph, NodeId, NodeSpec, Output};
use ferroflow_runtime::{Plan, Session};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use parking_lot::{Mutex, RwLock};
use prost::Message;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a [`DistSession`] reaches its cluster.
#[derive(Clone)]
pub struct DistOptions {
    pub security: ClientSecurity,
    /// How long to keep trying to reach a task that is not up yet.
    pub connect_timeout: Duration,
    /// Reach a server of this process over the network too, as another
    /// process would (TensorFlow's `use_rpc_for_inprocess_master`; tests).
    pub force_rpc: bool,
}

impl Default for DistOptions {
    fn default() -> DistOptions {
        DistOptions {
            security: ClientSecurity::default(),
            connect_timeout: Duration::from_secs(60),
            force_rpc: false,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct PlanKey {
    feeds: Vec<Output>,
    fetches: Vec<Output>,
    targets: Vec<NodeId>,
}

/// A session whose graph runs across a cluster.
pub struct DistSession {
    graph: Arc<RwLock<Graph>>,
    cluster: ClusterSpec,
    /// Where nodes without a job run.
    default_task: TaskId,
    /// The task this process serves, if any.
    local: Option<Arc<Inner>>,
    /// Runs in-process partitions, against the local server's resources.
    local_session: Session,
    peers: Mutex<HashMap<TaskId, Arc<Peer>>>,
    options: DistOptions,
    plans: Mutex<HashMap<PlanKey, Arc<DistPlan>>>,
    next_step: AtomicI64,
    closed: AtomicBool,
    /// `FERROFLOW_VERBOSE_CLUSTER` is set: log each round's time.
    verbose: bool,
}

/// A compiled run signature.
pub struct DistPlan {
    kind: PlanKind,
}

enum PlanKind {
    /// Every node runs on the in-process task.
    Local(Arc<Plan>),
    Split(SplitPlan),
}

struct SplitPlan {
    feeds: Vec<Output>,
    fetches: Vec<Output>,
    /// Partitions in run order; a stage's partitions run at the same time.
    stages: Vec<Vec<Partition>>,
}

struct Partition {
    task: TaskId,
    /// Values it consumes (outputs of the session's graph), in feed order.
    inputs: Vec<Output>,
    /// Values it produces, in fetch order.
    outputs: Vec<Output>,
    exec: PartitionExec,
}

enum PartitionExec {
    InProcess(Arc<Plan>),
    Remote(RemoteGraph),
}

struct RemoteGraph {
    peer: Arc<Peer>,
    graph_def: Vec<u8>,
    feeds: Vec<String>,
    fetches: Vec<String>,
    targets: Vec<String>,
    /// `(incarnation, handle)` of the registration.
    handle: Mutex<Option<(u64, u64)>>,
}

impl DistSession {
    /// A session over `graph` targeting `target` (`grpc://host:port`). If a
    /// server in this process listens there, its task runs in-process;
    /// otherwise the target is contacted to learn its task and cluster.
    pub fn connect(
        graph: Arc<RwLock<Graph>>,
        target: &str,
        options: DistOptions,
    ) -> Result<DistSession> {
        let addr = target
            .strip_prefix("grpc://")
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "session target '{target}' is not supported: use '' (in-process) or \
                     'grpc://host:port' (a tf.train.Server)"
                ))
            })?
            .trim_end_matches('/');
        let in_process = if options.force_rpc {
            None
        } else {
            local_task(addr)
        };
        let (cluster, default_task, local, local_session) = match in_process {
            Some(inner) => {
                let session = Session::with_shared_state(graph.clone(), inner.state.clone());
                (
                    inner.cluster.clone(),
                    inner.task.clone(),
                    Some(inner),
                    session,
                )
            }
            None => {
                let probe = Peer::new(TaskId::new("?", 0), addr, options.security.clone());
                let welcome = probe.hello(Instant::now() + options.connect_timeout)?;
                let cluster = ClusterSpec::from_json(&welcome.cluster_json)?;
                let task = TaskId::new(&welcome.job, welcome.task);
                (cluster, task, None, Session::new(graph.clone()))
            }
        };
        Ok(DistSession {
            graph,
            cluster,
            default_task,
            local,
            local_session,
            peers: Mutex::new(HashMap::new()),
            options,
            plans: Mutex::new(HashMap::new()),
            next_step: AtomicI64::new(1),
            closed: AtomicBool::new(false),
            verbose: std::env::var_os("FERROFLOW_VERBOSE_CLUSTER").is_some(),
        })
    }

    /// The task nodes without a job run on.
    pub fn default_task(&self) -> &TaskId {
        &self.default_task
    }

    pub fn cluster(&self) -> &ClusterSpec {
        &self.cluster
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            bail!(cancelled, "Attempted to use a closed Session.");
        }
        Ok(())
    }

    fn peer(&self, task: &TaskId) -> Result<Arc<Peer>> {
        let mut peers = self.peers.lock();
        if let Some(p) = peers.get(task) {
            return Ok(p.clone());
        }
        let addr = self.cluster.address(task).ok_or_else(|| {
            Error::invalid_argument(format!(
                "task {task} is not in the cluster {}",
                self.cluster.to_json()
            ))
        })?;
        let p = Arc::new(Peer::new(task.clone(), addr, self.options.security.clone()));
        peers.insert(task.clone(), p.clone());
        Ok(p)
    }

    /// Tasks the plan's nodes need, as `(task, number of nodes)`; for tests
    /// and logs.
    pub fn placement(&self, plan: &DistPlan) -> Vec<(TaskId, usize)> {
        match &plan.kind {
            PlanKind::Local(_) => vec![(self.default_task.clone(), 0)],
            PlanKind::Split(s) => {
                let mut by: BTreeMap<TaskId, usize> = BTreeMap::new();
                for p in s.stages.iter().flatten() {
                    *by.entry(p.task.clone()).or_default() += 1;
                }
                by.into_iter().collect()
            }
        }
    }

    /// The compiled plan for a signature (compiled on first use, then cached).
    pub fn prepare(
        &self,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<Arc<DistPlan>> {
        self.check_open()?;
        let key = PlanKey {
            feeds: feeds.to_vec(),
            fetches: fetches.to_vec(),
            targets: targets.to_vec(),
        };
        if let Some(p) = self.plans.lock().get(&key) {
            return Ok(p.clone());
        }
        let plan = Arc::new(self.compile(feeds, fetches, targets)?);
        self.plans.lock().insert(key, plan.clone());
        Ok(plan)
    }

    /// Runs a prepared plan. `deadline` bounds waiting kernels everywhere.
    pub fn run_plan_until(
        &self,
        plan: &DistPlan,
        feeds: Vec<Tensor>,
        deadline: Option<Instant>,
    ) -> Result<Vec<Tensor>> {
        self.check_open()?;
        let split = match &plan.kind {
            PlanKind::Local(p) => return self.local_session.run_plan_until(p, feeds, deadline),
            PlanKind::Split(s) => s,
        };
        ensure!(
            feeds.len() == split.feeds.len(),
            invalid_argument,
            "the plan takes {} feeds, {} were given",
            split.feeds.len(),
            feeds.len()
        );
        let step_id = self.next_step.fetch_add(1, Ordering::Relaxed);
        let mut values: HashMap<Output, Tensor> = split.feeds.iter().copied().zip(feeds).collect();
        let verbose = self.verbose;
        for (stage_index, stage) in split.stages.iter().enumerate() {
            let started = verbose.then(Instant::now);
            let results: Vec<Result<Vec<Tensor>>> = if stage.len() == 1 {
                vec![self.run_partition(&stage[0], &values, step_id, deadline)]
            } else {
                std::thread::scope(|scope| {
                    let values = &values;
                    let handles: Vec<_> = stage[1..]
                        .iter()
                        .map(|p| {
                            scope.spawn(move || self.run_partition(p, values, step_id, deadline))
                        })
                        .collect();
                    let mut out = vec![self.run_partition(&stage[0], values, step_id, deadline)];
                    for h in handles {
                        out.push(h.join().unwrap_or_else(|_| {
                            Err(Error::internal("a partition's thread panicked"))
                        }));
                    }
                    out
                })
            };
            if let Some(t) = started {
                let tasks: Vec<String> = stage
                    .iter()
                    .map(|p| {
                        format!(
                            "{} ({} in, {} out)",
                            p.task,
                            p.inputs.len(),
                            p.outputs.len()
                        )
                    })
                    .collect();
                eprintln!(
                    "ferroflow cluster: step {step_id} round {stage_index}: {:.3} ms on {}",
                    t.elapsed().as_secs_f64() * 1e3,
                    tasks.join(", ")
                );
            }
            for (p, r) in stage.iter().zip(results) {
                let outs = r?;
                values.extend(p.outputs.iter().copied().zip(outs));
            }
        }
        split
            .fetches
            .iter()
            .map(|o| {
                values
                    .get(o)
                    .cloned()
                    .ok_or_else(|| Error::internal("a fetched value was not produced"))
            })
            .collect()
    }

    fn run_partition(
        &self,
        p: &Partition,
        values: &HashMap<Output, Tensor>,
        step_id: i64,
        deadline: Option<Instant>,
    ) -> Result<Vec<Tensor>> {
        let inputs = p
            .inputs
            .iter()
            .map(|o| {
                values
                    .get(o)
                    .cloned()
                    .ok_or_else(|| Error::internal("a partition input was not produced"))
            })
            .collect::<Result<Vec<_>>>()?;
        match &p.exec {
            PartitionExec::InProcess(plan) => {
                self.local_session.run_plan_until(plan, inputs, deadline)
            }
            PartitionExec::Remote(r) => {
                let connect_deadline = Instant::now() + self.options.connect_timeout;
                let (incarnation, handle) = self.register(r, connect_deadline)?;
                let timeout_ms = deadline.map_or(0, |d| {
                    d.saturating_duration_since(Instant::now())
                        .as_millis()
                        .max(1) as i64
                });
                let req = Envelope::new(Body::RunGraph(RunGraph {
                    handle,
                    step_id,
                    timeout_ms,
                    incarnation,
                }));
                let (reply, outs) = r.peer.call(req, &inputs, connect_deadline)?;
                match reply.body {
                    Some(Body::RanGraph(_)) if outs.len() == p.outputs.len() => Ok(outs),
                    _ => Err(Error::internal(format!(
                        "task {} answered RunGraph with an unexpected reply",
                        p.task
                    ))),
                }
            }
        }
    }

    fn register(&self, r: &RemoteGraph, connect_deadline: Instant) -> Result<(u64, u64)> {
        let mut h = r.handle.lock();
        if let Some(done) = *h {
            return Ok(done);
        }
        let req = Envelope::new(Body::RegisterGraph(RegisterGraph {
            graph_def: r.graph_def.clone(),
            feeds: r.feeds.clone(),
            fetches: r.fetches.clone(),
            targets: r.targets.clone(),
            incarnation: r.peer.incarnation().unwrap_or(0),
        }));
        let (reply, _) = r.peer.call(req, &[], connect_deadline)?;
        let handle = match reply.body {
            Some(Body::Registered(x)) => x.handle,
            _ => bail!(internal, "unexpected reply to RegisterGraph"),
        };
        let done = (r.peer.incarnation().unwrap_or(0), handle);
        *h = Some(done);
        Ok(done)
    }

    /// Frees the remote registrations (best effort) and the session's
    /// private state; the local server's resources stay.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let plans: Vec<_> = self.plans.lock().drain().map(|(_, p)| p).collect();
        let deadline = Instant::now() + Duration::from_millis(500);
        for plan in plans {
            if let PlanKind::Split(s) = &plan.kind {
                for p in s.stages.iter().flatten() {
                    if let PartitionExec::Remote(r) = &p.exec {
                        if let Some((_, handle)) = *r.handle.lock() {
                            let req =
                                Envelope::new(Body::DeregisterGraph(DeregisterGraph { handle }));
                            let _ = r.peer.call(req, &[], deadline);
                        }
                    }
                }
            }
        }
        self.local_session.close();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Tells every task of the cluster other than this one that training is
    /// done (servers started with `exit_when_chief_done` stop).
    pub fn shutdown_cluster(&self) -> Result<()> {
        // All at once, each given a short while: tasks that already exited
        // must not hold the chief up (a refused connect is retried until the
        // deadline).
        let deadline = Instant::now() + Duration::from_millis(500);
        let peers = self
            .cluster
            .tasks()
            .filter(|(task, _)| self.local.as_ref().is_none_or(|l| l.task != *task))
            .map(|(task, _)| self.peer(&task))
            .collect::<Result<Vec<_>>>()?;
        std::thread::scope(|scope| {
            for peer in &peers {
                scope.spawn(move || {
                    let bye = Envelope::new(Body::Shutdown(crate::wire::Shutdown {}));
                    let _ = peer.call(bye, &[], deadline);
                });
            }
        });
        Ok(())
    }

    fn compile(
        &self,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<DistPlan> {
        let graph = self.graph.read();
        let fed: HashSet<Output> = feeds.iter().copied().collect();
        for o in feeds.iter().chain(fetches) {
            if graph.get(o.node).is_none_or(|n| o.index >= n.outputs.len()) {
                bail!(
                    invalid_argument,
                    "tensor {}:{} is not in the graph",
                    o.node,
                    o.index
                );
            }
        }
        if let Some(t) = targets.iter().find(|&&t| t >= graph.len()) {
            bail!(invalid_argument, "operation {t} is not in the graph");
        }
        // What the step needs, stopping at fed tensors.
        let mut needed = vec![false; graph.len()];
        let mut stack: Vec<NodeId> = fetches
            .iter()
            .filter(|o| !fed.contains(o))
            .map(|o| o.node)
            .chain(targets.iter().copied())
            .collect();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut needed[n], true) {
                continue;
            }
            let node = graph.node(n);
            stack.extend(
                node.inputs
                    .iter()
                    .filter(|o| !fed.contains(o))
                    .map(|o| o.node),
            );
            stack.extend(node.control_inputs.iter().copied().filter(|&c| {
                !ferroflow_runtime::control_satisfied_by_feed(&graph, c, |o| fed.contains(o))
            }));
        }
        let order = topological_order(&graph, &needed, &fed)?;
        let preds = |n: NodeId| {
            let node = graph.node(n);
            node.inputs
                .iter()
                .filter(|o| !fed.contains(o))
                .map(|o| o.node)
                .chain(node.control_inputs.iter().copied())
                .collect::<Vec<_>>()
        };
        // Placement.
        let mut task_of: HashMap<NodeId, TaskId> = HashMap::new();
        for &n in &order {
            let node = graph.node(n);
            let def = ferroflow_graph::lookup(&node.op);
            let colocated = node.inputs.iter().enumerate().find_map(|(i, o)| {
                let info = graph.output(*o);
                let binds = info.dtype == DType::Resource
                    || (info.is_ref && def.as_ref().is_some_and(|d| d.takes_ref(i, &node.attrs)));
                if binds && !fed.contains(o) {
                    task_of.get(&o.node).cloned()
                } else {
                    None
                }
            });
            let task = match colocated {
                Some(t) => t,
                None => self.task_for_device(&node.device, &node.name)?,
            };
            task_of.insert(n, task);
        }
        let all_local = self
            .local
            .as_ref()
            .is_some_and(|l| task_of.values().all(|t| *t == l.task));
        if all_local || order.is_empty() {
            return Ok(DistPlan {
                kind: PlanKind::Local(self.local_session.prepare(feeds, fetches, targets)?),
            });
        }
        // Resource-creating sources are copied into each partition of their
        // task that uses them; they also run on their own (stage 0) when a
        // value of theirs is fetched or crosses to another task.
        let replicable = |n: NodeId| {
            let node = graph.node(n);
            node.inputs.is_empty()
                && node.control_inputs.is_empty()
                && (node.op == "Const"
                    || (!node.outputs.is_empty()
                        && node
                            .outputs
                            .iter()
                            .all(|o| o.is_ref || o.dtype == DType::Resource)))
        };
        // Constants are copied into whichever partition uses them, on any task.
        let is_const = |n: NodeId| replicable(n) && graph.node(n).op == "Const";
        let mut stage: HashMap<NodeId, usize> = HashMap::new();
        for &n in &order {
            let s = preds(n)
                .into_iter()
                .filter(|p| needed[*p])
                .filter_map(|p| {
                    let cross = task_of[&p] != task_of[&n];
                    if replicable(p) && (!cross || is_const(p)) {
                        None
                    } else {
                        Some(stage[&p] + usize::from(cross))
                    }
                })
                .max()
                .unwrap_or(0);
            stage.insert(n, if replicable(n) { 0 } else { s });
        }
        // Partition members.
        let target_set: HashSet<NodeId> = targets.iter().copied().collect();
        let fetched: HashSet<NodeId> = fetches
            .iter()
            .filter(|o| !fed.contains(o))
            .map(|o| o.node)
            .collect();
        let mut consumers: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for &n in &order {
            for p in preds(n) {
                consumers.entry(p).or_default().push(n);
            }
        }
        let home = |n: NodeId| (stage[&n], task_of[&n].clone());
        let mut groups: BTreeMap<(usize, TaskId), Vec<NodeId>> = BTreeMap::new();
        for &n in &order {
            if replicable(n) {
                let crosses = !is_const(n)
                    && consumers
                        .get(&n)
                        .is_some_and(|cs| cs.iter().any(|c| task_of[c] != task_of[&n]));
                if crosses || fetched.contains(&n) || target_set.contains(&n) {
                    groups.entry(home(n)).or_default().push(n);
                }
            } else {
                groups.entry(home(n)).or_default().push(n);
            }
        }
        // Copy replicable producers into the groups of their task that use them.
        let mut members: BTreeMap<(usize, TaskId), Vec<NodeId>> = BTreeMap::new();
        for (key, nodes) in &groups {
            let mut set: HashSet<NodeId> = nodes.iter().copied().collect();
            for &n in nodes {
                for p in preds(n) {
                    if needed[p] && replicable(p) && (task_of[&p] == key.1 || is_const(p)) {
                        set.insert(p);
                    }
                }
            }
            let mut list: Vec<NodeId> = set.into_iter().collect();
            let pos: HashMap<NodeId, usize> =
                order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
            list.sort_by_key(|n| pos[n]);
            members.insert(key.clone(), list);
        }
        // Inputs of each group; what each group must hand out.
        let mut group_inputs: BTreeMap<(usize, TaskId), Vec<Output>> = BTreeMap::new();
        let mut group_outputs: BTreeMap<(usize, TaskId), Vec<Output>> = BTreeMap::new();
        let producer_group = |o: &Output| home(o.node);
        for (key, list) in &members {
            let set: HashSet<NodeId> = list.iter().copied().collect();
            let mut ins: Vec<Output> = Vec::new();
            for &n in list {
                let node = graph.node(n);
                for (i, o) in node.inputs.iter().enumerate() {
                    if set.contains(&o.node) && !fed.contains(o) {
                        continue;
                    }
                    if !fed.contains(o) {
                        let info = graph.output(*o);
                        let def = ferroflow_graph::lookup(&node.op);
                        if info.is_ref && def.is_some_and(|d| d.takes_ref(i, &node.attrs)) {
                            bail!(
                                unimplemented,
                                "node '{}' on {} updates the variable reference that '{}' returns \
                                 in an earlier round of the step; ferroflow's cluster sessions \
                                 cannot pass references between rounds",
                                node.name,
                                key.1,
                                graph.node(o.node).name
                            );
                        }
                        ensure!(
                            info.dtype != DType::Resource,
                            unimplemented,
                            "node '{}' on {} takes the resource handle '{}' from another task",
                            node.name,
                            key.1,
                            graph.output_name(*o)
                        );
                        let out = group_outputs.entry(producer_group(o)).or_default();
                        if !out.contains(o) {
                            out.push(*o);
                        }
                    }
                    if !ins.contains(o) {
                        ins.push(*o);
                    }
                }
            }
            group_inputs.insert(key.clone(), ins);
        }
        for o in fetches.iter().filter(|o| !fed.contains(o)) {
            let out = group_outputs.entry(producer_group(o)).or_default();
            if !out.contains(o) {
                out.push(*o);
            }
        }
        // Build the partitions.
        let mut stages: Vec<Vec<Partition>> = Vec::new();
        for (key, list) in &members {
            let set: HashSet<NodeId> = list.iter().copied().collect();
            let inputs = group_inputs.remove(key).unwrap_or_default();
            let outputs = group_outputs.remove(key).unwrap_or_default();
            let out_nodes: HashSet<NodeId> = outputs.iter().map(|o| o.node).collect();
            // Sinks: members nothing else in the partition consumes.
            let part_targets: Vec<NodeId> = list
                .iter()
                .copied()
                .filter(|n| {
                    !out_nodes.contains(n)
                        && !consumers
                            .get(n)
                            .is_some_and(|cs| cs.iter().any(|c| set.contains(c)))
                })
                .collect();
            let in_process = self.local.as_ref().is_some_and(|l| l.task == key.1);
            let exec = if in_process {
                let mut mask = vec![false; graph.len()];
                for &n in list {
                    mask[n] = true;
                }
                PartitionExec::InProcess(self.local_session.compile_partition(
                    &inputs,
                    &outputs,
                    &part_targets,
                    &mask,
                )?)
            } else {
                PartitionExec::Remote(build_remote(
                    &graph,
                    self.peer(&key.1)?,
                    &key.1,
                    list,
                    &inputs,
                    &outputs,
                    &part_targets,
                )?)
            };
            if stages.len() <= key.0 {
                stages.resize_with(key.0 + 1, Vec::new);
            }
            stages[key.0].push(Partition {
                task: key.1.clone(),
                inputs,
                outputs,
                exec,
            });
        }
        stages.retain(|s| !s.is_empty());
        Ok(DistPlan {
            kind: PlanKind::Split(SplitPlan {
                feeds: feeds.to_vec(),
                fetches: fetches.to_vec(),
                stages,
            }),
        })
    }

    fn task_for_device(&self, device: &str, node: &str) -> Result<TaskId> {
        let (job, task) = parse_device(device)
            .map_err(|e| Error::invalid_argument(format!("node '{node}': {}", e.message())))?;
        let Some(job) = job else {
            return Ok(self.default_task.clone());
        };
        if job == "localhost" && self.cluster.address(&TaskId::new("localhost", 0)).is_none() {
            return Ok(self.default_task.clone());
        }
        let id = TaskId::new(&job, task.unwrap_or(0));
        if self.cluster.address(&id).is_none() {
            bail!(
                invalid_argument,
                "Cannot assign a device for operation {node}: {device} names task {id}, which is \
                 not in the cluster {}",
                self.cluster.to_json()
            );
        }
        Ok(id)
    }
}

impl Drop for DistSession {
    fn drop(&mut self) {
        self.close();
    }
}

impl Peer {
    /// Connects (retrying until `deadline`) and returns the server's welcome.
    pub(crate) fn hello(&self, deadline: Instant) -> Result<crate::wire::Welcome> {
        self.welcome(deadline)
    }
}

/// The needed nodes, every node after its inputs and control inputs; a
/// cycle (a malformed graph) is an error.
fn topological_order(graph: &Graph, needed: &[bool], fed: &HashSet<Output>) -> Result<Vec<NodeId>> {
    let order = ferroflow_runtime::execution_order(graph, needed, |o| fed.contains(o));
    let mut done = vec![false; needed.len()];
    for &n in &order {
        let node = graph.node(n);
        let ready = node
            .inputs
            .iter()
            .filter(|o| !fed.contains(o))
            .map(|o| o.node)
            .chain(node.control_inputs.iter().copied())
            .all(|p| !needed[p] || done[p]);
        ensure!(
            ready,
            invalid_argument,
            "the graph has a cycle through node '{}'",
            node.name
        );
        done[n] = true;
    }
    Ok(order)
}

/// The partition graph sent to a task: the members, with a placeholder
/// standing in for every value that comes from outside.
fn build_remote(
    graph: &Graph,
    peer: Arc<Peer>,
    task: &TaskId,
    members: &[NodeId],
    inputs: &[Output],
    outputs: &[Output],
    targets: &[NodeId],
) -> Result<RemoteGraph> {
    let functions: HashSet<&str> = graph.function_names().into_iter().collect();
    let mut part = Graph::new();
    let mut map: HashMap<Output, Output> = HashMap::new();
    let mut feed_names = Vec::with_capacity(inputs.len());
    for (k, o) in inputs.iter().enumerate() {
        let info = graph.output(*o);
        let name = format!("_ferroflow_recv_{k}");
        let id = part.add_node(
            NodeSpec::new("Placeholder", &name)
                .attr("dtype", AttrValue::Type(info.dtype))
                .attr("shape", AttrValue::Shape(info.shape.clone())),
        )?;
        map.insert(*o, Output::new(id, 0));
        feed_names.push(format!("{name}:0"));
    }
    let mut node_map: HashMap<NodeId, NodeId> = HashMap::new();
    for &n in members {
        let node = graph.node(n);
        if let Some(f) = node.attrs.values().find_map(|v| match v {
            AttrValue::Str(s) => std::str::from_utf8(s)
                .ok()
                .filter(|s| functions.contains(s)),
            _ => None,
        }) {
            bail!(
                unimplemented,
                "node '{}' placed on {task} calls the graph function '{f}'; graphs with functions \
                 (tf.cond, tf.while_loop) run only on the session's own task so far: place it \
                 there",
                node.name
            );
        }
        let spec = NodeSpec {
            op: node.op.clone(),
            name: node.name.clone(),
            inputs: node
                .inputs
                .iter()
                .map(|o| {
                    map.get(o)
                        .copied()
                        .or_else(|| node_map.get(&o.node).map(|&id| Output::new(id, o.index)))
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::internal(format!("partition input of '{}' missing", node.name))
                })?,
            control_inputs: node
                .control_inputs
                .iter()
                .filter_map(|c| node_map.get(c).copied())
                .collect(),
            attrs: node.attrs.clone(),
            device: node.device.clone(),
        };
        let id = part.add_node(spec).map_err(|e| e.at_node(&node.name))?;
        node_map.insert(n, id);
    }
    let out_name = |o: &Output| -> Result<String> {
        let id = node_map
            .get(&o.node)
            .ok_or_else(|| Error::internal("partition output outside the partition"))?;
        Ok(format!("{}:{}", part.node(*id).name, o.index))
    };
    let fetches = outputs.iter().map(out_name).collect::<Result<Vec<_>>>()?;
    let targets = targets
        .iter()
        .map(|t| graph.node(*t).name.clone())
        .collect();
    let def = ferroflow_records::graph_def::graph_def(&part, 0, false, 0);
    Ok(RemoteGraph {
        peer,
        graph_def: def.encode_to_vec(),
        feeds: feed_names,
        fetches,
        targets,
        handle: Mutex::new(None),
    })
}
