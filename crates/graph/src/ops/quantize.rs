//! Quantization ops with TensorFlow's inputs, attrs and shape functions:
//! `QuantizeV2` and `Dequantize` (float32 <-> the quantized dtypes),
//! `QuantizeAndDequantizeV2/V3/V4` and `QuantizeAndDequantizeV4Grad`
//! (floating tensors), and `QuantizedConcat`.

use super::{InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

const F32: &[DType] = &[DType::Float32];
/// `QuantizeV2`'s and `Dequantize`'s `T` (TensorFlow's order).
const QUANTIZED: &[DType] = &[
    DType::QInt8,
    DType::QUInt8,
    DType::QInt32,
    DType::QInt16,
    DType::QUInt16,
];
/// `QuantizeAndDequantize*`'s `T`.
const FLOATS: &[DType] = &[
    DType::BFloat16,
    DType::Float16,
    DType::Float32,
    DType::Float64,
];

fn type_in(ctx: &InferContext, attr: &str, allowed: &[DType]) -> Result<DType> {
    let t = ctx.type_attr(attr)?;
    if !allowed.contains(&t) {
        return Err(Error::type_error(format!(
            "Value passed to parameter '{attr}' has DataType {t} not in list of allowed values: {}",
            allowed
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(t)
}

fn check_axis(ctx: &InferContext, axis: i64) -> Result<()> {
    if axis < -1 {
        return Err(ctx.shape_error(format!("axis should be at least -1, got {axis}")));
    }
    Ok(())
}

/// Requires input `i` to have rank `r`; returns its shape at that rank.
fn with_rank(ctx: &InferContext, i: usize, r: usize) -> Result<PartialShape> {
    ctx.expect_rank(i, r)?;
    ctx.shape(i).with_rank(r, "a range")
}

/// The ranges of a per-`axis` op: `min`/`max` (inputs `first`, `first + 1`)
/// are scalars without an axis, else vectors as long as the input's `axis`
/// dimension. Returns their merged shape.
fn range_shape(ctx: &InferContext, input: usize, first: usize, axis: i64) -> Result<PartialShape> {
    let r = usize::from(axis != -1);
    let mut minmax = with_rank(ctx, first, r)?;
    minmax = minmax
        .merge(&with_rank(ctx, first + 1, r)?)
        .ok_or_else(|| ctx.shape_error("min and max must have one shape"))?;
    if axis >= 0 {
        let x = ctx.shape(input);
        if let Some(k) = x.rank() {
            if (k as i64) < axis + 1 {
                return Err(ctx.shape_error(format!(
                    "Shape must be at least rank {} but is rank {k}",
                    axis + 1
                )));
            }
        }
        let depth = x.dim(axis as usize);
        match (minmax.dim(0), depth) {
            (Some(a), Some(b)) if a != b => {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}"))
                )
            }
            (None, Some(b)) => minmax = PartialShape::from_dims(vec![Some(b)]),
            _ => {}
        }
    }
    Ok(minmax)
}

fn quantize_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let axis = ctx.int_or("axis", -1)?;
    check_axis(ctx, axis)?;
    let t = type_in(ctx, "T", QUANTIZED)?;
    for i in 0..3 {
        ctx.expect_dtype(i, F32)?;
    }
    let minmax = range_shape(ctx, 0, 1, axis)?;
    Ok(vec![
        OutputInfo::new(t, ctx.shape(0).clone()),
        OutputInfo::new(DType::Float32, minmax.clone()),
        OutputInfo::new(DType::Float32, minmax),
    ])
}

fn dequantize(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let axis = ctx.int_or("axis", -1)?;
    check_axis(ctx, axis)?;
    ctx.expect_dtype(0, QUANTIZED)?;
    ctx.expect_dtype(1, F32)?;
    ctx.expect_dtype(2, F32)?;
    let out = type_in(ctx, "dtype", &[DType::BFloat16, DType::Float32])?;
    if let Some(r) = ctx.shape(0).rank() {
        if axis > r as i64 {
            return Err(ctx.shape_error(format!(
                "Axis must be less than input dimension({r}), got {axis}"
            )));
        }
    }
    range_shape(ctx, 0, 1, axis)?;
    Ok(vec![OutputInfo::new(out, ctx.shape(0).clone())])
}

fn qdq(ctx: &InferContext, extra_scalar: Option<usize>) -> Result<Vec<OutputInfo>> {
    let axis = ctx.int_or("axis", -1)?;
    let t = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_same(0, 2)?;
    let r = usize::from(axis != -1);
    with_rank(ctx, 1, r)?;
    with_rank(ctx, 2, r)?;
    check_axis(ctx, axis)?;
    range_shape(ctx, 0, 1, axis)?;
    if let Some(i) = extra_scalar {
        ctx.expect_dtype(i, &[DType::Int32])?;
        with_rank(ctx, i, 0)?;
    }
    Ok(vec![OutputInfo::new(t, ctx.shape(0).clone())])
}

fn qdq_v2(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    qdq(ctx, None)
}

fn qdq_v3(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    qdq(ctx, Some(3))
}

fn qdq_v4_grad(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let axis = ctx.int_or("axis", -1)?;
    check_axis(ctx, axis)?;
    let t = ctx.expect_dtype(0, FLOATS)?;
    for i in 1..4 {
        ctx.expect_same(0, i)?;
    }
    let minmax = range_shape(ctx, 1, 2, axis)?;
    let (a, b) = (ctx.shape(0), ctx.shape(1));
    let x = a.merge(b).ok_or_else(|| {
        let dims = |s: &PartialShape| s.dims().map(|d| d.to_vec()).unwrap_or_default();
        let (da, db) = (dims(a), dims(b));
        match (a.rank(), b.rank()) {
            (Some(p), Some(q)) if p != q => {
                ctx.shape_error(format!("Shapes must be equal rank, but are {p} and {q}"))
            }
            _ => {
                let i = da.iter().zip(&db).position(|(p, q)| p != q).unwrap_or(0);
                ctx.shape_error(format!(
                    "Dimension {i} in both shapes must be equal, but are {} and {}. Shapes are {a} and {b}.",
                    da[i].map_or(-1, |v| v as i64),
                    db[i].map_or(-1, |v| v as i64)
                ))
            }
        }
    })?;
    Ok(vec![
        OutputInfo::new(t, x),
        OutputInfo::new(t, minmax.clone()),
        OutputInfo::new(t, minmax),
    ])
}

fn quantized_concat(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let n = ctx.int("N")? as usize;
    if n == 0 || ctx.num_inputs() != 1 + 3 * n {
        return Err(ctx.shape_error(format!(
            "QuantizedConcat needs concat_dim and {n} values, mins and maxes"
        )));
    }
    ctx.expect_dtype(0, &[DType::Int32])?;
    with_rank(ctx, 0, 0)?;
    let t = ctx.dtype(1);
    for i in 1..=n {
        ctx.expect_same(1, i)?;
        if ctx.shape(i).rank() == Some(0) {
            return Err(ctx.shape_error("Can't concatenate scalars (use tf.stack instead)"));
        }
    }
    for i in n + 1..1 + 3 * n {
        ctx.expect_dtype(i, F32)?;
        with_rank(ctx, i, 0)?;
    }
    let axis = ctx.const_value(0).and_then(|t| t.scalar_i64().ok());
    let mut merged: Option<PartialShape> = None;
    let mut total = Some(0usize);
    for i in 1..=n {
        let s = ctx.shape(i);
        let Some(d) = s.dims() else {
            total = None;
            continue;
        };
        let Some(ax) = axis else {
            let u = PartialShape::unknown_dims(d.len());
            merged = Some(match merged {
                None => u,
                Some(m) => m.merge(&u).ok_or_else(|| {
                    ctx.shape_error(format!(
                        "Shape must be rank {} but is rank {}",
                        m.rank().unwrap_or(0),
                        d.len()
                    ))
                })?,
            });
            total = None;
            continue;
        };
        if ax < 0 || ax >= d.len() as i64 {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank {} but is rank {}",
                ax.max(0) + 1,
                d.len()
            )));
        }
        let a = ax as usize;
        total = total.zip(d[a]).map(|(t, x)| t + x);
        let mut masked = d.to_vec();
        masked[a] = None;
        let m = PartialShape::from_dims(masked);
        merged = Some(match merged {
            None => m,
            Some(prev) => {
                if prev.rank() != m.rank() {
                    return Err(ctx.shape_error(format!(
                        "Shape must be rank {} but is rank {}",
                        prev.rank().unwrap_or(0),
                        d.len()
                    )));
                }
                prev.merge(&m).ok_or_else(|| {
                    ctx.shape_error(format!(
                        "Dimension mismatch between inputs: {} vs. {s}",
                        ctx.shape(1)
                    ))
                })?
            }
        });
    }
    let out = match (merged, axis) {
        (Some(m), Some(ax)) => {
            let mut d = m.dims().map(|d| d.to_vec()).unwrap_or_default();
            if let Some(x) = d.get_mut(ax as usize) {
                *x = total;
            }
            PartialShape::from_dims(d)
        }
        (Some(m), None) => m,
        (None, _) => PartialShape::unknown(),
    };
    Ok(vec![
        OutputInfo::new(t, out),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
        OutputInfo::new(DType::Float32, PartialShape::scalar()),
    ])
}

/// The quantization op definitions.
pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "QuantizeV2",
            &["input", "min_range", "max_range"],
            quantize_v2,
        ),
        OpDef::new(
            "Dequantize",
            &["input", "min_range", "max_range"],
            dequantize,
        ),
        OpDef::new(
            "QuantizeAndDequantizeV2",
            &["input", "input_min", "input_max"],
            qdq_v2,
        ),
        OpDef::new(
            "QuantizeAndDequantizeV3",
            &["input", "input_min", "input_max", "num_bits"],
            qdq_v3,
        ),
        OpDef::new(
            "QuantizeAndDequantizeV4",
            &["input", "input_min", "input_max"],
            qdq_v2,
        ),
        OpDef::new(
            "QuantizeAndDequantizeV4Grad",
            &["gradients", "input", "input_min", "input_max"],
            qdq_v4_grad,
        ),
        OpDef::new(
            "QuantizedConcat",
            &["concat_dim", "values*"],
            quantized_concat,
        ),
    ]
}
