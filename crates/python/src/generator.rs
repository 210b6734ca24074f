//! `Dataset.from_generator`: a dataset whose elements come from a Python
//! generator, called with the GIL from whichever thread pulls (the
//! `Session.run` caller, which released the GIL, or a prefetch thread).
//!
//! The graph op `PyGeneratorDataset` (ferroflow's own: TensorFlow's
//! `GeneratorDataset` calls `EagerPyFunc` functions instead) names the
//! generator by a `token` of the registry in `ferroflow.data.dataset_ops`;
//! each iteration asks that module for a fresh Python iterator and for each
//! element's components, already converted to the declared dtypes.

use crate::convert::to_tensor;
use crate::errors::python_exception;
use ferroflow_data::dataset::{Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, OpContext};
use ferroflow_tensor::{DType, Error, Result};
use pyo3::prelude::*;
use std::sync::Arc;

const MODULE: &str = "ferroflow.data.dataset_ops";

fn variant(_: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(
        DType::Variant,
        PartialShape::scalar(),
    )])
}

/// A Python exception raised by the generator, as a TensorFlow error.
fn py_error(py: Python<'_>, e: PyErr) -> Error {
    python_exception(py, e, "the generator of a Dataset.from_generator")
}

struct PyGenerator {
    token: i64,
    types: Arc<Vec<DType>>,
}

struct PyGeneratorIter {
    state: Py<PyAny>,
    token: i64,
    types: Arc<Vec<DType>>,
    done: bool,
}

impl Dataset for PyGenerator {
    fn iterate(&self, _: &IterCtx) -> Result<Box<dyn DatasetIter>> {
        let state = Python::attach(|py| {
            py.import(MODULE)
                .and_then(|m| m.call_method1("_generator_start", (self.token,)))
                .map(Bound::unbind)
                .map_err(|e| py_error(py, e))
        })?;
        Ok(Box::new(PyGeneratorIter {
            state,
            token: self.token,
            types: self.types.clone(),
            done: false,
        }))
    }
}

impl DatasetIter for PyGeneratorIter {
    fn next(&mut self) -> Result<Option<Element>> {
        if self.done {
            return Ok(None);
        }
        let out = Python::attach(|py| -> Result<Option<Element>> {
            let item = py
                .import(MODULE)
                .and_then(|m| m.call_method1("_generator_next", (self.state.bind(py), self.token)))
                .map_err(|e| py_error(py, e))?;
            if item.is_none() {
                return Ok(None);
            }
            let items: Vec<Bound<'_, PyAny>> = item.extract().map_err(|e| py_error(py, e))?;
            if items.len() != self.types.len() {
                return Err(Error::invalid_argument(format!(
                    "the generator yielded {} components, expected {}",
                    items.len(),
                    self.types.len()
                )));
            }
            items
                .iter()
                .zip(self.types.iter())
                .map(|(obj, &dtype)| to_tensor(obj, Some(dtype)).map_err(|e| py_error(py, e)))
                .collect::<Result<Vec<_>>>()
                .map(Some)
        })?;
        if out.is_none() {
            self.done = true;
        }
        Ok(out)
    }
}

/// Registers `PyGeneratorDataset` and its kernel.
pub fn register() {
    ferroflow_graph::register_op(OpDef::new("PyGeneratorDataset", &[], variant).stateful());
    ferroflow_runtime::register_kernel(
        "PyGeneratorDataset",
        factory(|init| {
            let token = init.node.attrs.int("token")?;
            let types = Arc::new(init.node.attrs.dtypes("output_types")?);
            Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                let d = PyGenerator {
                    token,
                    types: types.clone(),
                };
                ctx.output_resource(Arc::new(DatasetRef(Arc::new(d))));
                Ok(())
            }))
        }),
    );
}
