//! The TF1 summary ops as graph ops: `ScalarSummary`, `HistogramSummary`,
//! `ImageSummary`, `AudioSummaryV2`, `TensorSummaryV2` and `MergeSummary`.
//!
//! Each outputs a scalar DT_STRING tensor holding a serialized `Summary`,
//! with TensorFlow's input names, attributes, checks and error messages;
//! the values themselves come from the [`summary`](crate::summary) kernels.
//! [`register`] adds the op definitions to the graph registry and the
//! kernels to the runtime registry.

use std::collections::HashSet;
use std::sync::Once;

use ferroflow_graph::{AttrValue, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{f16, DType, Data, Element, Tensor};
use prost::Message;

use crate::proto::summary::{value, Value};
use crate::proto::{DataType, Summary, SummaryMetadata, TensorProto, TensorShapeProto};
use crate::summary::image::normalize_float_images;
use crate::summary::{
    audio_summaries, histogram, image_summaries, AudioShape, ImageShape, DEFAULT_BAD_COLOR,
};
use crate::{Error, Result};

/// Registers the summary ops and their kernels (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ferroflow_runtime::register_ops(op_defs(), kernels());
    });
}

/// Dtypes `ScalarSummary` and `HistogramSummary` accept (TF's `realnumbertypes`
/// that ferroflow has).
const REAL: &[DType] = &[
    DType::Float32,
    DType::Float64,
    DType::Int32,
    DType::UInt8,
    DType::Int16,
    DType::Int8,
    DType::Int64,
    DType::BFloat16,
    DType::UInt16,
    DType::Float16,
];

fn summary_output() -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn expect_inputs(ctx: &InferContext, n: usize) -> Result<()> {
    if ctx.num_inputs() != n {
        return Err(Error::value(format!(
            "'{}' ({}) takes {n} inputs ({}), got {}",
            ctx.name,
            ctx.def.name,
            ctx.def.inputs.join(", "),
            ctx.num_inputs()
        )));
    }
    Ok(())
}

fn infer_scalar(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_inputs(ctx, 2)?;
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, REAL)?;
    summary_output()
}

fn infer_histogram(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_inputs(ctx, 2)?;
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, REAL)?;
    summary_output()
}

fn infer_image(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_inputs(ctx, 2)?;
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(
        1,
        &[DType::UInt8, DType::Float32, DType::Float16, DType::Float64],
    )?;
    let max_images = ctx.int_or("max_images", 3)?;
    if max_images < 1 {
        return Err(Error::value(format!(
            "Attr max_images of '{}' (ImageSummary) must be at least 1, got {max_images}",
            ctx.name
        )));
    }
    ctx.expect_rank(1, 4)?;
    summary_output()
}

fn infer_audio(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_inputs(ctx, 3)?;
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_dtype(2, &[DType::Float32])?;
    let max_outputs = ctx.int_or("max_outputs", 3)?;
    if max_outputs < 1 {
        return Err(Error::value(format!(
            "Attr max_outputs of '{}' (AudioSummaryV2) must be at least 1, got {max_outputs}",
            ctx.name
        )));
    }
    summary_output()
}

fn infer_tensor(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_inputs(ctx, 3)?;
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.expect_dtype(2, &[DType::String])?;
    summary_output()
}

fn infer_merge(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.num_inputs() == 0 {
        return Err(Error::value(format!(
            "'{}' (MergeSummary) needs at least one input",
            ctx.name
        )));
    }
    for i in 0..ctx.num_inputs() {
        ctx.expect_dtype(i, &[DType::String])?;
    }
    summary_output()
}

/// The graph-level definitions of the summary ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("ScalarSummary", &["tags", "values"], infer_scalar),
        OpDef::new("HistogramSummary", &["tag", "values"], infer_histogram),
        OpDef::new("ImageSummary", &["tag", "tensor"], infer_image),
        OpDef::new(
            "AudioSummaryV2",
            &["tag", "tensor", "sample_rate"],
            infer_audio,
        ),
        OpDef::new(
            "TensorSummaryV2",
            &["tag", "tensor", "serialized_summary_metadata"],
            infer_tensor,
        ),
        OpDef::new("MergeSummary", &["inputs*"], infer_merge),
    ]
}

fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument(format!("{what} must be a string tensor")))
}

fn scalar_string(t: &Tensor, what: &str) -> Result<String> {
    match (t.rank(), strings(t, what)?) {
        (0, [s]) => Ok(String::from_utf8_lossy(s).into_owned()),
        _ => Err(Error::invalid_argument(format!(
            "{what} must be scalar, got a tensor of shape {}",
            t.shape()
        ))),
    }
}

fn output_summary(ctx: &mut OpContext<'_>, values: Vec<Value>) {
    let bytes = Summary::from_values(values).encode_to_vec();
    ctx.output(Tensor::scalar(bytes));
}

/// `static_cast<float>` of every element, as TF's `ScalarSummary` does.
fn to_f32_values(t: &Tensor) -> Result<Vec<f32>> {
    Ok(match t.data() {
        Data::F32(v) => v.to_vec(),
        Data::F64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        Data::BF16(v) => v.iter().map(|x| x.to_f32()).collect(),
        Data::I8(v) => v.iter().map(|&x| x as f32).collect(),
        Data::I16(v) => v.iter().map(|&x| x as f32).collect(),
        Data::I32(v) => v.iter().map(|&x| x as f32).collect(),
        Data::I64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::U8(v) => v.iter().map(|&x| x as f32).collect(),
        Data::U16(v) => v.iter().map(|&x| x as f32).collect(),
        Data::U32(v) => v.iter().map(|&x| x as f32).collect(),
        Data::U64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::Bool(_) | Data::Str(_) | Data::C64(_) | Data::C128(_) => {
            return Err(Error::invalid_argument(format!(
                "values must be real numbers, got {}",
                t.dtype()
            )))
        }
    })
}

fn scalar_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let tags = ctx.input(0)?;
    let values = ctx.input(1)?;
    let tag_list = strings(tags, "tags")?;
    if tags.dims() != values.dims() {
        let single = if tags.rank() == 0 {
            format!(" (tag '{}')", String::from_utf8_lossy(&tag_list[0]))
        } else {
            String::new()
        };
        return Err(Error::invalid_argument(format!(
            "tags and values are not the same shape: {} != {}{single}",
            tags.shape(),
            values.shape()
        )));
    }
    let floats = to_f32_values(values)?;
    let out = tag_list
        .iter()
        .zip(floats)
        .map(|(tag, v)| {
            Value::new(
                String::from_utf8_lossy(tag).into_owned(),
                value::Value::SimpleValue(v),
            )
        })
        .collect();
    output_summary(ctx, out);
    Ok(())
}

fn histogram_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let tag = ctx.input(0)?;
    if tag.rank() != 0 {
        return Err(Error::invalid_argument("tags must be scalar"));
    }
    let tag = scalar_string(tag, "tag")?;
    let values = ctx.input(1)?.to_f64_vec()?;
    // TensorFlow names the node (not the tag) in these messages.
    if values.iter().any(|v| v.is_nan()) {
        return Err(Error::invalid_argument(format!(
            "Nan in summary histogram for: {}",
            ctx.node
        )));
    }
    if values.iter().any(|v| v.is_infinite()) {
        return Err(Error::invalid_argument(format!(
            "Infinity in summary histogram for: {}",
            ctx.node
        )));
    }
    let v = Value::new(tag, value::Value::Histo(histogram(&values)));
    output_summary(ctx, vec![v]);
    Ok(())
}

fn image_kernel(ctx: &mut OpContext<'_>, max_images: usize, bad_color: &[u8]) -> Result<()> {
    let tag = ctx.input(0)?;
    if tag.rank() != 0 {
        return Err(Error::invalid_argument("Tags must be a scalar"));
    }
    let tag = scalar_string(tag, "tag")?;
    let tensor = ctx.input(1)?;
    let dims = tensor.dims();
    if dims.len() != 4 || !matches!(dims[3], 1 | 3 | 4) {
        return Err(Error::invalid_argument(format!(
            "Tensor must be 4-D with last dim 1, 3, or 4, not {}",
            tensor.shape()
        )));
    }
    let shape = ImageShape::new(dims)?;
    if bad_color.len() < shape.channels {
        return Err(Error::invalid_argument(format!(
            "bad_color must have at least {} channels, got {}",
            shape.channels,
            bad_color.len()
        )));
    }
    let values = match tensor.data() {
        Data::U8(v) => image_summaries(&tag, v, shape, max_images)?,
        Data::F32(v) => {
            let px = normalize_float_images(
                &limit(v, shape, max_images),
                cut(shape, max_images),
                bad_color,
            )?;
            image_summaries(&tag, &px, cut(shape, max_images), max_images)?
        }
        Data::F64(v) => {
            let px = normalize_float_images(
                &limit(v, shape, max_images),
                cut(shape, max_images),
                bad_color,
            )?;
            image_summaries(&tag, &px, cut(shape, max_images), max_images)?
        }
        Data::F16(v) => {
            let px = normalize_float_images::<f16>(
                &limit(v, shape, max_images),
                cut(shape, max_images),
                bad_color,
            )?;
            image_summaries(&tag, &px, cut(shape, max_images), max_images)?
        }
        _ => {
            return Err(Error::invalid_argument(format!(
                "ImageSummary takes uint8, float16, float32 or float64 images, got {}",
                tensor.dtype()
            )))
        }
    };
    output_summary(ctx, values);
    Ok(())
}

/// The first `max_images` images of a batch (only those are normalized).
fn cut(shape: ImageShape, max_images: usize) -> ImageShape {
    ImageShape {
        batch: shape.batch.min(max_images),
        ..shape
    }
}

fn limit<T: Element + Copy>(v: &[T], shape: ImageShape, max_images: usize) -> Vec<T> {
    let n = cut(shape, max_images).batch * shape.image_len();
    v[..n.min(v.len())].to_vec()
}

fn audio_kernel(ctx: &mut OpContext<'_>, max_outputs: usize) -> Result<()> {
    let tag = ctx.input(0)?;
    if tag.rank() != 0 {
        return Err(Error::invalid_argument("Tag must be a scalar"));
    }
    let tag = scalar_string(tag, "tag")?;
    let tensor = ctx.input(1)?;
    if !(2..=3).contains(&tensor.rank()) {
        return Err(Error::invalid_argument(format!(
            "Shape error: {}",
            tensor.shape()
        )));
    }
    let rate = ctx.input(2)?;
    if rate.num_elements() != 1 {
        return Err(Error::invalid_argument(
            "sample_rate must be rank-0 or contain a single value",
        ));
    }
    let sample_rate = rate.scalar_f64()? as f32;
    if sample_rate.is_nan() || sample_rate <= 0.0 {
        return Err(Error::invalid_argument("sample_rate must be > 0"));
    }
    let shape = AudioShape::new(tensor.dims())?;
    let samples = tensor.as_slice::<f32>()?;
    let values = audio_summaries(&tag, samples, shape, sample_rate, max_outputs)?;
    output_summary(ctx, values);
    Ok(())
}

/// A tensor as a `TensorProto` the way `TensorSummaryV2` stores it:
/// strings as `string_val`, everything else as little-endian
/// `tensor_content` (TensorFlow's `AsProtoField` / `AsProtoTensorContent`).
pub fn tensor_to_proto(t: &Tensor) -> TensorProto {
    let dims: Vec<i64> = t.dims().iter().map(|&d| d as i64).collect();
    let dtype = match t.dtype() {
        DType::Float32 => DataType::DtFloat,
        DType::Float64 => DataType::DtDouble,
        DType::Int32 => DataType::DtInt32,
        DType::UInt8 => DataType::DtUint8,
        DType::Int16 => DataType::DtInt16,
        DType::Int8 => DataType::DtInt8,
        // A tensor's dtype comes from its buffer, and handle types have
        // none of their own (they are held as bytes).
        DType::String | DType::Resource | DType::Variant => DataType::DtString,
        DType::Int64 => DataType::DtInt64,
        DType::Bool => DataType::DtBool,
        DType::BFloat16 => DataType::DtBfloat16,
        DType::UInt16 => DataType::DtUint16,
        DType::UInt32 => DataType::DtUint32,
        DType::UInt64 => DataType::DtUint64,
        DType::Float16 => DataType::DtHalf,
        DType::Complex64 => DataType::DtComplex64,
        DType::Complex128 => DataType::DtComplex128,
        DType::QInt8 => DataType::DtQint8,
        DType::QUInt8 => DataType::DtQuint8,
        DType::QInt16 => DataType::DtQint16,
        DType::QUInt16 => DataType::DtQuint16,
        DType::QInt32 => DataType::DtQint32,
    };
    let mut proto = TensorProto {
        dtype: dtype as i32,
        tensor_shape: Some(TensorShapeProto::from_dims(&dims)),
        ..Default::default()
    };
    let content = &mut proto.tensor_content;
    match t.data() {
        Data::Str(v) => proto.string_val = v.to_vec(),
        Data::F32(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::F64(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::F16(v) => content.extend(v.iter().flat_map(|x| x.to_bits().to_le_bytes())),
        Data::BF16(v) => content.extend(v.iter().flat_map(|x| x.to_bits().to_le_bytes())),
        Data::I8(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::I16(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::I32(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::I64(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::U8(v) => content.extend_from_slice(v),
        Data::U16(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::U32(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::U64(v) => content.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        Data::Bool(v) => content.extend(v.iter().map(|&b| b as u8)),
        Data::C64(v) => content.extend(
            v.iter()
                .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()])
                .flatten(),
        ),
        Data::C128(v) => content.extend(
            v.iter()
                .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()])
                .flatten(),
        ),
    }
    proto
}

fn tensor_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let tag = scalar_string(ctx.input(0)?, "tag")?;
    let tensor = tensor_to_proto(ctx.input(1)?);
    let meta_t = ctx.input(2)?;
    let meta_bytes = match (
        meta_t.rank(),
        strings(meta_t, "serialized_summary_metadata")?,
    ) {
        (0, [s]) => s.clone(),
        _ => {
            return Err(Error::invalid_argument(format!(
                "serialized_summary_metadata must be scalar, got a tensor of shape {}",
                meta_t.shape()
            )))
        }
    };
    let metadata = SummaryMetadata::decode(meta_bytes.as_slice()).map_err(|e| {
        Error::invalid_argument(format!(
            "serialized_summary_metadata of {} is not a SummaryMetadata: {e}",
            ctx.node
        ))
    })?;
    let v = Value::new(tag, value::Value::Tensor(tensor)).with_metadata(metadata);
    output_summary(ctx, vec![v]);
    Ok(())
}

fn merge_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for i in 0..ctx.num_inputs() {
        for bytes in strings(ctx.input(i)?, "inputs")? {
            let summary = Summary::decode(bytes.as_slice()).map_err(|_| {
                Error::invalid_argument("Could not parse one of the summary inputs")
            })?;
            for v in summary.value {
                if !v.tag.is_empty() && !seen.insert(v.tag.clone()) {
                    return Err(Error::invalid_argument(format!(
                        "Duplicate tag {} found in summary inputs ",
                        v.tag
                    )));
                }
                out.push(v);
            }
        }
    }
    output_summary(ctx, out);
    Ok(())
}

fn positive_attr(attrs: &ferroflow_graph::Attrs, name: &str, default: i64) -> Result<usize> {
    let v = attrs.int_or(name, default)?;
    if v < 1 {
        return Err(Error::invalid_argument(format!(
            "attribute {name} must be at least 1, got {v}"
        )));
    }
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

/// The runtime kernels of the summary ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("ScalarSummary", factory(|_| Ok(Box::new(scalar_kernel)))),
        (
            "HistogramSummary",
            factory(|_| Ok(Box::new(histogram_kernel))),
        ),
        (
            "ImageSummary",
            factory(|init| {
                let attrs = &init.node.attrs;
                let max_images = positive_attr(attrs, "max_images", 3)?;
                let bad_color = match attrs.get("bad_color") {
                    None => DEFAULT_BAD_COLOR.to_vec(),
                    Some(AttrValue::Tensor(t)) => {
                        if t.rank() != 1 {
                            return Err(Error::invalid_argument(format!(
                                "bad_color must be a vector, got shape {}",
                                t.shape()
                            )));
                        }
                        t.to_i64_vec()?
                            .into_iter()
                            .map(|c| c.clamp(0, 255) as u8)
                            .collect()
                    }
                    Some(_) => {
                        return Err(Error::invalid_argument(
                            "attribute bad_color must be a uint8 tensor",
                        ))
                    }
                };
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    image_kernel(ctx, max_images, &bad_color)
                }))
            }),
        ),
        (
            "AudioSummaryV2",
            factory(|init| {
                let max_outputs = positive_attr(&init.node.attrs, "max_outputs", 3)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    audio_kernel(ctx, max_outputs)
                }))
            }),
        ),
        ("TensorSummaryV2", factory(|_| Ok(Box::new(tensor_kernel)))),
        ("MergeSummary", factory(|_| Ok(Box::new(merge_kernel)))),
    ]
}
