//! Native checkpoint access for Python: TensorFlow's `CheckpointReader`
//! (`tf.train.load_checkpoint`, `NewCheckpointReader`) over the Rust
//! bundle reader, and a writer helper.

use crate::convert::{to_py, to_tensor};
use crate::errors::{guard, IntoPyResult};
use ferroflow_checkpoint::{parse_shape_and_slice, BundleReader, BundleWriter, RawData, RawTensor};
use ferroflow_tensor::{DType, Error};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// NumPy's name for the fixed-size TensorFlow dtypes ferroflow tensors do
/// not have; their values come back as arrays of these.
fn numpy_name(dtype: i32) -> Option<&'static str> {
    Some(match dtype {
        8 => "complex64",
        18 => "complex128",
        22 => "uint32",
        23 => "uint64",
        _ => return None,
    })
}

/// A stored tensor as a NumPy value (what `CheckpointReader.get_tensor` returns).
fn raw_to_py<'py>(py: Python<'py>, name: &str, raw: RawTensor) -> PyResult<Bound<'py, PyAny>> {
    if DType::from_enum(raw.dtype).is_some() {
        return to_py(py, raw.into_tensor(name).py(py)?);
    }
    let (Some(np_name), RawData::Bytes(bytes)) = (numpy_name(raw.dtype), &raw.data) else {
        return Err(crate::errors::to_py(
            py,
            Error::unimplemented(format!(
                "tensor '{name}' has dtype {}, which ferroflow cannot return",
                ferroflow_checkpoint::dtype_string(raw.dtype)
            )),
        ));
    };
    let np = py.import("numpy")?;
    let arr = np
        .call_method1("frombuffer", (PyBytes::new(py, bytes), np_name))?
        .call_method1("reshape", (PyTuple::new(py, &raw.shape)?,))?
        .call_method0("copy")?;
    if raw.shape.is_empty() {
        return arr.get_item(PyTuple::empty(py));
    }
    Ok(arr)
}

/// Reads a TensorFlow V2 checkpoint (`CheckpointReader(prefix)`).
#[pyclass(module = "ferroflow._native", frozen)]
pub struct CheckpointReader {
    inner: BundleReader,
}

#[pymethods]
impl CheckpointReader {
    /// Opens the checkpoint at `prefix` (NotFoundError if there is none,
    /// DataLossError if its index is corrupt).
    #[new]
    fn new(py: Python<'_>, prefix: std::path::PathBuf) -> PyResult<CheckpointReader> {
        let inner = py.detach(|| guard(|| BundleReader::open(&prefix))).py(py)?;
        Ok(CheckpointReader { inner })
    }

    /// The value of `name` as a NumPy array (a scalar for 0-d tensors;
    /// bytes objects for strings; bfloat16 as its uint16 bit pattern).
    /// Partitioned tensors come back whole.
    fn get_tensor<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let raw = py.detach(|| guard(|| self.inner.read_raw(name))).py(py)?;
        raw_to_py(py, name, raw)
    }

    fn has_tensor(&self, name: &str) -> bool {
        self.inner.contains(name)
    }

    /// `{name: [dims]}` for every tensor (slices of partitioned tensors hidden).
    fn variable_to_shape_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for v in self.inner.variables() {
            d.set_item(v.name, v.shape)?;
        }
        Ok(d)
    }

    /// `{name: TensorFlow DataType enum}` for every tensor.
    fn variable_to_dtype_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for v in self.inner.variables() {
            d.set_item(v.name, v.dtype)?;
        }
        Ok(d)
    }

    /// TensorFlow's `debug_string()`: `name (DT_...) [dims]` lines, as bytes.
    fn debug_string<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.debug_string())
    }

    /// Checks every stored tensor's checksum (DataLossError on the first bad one).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.verify())).py(py)
    }

    #[getter]
    fn prefix(&self) -> String {
        self.inner.prefix().to_string_lossy().into_owned()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckpointReader({:?})",
            self.inner.prefix().display().to_string()
        )
    }
}

/// Writes `tensors` (NumPy arrays, or `("strings", shape, [bytes])`) under
/// `names` as a one-shard checkpoint at `prefix`. `dtypes` (TensorFlow
/// enums, or None) disambiguate bfloat16; `shape_and_slices` entries other
/// than "" store the tensor as that slice of a larger one, as SaveV2 does.
#[pyfunction]
#[pyo3(signature = (prefix, names, tensors, dtypes = None, shape_and_slices = None))]
pub fn checkpoint_write(
    py: Python<'_>,
    prefix: std::path::PathBuf,
    names: Vec<String>,
    tensors: Vec<Bound<'_, PyAny>>,
    dtypes: Option<Vec<Option<i32>>>,
    shape_and_slices: Option<Vec<String>>,
) -> PyResult<()> {
    if names.len() != tensors.len() {
        return Err(PyValueError::new_err(format!(
            "{} names for {} tensors",
            names.len(),
            tensors.len()
        )));
    }
    let hints = dtypes.unwrap_or_default();
    let specs = shape_and_slices.unwrap_or_default();
    let np = py.import("numpy")?;
    let values = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let hint = hints.get(i).copied().flatten().and_then(DType::from_enum);
            if t.is_instance_of::<PyTuple>() {
                to_tensor(t, hint)
            } else {
                // NumPy scalars and Python numbers become 0-d arrays.
                to_tensor(&np.call_method1("asarray", (t,))?, hint)
            }
        })
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        guard(|| {
            let mut w = BundleWriter::new(&prefix)?;
            for (i, (name, t)) in names.iter().zip(&values).enumerate() {
                match specs.get(i).filter(|s| !s.is_empty()) {
                    None => w.add(name, t)?,
                    Some(spec) => {
                        let p = parse_shape_and_slice(spec)?;
                        w.add_slice(name, &p.full_shape, &p.slice, t)?
                    }
                }
            }
            w.finish()
        })
    })
    .py(py)
}

/// Adds the checkpoint classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CheckpointReader>()?;
    m.add_function(wrap_pyfunction!(checkpoint_write, m)?)?;
    Ok(())
}
