//! Conversions between Python/NumPy values and ferroflow tensors and
//! attributes.
//!
//! NumPy arrays are copied into tensors (Python may mutate them while a
//! step runs with the GIL released). Results move into NumPy without a copy
//! when no one else holds the buffer (a fetched variable value is copied,
//! so later in-place updates cannot show through).

use ferroflow_graph::{AttrValue, PartialShape};
use ferroflow_tensor::{bf16, f16, Complex32, Complex64, DType, Data, Element, Shape, Tensor};
use ndarray::{ArrayD, IxDyn};
use numpy::{PyArray, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Tensor ids cross the boundary as `node << 20 | output_index`.
pub const TID_SHIFT: u32 = 20;

pub fn decode_tid(tid: u64) -> ferroflow_graph::Output {
    ferroflow_graph::Output::new(
        (tid >> TID_SHIFT) as usize,
        (tid & ((1 << TID_SHIFT) - 1)) as usize,
    )
}

pub fn encode_tid(o: ferroflow_graph::Output) -> u64 {
    ((o.node as u64) << TID_SHIFT) | o.index as u64
}

fn read_array<T: Element + numpy::Element + Copy + Default + Send + Sync>(
    arr: &Bound<'_, PyArrayDyn<T>>,
) -> PyResult<Tensor> {
    let ro = arr.readonly();
    let shape = Shape::from(arr.shape().to_vec());
    let data: Vec<T> = match ro.as_slice() {
        Ok(s) => ferroflow_tensor::kernels::parallel::copied(s),
        Err(_) => ro.as_array().iter().copied().collect(),
    };
    Tensor::from_vec(shape, data).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Converts a NumPy array (or a `("strings", shape, [bytes])` tuple for
/// string tensors) into a tensor. `hint` disambiguates bfloat16, which
/// arrives as its uint16 bit pattern.
pub fn to_tensor(obj: &Bound<'_, PyAny>, hint: Option<DType>) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTuple>() {
        let (tag, shape, items): (String, Vec<usize>, Vec<Vec<u8>>) = t.extract()?;
        if tag != "strings" {
            return Err(PyTypeError::new_err(format!(
                "unknown tensor encoding '{tag}'"
            )));
        }
        return Tensor::from_vec(Shape::from(shape), items)
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    macro_rules! try_type {
        ($($t:ty),*) => {$(
            if let Ok(a) = obj.cast::<PyArrayDyn<$t>>() {
                return read_array(a);
            }
        )*};
    }
    if hint == Some(DType::BFloat16) {
        if let Ok(a) = obj.cast::<PyArrayDyn<u16>>() {
            let t = read_array(a)?;
            let (shape, data) = t.into_parts();
            let Data::U16(bits) = data else {
                unreachable!()
            };
            let v: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
            return Tensor::from_vec(shape, v).map_err(|e| PyValueError::new_err(e.to_string()));
        }
    }
    try_type!(f32, f64, i32, i64, bool, u8, i8, i16, u16, u32, u64, f16, Complex32, Complex64);
    let kind = match obj.cast::<PyUntypedArray>() {
        Ok(a) => format!("an array of dtype {}", a.dtype()),
        Err(_) => format!("a {}", obj.get_type().name()?),
    };
    Err(PyTypeError::new_err(format!(
        "cannot convert {kind} to a ferroflow tensor"
    )))
}

fn numpy_array<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    t: Tensor,
) -> PyResult<Bound<'py, PyAny>> {
    let dims = t.dims().to_vec();
    let v: Vec<T> = t
        .into_vec()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let arr = ArrayD::from_shape_vec(IxDyn(&dims), v)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let py_arr = PyArray::from_owned_array(py, arr).into_any();
    if dims.is_empty() {
        // A 0-d result is returned as a NumPy scalar, as TensorFlow does.
        return py_arr.get_item(PyTuple::empty(py));
    }
    Ok(py_arr)
}

static NUMPY_ARRAY_FN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Converts a tensor into a NumPy array or scalar (bytes / object arrays for
/// strings; bfloat16 as its uint16 bit pattern, which Python reinterprets).
pub fn to_py<'py>(py: Python<'py>, t: Tensor) -> PyResult<Bound<'py, PyAny>> {
    match t.dtype() {
        DType::Float32 => numpy_array::<f32>(py, t),
        DType::Float64 => numpy_array::<f64>(py, t),
        DType::Float16 => numpy_array::<f16>(py, t),
        DType::Int8 => numpy_array::<i8>(py, t),
        DType::Int16 => numpy_array::<i16>(py, t),
        DType::Int32 => numpy_array::<i32>(py, t),
        DType::Int64 => numpy_array::<i64>(py, t),
        DType::UInt8 => numpy_array::<u8>(py, t),
        DType::UInt16 => numpy_array::<u16>(py, t),
        DType::UInt32 => numpy_array::<u32>(py, t),
        DType::UInt64 => numpy_array::<u64>(py, t),
        DType::Bool => numpy_array::<bool>(py, t),
        DType::Complex64 => numpy_array::<Complex32>(py, t),
        DType::Complex128 => numpy_array::<Complex64>(py, t),
        // (Buffers hold the storage type; quantized tensors come back as
        // arrays of it, as TensorFlow returns them.)
        DType::QInt8 => numpy_array::<i8>(py, t),
        DType::QUInt8 => numpy_array::<u8>(py, t),
        DType::QInt16 => numpy_array::<i16>(py, t),
        DType::QUInt16 => numpy_array::<u16>(py, t),
        DType::QInt32 => numpy_array::<i32>(py, t),
        DType::BFloat16 => {
            let dims = t.dims().to_vec();
            let bits: Vec<u16> = t
                .as_slice::<bf16>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?
                .iter()
                .map(|x| x.to_bits())
                .collect();
            let t = Tensor::from_vec(Shape::from(dims), bits)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            numpy_array::<u16>(py, t)
        }
        DType::String => {
            let items = t
                .as_slice::<Vec<u8>>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            if t.rank() == 0 {
                return Ok(PyBytes::new(py, &items[0]).into_any());
            }
            let list = PyList::new(py, items.iter().map(|b| PyBytes::new(py, b)))?;
            let array_fn = NUMPY_ARRAY_FN.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
                Ok(py.import("numpy")?.getattr("empty")?.unbind())
            })?;
            // np.empty(n, object) then fill: np.array(list_of_bytes) would make an 'S' array.
            let arr = array_fn
                .bind(py)
                .call1((items.len(), py.import("builtins")?.getattr("object")?))?;
            arr.call_method1("__setitem__", (pyo3::types::PySlice::full(py), list))?;
            arr.call_method1("reshape", (PyTuple::new(py, t.dims())?,))
        }
        // A tensor's dtype comes from its buffer; no buffer is a handle's.
        DType::Resource | DType::Variant => Err(PyValueError::new_err(
            "a resource or variant handle cannot be converted to a NumPy value",
        )),
    }
}

fn shape_from_py(obj: &Bound<'_, PyAny>) -> PyResult<PartialShape> {
    if obj.is_none() {
        return Ok(PartialShape::unknown());
    }
    let dims: Vec<Option<i64>> = obj.extract()?;
    Ok(PartialShape::from_dims(
        dims.into_iter()
            .map(|d| d.and_then(|v| usize::try_from(v).ok()))
            .collect(),
    ))
}

pub fn shape_to_py(py: Python<'_>, s: &PartialShape) -> PyResult<Py<PyAny>> {
    Ok(match s.dims() {
        None => py.None(),
        Some(d) => PyList::new(py, d.iter().copied())?.into_any().unbind(),
    })
}

/// A Python string's UTF-8 bytes. `to_cow` rather than `to_str`: under the
/// stable ABI for Python 3.9 there is no borrowed UTF-8 view, so the string
/// is encoded into an owned buffer, which is moved out here without a copy.
fn utf8_bytes(s: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    Ok(s.to_cow()?.into_owned().into_bytes())
}

fn dtype_from(v: i32) -> PyResult<DType> {
    DType::from_enum(v).ok_or_else(|| PyTypeError::new_err(format!("unsupported dtype enum {v}")))
}

/// Converts a Python attribute value. Plain Python values map by type;
/// tagged tuples carry the rest: `("type", enum)`, `("shape", dims|None)`,
/// `("tensor", array, enum)`, `("list_type", [...])`, `("list_shape", [...])`.
pub fn attr_from_py(v: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    if v.is_instance_of::<PyBool>() {
        return Ok(AttrValue::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(AttrValue::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(AttrValue::Float(v.extract()?));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(AttrValue::Str(utf8_bytes(s)?));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(AttrValue::Str(b.as_bytes().to_vec()));
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        let tag: String = t.get_item(0)?.extract()?;
        let body = t.get_item(1)?;
        return Ok(match tag.as_str() {
            "type" => AttrValue::Type(dtype_from(body.extract()?)?),
            "shape" => AttrValue::Shape(shape_from_py(&body)?),
            "tensor" => {
                let hint = dtype_from(t.get_item(2)?.extract()?)?;
                AttrValue::Tensor(to_tensor(&body, Some(hint))?)
            }
            "list_type" => {
                let v: Vec<i32> = body.extract()?;
                AttrValue::TypeList(v.into_iter().map(dtype_from).collect::<PyResult<_>>()?)
            }
            "list_shape" => {
                let items: Vec<Bound<'_, PyAny>> = body.extract()?;
                AttrValue::ShapeList(items.iter().map(shape_from_py).collect::<PyResult<_>>()?)
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unknown attribute tag '{other}'"
                )))
            }
        });
    }
    if let Ok(l) = v.cast::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = l.iter().collect();
        if items.iter().all(|x| x.is_instance_of::<PyBool>()) && !items.is_empty() {
            return Ok(AttrValue::BoolList(l.extract()?));
        }
        if items.iter().all(|x| x.is_instance_of::<PyInt>()) {
            return Ok(AttrValue::IntList(l.extract()?));
        }
        if items
            .iter()
            .all(|x| x.is_instance_of::<PyFloat>() || x.is_instance_of::<PyInt>())
        {
            return Ok(AttrValue::FloatList(l.extract()?));
        }
        if items
            .iter()
            .all(|x| x.is_instance_of::<PyString>() || x.is_instance_of::<PyBytes>())
        {
            let v = items
                .iter()
                .map(|x| match x.cast::<PyString>() {
                    Ok(s) => utf8_bytes(s),
                    Err(_) => x.extract::<Vec<u8>>(),
                })
                .collect::<PyResult<_>>()?;
            return Ok(AttrValue::StrList(v));
        }
    }
    Err(PyTypeError::new_err(format!(
        "cannot use a {} as an op attribute",
        v.get_type().name()?
    )))
}

/// Converts an attribute for inspection from Python (`Operation.get_attr`).
pub fn attr_to_py(py: Python<'_>, a: &AttrValue) -> PyResult<Py<PyAny>> {
    Ok(match a {
        AttrValue::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        AttrValue::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
        AttrValue::Bool(v) => PyBool::new(py, *v).to_owned().into_any().unbind(),
        AttrValue::Str(v) => PyBytes::new(py, v).into_any().unbind(),
        AttrValue::Type(d) => PyTuple::new(
            py,
            [
                "type".into_pyobject(py)?.into_any(),
                (*d as i32).into_pyobject(py)?.into_any(),
            ],
        )?
        .into_any()
        .unbind(),
        AttrValue::Shape(s) => PyTuple::new(
            py,
            [
                "shape".into_pyobject(py)?.into_any(),
                shape_to_py(py, s)?.into_bound(py),
            ],
        )?
        .into_any()
        .unbind(),
        AttrValue::Tensor(t) => to_py(py, t.clone())?.unbind(),
        AttrValue::IntList(v) => PyList::new(py, v)?.into_any().unbind(),
        AttrValue::FloatList(v) => PyList::new(py, v)?.into_any().unbind(),
        AttrValue::BoolList(v) => PyList::new(py, v)?.into_any().unbind(),
        AttrValue::StrList(v) => PyList::new(py, v.iter().map(|b| PyBytes::new(py, b)))?
            .into_any()
            .unbind(),
        AttrValue::TypeList(v) => PyList::new(py, v.iter().map(|d| *d as i32))?
            .into_any()
            .unbind(),
        AttrValue::ShapeList(v) => {
            let items = v
                .iter()
                .map(|s| shape_to_py(py, s))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
    })
}
