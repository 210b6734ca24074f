//! The decode and serialize ops: `DecodeRaw`, `DecodeCSV`,
//! `DecodeJSONExample`, `DecodeCompressed`, `EncodeBase64`, `DecodeBase64`,
//! `SerializeTensor`, `ParseTensor`, `SerializeSparse`,
//! `SerializeManySparse` and `DeserializeManySparse`, with TensorFlow's
//! input names, attributes and error messages.

use std::io::Read;

use ferroflow_graph::{AttrValue, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_records::ops::tensor_to_proto;
use ferroflow_records::proto::{DataType, Message, TensorProto};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, f16, DType, Data, Element, Error, Result, Tensor};

/// Registers the decode ops and kernels (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

/// The graph-level definitions of the decode ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("DecodeRaw", &["bytes"], infer_decode_raw),
        OpDef::new(
            "DecodeCSV",
            &["records", "record_defaults*"],
            infer_decode_csv,
        ),
        OpDef::new("DecodeJSONExample", &["json_examples"], infer_same_strings),
        OpDef::new("DecodeCompressed", &["bytes"], infer_same_strings),
        OpDef::new("EncodeBase64", &["input"], infer_same_strings),
        OpDef::new("DecodeBase64", &["input"], infer_same_strings),
        OpDef::new("SerializeTensor", &["tensor"], infer_serialize_tensor),
        OpDef::new("ParseTensor", &["serialized"], infer_parse_tensor),
        OpDef::new(
            "SerializeSparse",
            &["sparse_indices", "sparse_values", "sparse_shape"],
            infer_serialize_sparse,
        ),
        OpDef::new(
            "SerializeManySparse",
            &["sparse_indices", "sparse_values", "sparse_shape"],
            infer_serialize_many_sparse,
        ),
        OpDef::new(
            "DeserializeManySparse",
            &["serialized_sparse"],
            infer_deserialize_many_sparse,
        ),
    ]
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "DecodeRaw",
            factory(|init| {
                let out_type = init.node.attrs.dtype("out_type")?;
                raw_size(out_type)?;
                let little = init.node.attrs.bool_or("little_endian", true)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let out = decode_raw(ctx.input(0)?, out_type, little)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "DecodeCSV",
            factory(|init| {
                let csv = CsvConfig::new(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let defaults: Vec<Tensor> = (1..ctx.num_inputs())
                        .map(|i| ctx.input(i).cloned())
                        .collect::<Result<_>>()?;
                    for t in decode_csv(&csv, ctx.input(0)?, &defaults)? {
                        ctx.output(t);
                    }
                    Ok(())
                }))
            }),
        ),
        (
            "DecodeJSONExample",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    map_strings(ctx, json_to_example)
                }))
            }),
        ),
        (
            "DecodeCompressed",
            factory(|init| {
                let kind = init.node.attrs.str_or("compression_type", "")?;
                ensure!(
                    matches!(kind.as_str(), "" | "ZLIB" | "GZIP"),
                    invalid_argument,
                    "Only ZLIB, GZIP or NONE are supported compressions, got '{kind}'"
                );
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    map_strings(ctx, |b| decompress(&kind, b))
                }))
            }),
        ),
        (
            "EncodeBase64",
            factory(|init| {
                let pad = init.node.attrs.bool_or("pad", false)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    map_strings(ctx, |b| Ok(base64_encode(b, pad)))
                }))
            }),
        ),
        (
            "DecodeBase64",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    map_strings(ctx, base64_decode)
                }))
            }),
        ),
        (
            "SerializeTensor",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let bytes = serialize_tensor(ctx.input(0)?)?;
                    ctx.output(Tensor::scalar(bytes));
                    Ok(())
                }))
            }),
        ),
        (
            "ParseTensor",
            factory(|init| {
                let out_type = init.node.attrs.dtype("out_type")?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let s = ctx.input(0)?;
                    let bytes = match (s.rank(), strings(s, "serialized")?) {
                        (0, [b]) => b,
                        _ => {
                            bail!(
                                invalid_argument,
                                "Expected `serialized` to be a scalar, got shape: {}",
                                s.shape()
                            )
                        }
                    };
                    let t = parse_tensor(bytes)?;
                    ensure!(
                        t.dtype() == out_type,
                        invalid_argument,
                        "Type mismatch between parsed tensor ({}) and dtype ({})",
                        tf_name(t.dtype()),
                        tf_name(out_type)
                    );
                    ctx.output(t);
                    Ok(())
                }))
            }),
        ),
        (
            "SerializeSparse",
            factory(|init| {
                string_out_type(&init.node.attrs)?;
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let (i, v, s) = sparse_inputs(ctx)?;
                    let parts = [i, v, s]
                        .iter()
                        .map(serialize_tensor_content)
                        .collect::<Result<Vec<_>>>()?;
                    ctx.output(Tensor::vector(parts));
                    Ok(())
                }))
            }),
        ),
        (
            "SerializeManySparse",
            factory(|init| {
                string_out_type(&init.node.attrs)?;
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let (i, v, s) = sparse_inputs(ctx)?;
                    let out = serialize_many_sparse(&i, &v, &s)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "DeserializeManySparse",
            factory(|init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let (i, v, s) = deserialize_many_sparse(ctx.input(0)?, dtype)?;
                    ctx.output(i);
                    ctx.output(v);
                    ctx.output(s);
                    Ok(())
                }))
            }),
        ),
    ]
}

// ------------------------------------------------------------------ inference

fn infer_same_strings(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    Ok(vec![OutputInfo::new(DType::String, ctx.shape(0).clone())])
}

fn infer_decode_raw(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    let t = ctx.type_attr("out_type")?;
    raw_size(t)?;
    let shape = match ctx.shape(0).dims() {
        None => PartialShape::unknown(),
        Some(d) => {
            let mut d = d.to_vec();
            d.push(None);
            PartialShape::from_dims(d)
        }
    };
    Ok(vec![OutputInfo::new(t, shape)])
}

fn infer_decode_csv(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    let types = ctx.attrs().dtypes("OUT_TYPE")?;
    if types.len() + 1 != ctx.num_inputs() {
        return Err(ctx.shape_error(format!(
            "Expected {} record defaults, got {}",
            types.len(),
            ctx.num_inputs() - 1
        )));
    }
    for (i, &t) in types.iter().enumerate() {
        csv_type(t)?;
        ensure!(
            ctx.dtype(i + 1) == t,
            type_error,
            "record_defaults[{i}] must be {t}, got {}",
            ctx.dtype(i + 1)
        );
        if ctx.shape(i + 1).rank().is_some_and(|r| r > 1)
            || ctx.shape(i + 1).num_elements().is_some_and(|n| n > 1)
        {
            return Err(ctx.shape_error(format!(
                "Shape of a default must be a length-0 or length-1 vector, or a scalar (record_defaults[{i}])"
            )));
        }
    }
    let shape = ctx.shape(0).clone();
    Ok(types
        .into_iter()
        .map(|t| OutputInfo::new(t, shape.clone()))
        .collect())
}

fn infer_serialize_tensor(_ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn infer_parse_tensor(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    let t = ctx.type_attr("out_type")?;
    Ok(vec![OutputInfo::new(t, PartialShape::unknown())])
}

fn infer_serialize_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_dtype(2, &[DType::Int64])?;
    Ok(vec![OutputInfo::new(
        DType::String,
        PartialShape::from_dims(vec![Some(3)]),
    )])
}

fn infer_serialize_many_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int64])?;
    ctx.expect_dtype(2, &[DType::Int64])?;
    Ok(vec![OutputInfo::new(
        DType::String,
        PartialShape::from_dims(vec![None, Some(3)]),
    )])
}

fn infer_deserialize_many_sparse(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    let t = ctx.type_attr("dtype")?;
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None, None])),
        OutputInfo::new(t, PartialShape::from_dims(vec![None])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None])),
    ])
}

// ------------------------------------------------------------------- helpers

fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>().map_err(|_| {
        Error::invalid_argument(format!("{what} must be a string tensor, got {}", t.dtype()))
    })
}

/// Applies `f` to every string of input 0; the output has its shape.
fn map_strings(ctx: &mut OpContext<'_>, f: impl Fn(&[u8]) -> Result<Vec<u8>>) -> Result<()> {
    let input = ctx.input(0)?;
    let out = strings(input, "input")?
        .iter()
        .map(|b| f(b))
        .collect::<Result<Vec<_>>>()?;
    let t = Tensor::from_vec(input.shape().clone(), out)?;
    ctx.output(t);
    Ok(())
}

/// TensorFlow's name of a dtype in messages (`DataTypeString`).
fn tf_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "half",
        DType::BFloat16 => "bfloat16",
        DType::Int8 => "int8",
        DType::Int16 => "int16",
        DType::Int32 => "int32",
        DType::Int64 => "int64",
        DType::UInt8 => "uint8",
        DType::UInt16 => "uint16",
        DType::UInt32 => "uint32",
        DType::UInt64 => "uint64",
        DType::Bool => "bool",
        DType::String => "string",
        DType::Complex64 => "complex64",
        DType::Complex128 => "complex128",
        DType::Resource => "resource",
        DType::Variant => "variant",
        DType::QInt8 => "qint8",
        DType::QUInt8 => "quint8",
        DType::QInt16 => "qint16",
        DType::QUInt16 => "quint16",
        DType::QInt32 => "qint32",
    }
}

// ------------------------------------------------------------------ DecodeRaw

fn raw_size(t: DType) -> Result<usize> {
    Ok(match t {
        DType::Float16 | DType::Int16 | DType::UInt16 => 2,
        DType::Float32 | DType::Int32 => 4,
        DType::Float64 | DType::Int64 => 8,
        DType::UInt8 | DType::Int8 | DType::Bool => 1,
        other => {
            bail!(
                invalid_argument,
                "DecodeRaw: out_type {other} is not supported"
            )
        }
    })
}

/// Element `i` of `width` bytes, in host order.
fn le_chunks<const N: usize>(bytes: &[u8], little: bool) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes.chunks_exact(N).map(move |c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        if !little {
            a.reverse();
        }
        a
    })
}

fn decode_raw(input: &Tensor, out_type: DType, little: bool) -> Result<Tensor> {
    let size = raw_size(out_type)?;
    let items = strings(input, "bytes")?;
    let len = items.first().map_or(0, Vec::len);
    ensure!(
        len % size == 0,
        invalid_argument,
        "Input to DecodeRaw has length {len} that is not a multiple of {size}, the size of {}",
        tf_name(out_type)
    );
    for (i, s) in items.iter().enumerate() {
        ensure!(
            s.len() == len,
            invalid_argument,
            "DecodeRaw requires input strings to all be the same size, but element {i} has size {len} != {}",
            s.len()
        );
    }
    let mut dims = input.dims().to_vec();
    dims.push(len / size);
    let all = || items.iter().flat_map(|s| s.iter().copied());
    let joined: Vec<u8> = all().collect();
    Ok(match out_type {
        DType::UInt8 => Tensor::from_vec(dims, joined)?,
        DType::Int8 => Tensor::from_vec(dims, joined.iter().map(|&b| b as i8).collect())?,
        DType::Bool => Tensor::from_vec(dims, joined.iter().map(|&b| b != 0).collect())?,
        DType::Int16 => Tensor::from_vec(
            dims,
            le_chunks::<2>(&joined, little)
                .map(i16::from_le_bytes)
                .collect(),
        )?,
        DType::UInt16 => Tensor::from_vec(
            dims,
            le_chunks::<2>(&joined, little)
                .map(u16::from_le_bytes)
                .collect(),
        )?,
        DType::Float16 => Tensor::from_vec(
            dims,
            le_chunks::<2>(&joined, little)
                .map(|b| f16::from_bits(u16::from_le_bytes(b)))
                .collect(),
        )?,
        DType::Int32 => Tensor::from_vec(
            dims,
            le_chunks::<4>(&joined, little)
                .map(i32::from_le_bytes)
                .collect(),
        )?,
        DType::Float32 => Tensor::from_vec(
            dims,
            le_chunks::<4>(&joined, little)
                .map(f32::from_le_bytes)
                .collect(),
        )?,
        DType::Int64 => Tensor::from_vec(
            dims,
            le_chunks::<8>(&joined, little)
                .map(i64::from_le_bytes)
                .collect(),
        )?,
        DType::Float64 => Tensor::from_vec(
            dims,
            le_chunks::<8>(&joined, little)
                .map(f64::from_le_bytes)
                .collect(),
        )?,
        _ => unreachable!("raw_size rejected it"),
    })
}

// ------------------------------------------------------------------ DecodeCSV

/// `DecodeCSV`'s attributes.
struct CsvConfig {
    delim: u8,
    quote: bool,
    na_value: Vec<u8>,
    select_cols: Vec<usize>,
    types: Vec<DType>,
}

fn csv_type(t: DType) -> Result<()> {
    match t {
        DType::Float32 | DType::Float64 | DType::Int32 | DType::Int64 | DType::String => Ok(()),
        other => Err(Error::invalid_argument(format!(
            "DecodeCSV: {other} is not a supported output type (float32, float64, int32, int64, string)"
        ))),
    }
}

impl CsvConfig {
    fn new(a: &ferroflow_graph::Attrs) -> Result<Self> {
        let delim = match a.get("field_delim") {
            None => b",".to_vec(),
            Some(AttrValue::Str(s)) => s.clone(),
            Some(_) => bail!(invalid_argument, "field_delim must be a string"),
        };
        ensure!(
            delim.len() == 1,
            invalid_argument,
            "field_delim should be only 1 character"
        );
        let na_value = match a.get("na_value") {
            Some(AttrValue::Str(s)) => s.clone(),
            _ => Vec::new(),
        };
        let select_cols: Vec<i64> = match a.get("select_cols") {
            Some(AttrValue::IntList(v)) => v.clone(),
            _ => Vec::new(),
        };
        if select_cols.windows(2).any(|w| w[0] >= w[1]) {
            bail!(invalid_argument, "select_cols is not strictly increasing.");
        }
        if select_cols.first().is_some_and(|&c| c < 0) {
            bail!(invalid_argument, "select_cols contains negative values.");
        }
        let types = a.dtypes("OUT_TYPE")?;
        for &t in &types {
            csv_type(t)?;
        }
        if !select_cols.is_empty() && select_cols.len() != types.len() {
            bail!(
                invalid_argument,
                "Length of select_cols and record_defaults do not match."
            );
        }
        Ok(CsvConfig {
            delim: delim[0],
            quote: a.bool_or("use_quote_delim", true)?,
            na_value,
            select_cols: select_cols.into_iter().map(|c| c as usize).collect(),
            types,
        })
    }

    /// Splits one record into the selected fields (TensorFlow's
    /// `ExtractFields`: quotes, doubled quotes, CR/LF skipped between fields).
    fn fields(&self, input: &[u8]) -> Result<Vec<Vec<u8>>> {
        let ncols = self.types.len();
        let select_all = self.select_cols.is_empty();
        let include =
            |sel: usize, parsed: usize| select_all || self.select_cols.get(sel) == Some(&parsed);
        let (delim, n) = (self.delim, input.len());
        let mut out = Vec::with_capacity(ncols);
        let (mut i, mut parsed, mut sel) = (0usize, 0usize, 0usize);
        if input.is_empty() {
            return Ok(out);
        }
        while i < n {
            if input[i] == b'\n' || input[i] == b'\r' {
                i += 1;
                continue;
            }
            let inc = include(sel, parsed);
            let mut field = Vec::new();
            if self.quote && input[i] == b'"' {
                i += 1;
                while i + 1 < n && (input[i] != b'"' || input[i + 1] != delim) {
                    if input[i] != b'"' {
                        if inc {
                            field.push(input[i]);
                        }
                        i += 1;
                    } else {
                        ensure!(
                            input[i + 1] == b'"',
                            invalid_argument,
                            "Quote inside a string has to be escaped by another quote"
                        );
                        if inc {
                            field.push(b'"');
                        }
                        i += 2;
                    }
                }
                ensure!(
                    i < n && input[i] == b'"' && (i == n - 1 || input[i + 1] == delim),
                    invalid_argument,
                    "Quoted field has to end with quote followed by delim or end"
                );
                i += 2;
            } else {
                while i < n && input[i] != delim {
                    if (self.quote && input[i] == b'"') || input[i] == b'\n' || input[i] == b'\r' {
                        bail!(
                            invalid_argument,
                            "Unquoted fields cannot have quotes/CRLFs inside"
                        );
                    }
                    if inc {
                        field.push(input[i]);
                    }
                    i += 1;
                }
                i += 1;
            }
            parsed += 1;
            if inc {
                out.push(field);
                sel += 1;
                if !select_all && sel == ncols {
                    return Ok(out);
                }
            }
        }
        if include(sel, parsed) && input[n - 1] == delim {
            out.push(Vec::new());
        }
        Ok(out)
    }
}

/// One output column of `DecodeCSV`.
enum CsvCol {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Str(Vec<Vec<u8>>),
}

fn parse_num<T: std::str::FromStr>(field: &[u8]) -> Option<T> {
    std::str::from_utf8(field)
        .ok()
        .map(|s| s.trim_matches(|c: char| c.is_ascii_whitespace()))
        .and_then(|s| s.parse().ok())
}

fn decode_csv(csv: &CsvConfig, records: &Tensor, defaults: &[Tensor]) -> Result<Vec<Tensor>> {
    let recs = strings(records, "records")?;
    for (i, d) in defaults.iter().enumerate() {
        if d.num_elements() > 1 || d.rank() > 1 {
            bail!(
                invalid_argument,
                "There should only be 1 default per field but field {i} has {}",
                d.num_elements()
            );
        }
    }
    let mut cols: Vec<CsvCol> = csv
        .types
        .iter()
        .map(|t| match t {
            DType::Float32 => CsvCol::F32(Vec::with_capacity(recs.len())),
            DType::Float64 => CsvCol::F64(Vec::with_capacity(recs.len())),
            DType::Int32 => CsvCol::I32(Vec::with_capacity(recs.len())),
            DType::Int64 => CsvCol::I64(Vec::with_capacity(recs.len())),
            _ => CsvCol::Str(Vec::with_capacity(recs.len())),
        })
        .collect();
    for (r, rec) in recs.iter().enumerate() {
        let fields = csv.fields(rec)?;
        ensure!(
            fields.len() == cols.len(),
            invalid_argument,
            "Expect {} fields but have {} in record {r}",
            cols.len(),
            fields.len()
        );
        for (f, (field, col)) in fields.iter().zip(cols.iter_mut()).enumerate() {
            let missing = field.is_empty() || *field == csv.na_value;
            let default = &defaults[f];
            if missing && default.num_elements() == 0 {
                bail!(
                    invalid_argument,
                    "Field {f} is required but missing in record {r}!"
                );
            }
            let bad = |what: &str| {
                Error::invalid_argument(format!(
                    "Field {f} in record {r} is not a valid {what}: {}",
                    String::from_utf8_lossy(field)
                ))
            };
            fn first<T: Element>(t: &Tensor) -> Result<T> {
                Ok(t.as_slice::<T>()?[0].clone())
            }
            match col {
                CsvCol::F32(v) => v.push(if missing {
                    first(default)?
                } else {
                    parse_num(field).ok_or_else(|| bad("float"))?
                }),
                CsvCol::F64(v) => v.push(if missing {
                    first(default)?
                } else {
                    parse_num(field).ok_or_else(|| bad("double"))?
                }),
                CsvCol::I32(v) => v.push(if missing {
                    first(default)?
                } else {
                    parse_num(field).ok_or_else(|| bad("int32"))?
                }),
                CsvCol::I64(v) => v.push(if missing {
                    first(default)?
                } else {
                    parse_num(field).ok_or_else(|| bad("int64"))?
                }),
                CsvCol::Str(v) => v.push(if missing {
                    first(default)?
                } else {
                    field.clone()
                }),
            }
        }
    }
    let shape = records.shape().clone();
    cols.into_iter()
        .map(|c| match c {
            CsvCol::F32(v) => Tensor::from_vec(shape.clone(), v),
            CsvCol::F64(v) => Tensor::from_vec(shape.clone(), v),
            CsvCol::I32(v) => Tensor::from_vec(shape.clone(), v),
            CsvCol::I64(v) => Tensor::from_vec(shape.clone(), v),
            CsvCol::Str(v) => Tensor::from_vec(shape.clone(), v),
        })
        .collect()
}

// ------------------------------------------------------- compression, base64

fn decompress(kind: &str, bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let res = match kind {
        "ZLIB" => flate2::read::ZlibDecoder::new(bytes).read_to_end(&mut out),
        "GZIP" => flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out),
        _ => return Ok(bytes.to_vec()),
    };
    res.map_err(|e| {
        // zlib's codes, as TensorFlow reports them: Z_DATA_ERROR for corrupt
        // data, Z_BUF_ERROR for a truncated stream.
        let code = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            -5
        } else {
            -3
        };
        Error::data_loss(format!("inflate() failed with error {code}: {e}"))
    })?;
    Ok(out)
}

const WEB_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Web-safe base64 (`-`, `_`); `=` padding only with `pad`.
pub fn base64_encode(input: &[u8], pad: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for k in 0..4 {
            if k < chars {
                out.push(WEB_SAFE[((n >> (18 - 6 * k)) & 63) as usize]);
            } else if pad {
                out.push(b'=');
            }
        }
    }
    out
}

/// Decodes web-safe base64 with or without padding (standard `+`, `/`
/// are rejected, as TensorFlow does).
pub fn base64_decode(input: &[u8]) -> Result<Vec<u8>> {
    let mut data = input;
    // Up to two trailing '=' (padding) are ignored.
    for _ in 0..2 {
        if let [rest @ .., b'='] = data {
            data = rest;
        }
    }
    ensure!(
        data.len() % 4 != 1,
        invalid_argument,
        "Base64 string length cannot be 1 modulo 4."
    );
    let value = |c: u8| -> Result<u32> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => {
                bail!(invalid_argument, "Invalid character found in base64.")
            }
        } as u32)
    };
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    for chunk in data.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Ok(out)
}

// ------------------------------------------------------------ TensorProtos

/// A tensor as TensorFlow's `SerializeTensor` writes it
/// (`AsProtoTensorContent`: strings in `string_val`, numbers as raw bytes).
pub fn serialize_tensor(t: &Tensor) -> Result<Vec<u8>> {
    if matches!(t.dtype(), DType::Resource | DType::Variant) {
        bail!(
            unimplemented,
            "SerializeTensor: {} tensors cannot be serialized",
            t.dtype()
        );
    }
    Ok(tensor_to_proto(t).encode_to_vec())
}

/// A `TensorProto` whose few values repeat to fill its shape may not ask
/// for more than this many bytes (a 20-byte proto must not allocate
/// terabytes).
const MAX_SPLAT_BYTES: usize = 1 << 28;

fn values_from<T: Copy>(
    content: &[u8],
    width: usize,
    repeated: &[T],
    n: usize,
    conv: impl Fn(&[u8]) -> T,
    zero: T,
) -> Result<Vec<T>> {
    let bytes = n
        .checked_mul(width)
        .filter(|&b| b <= MAX_SPLAT_BYTES || !content.is_empty());
    let Some(bytes) = bytes else {
        bail!(
            invalid_argument,
            "TensorProto's shape has {n} elements, too many to fill from {} values",
            repeated.len()
        );
    };
    if !content.is_empty() {
        ensure!(
            content.len() == bytes,
            invalid_argument,
            "TensorProto's tensor_content has {} bytes, expected {}",
            content.len(),
            bytes
        );
        return Ok(content.chunks_exact(width).map(conv).collect());
    }
    // The last value repeats to fill the shape (TensorFlow's splat rule);
    // extra values are ignored, as TensorFlow does.
    let last = repeated.last().copied().unwrap_or(zero);
    Ok((0..n)
        .map(|i| repeated.get(i).copied().unwrap_or(last))
        .collect())
}

/// The tensor a serialized `TensorProto` holds.
pub fn parse_tensor(bytes: &[u8]) -> Result<Tensor> {
    let bad = || {
        Error::invalid_argument(format!(
            "Could not parse `serialized` as TensorProto, base64: {}",
            std_base64(bytes)
        ))
    };
    let p = TensorProto::decode(bytes).map_err(|_| bad())?;
    let shape = p.tensor_shape.clone().unwrap_or_default();
    if shape.unknown_rank || shape.dim.iter().any(|d| d.size < 0) {
        return Err(bad());
    }
    let dims: Vec<usize> = shape.dim.iter().map(|d| d.size as usize).collect();
    let n = shape.num_elements().ok_or_else(bad)?;
    let c = &p.tensor_content;
    let dtype = DataType::try_from(p.dtype).map_err(|_| bad())?;
    let t = match dtype {
        DataType::DtFloat => Tensor::from_vec(
            dims,
            values_from(
                c,
                4,
                &p.float_val,
                n,
                |b| f32::from_le_bytes(b.try_into().unwrap()),
                0.0,
            )?,
        )?,
        DataType::DtDouble => Tensor::from_vec(
            dims,
            values_from(
                c,
                8,
                &p.double_val,
                n,
                |b| f64::from_le_bytes(b.try_into().unwrap()),
                0.0,
            )?,
        )?,
        DataType::DtInt64 => Tensor::from_vec(
            dims,
            values_from(
                c,
                8,
                &p.int64_val,
                n,
                |b| i64::from_le_bytes(b.try_into().unwrap()),
                0,
            )?,
        )?,
        DataType::DtInt32 => Tensor::from_vec(
            dims,
            values_from(
                c,
                4,
                &p.int_val,
                n,
                |b| i32::from_le_bytes(b.try_into().unwrap()),
                0,
            )?,
        )?,
        DataType::DtInt16 => {
            let v = values_from(
                c,
                2,
                &p.int_val,
                n,
                |b| i32::from(i16::from_le_bytes(b.try_into().unwrap())),
                0,
            )?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as i16).collect())?
        }
        DataType::DtInt8 => {
            let v = values_from(c, 1, &p.int_val, n, |b| i32::from(b[0] as i8), 0)?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as i8).collect())?
        }
        DataType::DtUint8 => {
            let v = values_from(c, 1, &p.int_val, n, |b| i32::from(b[0]), 0)?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as u8).collect())?
        }
        DataType::DtUint16 => {
            let v = values_from(
                c,
                2,
                &p.int_val,
                n,
                |b| i32::from(u16::from_le_bytes(b.try_into().unwrap())),
                0,
            )?;
            Tensor::from_vec(dims, v.into_iter().map(|x| x as u16).collect())?
        }
        DataType::DtUint32 => Tensor::from_vec(
            dims,
            values_from(
                c,
                4,
                &p.uint32_val,
                n,
                |b| u32::from_le_bytes(b.try_into().unwrap()),
                0,
            )?,
        )?,
        DataType::DtUint64 => Tensor::from_vec(
            dims,
            values_from(
                c,
                8,
                &p.uint64_val,
                n,
                |b| u64::from_le_bytes(b.try_into().unwrap()),
                0,
            )?,
        )?,
        DataType::DtHalf => {
            let v = values_from(
                c,
                2,
                &p.half_val,
                n,
                |b| i32::from(u16::from_le_bytes(b.try_into().unwrap())),
                0,
            )?;
            Tensor::from_vec(
                dims,
                v.into_iter().map(|x| f16::from_bits(x as u16)).collect(),
            )?
        }
        DataType::DtBool => Tensor::from_vec(
            dims,
            values_from(c, 1, &p.bool_val, n, |b| b[0] != 0, false)?,
        )?,
        DataType::DtString if !c.is_empty() => {
            Tensor::from_vec(dims, decode_string_content(c, n).ok_or_else(bad)?)?
        }
        DataType::DtString => {
            if p.string_val.len() != n {
                return Err(bad());
            }
            Tensor::from_vec(dims, p.string_val)?
        }
        other => {
            bail!(
                unimplemented,
                "ParseTensor: dtype {other:?} is not supported by ferroflow"
            )
        }
    };
    Ok(t)
}

/// A string tensor's `tensor_content`: every length as a varint, then
/// every string's bytes (TensorFlow's `EncodeStringList`).
fn encode_string_content(v: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.iter().map(|s| s.len() + 2).sum());
    for s in v {
        let mut n = s.len() as u64;
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
    for s in v {
        out.extend_from_slice(s);
    }
    out
}

fn decode_string_content(c: &[u8], n: usize) -> Option<Vec<Vec<u8>>> {
    let mut r = crate::parse::wire::Reader::new(c);
    let lens = (0..n)
        .map(|_| r.varint().ok().and_then(|l| usize::try_from(l).ok()))
        .collect::<Option<Vec<usize>>>()?;
    let mut rest = &c[c.len() - r.remaining()..];
    let mut out = Vec::with_capacity(n);
    for l in lens {
        if l > rest.len() {
            return None;
        }
        let (head, tail) = rest.split_at(l);
        out.push(head.to_vec());
        rest = tail;
    }
    rest.is_empty().then_some(out)
}

/// A tensor as TensorFlow's `AsProtoTensorContent` writes it (strings in
/// `tensor_content` too): the form `SerializeSparse` uses.
fn serialize_tensor_content(t: &Tensor) -> Result<Vec<u8>> {
    let mut p = tensor_to_proto(t);
    if let Data::Str(v) = t.data() {
        p.string_val.clear();
        p.tensor_content = encode_string_content(v);
    }
    Ok(p.encode_to_vec())
}

/// Standard base64 with padding (for TensorFlow's `ParseTensor` message).
fn std_base64(bytes: &[u8]) -> String {
    let web = base64_encode(bytes, true);
    web.into_iter()
        .map(|c| match c {
            b'-' => '+',
            b'_' => '/',
            c => c as char,
        })
        .collect()
}

// ------------------------------------------------------------- sparse serialization

fn string_out_type(a: &ferroflow_graph::Attrs) -> Result<()> {
    match a.dtype_or("out_type", DType::String)? {
        DType::String => Ok(()),
        other => Err(Error::unimplemented(format!(
            "serialized sparse tensors of out_type {other} are not supported by ferroflow (use tf.string)"
        ))),
    }
}

fn sparse_inputs(ctx: &OpContext<'_>) -> Result<(Tensor, Tensor, Tensor)> {
    let (i, v, s) = (
        ctx.input(0)?.clone(),
        ctx.input(1)?.clone(),
        ctx.input(2)?.clone(),
    );
    ensure!(
        i.rank() == 2,
        invalid_argument,
        "Input indices should be a matrix but received shape {}",
        i.shape()
    );
    ensure!(
        v.rank() == 1,
        invalid_argument,
        "Input values should be a vector but received shape {}",
        v.shape()
    );
    ensure!(
        s.rank() == 1,
        invalid_argument,
        "Input shape should be a vector but received shape {}",
        s.shape()
    );
    if i.dims()[0] != v.dims()[0] || i.dims()[1] != s.dims()[0] {
        bail!(
            invalid_argument,
            "Sparse tensor parts do not agree: indices {}, values {}, shape {}",
            i.shape(),
            v.shape(),
            s.shape()
        );
    }
    Ok((i, v, s))
}

/// Picks the elements of `v` at `rows` (a gather on the first axis).
fn gather_values(v: &Tensor, rows: &[usize]) -> Result<Tensor> {
    fn pick<T: Element>(s: &[T], rows: &[usize]) -> Vec<T> {
        rows.iter().map(|&r| s[r].clone()).collect()
    }
    let n = vec![rows.len()];
    Ok(match v.data() {
        Data::F32(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::F64(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::F16(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::BF16(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::I8(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::I16(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::I32(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::I64(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::U8(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::U16(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::U32(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::U64(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::Bool(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::Str(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::C64(s) => Tensor::from_vec(n, pick(s, rows))?,
        Data::C128(s) => Tensor::from_vec(n, pick(s, rows))?,
    })
}

/// `[N, 3]`: row `b` holds the entries whose first index is `b`, as a
/// rank `R-1` sparse tensor (indices, values, shape), each serialized.
fn serialize_many_sparse(i: &Tensor, v: &Tensor, s: &Tensor) -> Result<Tensor> {
    let shape = s.as_slice::<i64>()?;
    let rank = shape.len();
    if rank < 2 {
        bail!(
            invalid_argument,
            "Rank of input SparseTensor should be > 1, but saw rank: {rank}"
        );
    }
    let n =
        usize::try_from(shape[0]).map_err(|_| Error::invalid_argument("negative dense shape"))?;
    let idx = i.as_slice::<i64>()?;
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (e, coords) in idx.chunks_exact(rank).enumerate() {
        let b = usize::try_from(coords[0])
            .ok()
            .filter(|&b| b < n)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "indices[{e}] = {:?} is out of bounds: need 0 <= index < {:?}",
                    coords, shape
                ))
            })?;
        rows[b].push(e);
    }
    let sub_shape = Tensor::vector(shape[1..].to_vec());
    let mut out = Vec::with_capacity(n * 3);
    for members in rows {
        let sub_idx: Vec<i64> = members
            .iter()
            .flat_map(|&e| idx[e * rank + 1..(e + 1) * rank].iter().copied())
            .collect();
        let sub_idx = Tensor::from_vec(vec![members.len(), rank - 1], sub_idx)?;
        out.push(serialize_tensor_content(&sub_idx)?);
        out.push(serialize_tensor_content(&gather_values(v, &members)?)?);
        out.push(serialize_tensor_content(&sub_shape)?);
    }
    Tensor::from_vec(vec![n, 3], out)
}

fn deserialize_many_sparse(ser: &Tensor, dtype: DType) -> Result<(Tensor, Tensor, Tensor)> {
    if ser.rank() != 2 || ser.dims()[1] != 3 {
        bail!(
            invalid_argument,
            "Serialized sparse should be a matrix with 3 columns, got shape {}",
            ser.shape()
        );
    }
    let parts = strings(ser, "serialized_sparse")?;
    let n = ser.dims()[0];
    let mut all_idx: Vec<i64> = Vec::new();
    let mut values: Vec<Tensor> = Vec::new();
    let mut max_shape: Vec<i64> = Vec::new();
    let mut rank = None;
    for b in 0..n {
        let idx = parse_tensor(&parts[b * 3])?;
        let val = parse_tensor(&parts[b * 3 + 1])?;
        let shp = parse_tensor(&parts[b * 3 + 2])?;
        ensure!(
            val.dtype() == dtype,
            invalid_argument,
            "Requested SparseTensor of type {} but SparseTensor[{b}].values.dtype() == {}",
            tf_name(dtype),
            tf_name(val.dtype())
        );
        let (idx, shp) = (
            idx.as_slice::<i64>()?.to_vec(),
            shp.as_slice::<i64>()?.to_vec(),
        );
        let r = shp.len();
        ensure!(
            *rank.get_or_insert(r) == r,
            invalid_argument,
            "Inconsistent rank across SparseTensors: rank prior to SparseTensor[{b}] was: {} but rank of SparseTensor[{b}] is: {r}",
            rank.unwrap_or(r)
        );
        if max_shape.is_empty() {
            max_shape = shp.clone();
        }
        for (m, &d) in max_shape.iter_mut().zip(&shp) {
            *m = (*m).max(d);
        }
        for coords in idx.chunks_exact(r.max(1)) {
            all_idx.push(b as i64);
            all_idx.extend_from_slice(&coords[..r]);
        }
        values.push(val);
    }
    let r = rank.unwrap_or(0);
    let total = all_idx.len() / (r + 1);
    let mut shape = vec![n as i64];
    shape.extend(max_shape);
    let values = concat_values(values, dtype)?;
    Ok((
        Tensor::from_vec(vec![total, r + 1], all_idx)?,
        values,
        Tensor::vector(shape),
    ))
}

fn concat_values(parts: Vec<Tensor>, dtype: DType) -> Result<Tensor> {
    fn cat<T: Element>(parts: &[Tensor]) -> Result<Tensor> {
        let mut v: Vec<T> = Vec::new();
        for p in parts {
            v.extend_from_slice(p.as_slice::<T>()?);
        }
        let n = v.len();
        Tensor::from_vec(vec![n], v)
    }
    match dtype {
        DType::Float32 => cat::<f32>(&parts),
        DType::Float64 => cat::<f64>(&parts),
        DType::Float16 => cat::<f16>(&parts),
        DType::Int8 => cat::<i8>(&parts),
        DType::Int16 => cat::<i16>(&parts),
        DType::Int32 => cat::<i32>(&parts),
        DType::Int64 => cat::<i64>(&parts),
        DType::UInt8 => cat::<u8>(&parts),
        DType::UInt16 => cat::<u16>(&parts),
        DType::Bool => cat::<bool>(&parts),
        DType::String => cat::<Vec<u8>>(&parts),
        other => Err(Error::unimplemented(format!(
            "DeserializeManySparse: dtype {other} is not supported"
        ))),
    }
}

// ---------------------------------------------------------------- JSON Examples

/// One feature's values from JSON.
enum JsonList {
    Bytes(Vec<Vec<u8>>),
    Float(Vec<f32>),
    Int64(Vec<i64>),
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_len(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// Protobuf's JSON mapping of an `Example` -> its binary serialization,
/// written as protobuf's JSON parser writes it (repeated numbers unpacked).
fn json_to_example(json: &[u8]) -> Result<Vec<u8>> {
    let err = |what: &str| Error::invalid_argument(format!("Error while parsing JSON: {what}"));
    let v: serde_json::Value = serde_json::from_slice(json).map_err(|e| err(&e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err("an Example must be a JSON object"))?;
    let mut out = Vec::new();
    for (k, val) in obj {
        if k != "features" {
            return Err(err(&format!("unknown field \"{k}\" in Example")));
        }
        if val.is_null() {
            continue;
        }
        let f = val
            .as_object()
            .ok_or_else(|| err("Example.features must be an object"))?;
        let mut features = Vec::new();
        for (k, val) in f {
            if k != "feature" {
                return Err(err(&format!("unknown field \"{k}\" in Features")));
            }
            let map = val
                .as_object()
                .ok_or_else(|| err("Features.feature must be an object"))?;
            for (name, feat) in map {
                let mut feature = Vec::new();
                if let Some(list) = json_feature(feat).map_err(|m| err(&m))? {
                    let mut body = Vec::new();
                    let tag = match list {
                        JsonList::Bytes(v) => {
                            v.iter().for_each(|b| put_len(&mut body, 0x0a, b));
                            0x0a
                        }
                        JsonList::Float(v) => {
                            for x in v {
                                body.push(0x0d);
                                body.extend_from_slice(&x.to_le_bytes());
                            }
                            0x12
                        }
                        JsonList::Int64(v) => {
                            for x in v {
                                body.push(0x08);
                                put_varint(&mut body, x as u64);
                            }
                            0x1a
                        }
                    };
                    put_len(&mut feature, tag, &body);
                }
                let mut entry = Vec::new();
                put_len(&mut entry, 0x0a, name.as_bytes());
                put_len(&mut entry, 0x12, &feature);
                put_len(&mut features, 0x0a, &entry);
            }
        }
        put_len(&mut out, 0x0a, &features);
    }
    Ok(out)
}

fn json_feature(v: &serde_json::Value) -> std::result::Result<Option<JsonList>, String> {
    let obj = v.as_object().ok_or("a Feature must be an object")?;
    let mut out = None;
    for (k, list) in obj {
        let values = match list.as_object() {
            Some(o) => match o.get("value") {
                Some(serde_json::Value::Array(a)) => a.clone(),
                None | Some(serde_json::Value::Null) => Vec::new(),
                _ => return Err(format!("{k}.value must be an array")),
            },
            None => return Err(format!("{k} must be an object")),
        };
        out = Some(match k.as_str() {
            "bytesList" | "bytes_list" => JsonList::Bytes(
                values
                    .iter()
                    .map(|x| {
                        let s = x.as_str().ok_or("bytes values must be base64 strings")?;
                        let web: Vec<u8> = s
                            .bytes()
                            .map(|c| match c {
                                b'+' => b'-',
                                b'/' => b'_',
                                c => c,
                            })
                            .collect();
                        base64_decode(&web)
                            .map_err(|_| format!("invalid base64 bytes value \"{s}\""))
                    })
                    .collect::<std::result::Result<_, String>>()?,
            ),
            "floatList" | "float_list" => JsonList::Float(
                values
                    .iter()
                    .map(|x| match x {
                        serde_json::Value::Number(n) => n
                            .as_f64()
                            .map(|f| f as f32)
                            .ok_or_else(|| format!("invalid float value {n}")),
                        serde_json::Value::String(s) => match s.as_str() {
                            "NaN" => Ok(f32::NAN),
                            "Infinity" => Ok(f32::INFINITY),
                            "-Infinity" => Ok(f32::NEG_INFINITY),
                            s => s
                                .parse()
                                .map_err(|_| format!("invalid float value \"{s}\"")),
                        },
                        _ => Err("float values must be numbers".to_string()),
                    })
                    .collect::<std::result::Result<_, String>>()?,
            ),
            "int64List" | "int64_list" => JsonList::Int64(
                values
                    .iter()
                    .map(|x| match x {
                        serde_json::Value::Number(n) => {
                            n.as_i64().ok_or(format!("invalid int64 value {n}"))
                        }
                        serde_json::Value::String(s) => s
                            .parse()
                            .map_err(|_| format!("invalid int64 value \"{s}\"")),
                        _ => Err("int64 values must be numbers or strings".to_string()),
                    })
                    .collect::<std::result::Result<_, String>>()?,
            ),
            other => return Err(format!("unknown field \"{other}\" in Feature")),
        });
    }
    Ok(out)
}
