//! `tf.gradients` across the language boundary: the `GradientRun` a
//! [`Graph`](crate::Graph)'s `gradients_start` returns, which Python steps
//! through, computing the gradients of ops whose gradient is Python's, and
//! `has_gradient`, which tells Python which op types the core differentiates.

use crate::convert::{decode_tid, encode_tid};
use crate::errors::{guard, IntoPyResult};
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::sync::Arc;

/// A `tf.gradients` computation that stops at ops whose gradient Python
/// computes (`tf.RegisterGradient`, `gradient_override_map`,
/// `tf.custom_gradient`). The graph lock is held only inside `step` and
/// `resume`, so the Python gradient function can add ops in between.
#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct GradientRun {
    pub(crate) graph: Arc<RwLock<ferroflow_graph::Graph>>,
    pub(crate) run: parking_lot::Mutex<ferroflow_autodiff::GradientRun>,
}

fn grad_to_py(py: Python<'_>, g: Option<ferroflow_autodiff::Grad>) -> PyResult<Py<PyAny>> {
    Ok(match g {
        None => py.None(),
        Some(ferroflow_autodiff::Grad::Dense(o)) => {
            encode_tid(o).into_pyobject(py)?.into_any().unbind()
        }
        Some(ferroflow_autodiff::Grad::Sparse {
            values,
            indices,
            dense_shape,
        }) => PyTuple::new(
            py,
            [
                encode_tid(values),
                encode_tid(indices),
                encode_tid(dense_shape),
            ],
        )?
        .into_any()
        .unbind(),
    })
}

fn grad_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Option<ferroflow_autodiff::Grad>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok((v, i, d)) = obj.extract::<(u64, u64, u64)>() {
        return Ok(Some(ferroflow_autodiff::Grad::Sparse {
            values: decode_tid(v),
            indices: decode_tid(i),
            dense_shape: decode_tid(d),
        }));
    }
    Ok(Some(ferroflow_autodiff::Grad::Dense(decode_tid(
        obj.extract()?,
    ))))
}

#[pymethods]
impl GradientRun {
    /// Runs until done, `("done", [grad per x])`, or until an op's gradient
    /// is Python's: `("external", node_id, grad_type, [grad per output],
    /// scope)`. A grad is None, a tensor id, or `(values, indices,
    /// dense_shape)` ids.
    fn step(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mut g = self.graph.write();
        let step = guard(|| self.run.lock().run(&mut g)).py(py)?;
        drop(g);
        match step {
            ferroflow_autodiff::Step::Done(grads) => {
                let out = grads
                    .into_iter()
                    .map(|x| grad_to_py(py, x))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(("done", PyList::new(py, out)?)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            }
            ferroflow_autodiff::Step::External(req) => {
                let grads = req
                    .out_grads
                    .into_iter()
                    .map(|o| grad_to_py(py, o.map(ferroflow_autodiff::Grad::Dense)))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok((
                    "external",
                    req.node,
                    req.grad_type,
                    PyList::new(py, grads)?,
                    req.scope,
                )
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            }
        }
    }

    /// The input gradients (one per input) of the op the last `step` named.
    fn resume(&self, py: Python<'_>, in_grads: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let grads = in_grads
            .iter()
            .map(grad_from_py)
            .collect::<PyResult<Vec<_>>>()?;
        let mut g = self.graph.write();
        guard(|| self.run.lock().resume(&mut g, grads)).py(py)
    }
}

/// Whether the core registers a gradient (or "no gradient") for `name`.
#[pyfunction]
pub(crate) fn has_gradient(name: &str) -> bool {
    matches!(name, "Identity" | "Snapshot") || ferroflow_autodiff::lookup(name).is_some()
}
