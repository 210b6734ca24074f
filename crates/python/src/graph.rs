//! The `Graph` class: a graph under construction, shared with the sessions
//! that run it, with the node, shape, function-library and finalization calls
//! the Python `tf.Graph` makes, and `gradients_start`, which hands out a
//! [`GradientRun`]. Also `registered_ops`, the op types a graph accepts.

use crate::convert::{attr_from_py, attr_to_py, decode_tid, encode_tid, shape_to_py, to_py};
use crate::errors::{guard, IntoPyResult};
use crate::gradients::GradientRun;
use ferroflow_graph::{Attrs, NodeSpec, Output, PartialShape};
use parking_lot::RwLock;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::Arc;

/// A graph under construction, shared with the sessions that run it.
#[pyclass(module = "ferroflow._native", frozen)]
pub(crate) struct Graph {
    pub(crate) inner: Arc<RwLock<ferroflow_graph::Graph>>,
}

fn output_info(py: Python<'_>, info: &ferroflow_graph::OutputInfo) -> PyResult<Py<PyAny>> {
    let t = PyTuple::new(
        py,
        [
            (info.dtype as i32).into_pyobject(py)?.into_any().unbind(),
            shape_to_py(py, &info.shape)?,
            pyo3::types::PyBool::new(py, info.is_ref)
                .to_owned()
                .into_any()
                .unbind(),
        ],
    )?;
    Ok(t.into_any().unbind())
}

fn shape_arg(dims: Option<Vec<Option<i64>>>) -> PartialShape {
    match dims {
        None => PartialShape::unknown(),
        Some(d) => PartialShape::from_dims(
            d.into_iter()
                .map(|x| x.and_then(|v| usize::try_from(v).ok()))
                .collect(),
        ),
    }
}

#[pymethods]
impl Graph {
    #[new]
    fn new() -> Graph {
        Graph {
            inner: Arc::new(RwLock::new(ferroflow_graph::Graph::new())),
        }
    }

    /// Adds a node; returns `(node_id, [(dtype_enum, dims|None, is_ref), ...])`.
    #[pyo3(signature = (op_type, name, inputs, control_inputs, attrs, device))]
    #[allow(clippy::too_many_arguments)] // one Python call carries a whole node
    fn add_op(
        &self,
        py: Python<'_>,
        op_type: &str,
        name: &str,
        inputs: Vec<u64>,
        control_inputs: Vec<usize>,
        attrs: &Bound<'_, PyDict>,
        device: &str,
    ) -> PyResult<(usize, Py<PyAny>)> {
        let mut a = Attrs::new();
        for (k, v) in attrs.iter() {
            let key: String = k.extract()?;
            let val = attr_from_py(&v).map_err(|e| {
                PyValueError::new_err(format!("attribute '{key}' of '{name}': {e}"))
            })?;
            a.insert(key, val);
        }
        let spec = NodeSpec {
            op: op_type.to_string(),
            name: name.to_string(),
            inputs: inputs.into_iter().map(decode_tid).collect(),
            control_inputs,
            attrs: a,
            device: device.to_string(),
        };
        let mut g = self.inner.write();
        let id = guard(|| g.add_node(spec)).py(py)?;
        let outs = g
            .node(id)
            .outputs
            .iter()
            .map(|o| output_info(py, o))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((id, PyList::new(py, outs)?.into_any().unbind()))
    }

    /// TensorFlow's `Graph.unique_name`.
    #[pyo3(signature = (name, mark_as_used = true))]
    fn unique_name(&self, name: &str, mark_as_used: bool) -> String {
        self.inner.write().unique_name(name, mark_as_used)
    }

    fn op_by_name(&self, name: &str) -> Option<usize> {
        self.inner.read().node_by_name(name)
    }

    fn num_ops(&self) -> usize {
        self.inner.read().len()
    }

    /// `(dtype_enum, dims|None, is_ref)` of a tensor id.
    fn output_info(&self, py: Python<'_>, tid: u64) -> PyResult<Py<PyAny>> {
        let g = self.inner.read();
        let o = decode_tid(tid);
        match g.get(o.node).and_then(|n| n.outputs.get(o.index)) {
            Some(info) => output_info(py, info),
            None => Err(PyValueError::new_err(format!("no tensor with id {tid}"))),
        }
    }

    /// Whether a tensor is a list of tensors (a `TensorArray`'s flow).
    fn is_list(&self, tid: u64) -> PyResult<bool> {
        let g = self.inner.read();
        let o = decode_tid(tid);
        match g.get(o.node).and_then(|n| n.outputs.get(o.index)) {
            Some(info) => Ok(info.is_list),
            None => Err(PyValueError::new_err(format!("no tensor with id {tid}"))),
        }
    }

    /// Narrows a tensor's static shape (`Tensor.set_shape`).
    fn set_shape(
        &self,
        py: Python<'_>,
        tid: u64,
        dims: Option<Vec<Option<i64>>>,
    ) -> PyResult<Py<PyAny>> {
        let mut g = self.inner.write();
        let o = decode_tid(tid);
        g.set_output_shape(o, &shape_arg(dims)).py(py)?;
        shape_to_py(py, &g.output(o).shape)
    }

    /// `{"name", "op", "inputs", "control_inputs", "device", "attrs"}` of a node.
    fn node_def<'py>(&self, py: Python<'py>, op_id: usize) -> PyResult<Bound<'py, PyDict>> {
        let g = self.inner.read();
        let n = g
            .get(op_id)
            .ok_or_else(|| PyValueError::new_err(format!("no op with id {op_id}")))?;
        let d = PyDict::new(py);
        d.set_item("name", &n.name)?;
        d.set_item("op", &n.op)?;
        d.set_item(
            "inputs",
            n.inputs.iter().map(|o| encode_tid(*o)).collect::<Vec<_>>(),
        )?;
        d.set_item("control_inputs", &n.control_inputs)?;
        d.set_item("device", &n.device)?;
        let attrs = PyDict::new(py);
        for (k, v) in &n.attrs {
            attrs.set_item(k, attr_to_py(py, v)?)?;
        }
        d.set_item("attrs", attrs)?;
        Ok(d)
    }

    fn set_device(&self, op_id: usize, device: &str) {
        self.inner.write().set_device(op_id, device);
    }

    fn add_control_input(&self, py: Python<'_>, op_id: usize, control: usize) -> PyResult<()> {
        self.inner.write().add_control_input(op_id, control).py(py)
    }

    /// The value of a tensor if it is known at construction time, else None.
    fn const_value(&self, py: Python<'_>, tid: u64) -> PyResult<Py<PyAny>> {
        let v = self.inner.read().const_value(decode_tid(tid));
        match v {
            Some(t) => Ok(to_py(py, t)?.unbind()),
            None => Ok(py.None()),
        }
    }

    /// The partially known shape a 1-D shape tensor describes.
    fn shape_value(&self, py: Python<'_>, tid: u64) -> PyResult<Py<PyAny>> {
        let s = self.inner.read().shape_value(decode_tid(tid));
        shape_to_py(py, &s)
    }

    /// Node summaries from `start` on, for mirroring nodes the core added
    /// (gradients): `(id, name, op, input tids, control ids, device, outputs)`.
    fn node_summaries(&self, py: Python<'_>, start: usize) -> PyResult<Py<PyAny>> {
        let g = self.inner.read();
        let mut items = Vec::new();
        for n in &g.nodes()[start.min(g.len())..] {
            let outs = n
                .outputs
                .iter()
                .map(|o| output_info(py, o))
                .collect::<PyResult<Vec<_>>>()?;
            let t = PyTuple::new(
                py,
                [
                    n.id.into_pyobject(py)?.into_any().unbind(),
                    n.name.as_str().into_pyobject(py)?.into_any().unbind(),
                    n.op.as_str().into_pyobject(py)?.into_any().unbind(),
                    PyList::new(py, n.inputs.iter().map(|o| encode_tid(*o)))?
                        .into_any()
                        .unbind(),
                    PyList::new(py, &n.control_inputs)?.into_any().unbind(),
                    n.device.as_str().into_pyobject(py)?.into_any().unbind(),
                    PyList::new(py, outs)?.into_any().unbind(),
                ],
            )?;
            items.push(t.into_any().unbind());
        }
        Ok(PyList::new(py, items)?.into_any().unbind())
    }

    /// Starts differentiating `sum(ys)` w.r.t. `xs` (see [`GradientRun`]):
    /// ops whose gradient type is in `external` are left to the caller.
    #[pyo3(signature = (ys, xs, grad_ys, scope, stop_gradients, unconnected_zero, control_inputs, external, gate_gradients=false))]
    #[allow(clippy::too_many_arguments)]
    fn gradients_start(
        &self,
        py: Python<'_>,
        ys: Vec<u64>,
        xs: Vec<u64>,
        grad_ys: Vec<Option<u64>>,
        scope: &str,
        stop_gradients: Vec<u64>,
        unconnected_zero: bool,
        control_inputs: Vec<usize>,
        external: Vec<String>,
        gate_gradients: bool,
    ) -> PyResult<GradientRun> {
        let ys: Vec<Output> = ys.into_iter().map(decode_tid).collect();
        let xs: Vec<Output> = xs.into_iter().map(decode_tid).collect();
        let grad_ys: Vec<Option<Output>> = grad_ys.into_iter().map(|g| g.map(decode_tid)).collect();
        let opts = ferroflow_autodiff::Options {
            scope: scope.to_string(),
            stop_gradients: stop_gradients.into_iter().map(decode_tid).collect(),
            unconnected: if unconnected_zero {
                ferroflow_autodiff::Unconnected::Zero
            } else {
                ferroflow_autodiff::Unconnected::None
            },
            control_inputs,
            external: external.into_iter().collect(),
            gate_gradients,
        };
        let mut g = self.inner.write();
        let run = guard(|| ferroflow_autodiff::GradientRun::new(&mut g, &ys, &xs, &grad_ys, opts))
            .py(py)?;
        Ok(GradientRun {
            graph: self.inner.clone(),
            run: parking_lot::Mutex::new(run),
        })
    }

    /// Adds the graph `body` to this graph's function library as `name`,
    /// taking the `_Arg` tensors `args` and returning `outputs` (a snapshot:
    /// later changes to `body` are not seen).
    fn add_function(
        &self,
        py: Python<'_>,
        name: &str,
        body: &Graph,
        args: Vec<u64>,
        outputs: Vec<u64>,
    ) -> PyResult<()> {
        let snapshot = body.inner.read().clone();
        let f = ferroflow_graph::Function::new(
            snapshot,
            args.into_iter().map(decode_tid).collect(),
            outputs.into_iter().map(decode_tid).collect(),
        )
        .py(py)?;
        self.inner.write().add_function(name, f).py(py)
    }

    /// A library function's graph (a copy), its argument tensors and its outputs.
    #[allow(clippy::type_complexity)]
    fn function_graph(&self, py: Python<'_>, name: &str) -> PyResult<(Graph, Vec<u64>, Vec<u64>)> {
        let g = self.inner.read();
        let f = g.function(name).py(py)?;
        Ok((
            Graph {
                inner: Arc::new(RwLock::new(f.graph.clone())),
            },
            f.args.iter().map(|&o| encode_tid(o)).collect(),
            f.outputs.iter().map(|&o| encode_tid(o)).collect(),
        ))
    }

    /// Whether a library function has side effects (stateful ops that run
    /// on every call).
    fn function_is_stateful(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        let g = self.inner.read();
        Ok(!g.function(name).py(py)?.control_outputs.is_empty())
    }

    /// A function name not yet in the library, starting with `base`.
    fn unique_function_name(&self, base: &str) -> String {
        self.inner.read().unique_function_name(base)
    }

    /// The names of the library's functions.
    fn function_names(&self) -> Vec<String> {
        self.inner
            .read()
            .function_names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn finalize(&self) {
        self.inner.write().finalize();
    }

    fn unfinalize(&self) {
        self.inner.write().unfinalize();
    }

    #[getter]
    fn finalized(&self) -> bool {
        self.inner.read().is_finalized()
    }
}

/// Every op type the core knows.
#[pyfunction]
pub(crate) fn registered_ops() -> Vec<&'static str> {
    ferroflow_graph::ops::registered_ops()
}
