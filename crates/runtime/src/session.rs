//! Sessions: a graph, per-session state and a cache of compiled plans.

use crate::blocking;
use crate::plan::Plan;
use crate::resources::SessionState;
use crate::trace::StepTrace;
use ferroflow_graph::{Graph, NodeId, Output};
use ferroflow_tensor::denormal::{self, FlushDenormals};
use ferroflow_tensor::{bail, Error, Result, Tensor};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Instant;

#[derive(Clone, PartialEq, Eq, Hash)]
struct PlanKey {
    feeds: Vec<Output>,
    fetches: Vec<Output>,
    targets: Vec<NodeId>,
}

/// How a session runs (the parts of TensorFlow's `ConfigProto` that apply).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionOptions {
    /// Threads a single kernel may use (`intra_op_parallelism_threads`).
    /// 0 shares the process-wide pool, sized to the machine's cores.
    pub intra_op_threads: usize,
    /// Steps that may run at the same time (`inter_op_parallelism_threads`):
    /// above 1, a run's independent small steps run on that many threads less
    /// one beside the caller (see [`Plan::run_parallel`]); 0 and 1 run one
    /// step after another, each kernel on all the kernel threads.
    pub inter_op_threads: usize,
    /// Run float32 products and convolutions (and the ops TensorFlow's
    /// oneDNN lists put with them) in bfloat16, variables and losses in
    /// float32 (`auto_mixed_precision_onednn_bfloat16`; see
    /// [`crate::mixed_precision`]).
    pub mixed_precision_bf16: bool,
}

/// Runs parts of a graph. Safe to share between threads: concurrent runs
/// share compiled plans and variables (each variable has its own lock).
pub struct Session {
    graph: Arc<RwLock<Graph>>,
    state: Arc<SessionState>,
    /// False when the state is shared with other sessions (a cluster task's
    /// resources, see [`Session::with_shared_state`]): closing this session
    /// then leaves it alone.
    owns_state: bool,
    plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
    /// The plan of the last one-op run, looked at before `plans`: a training
    /// loop runs the same op every step, and after a step that streamed its
    /// data through the caches, building and hashing a key and probing the
    /// map are all misses (4 µs of a no-op run, measured).
    last_target: Mutex<Option<(NodeId, Arc<Plan>)>>,
    closed: AtomicBool,
    /// The session's own kernel thread pool, when its size was set, and the
    /// lock that lets one run at a time into it (see [`Session::on_pool`]).
    pool: Option<(rayon::ThreadPool, Mutex<()>)>,
    /// Plans run the bfloat16 rewrite of the graph (see [`SessionOptions`]).
    mixed_precision_bf16: bool,
    /// The workers that run small steps beside the caller's, when
    /// `inter_op_threads > 1`.
    inter_op: Option<rayon::ThreadPool>,
}

impl Session {
    /// A session using the process-wide thread pool.
    pub fn new(graph: Arc<RwLock<Graph>>) -> Session {
        Session {
            graph,
            state: Arc::new(SessionState::default()),
            owns_state: true,
            plans: Mutex::new(HashMap::new()),
            last_target: Mutex::new(None),
            closed: AtomicBool::new(false),
            pool: None,
            mixed_precision_bf16: false,
            inter_op: None,
        }
    }

    /// A session configured by `options`: with `intra_op_threads > 0` its
    /// kernels run on a pool of exactly that many threads.
    pub fn with_options(graph: Arc<RwLock<Graph>>, options: SessionOptions) -> Result<Session> {
        let mut s = Session::new(graph);
        s.mixed_precision_bf16 = options.mixed_precision_bf16;
        if options.intra_op_threads > 0 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(options.intra_op_threads)
                .thread_name(|i| format!("ferroflow intra-op {i}"))
                .build()
                .map_err(|e| {
                    Error::resource_exhausted(format!(
                        "cannot start {} intra-op threads: {e}",
                        options.intra_op_threads
                    ))
                })?;
            denormal::flush_on_rayon_workers(Some(&pool));
            s.pool = Some((pool, Mutex::new(())));
        }
        if options.inter_op_threads > 1 {
            let workers = rayon::ThreadPoolBuilder::new()
                .num_threads(options.inter_op_threads - 1)
                .thread_name(|i| format!("ferroflow inter-op {i}"))
                .start_handler(|_| ferroflow_tensor::team::run_kernels_alone())
                .build()
                .map_err(|e| {
                    Error::resource_exhausted(format!(
                        "cannot start {} inter-op threads: {e}",
                        options.inter_op_threads
                    ))
                })?;
            denormal::flush_on_rayon_workers(Some(&workers));
            s.inter_op = Some(workers);
        }
        Ok(s)
    }

    /// A session whose variables, queues and other resources live in
    /// `state`, shared with every other session given the same state: how a
    /// cluster task serves the graphs that several clients register with it
    /// (variables are found by name, as in TensorFlow's resource manager).
    /// Closing this session does not clear `state`.
    pub fn with_shared_state(graph: Arc<RwLock<Graph>>, state: Arc<SessionState>) -> Session {
        let mut s = Session::new(graph);
        s.state = state;
        s.owns_state = false;
        s
    }

    /// Threads a kernel of this session may use.
    pub fn intra_op_threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |(p, _)| p.current_num_threads())
    }

    /// Runs `f` on the session's thread pool (or the caller's thread), with
    /// denormal floats flushed to zero wherever its kernels run, as in
    /// TensorFlow (see [`ferroflow_tensor::denormal`]).
    ///
    /// Runs enter a session's own pool one at a time. A run there executes
    /// on a pool worker, and a worker waiting for its kernel's chunks picks
    /// up other queued work, which could be another run's whole plan: that
    /// run would then block on a variable lock the waiting worker itself
    /// holds (concurrent training steps deadlocked this way). On the global
    /// pool the plan stays on the caller's thread and only lock-free kernel
    /// chunks reach the workers, so runs proceed concurrently.
    ///
    /// A plan that [may block](Plan::may_block) runs on the caller's thread
    /// instead, outside the one-at-a-time turn: a waiting dequeue must not
    /// hold the turn the enqueue that would wake it needs (its kernels'
    /// parallel chunks then go to the process-wide pool).
    fn on_pool<R: Send>(&self, plan: &Plan, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(_) if plan.may_block() => {
                let _flush = FlushDenormals::new();
                f()
            }
            // The pool's workers flush for good (set when it was built).
            Some((p, one_run)) => {
                let _turn = one_run.lock();
                p.install(f)
            }
            None => {
                static GLOBAL_WORKERS: Once = Once::new();
                // A forked child has no rayon workers to reach (its kernels
                // run on this thread alone).
                if !ferroflow_tensor::team::in_forked_child() {
                    GLOBAL_WORKERS.call_once(|| denormal::flush_on_rayon_workers(None));
                }
                let _flush = FlushDenormals::new();
                f()
            }
        }
    }

    pub fn graph(&self) -> &Arc<RwLock<Graph>> {
        &self.graph
    }

    pub fn state(&self) -> &SessionState {
        &self.state
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            bail!(cancelled, "Attempted to use a closed Session.");
        }
        Ok(())
    }

    /// The compiled plan for a signature (compiled on first use, then cached).
    pub fn prepare(
        &self,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<Arc<Plan>> {
        self.check_open()?;
        let key = PlanKey {
            feeds: feeds.to_vec(),
            fetches: fetches.to_vec(),
            targets: targets.to_vec(),
        };
        if let Some(p) = self.plans.lock().get(&key) {
            return Ok(p.clone());
        }
        let plan = {
            let g = self.graph.read();
            if self.mixed_precision_bf16 {
                let (g, fetches) = crate::mixed_precision::rewrite_bf16(&g, feeds, fetches)?;
                Arc::new(Plan::compile(&g, &self.state, feeds, &fetches, targets)?)
            } else {
                Arc::new(Plan::compile(&g, &self.state, feeds, fetches, targets)?)
            }
        };
        self.plans.lock().insert(key, plan.clone());
        Ok(plan)
    }

    /// A plan (not cached) that runs only the nodes marked in `members`, one
    /// partition of a step split across cluster tasks: data from other nodes
    /// must be fed, and control inputs from other nodes are left to whoever
    /// orders the partitions.
    pub fn compile_partition(
        &self,
        feeds: &[Output],
        fetches: &[Output],
        targets: &[NodeId],
        members: &[bool],
    ) -> Result<Arc<Plan>> {
        self.check_open()?;
        let g = self.graph.read();
        Ok(Arc::new(Plan::compile_within(
            &g,
            &self.state,
            feeds,
            fetches,
            targets,
            Some(members),
        )?))
    }

    /// [`Session::prepare`] for a run of the one op `target`, with no feeds
    /// or fetches (a training step).
    pub fn prepare_target(&self, target: NodeId) -> Result<Arc<Plan>> {
        self.check_open()?;
        if let Some((id, plan)) = self.last_target.lock().as_ref() {
            if *id == target {
                return Ok(plan.clone());
            }
        }
        let plan = self.prepare(&[], &[], &[target])?;
        *self.last_target.lock() = Some((target, plan.clone()));
        Ok(plan)
    }

    /// Runs a prepared plan with values for its feeds (in plan order).
    pub fn run_plan(&self, plan: &Plan, feeds: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.check_open()?;
        self.on_pool(plan, || self.execute(plan, feeds))
    }

    /// Runs a plan, with independent steps at once when the session has
    /// inter-op workers.
    fn execute(&self, plan: &Plan, feeds: Vec<Tensor>) -> Result<Vec<Tensor>> {
        match &self.inter_op {
            Some(workers) => plan.run_parallel(&self.state, feeds, workers),
            None => plan.run(&self.state, feeds),
        }
    }

    /// Steps of one run that may run at the same time.
    pub fn inter_op_threads(&self) -> usize {
        self.inter_op
            .as_ref()
            .map_or(1, |w| w.current_num_threads() + 1)
    }

    /// Like [`Session::run_plan`], failing with `DeadlineExceededError` if a
    /// kernel still waits (for a queue, an iterator) at `deadline`
    /// (`RunOptions.timeout_in_ms`).
    pub fn run_plan_until(
        &self,
        plan: &Plan,
        feeds: Vec<Tensor>,
        deadline: Option<Instant>,
    ) -> Result<Vec<Tensor>> {
        self.check_open()?;
        self.on_pool(plan, || {
            blocking::with_deadline(deadline, || self.execute(plan, feeds))
        })
    }

    /// Like [`Session::run_plan_until`], also returning per-node timings.
    pub fn run_plan_traced(
        &self,
        plan: &Plan,
        feeds: Vec<Tensor>,
        deadline: Option<Instant>,
    ) -> Result<(Vec<Tensor>, StepTrace)> {
        self.check_open()?;
        self.on_pool(plan, || {
            blocking::with_deadline(deadline, || plan.run_traced(&self.state, feeds))
        })
    }

    /// Feeds `feeds`, runs `targets` and whatever `fetches` need, and returns
    /// the fetched values.
    pub fn run(
        &self,
        feeds: Vec<(Output, Tensor)>,
        fetches: &[Output],
        targets: &[NodeId],
    ) -> Result<Vec<Tensor>> {
        let (outs, vals): (Vec<Output>, Vec<Tensor>) = feeds.into_iter().unzip();
        let plan = self.prepare(&outs, fetches, targets)?;
        self.run_plan(&plan, vals)
    }

    /// Wakes every waiting kernel with `CancelledError`, then frees the
    /// session's variables and state; later runs fail.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.plans.lock().clear();
        self.last_target.lock().take();
        if self.owns_state {
            self.state.clear();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}
