//! `_native.Session` and `_native.Runner`: run steps of a graph in-process
//! (the runtime's session) or across a cluster (`ferroflow_dist`'s session,
//! when the Python session has a `grpc://` target). Both compile each
//! signature once and run it with the GIL released.

use crate::convert::{decode_tid, to_py, to_tensor};
use crate::errors::{guard, IntoPyResult};
use crate::Graph;
use ferroflow_dist::master::{DistOptions, DistPlan};
use ferroflow_dist::{ClientSecurity, DistSession};
use ferroflow_graph::{NodeId, Output};
use ferroflow_runtime::{Plan, Session as CoreSession, SessionOptions, StepTrace};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What runs a session's steps.
enum Engine {
    Local(Arc<CoreSession>),
    Cluster(Arc<DistSession>),
}

/// A compiled signature of either engine.
#[derive(Clone)]
enum AnyPlan {
    Local(Arc<Plan>),
    Cluster(Arc<DistPlan>),
}

impl Engine {
    fn prepare(&self, feeds: &[Output], fetches: &[Output], targets: &[NodeId]) -> Result<AnyPlan> {
        match self {
            Engine::Local(s) => s.prepare(feeds, fetches, targets).map(AnyPlan::Local),
            Engine::Cluster(s) => s.prepare(feeds, fetches, targets).map(AnyPlan::Cluster),
        }
    }

    fn prepare_target(&self, target: NodeId) -> Result<AnyPlan> {
        match self {
            Engine::Local(s) => s.prepare_target(target).map(AnyPlan::Local),
            Engine::Cluster(s) => s.prepare(&[], &[], &[target]).map(AnyPlan::Cluster),
        }
    }

    fn run(
        &self,
        plan: &AnyPlan,
        feeds: Vec<Tensor>,
        deadline: Option<Instant>,
    ) -> Result<Vec<Tensor>> {
        match (self, plan) {
            (Engine::Local(s), AnyPlan::Local(p)) => s.run_plan_until(p, feeds, deadline),
            (Engine::Cluster(s), AnyPlan::Cluster(p)) => s.run_plan_until(p, feeds, deadline),
            _ => Err(Error::internal("a plan ran on another kind of session")),
        }
    }

    /// A traced run; a cluster run is not traced yet and reports no nodes.
    fn run_traced(
        &self,
        plan: &AnyPlan,
        feeds: Vec<Tensor>,
        deadline: Option<Instant>,
    ) -> Result<(Vec<Tensor>, StepTrace)> {
        match (self, plan) {
            (Engine::Local(s), AnyPlan::Local(p)) => s.run_plan_traced(p, feeds, deadline),
            _ => Ok((self.run(plan, feeds, deadline)?, StepTrace::default())),
        }
    }
}

fn feeds_to_tensors(
    feed_values: &[Bound<'_, PyAny>],
    feed_dtypes: &[i32],
) -> PyResult<Vec<Tensor>> {
    feed_values
        .iter()
        .zip(
            feed_dtypes
                .iter()
                .map(|&d| DType::from_enum(d))
                .chain(std::iter::repeat(None)),
        )
        .map(|(v, hint)| to_tensor(v, hint))
        .collect()
}

fn results_to_py(py: Python<'_>, out: Vec<Tensor>) -> PyResult<Py<PyAny>> {
    let items = out
        .into_iter()
        .map(|t| to_py(py, t))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

/// `(device, [(name, label, all_start_ns, op_start_rel_ns, op_end_rel_ns,
/// all_end_rel_ns, thread_id)], [(thread_id, thread_name)])`.
fn trace_to_py(py: Python<'_>, trace: StepTrace) -> PyResult<Py<PyAny>> {
    let nodes = trace
        .nodes
        .into_iter()
        .map(|n| {
            (
                n.node_name,
                n.timeline_label,
                n.all_start_nanos,
                n.op_start_rel_nanos,
                n.op_end_rel_nanos,
                n.all_end_rel_nanos,
                n.thread_id,
            )
        })
        .collect::<Vec<_>>();
    Ok((trace.device, nodes, trace.thread_names)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

/// Runs a plan; with `trace`, returns `(results, trace)` instead of
/// `results`. `timeout_ms > 0` bounds how long its kernels may wait
/// (`RunOptions.timeout_in_ms`).
fn run_plan(
    py: Python<'_>,
    engine: &Engine,
    plan: &AnyPlan,
    feeds: Vec<Tensor>,
    trace: bool,
    timeout_ms: i64,
) -> PyResult<Py<PyAny>> {
    let deadline =
        (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    if trace {
        let (out, tr) = py
            .detach(|| guard(|| engine.run_traced(plan, feeds, deadline)))
            .py(py)?;
        let pair = (results_to_py(py, out)?, trace_to_py(py, tr)?);
        return Ok(pair.into_pyobject(py)?.into_any().unbind());
    }
    let out = py
        .detach(|| guard(|| engine.run(plan, feeds, deadline)))
        .py(py)?;
    results_to_py(py, out)
}

/// A session: in-process, or over a cluster when given a `grpc://` target.
#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct Session {
    engine: Arc<Engine>,
}

impl Session {
    /// The in-process session; `None` for a cluster session.
    pub(crate) fn local(&self) -> Option<Arc<CoreSession>> {
        match &*self.engine {
            Engine::Local(s) => Some(s.clone()),
            Engine::Cluster(_) => None,
        }
    }
}

#[pymethods]
impl Session {
    /// A session over `graph`; `intra_op_threads > 0` gives its kernels a
    /// thread pool of that size (0: the process-wide pool), and
    /// `inter_op_threads > 1` lets that many of a run's independent steps
    /// run at once (0 or 1: one at a time). A `target` of
    /// `grpc://host:port` runs the graph across that server's cluster
    /// (credentials from `FERROFLOW_CLUSTER_TOKEN[_FILE]` and
    /// `FERROFLOW_TLS_*`); `connect_timeout_ms` bounds the wait for tasks
    /// that are not up yet (0: 60 s). `mixed_precision_bf16` turns on the
    /// bfloat16 rewrite of a local session's plans
    /// (`auto_mixed_precision_onednn_bfloat16`).
    #[new]
    #[pyo3(signature = (graph, intra_op_threads = 0, target = "", connect_timeout_ms = 0, mixed_precision_bf16 = false, inter_op_threads = 0))]
    fn new(
        py: Python<'_>,
        graph: &Graph,
        intra_op_threads: usize,
        target: &str,
        connect_timeout_ms: u64,
        mixed_precision_bf16: bool,
        inter_op_threads: usize,
    ) -> PyResult<Session> {
        let engine = if target.is_empty() {
            let options = SessionOptions {
                intra_op_threads,
                inter_op_threads,
                mixed_precision_bf16,
            };
            Engine::Local(Arc::new(
                guard(|| CoreSession::with_options(graph.inner.clone(), options)).py(py)?,
            ))
        } else {
            let graph = graph.inner.clone();
            let target = target.to_string();
            let session = py
                .detach(|| {
                    guard(|| {
                        let mut options = DistOptions {
                            security: ClientSecurity::from_env()?,
                            ..Default::default()
                        };
                        if connect_timeout_ms > 0 {
                            options.connect_timeout = Duration::from_millis(connect_timeout_ms);
                        }
                        DistSession::connect(graph, &target, options)
                    })
                })
                .py(py)?;
            Engine::Cluster(Arc::new(session))
        };
        Ok(Session {
            engine: Arc::new(engine),
        })
    }

    /// Runs one step: feeds (tensor ids, arrays, dtype enums), fetches
    /// (tensor ids) and targets (op ids). Returns the fetched values, or
    /// `(values, trace)` when `trace` is set (see `trace_to_py`).
    /// `timeout_ms > 0` fails the run with `DeadlineExceededError` if its
    /// kernels still wait (for a queue, an iterator) after that long.
    #[pyo3(signature = (feed_ids, feed_values, feed_dtypes, fetch_ids, target_ids, trace = false, timeout_ms = 0))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        feed_ids: Vec<u64>,
        feed_values: Vec<Bound<'_, PyAny>>,
        feed_dtypes: Vec<i32>,
        fetch_ids: Vec<u64>,
        target_ids: Vec<usize>,
        trace: bool,
        timeout_ms: i64,
    ) -> PyResult<Py<PyAny>> {
        let feeds: Vec<Output> = feed_ids.into_iter().map(decode_tid).collect();
        let fetches: Vec<Output> = fetch_ids.into_iter().map(decode_tid).collect();
        let tensors = feeds_to_tensors(&feed_values, &feed_dtypes)?;
        let plan = py
            .detach(|| guard(|| self.engine.prepare(&feeds, &fetches, &target_ids)))
            .py(py)?;
        run_plan(py, &self.engine, &plan, tensors, trace, timeout_ms)
    }

    /// Runs one op and everything it depends on, with no feeds or fetches:
    /// `Session.run(train_op)`, the training step's path.
    fn run_target(&self, py: Python<'_>, target_id: usize) -> PyResult<()> {
        let engine = &self.engine;
        py.detach(|| {
            guard(|| {
                let plan = engine.prepare_target(target_id)?;
                engine.run(&plan, Vec::new(), None)
            })
        })
        .py(py)?;
        Ok(())
    }

    /// Evaluates one tensor with no feeds: `Session.run(loss)`.
    fn run_fetch(&self, py: Python<'_>, fetch_id: u64) -> PyResult<Py<PyAny>> {
        let fetch = [decode_tid(fetch_id)];
        let engine = &self.engine;
        let mut out = py
            .detach(|| {
                guard(|| {
                    let plan = engine.prepare(&[], &fetch, &[])?;
                    engine.run(&plan, Vec::new(), None)
                })
            })
            .py(py)?;
        match out.pop() {
            Some(t) if out.is_empty() => Ok(to_py(py, t)?.unbind()),
            _ => Err(Error::internal(
                "a one-tensor run returned another number of values",
            ))
            .py(py),
        }
    }

    /// Threads a kernel of this session may use.
    #[getter]
    fn intra_op_threads(&self) -> usize {
        match &*self.engine {
            Engine::Local(s) => s.intra_op_threads(),
            Engine::Cluster(_) => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// Steps of one run that may execute at the same time.
    #[getter]
    fn inter_op_threads(&self) -> usize {
        match &*self.engine {
            Engine::Local(s) => s.inter_op_threads(),
            Engine::Cluster(_) => 1,
        }
    }

    /// For a cluster session, `(job, task)` where nodes without a job run;
    /// `None` for an in-process session.
    #[getter]
    fn default_task(&self) -> Option<(String, u32)> {
        match &*self.engine {
            Engine::Local(_) => None,
            Engine::Cluster(s) => Some((s.default_task().job.clone(), s.default_task().task)),
        }
    }

    /// Compiles a signature once and returns a callable taking the feed values.
    fn make_callable(
        &self,
        py: Python<'_>,
        feed_ids: Vec<u64>,
        feed_dtypes: Vec<i32>,
        fetch_ids: Vec<u64>,
        target_ids: Vec<usize>,
    ) -> PyResult<Runner> {
        let feeds: Vec<Output> = feed_ids.into_iter().map(decode_tid).collect();
        let fetches: Vec<Output> = fetch_ids.into_iter().map(decode_tid).collect();
        let plan = py
            .detach(|| guard(|| self.engine.prepare(&feeds, &fetches, &target_ids)))
            .py(py)?;
        Ok(Runner {
            engine: self.engine.clone(),
            plan,
            feed_dtypes,
        })
    }

    /// Tells the cluster's other tasks that training is done (servers started
    /// to exit when the chief is done stop); nothing for an in-process session.
    fn shutdown_cluster(&self, py: Python<'_>) -> PyResult<()> {
        match &*self.engine {
            Engine::Local(_) => Ok(()),
            Engine::Cluster(s) => py.detach(|| guard(|| s.shutdown_cluster())).py(py),
        }
    }

    /// Wakes every waiting kernel with `CancelledError` and frees the
    /// session's state (without the GIL: waiters may need it to return).
    fn close(&self, py: Python<'_>) {
        py.detach(|| match &*self.engine {
            Engine::Local(s) => s.close(),
            Engine::Cluster(s) => s.close(),
        });
    }

    #[getter]
    fn closed(&self) -> bool {
        match &*self.engine {
            Engine::Local(s) => s.is_closed(),
            Engine::Cluster(s) => s.is_closed(),
        }
    }
}

/// A compiled run signature (`Session.make_callable`).
#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct Runner {
    engine: Arc<Engine>,
    plan: AnyPlan,
    feed_dtypes: Vec<i32>,
}

#[pymethods]
impl Runner {
    /// Runs the plan; with `trace`, returns `(values, trace)` like
    /// `Session.run`; `timeout_ms` as in `Session.run`.
    #[pyo3(signature = (feed_values, trace = false, timeout_ms = 0))]
    fn __call__(
        &self,
        py: Python<'_>,
        feed_values: Vec<Bound<'_, PyAny>>,
        trace: bool,
        timeout_ms: i64,
    ) -> PyResult<Py<PyAny>> {
        let tensors = feeds_to_tensors(&feed_values, &self.feed_dtypes)?;
        run_plan(py, &self.engine, &self.plan, tensors, trace, timeout_ms)
    }
}
