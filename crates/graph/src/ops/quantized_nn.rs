//! Quantized NN ops with TensorFlow's inputs, attrs and shape functions:
//! `QuantizedConv2D`, `QuantizedAvgPool`, `QuantizedMaxPool` and
//! `QuantizedReluX`. Each takes quantized values with float32 scalar ranges
//! and gives the result with its range (two float32 scalars).

use super::conv::{dims4, pooled, spatial};
use super::{InferContext, OpDef};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::kernels::conv::{Padding, Pool2dParams};
use ferroflow_tensor::{DType, Error, Result};

/// TensorFlow's `quantizedtype`.
const QUANTIZED: &[DType] = &[
    DType::QInt8,
    DType::QUInt8,
    DType::QInt32,
    DType::QInt16,
    DType::QUInt16,
];

/// Requires the quantized type attr `attr` to be one of TF's quantized types.
fn quantized_attr(ctx: &InferContext, attr: &str, default: Option<DType>) -> Result<DType> {
    let t = match default {
        Some(d) => ctx.type_or(attr, d)?,
        None => ctx.type_attr(attr)?,
    };
    if !QUANTIZED.contains(&t) {
        return Err(Error::type_error(format!(
            "{} '{}': attr '{attr}' is {t}, not a quantized type (qint8, quint8, qint32, qint16, quint16)",
            ctx.def.name, ctx.name
        )));
    }
    Ok(t)
}

/// Inputs `first..first + n` are float32 scalars (the ranges).
fn scalar_ranges(ctx: &InferContext, first: usize, n: usize) -> Result<()> {
    for i in first..first + n {
        ctx.expect_dtype(i, &[DType::Float32])?;
        ctx.expect_rank(i, 0)?;
    }
    Ok(())
}

fn with_range(t: DType, shape: PartialShape) -> Result<Vec<OutputInfo>> {
    Ok(vec![
        OutputInfo::new(t, shape),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
    ])
}

/// `padding` must be SAME or VALID (these ops have no explicit padding).
fn padding(ctx: &InferContext) -> Result<Padding> {
    match ctx.attrs().str_or("padding", "")?.as_str() {
        "SAME" => Ok(Padding::Same),
        "VALID" => Ok(Padding::Valid),
        other => Err(Error::value(format!(
            "Attr 'padding' of '{}' Op passed string '{other}' not in: \"SAME\", \"VALID\".",
            ctx.def.name
        ))),
    }
}

/// An int list attr of 4 values (the NHWC dimensions).
fn four(ctx: &InferContext, attr: &str, default: Option<[i64; 4]>) -> Result<[usize; 4]> {
    let mut v = ctx.attrs().ints(attr)?;
    if v.is_empty() && ctx.attrs().get(attr).is_none() {
        if let Some(d) = default {
            v = d.to_vec();
        }
    }
    if v.len() != 4 {
        return Err(ctx.shape_error(format!(
            "{} requires the {attr} attribute to contain 4 values, but got: {}",
            ctx.def.name,
            v.len()
        )));
    }
    if let Some(&x) = v.iter().find(|&&x| x <= 0) {
        return Err(ctx.shape_error(format!(
            "{} requires positive {attr} values, but got {x}",
            ctx.def.name
        )));
    }
    Ok([v[0] as usize, v[1] as usize, v[2] as usize, v[3] as usize])
}

fn quantized_conv2d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let tin = quantized_attr(ctx, "Tinput", None)?;
    let tfilter = quantized_attr(ctx, "Tfilter", None)?;
    let out = quantized_attr(ctx, "out_type", Some(DType::QInt32))?;
    for (i, t) in [(0, tin), (1, tfilter)] {
        ctx.expect_dtype(i, &[t])?;
    }
    scalar_ranges(ctx, 2, 4)?;
    let s = four(ctx, "strides", None)?;
    let d = four(ctx, "dilations", Some([1, 1, 1, 1]))?;
    let pad = padding(ctx)?;
    let x = dims4(ctx, 0)?;
    let f = dims4(ctx, 1)?;
    if let (Some(a), Some(b)) = (x[3], f[2]) {
        if a != b {
            return Err(ctx.shape_error(format!(
                "Depth of input ({a}) does not equal the input depth of the filter ({b})"
            )));
        }
    }
    let oh = spatial(ctx, x[1], f[0], s[1], d[1], pad, 0)?;
    let ow = spatial(ctx, x[2], f[1], s[2], d[2], pad, 1)?;
    with_range(out, PartialShape::from_dims(vec![x[0], oh, ow, f[3]]))
}

fn quantized_pool(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = quantized_attr(ctx, "T", None)?;
    ctx.expect_dtype(0, &[t])?;
    scalar_ranges(ctx, 1, 2)?;
    let k = four(ctx, "ksize", None)?;
    let s = four(ctx, "strides", None)?;
    let p = Pool2dParams {
        ksize: k,
        strides: s,
        padding: padding(ctx)?,
    };
    if ctx.def.name == "QuantizedMaxPool" && k[3] != 1 {
        // A pool over depth windows keeps the rows and columns.
        let x = dims4(ctx, 0)?;
        let c = x[3].map(|c| c / k[3]);
        return with_range(t, PartialShape::from_dims(vec![x[0], x[1], x[2], c]));
    }
    with_range(t, pooled(ctx, 0, &p)?)
}

fn quantized_relu_x(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let t = quantized_attr(ctx, "Tinput", None)?;
    let out = quantized_attr(ctx, "out_type", Some(DType::QUInt8))?;
    ctx.expect_dtype(0, &[t])?;
    scalar_ranges(ctx, 1, 3)?;
    with_range(out, ctx.shape(0).clone())
}

/// The quantized NN op definitions.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "QuantizedConv2D",
            &[
                "input",
                "filter",
                "min_input",
                "max_input",
                "min_filter",
                "max_filter",
            ],
            quantized_conv2d,
        ),
        OpDef::new(
            "QuantizedAvgPool",
            &["input", "min_input", "max_input"],
            quantized_pool,
        ),
        OpDef::new(
            "QuantizedMaxPool",
            &["input", "min_input", "max_input"],
            quantized_pool,
        ),
        OpDef::new(
            "QuantizedReluX",
            &["features", "max_value", "min_features", "max_features"],
            quantized_relu_x,
        ),
    ]
}
