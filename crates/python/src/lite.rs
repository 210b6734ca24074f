//! `tf.lite.Interpreter`'s native side: a [`ferroflow_lite::Interpreter`]
//! behind a lock, with tensors crossing as bytes plus dtype name and shape
//! (the Python wrapper turns them into numpy arrays and checks arguments
//! the way TensorFlow's wrapper does).

use crate::errors::{guard, IntoPyResult};
use ferroflow_lite::{DType, Interpreter};
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

fn dtype_from_name(name: &str) -> Result<DType, ferroflow_tensor::Error> {
    Ok(match name {
        "float32" => DType::F32,
        "float16" => DType::F16,
        "int32" => DType::I32,
        "uint8" => DType::U8,
        "int64" => DType::I64,
        "bool" => DType::Bool,
        "int16" => DType::I16,
        "int8" => DType::I8,
        "float64" => DType::F64,
        other => {
            return Err(ferroflow_tensor::Error::value(format!(
                "Cannot set tensor: unsupported type {other}"
            )))
        }
    })
}

/// The numpy name of a TFLite element type.
fn numpy_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F16 => "float16",
        DType::I32 => "int32",
        DType::U8 => "uint8",
        DType::I64 => "int64",
        DType::String => "object",
        DType::Bool => "bool",
        DType::I16 => "int16",
        DType::I8 => "int8",
        DType::F64 => "float64",
    }
}

/// A TFLite model loaded for running (`tf.lite.Interpreter`'s engine).
#[pyclass(module = "ferroflow._native", frozen)]
pub struct LiteInterpreter {
    inner: Mutex<Interpreter>,
}

#[pymethods]
impl LiteInterpreter {
    /// Reads and checks `model_content`; `num_threads` 0 means one per core.
    #[new]
    #[pyo3(signature = (model_content, num_threads = 1))]
    fn new(py: Python<'_>, model_content: &[u8], num_threads: usize) -> PyResult<LiteInterpreter> {
        let bytes = model_content.to_vec();
        let inner = py
            .detach(|| guard(|| Interpreter::from_bytes(&bytes, num_threads)))
            .py(py)?;
        Ok(LiteInterpreter {
            inner: Mutex::new(inner),
        })
    }

    /// Computes every tensor's shape and allocates it.
    fn allocate_tensors(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.lock().allocate_tensors()))
            .py(py)
    }

    /// Runs the model once.
    fn invoke(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| guard(|| self.inner.lock().invoke())).py(py)
    }

    /// Indices of the inputs.
    fn input_indices(&self) -> Vec<i32> {
        self.inner.lock().inputs().to_vec()
    }

    /// Indices of the outputs.
    fn output_indices(&self) -> Vec<i32> {
        self.inner.lock().outputs().to_vec()
    }

    /// Number of tensors.
    fn tensor_count(&self) -> usize {
        self.inner.lock().tensors().len()
    }

    /// True once tensors are allocated for the current input shapes.
    fn is_allocated(&self) -> bool {
        self.inner.lock().is_allocated()
    }

    /// Name, shape, signature, dtype and quantization of tensor `index`.
    fn tensor_info<'py>(&self, py: Python<'py>, index: i64) -> PyResult<Bound<'py, PyDict>> {
        let guard_ = self.inner.lock();
        let t = guard_.tensor(index).py(py)?;
        let d = PyDict::new(py);
        d.set_item("name", &t.name)?;
        d.set_item("index", index)?;
        d.set_item("shape", t.shape.clone())?;
        let sig: Vec<i64> = match &t.shape_signature {
            Some(s) => s.iter().map(|&v| v as i64).collect(),
            None => t.shape.iter().map(|&v| v as i64).collect(),
        };
        d.set_item("shape_signature", sig)?;
        d.set_item("dtype", numpy_name(t.dtype))?;
        d.set_item("scales", t.quant.scale.clone())?;
        d.set_item("zero_points", t.quant.zero_point.clone())?;
        d.set_item("quantized_dimension", t.quant.axis)?;
        Ok(d)
    }

    /// Tensor `index`'s bytes (a copy).
    fn get_tensor_bytes<'py>(&self, py: Python<'py>, index: i64) -> PyResult<Bound<'py, PyBytes>> {
        let g = self.inner.lock();
        let t = g.tensor(index).py(py)?;
        Ok(PyBytes::new(py, t.data.bytes()))
    }

    /// Copies `data` (of numpy dtype name `dtype` and `shape`) into tensor `index`.
    fn set_tensor(
        &self,
        py: Python<'_>,
        index: i64,
        dtype: &str,
        shape: Vec<usize>,
        data: &[u8],
    ) -> PyResult<()> {
        let d = dtype_from_name(dtype).py(py)?;
        guard(|| self.inner.lock().set_tensor(index, d, &shape, data)).py(py)
    }

    /// Gives input `index` a new shape (strict: only -1 dimensions change).
    #[pyo3(signature = (index, shape, strict = false))]
    fn resize_input(
        &self,
        py: Python<'_>,
        index: i64,
        shape: Vec<usize>,
        strict: bool,
    ) -> PyResult<()> {
        guard(|| self.inner.lock().resize_input(index, &shape, strict)).py(py)
    }

    /// Zeroes variable tensors.
    fn reset_all_variables(&self) {
        self.inner.lock().reset_all_variables()
    }

    /// The signatures: `[(key, [(name, index)], [(name, index)], subgraph)]`.
    #[allow(clippy::type_complexity)]
    fn signatures(&self) -> Vec<(String, Vec<(String, u32)>, Vec<(String, u32)>, u32)> {
        let g = self.inner.lock();
        g.model()
            .signatures
            .iter()
            .map(|s| {
                (
                    s.key.clone(),
                    s.inputs.clone(),
                    s.outputs.clone(),
                    s.subgraph,
                )
            })
            .collect()
    }

    /// Metadata entry `name` as text, if present.
    fn metadata(&self, name: &str) -> Option<String> {
        self.inner.lock().model().metadata_str(name)
    }

    /// The builtin or custom operator names, in execution order.
    fn operator_names(&self) -> Vec<String> {
        self.inner.lock().model().subgraphs[0]
            .operators
            .iter()
            .map(|o| o.name())
            .collect()
    }
}

/// One representative sample: `(shape, float32 bytes)` per model input.
type RepresentativeSample<'py> = Vec<(Vec<usize>, Bound<'py, PyBytes>)>;

fn io_type(name: &str, what: &str) -> PyResult<ferroflow_lite::quantize::IoType> {
    use ferroflow_lite::quantize::IoType;
    Ok(match name {
        "float32" => IoType::Float,
        "int8" => IoType::Int8,
        "uint8" => IoType::UInt8,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{what} must be tf.float32, tf.int8 or tf.uint8, got {other}"
            )))
        }
    })
}

/// Converts a serialized frozen GraphDef to .tflite bytes
/// (`TFLiteConverter.convert`'s engine). `quantization` is `""`,
/// `"float16"`, `"dynamic_range"` or `"full_integer"`; the last one needs
/// `representative` samples (each a list of `(shape, float32 bytes)`, one
/// per input) and takes the inference input/output types (`"float32"`,
/// `"int8"`, `"uint8"`) and whether only int8 builtins are allowed.
#[pyfunction]
#[pyo3(signature = (
    graph_def, inputs, input_shapes, outputs, quantization = "",
    representative = None, inference_input_type = "float32",
    inference_output_type = "float32", int8_only = false
))]
#[allow(clippy::too_many_arguments)]
fn lite_convert<'py>(
    py: Python<'py>,
    graph_def: &[u8],
    inputs: Vec<String>,
    input_shapes: Vec<Option<Vec<i64>>>,
    outputs: Vec<String>,
    quantization: &str,
    representative: Option<Vec<RepresentativeSample<'py>>>,
    inference_input_type: &str,
    inference_output_type: &str,
    int8_only: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    use ferroflow_lite::converter::{convert, ConvertOptions, Quantization};
    use ferroflow_lite::quantize::{FullIntegerOptions, Sample};
    let quantization = match quantization {
        "" => Quantization::None,
        "float16" => Quantization::Float16,
        "dynamic_range" => Quantization::DynamicRange,
        "full_integer" => {
            let mut samples = Vec::new();
            for sample in representative.unwrap_or_default() {
                let mut arrays = Vec::with_capacity(sample.len());
                for (shape, bytes) in sample {
                    let b = bytes.as_bytes();
                    if b.len() % 4 != 0 {
                        return Err(pyo3::exceptions::PyValueError::new_err(
                            "representative sample arrays must be float32 bytes",
                        ));
                    }
                    let data = b
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    arrays.push(Sample { shape, data });
                }
                samples.push(arrays);
            }
            Quantization::FullInteger(Box::new(FullIntegerOptions {
                samples,
                input_type: io_type(inference_input_type, "inference_input_type")?,
                output_type: io_type(inference_output_type, "inference_output_type")?,
                int8_only,
            }))
        }
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown quantization {other:?}"
            )))
        }
    };
    let options = ConvertOptions {
        inputs,
        input_shapes,
        outputs,
        quantization,
    };
    let bytes = graph_def.to_vec();
    let out = py.detach(|| guard(|| convert(&bytes, &options))).py(py)?;
    Ok(PyBytes::new(py, &out))
}

/// Registers the tf.lite classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LiteInterpreter>()?;
    m.add_function(wrap_pyfunction!(lite_convert, m)?)?;
    Ok(())
}
