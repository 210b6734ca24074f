//! `_native.PartialRun`: the values one `Session.partial_run_setup` handle
//! has computed or been fed so far.
//!
//! TensorFlow runs a partial run as one step whose feeds arrive over several
//! calls: each node runs once, as soon as its inputs are there. Here every
//! call runs the nodes that became runnable as one partition of the graph
//! (`Session::compile_partition`): the Python side (`client/partial_run.py`)
//! picks those nodes, and this object feeds the partition every value kept
//! from earlier calls, so nothing that already ran runs again (control edges
//! to nodes that ran before are dropped, as they are satisfied).

use crate::convert::{decode_tid, to_py, to_tensor};
use crate::errors::{guard, IntoPyResult};
use crate::session::Session;
use ferroflow_graph::Output;
use ferroflow_runtime::Session as CoreSession;
use ferroflow_tensor::{DType, Error, Tensor};
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct PartialRun {
    session: Arc<CoreSession>,
    /// Fed values and the outputs later nodes or fetches still need.
    values: Mutex<HashMap<Output, Tensor>>,
}

#[pymethods]
impl PartialRun {
    /// An empty partial run of `session` (in-process sessions only).
    #[new]
    fn new(py: Python<'_>, session: &Session) -> PyResult<PartialRun> {
        let session = session.local().ok_or_else(|| {
            Error::unimplemented("partial runs are not supported on a cluster (grpc://) session")
        });
        Ok(PartialRun {
            session: session.py(py)?,
            values: Mutex::new(HashMap::new()),
        })
    }

    /// Stores fed values (tensor ids, values, dtype enums).
    fn feed(
        &self,
        feed_ids: Vec<u64>,
        feed_values: Vec<Bound<'_, PyAny>>,
        feed_dtypes: Vec<i32>,
    ) -> PyResult<()> {
        let mut tensors = Vec::with_capacity(feed_ids.len());
        for (v, &d) in feed_values.iter().zip(&feed_dtypes) {
            tensors.push(to_tensor(v, DType::from_enum(d))?);
        }
        let mut values = self.values.lock();
        for (id, t) in feed_ids.into_iter().zip(tensors) {
            values.insert(decode_tid(id), t);
        }
        Ok(())
    }

    /// Runs the ops `members` (every one of them), fed with every stored
    /// value that no member produces. Keeps the outputs `keep_ids` for later
    /// calls and returns the values of `fetch_ids` (computed now or stored).
    /// `timeout_ms > 0` bounds how long kernels may wait.
    #[pyo3(signature = (members, fetch_ids, keep_ids, timeout_ms = 0))]
    fn step(
        &self,
        py: Python<'_>,
        members: Vec<usize>,
        fetch_ids: Vec<u64>,
        keep_ids: Vec<u64>,
        timeout_ms: i64,
    ) -> PyResult<Py<PyAny>> {
        let fetches: Vec<Output> = fetch_ids.into_iter().map(decode_tid).collect();
        let keep: Vec<Output> = keep_ids.into_iter().map(decode_tid).collect();
        let deadline =
            (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        let session = &self.session;
        let values = &self.values;
        let out = py
            .detach(|| {
                guard(|| {
                    let mut values = values.lock();
                    if members.is_empty() {
                        return fetches
                            .iter()
                            .map(|o| {
                                values.get(o).cloned().ok_or_else(|| {
                                    Error::internal(
                                        "a partial run's fetch was neither run nor kept",
                                    )
                                })
                            })
                            .collect();
                    }
                    let n = session.graph().read().len();
                    let mut member = vec![false; n];
                    for &m in &members {
                        if m >= n {
                            return Err(Error::invalid_argument(format!(
                                "operation {m} is not in the graph"
                            )));
                        }
                        member[m] = true;
                    }
                    let (feeds, fed): (Vec<Output>, Vec<Tensor>) = values
                        .iter()
                        .filter(|(o, _)| !member[o.node])
                        .map(|(o, t)| (*o, t.clone()))
                        .unzip();
                    // Outputs this partition computes: the fetches not stored yet, then the kept ones.
                    let mut computed: Vec<Output> = Vec::new();
                    for o in fetches.iter().chain(&keep) {
                        if !values.contains_key(o) && !computed.contains(o) {
                            computed.push(*o);
                        }
                    }
                    let plan = session.compile_partition(&feeds, &computed, &members, &member)?;
                    let results = session.run_plan_until(&plan, fed, deadline)?;
                    let computed: HashMap<Output, Tensor> =
                        computed.into_iter().zip(results).collect();
                    let out = fetches
                        .iter()
                        .map(|o| {
                            computed
                                .get(o)
                                .or_else(|| values.get(o))
                                .cloned()
                                .ok_or_else(|| {
                                    Error::internal(
                                        "a partial run's fetch was neither run nor kept",
                                    )
                                })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    for o in keep {
                        if let Some(t) = computed.get(&o) {
                            values.insert(o, t.clone());
                        }
                    }
                    Ok(out)
                })
            })
            .py(py)?;
        let items = out
            .into_iter()
            .map(|t| to_py(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any().unbind())
    }

    /// Drops every stored value.
    fn clear(&self) {
        self.values.lock().clear();
    }
}
