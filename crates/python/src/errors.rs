//! Mapping ferroflow errors onto Python exceptions.
//!
//! Runtime errors become TensorFlow's `tf.errors` classes, which the Python
//! package defines and registers here at import time. Construction errors
//! become `ValueError` / `TypeError`, as in TensorFlow.

use ferroflow_tensor::Error;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `{code: exception class}`, set by `ferroflow.errors` on import.
static ERROR_CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Registers the Python classes for TensorFlow's status codes.
#[pyfunction]
pub fn _set_error_classes(py: Python<'_>, classes: Bound<'_, PyDict>) -> PyResult<()> {
    let _ = ERROR_CLASSES.set(py, classes.unbind());
    Ok(())
}

/// Reports an internal consistency failure as a Python error (for tests of the error path).
#[pyfunction]
pub fn _raise_status(py: Python<'_>, code: i32, message: &str) -> PyResult<()> {
    let code = (1..=16)
        .map(|c| (c, Error::internal("")))
        .find(|(c, _)| *c == code)
        .map(|_| code)
        .unwrap_or(2);
    let e = match code {
        3 => Error::invalid_argument(message),
        5 => Error::not_found(message),
        9 => Error::failed_precondition(message),
        11 => Error::out_of_range(message),
        15 => Error::data_loss(message),
        _ => Error::unknown(message),
    };
    Err(to_py(py, e))
}

/// Converts an error into the Python exception a TensorFlow user expects.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    match &e {
        Error::Value(m) => PyValueError::new_err(m.clone()),
        Error::Type(m) => PyTypeError::new_err(m.clone()),
        Error::Op {
            code,
            message,
            node,
        } => {
            let full = e.to_string();
            if let Some(classes) = ERROR_CLASSES.get(py) {
                if let Ok(Some(cls)) = classes.bind(py).get_item(*code as i32) {
                    let _ = message;
                    // OpError(node_def, op, message): the op is named; the
                    // Python side resolves it to an Operation when it can.
                    return match cls.call1((py.None(), node.clone(), full.clone())) {
                        Ok(obj) => PyErr::from_value(obj),
                        Err(err) => err,
                    };
                }
            }
            PyRuntimeError::new_err(full)
        }
    }
}

/// Extension trait: `result.py(py)?`.
pub trait IntoPyResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}

/// Runs `f`, turning a panic into an `InternalError` so none crosses into Python.
pub fn guard<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::internal(format!(
                "ferroflow internal error (a bug; please report it): {msg}"
            )))
        }
    }
}

/// A Python exception raised inside a kernel (a py_func's function, a
/// dataset's generator) as the TensorFlow error TF's py_func kernel gives:
/// ValueError/TypeError are `InvalidArgument`, StopIteration `OutOfRange`,
/// MemoryError `ResourceExhausted`, NotImplementedError `Unimplemented`,
/// anything else `Unknown`. `origin` says what raised it.
pub fn python_exception(py: Python<'_>, e: PyErr, origin: &str) -> Error {
    use pyo3::exceptions::{PyMemoryError, PyNotImplementedError, PyStopIteration};
    let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    let text = format!("{kind}: {msg} (raised by {origin})");
    if e.is_instance_of::<PyValueError>(py) || e.is_instance_of::<PyTypeError>(py) {
        Error::invalid_argument(text)
    } else if e.is_instance_of::<PyStopIteration>(py) {
        Error::out_of_range(text)
    } else if e.is_instance_of::<PyMemoryError>(py) {
        Error::resource_exhausted(text)
    } else if e.is_instance_of::<PyNotImplementedError>(py) {
        Error::unimplemented(text)
    } else {
        Error::unknown(text)
    }
}
