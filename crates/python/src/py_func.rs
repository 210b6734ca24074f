//! `tf.py_func`, `tf.numpy_function` and `tf.py_function`: graph ops whose
//! kernel calls a Python function, holding the GIL only for the call.
//!
//! TensorFlow's op types are kept (`PyFunc`, `PyFuncStateless`,
//! `EagerPyFunc`), so such graphs export and import as TF's. A node names its
//! function by the string attr `token`, a key of the registry in
//! `ferroflow.ops.script_ops`; that module converts the inputs to NumPy,
//! calls the function and checks the results against `Tout` (count and
//! dtype, TF's messages), so this kernel only moves tensors across.

use crate::convert::{to_py, to_tensor};
use crate::errors::python_exception;
use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, OpContext};
use ferroflow_tensor::{DType, Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyList;

const MODULE: &str = "ferroflow.ops.script_ops";

/// Every output has the dtype `Tout` lists and an unknown shape (the function
/// decides), as in TensorFlow.
fn infer(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(ctx
        .attrs
        .dtypes("Tout")?
        .into_iter()
        .map(|d| OutputInfo::new(d, PartialShape::unknown()))
        .collect())
}

/// The kernel of one py_func node.
struct PyFunc {
    token: String,
    tout: Vec<DType>,
    /// `EagerPyFunc` (py_function) hands the function tensor-like arrays.
    eager: bool,
}

impl PyFunc {
    fn call(&self, ctx: &mut OpContext<'_>) -> Result<()> {
        let inputs = (0..ctx.num_inputs())
            .map(|i| ctx.input(i).cloned())
            .collect::<Result<Vec<_>>>()?;
        let outputs = Python::attach(|py| -> Result<Vec<_>> {
            let args = inputs
                .into_iter()
                .map(|t| to_py(py, t))
                .collect::<PyResult<Vec<_>>>()
                .map_err(|e| python_exception(py, e, "converting a py_func's inputs"))?;
            let args = PyList::new(py, args)
                .map_err(|e| python_exception(py, e, "converting a py_func's inputs"))?;
            let results = py
                .import(MODULE)
                .and_then(|m| m.call_method1("_call", (&self.token, args, self.eager)))
                .map_err(|e| python_exception(py, e, &format!("the function of {}", self.token)))?;
            let results: Vec<Bound<'_, PyAny>> = results
                .extract()
                .map_err(|e| python_exception(py, e, "a py_func's results"))?;
            if results.len() != self.tout.len() {
                return Err(Error::invalid_argument(format!(
                    "{} returns {} values, but expects to see {} values.",
                    self.token,
                    results.len(),
                    self.tout.len()
                )));
            }
            results
                .iter()
                .zip(&self.tout)
                .map(|(r, &d)| {
                    to_tensor(r, Some(d))
                        .map_err(|e| python_exception(py, e, "a py_func's results"))
                })
                .collect()
        })?;
        for t in outputs {
            ctx.output(t);
        }
        Ok(())
    }
}

/// Registers the three op types and their kernel. `PyFunc` and
/// `PyFuncStateless` pass no gradient, as in TensorFlow; `EagerPyFunc`'s
/// gradient (TF's runs the function under a tape) does not exist here.
pub fn register() {
    ferroflow_autodiff::not_differentiable("PyFunc");
    ferroflow_autodiff::not_differentiable("PyFuncStateless");
    for (op, stateful) in [
        ("PyFunc", true),
        ("PyFuncStateless", false),
        ("EagerPyFunc", true),
    ] {
        let def = OpDef::new(op, &["input*"], infer);
        ferroflow_graph::register_op(if stateful { def.stateful() } else { def });
        ferroflow_runtime::register_kernel(
            op,
            factory(move |init| {
                let kernel = PyFunc {
                    token: init.node.attrs.string("token")?,
                    tout: init.node.attrs.dtypes("Tout")?,
                    eager: op == "EagerPyFunc",
                };
                Ok(Box::new(move |ctx: &mut OpContext<'_>| kernel.call(ctx)))
            }),
        );
    }
}
