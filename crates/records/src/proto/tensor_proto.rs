//! `TensorProto`, `TensorShapeProto` and `DataType`
//! (`tensorflow/core/framework/{tensor,tensor_shape,types}.proto`).

use crate::{Error, Result};

/// TensorFlow's `DataType` enum (`types.proto`); the numbers equal
/// [`ferroflow_tensor::DType::as_enum`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataType {
    DtInvalid = 0,
    DtFloat = 1,
    DtDouble = 2,
    DtInt32 = 3,
    DtUint8 = 4,
    DtInt16 = 5,
    DtInt8 = 6,
    DtString = 7,
    DtComplex64 = 8,
    DtInt64 = 9,
    DtBool = 10,
    DtQint8 = 11,
    DtQuint8 = 12,
    DtQint32 = 13,
    DtBfloat16 = 14,
    DtQint16 = 15,
    DtQuint16 = 16,
    DtUint16 = 17,
    DtComplex128 = 18,
    DtHalf = 19,
    DtResource = 20,
    DtVariant = 21,
    DtUint32 = 22,
    DtUint64 = 23,
}

/// One dimension of a [`TensorShapeProto`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dim {
    /// Size of the dimension; -1 for unknown.
    #[prost(int64, tag = "1")]
    pub size: i64,
    /// Optional name of the dimension.
    #[prost(string, tag = "2")]
    pub name: String,
}

/// `tensorflow.TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// Dimensions, outermost first. Empty for a scalar.
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dim>,
    /// The rank is unknown (`dim` must then be empty).
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

impl TensorShapeProto {
    /// A fully known shape.
    pub fn from_dims(dims: &[i64]) -> Self {
        TensorShapeProto {
            dim: dims
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }
    }

    /// The dimension sizes.
    pub fn dims(&self) -> Vec<i64> {
        self.dim.iter().map(|d| d.size).collect()
    }

    /// Number of elements, if the shape is fully known and the count fits.
    pub fn num_elements(&self) -> Option<usize> {
        if self.unknown_rank {
            return None;
        }
        self.dim.iter().try_fold(1usize, |acc, d| {
            usize::try_from(d.size)
                .ok()
                .and_then(|s| acc.checked_mul(s))
        })
    }
}

/// `tensorflow.TensorProto`, with the value fields summaries, checkpoints
/// and `GraphDef` constants use (resource handles and variants are not
/// modelled; unknown fields are skipped when decoding).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShapeProto>,
    #[prost(int32, tag = "3")]
    pub version_number: i32,
    /// Raw little-endian, row-major element bytes (numeric dtypes).
    #[prost(bytes = "vec", tag = "4")]
    pub tensor_content: Vec<u8>,
    #[prost(float, repeated, tag = "5")]
    pub float_val: Vec<f32>,
    #[prost(double, repeated, tag = "6")]
    pub double_val: Vec<f64>,
    /// int32, int16, int8, uint8 (and uint16) values.
    #[prost(int32, repeated, tag = "7")]
    pub int_val: Vec<i32>,
    /// One entry per element of a DT_STRING tensor.
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub string_val: Vec<Vec<u8>>,
    /// complex64 values as (real, imag) pairs.
    #[prost(float, repeated, tag = "9")]
    pub scomplex_val: Vec<f32>,
    #[prost(int64, repeated, tag = "10")]
    pub int64_val: Vec<i64>,
    #[prost(bool, repeated, tag = "11")]
    pub bool_val: Vec<bool>,
    /// complex128 values as (real, imag) pairs.
    #[prost(double, repeated, tag = "12")]
    pub dcomplex_val: Vec<f64>,
    /// float16 and bfloat16 bit patterns, one per int32.
    #[prost(int32, repeated, tag = "13")]
    pub half_val: Vec<i32>,
    #[prost(uint32, repeated, tag = "16")]
    pub uint32_val: Vec<u32>,
    #[prost(uint64, repeated, tag = "17")]
    pub uint64_val: Vec<u64>,
}

impl TensorProto {
    fn with_shape(dtype: DataType, dims: &[i64]) -> TensorProto {
        TensorProto {
            dtype: dtype as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(dims)),
            ..Default::default()
        }
    }

    /// A float32 tensor stored as `tensor_content`, like TensorFlow's C++ writer.
    pub fn from_f32(dims: &[i64], values: &[f32]) -> TensorProto {
        let mut t = Self::with_shape(DataType::DtFloat, dims);
        t.tensor_content = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        t
    }

    /// A float64 tensor stored as `tensor_content`.
    pub fn from_f64(dims: &[i64], values: &[f64]) -> TensorProto {
        let mut t = Self::with_shape(DataType::DtDouble, dims);
        t.tensor_content = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        t
    }

    /// An int64 tensor stored as `tensor_content`.
    pub fn from_i64(dims: &[i64], values: &[i64]) -> TensorProto {
        let mut t = Self::with_shape(DataType::DtInt64, dims);
        t.tensor_content = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        t
    }

    /// A DT_STRING tensor (one `string_val` entry per element, row-major).
    pub fn from_strings(dims: &[i64], values: Vec<Vec<u8>>) -> TensorProto {
        let mut t = Self::with_shape(DataType::DtString, dims);
        t.string_val = values;
        t
    }

    /// The dtype, if it is a known `DataType`.
    pub fn data_type(&self) -> Option<DataType> {
        DataType::try_from(self.dtype).ok()
    }

    /// The dimension sizes (empty for a scalar or a missing shape).
    pub fn dims(&self) -> Vec<i64> {
        self.tensor_shape
            .as_ref()
            .map(TensorShapeProto::dims)
            .unwrap_or_default()
    }

    fn element_count(&self) -> Result<usize> {
        match &self.tensor_shape {
            None => Ok(1),
            Some(shape) => shape.num_elements().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "TensorProto has a shape that is not fully defined: {:?}",
                    shape.dims()
                ))
            }),
        }
    }

    /// Decodes a numeric tensor into `f64` values (row-major). Accepts both
    /// `tensor_content` and the typed `*_val` fields, where a single value is
    /// broadcast to the whole shape, as `tf.make_ndarray` does.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        let n = self.element_count()?;
        let dtype = self.data_type().ok_or_else(|| {
            Error::invalid_argument(format!("unknown TensorProto dtype {}", self.dtype))
        })?;
        if !self.tensor_content.is_empty() {
            let width = match dtype {
                DataType::DtFloat | DataType::DtInt32 | DataType::DtUint32 => 4,
                DataType::DtDouble | DataType::DtInt64 | DataType::DtUint64 => 8,
                DataType::DtInt16 | DataType::DtUint16 | DataType::DtHalf => 2,
                DataType::DtBfloat16 => 2,
                DataType::DtInt8 | DataType::DtUint8 | DataType::DtBool => 1,
                other => {
                    return Err(Error::unimplemented(format!(
                        "cannot decode {other:?} tensor_content as numbers"
                    )))
                }
            };
            if self.tensor_content.len() != n * width {
                return Err(Error::invalid_argument(format!(
                    "TensorProto tensor_content has {} bytes, expected {} ({} elements of {:?})",
                    self.tensor_content.len(),
                    n * width,
                    n,
                    dtype
                )));
            }
            let chunks = self.tensor_content.chunks_exact(width);
            let out = chunks
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    match dtype {
                        DataType::DtFloat => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                        DataType::DtDouble => f64::from_le_bytes(b),
                        DataType::DtInt32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                        DataType::DtUint32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                        DataType::DtInt64 => i64::from_le_bytes(b) as f64,
                        DataType::DtUint64 => u64::from_le_bytes(b) as f64,
                        DataType::DtInt16 => i16::from_le_bytes([b[0], b[1]]) as f64,
                        DataType::DtUint16 => u16::from_le_bytes([b[0], b[1]]) as f64,
                        DataType::DtHalf => {
                            ferroflow_tensor::f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
                                .to_f64()
                        }
                        DataType::DtBfloat16 => {
                            ferroflow_tensor::bf16::from_bits(u16::from_le_bytes([b[0], b[1]]))
                                .to_f64()
                        }
                        DataType::DtInt8 => b[0] as i8 as f64,
                        _ => b[0] as f64,
                    }
                })
                .collect();
            return Ok(out);
        }
        let typed: Vec<f64> = match dtype {
            DataType::DtFloat => self.float_val.iter().map(|&v| v as f64).collect(),
            DataType::DtDouble => self.double_val.clone(),
            DataType::DtInt32
            | DataType::DtInt16
            | DataType::DtInt8
            | DataType::DtUint8
            | DataType::DtUint16 => self.int_val.iter().map(|&v| v as f64).collect(),
            DataType::DtInt64 => self.int64_val.iter().map(|&v| v as f64).collect(),
            DataType::DtUint32 => self.uint32_val.iter().map(|&v| v as f64).collect(),
            DataType::DtUint64 => self.uint64_val.iter().map(|&v| v as f64).collect(),
            DataType::DtBool => self.bool_val.iter().map(|&v| v as u8 as f64).collect(),
            DataType::DtHalf => self
                .half_val
                .iter()
                .map(|&v| ferroflow_tensor::f16::from_bits(v as u16).to_f64())
                .collect(),
            DataType::DtBfloat16 => self
                .half_val
                .iter()
                .map(|&v| ferroflow_tensor::bf16::from_bits(v as u16).to_f64())
                .collect(),
            other => {
                return Err(Error::unimplemented(format!(
                    "cannot decode a {other:?} TensorProto as numbers"
                )))
            }
        };
        broadcast(typed, n, f64::default())
    }

    /// The elements of a DT_STRING tensor (a single value is broadcast).
    pub fn to_strings(&self) -> Result<Vec<Vec<u8>>> {
        if self.data_type() != Some(DataType::DtString) {
            return Err(Error::invalid_argument(format!(
                "expected a DT_STRING TensorProto, got dtype {}",
                self.dtype
            )));
        }
        let n = self.element_count()?;
        broadcast(self.string_val.clone(), n, Vec::new())
    }
}

/// Expands `values` to `n` elements: exact, empty (zeros) or one value
/// repeated, like TensorFlow's `MakeNdarray` / `Tensor::FromProto`.
fn broadcast<T: Clone>(values: Vec<T>, n: usize, zero: T) -> Result<Vec<T>> {
    match values.len() {
        len if len == n => Ok(values),
        0 => Ok(vec![zero; n]),
        1 => Ok(vec![values[0].clone(); n]),
        len => Err(Error::invalid_argument(format!(
            "TensorProto has {len} values for {n} elements"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn scalar_float_matches_tf_bytes() {
        // tf.summary.scalar writes DT_FLOAT, an empty shape and 4 content bytes.
        let t = TensorProto::from_f32(&[], &[0.5]);
        assert_eq!(
            t.encode_to_vec(),
            [0x08, 0x01, 0x12, 0x00, 0x22, 0x04, 0x00, 0x00, 0x00, 0x3f]
        );
        assert_eq!(t.to_f64_vec().unwrap(), vec![0.5]);
    }

    #[test]
    fn typed_values_broadcast() {
        let t = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto::from_dims(&[2, 2])),
            float_val: vec![3.0],
            ..Default::default()
        };
        assert_eq!(t.to_f64_vec().unwrap(), vec![3.0; 4]);
        let bad = TensorProto {
            float_val: vec![1.0, 2.0],
            ..t
        };
        assert!(bad.to_f64_vec().is_err());
    }

    #[test]
    fn strings() {
        let t = TensorProto::from_strings(&[2], vec![b"a".to_vec(), b"".to_vec()]);
        assert_eq!(t.to_strings().unwrap(), vec![b"a".to_vec(), vec![]]);
        let back = TensorProto::decode(t.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, t);
    }
}
