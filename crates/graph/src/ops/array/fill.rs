//! Shape functions of the ops that make tensors from a few numbers:
//! `Fill`, `ZerosLike`/`OnesLike`, `Range`, `LinSpace` and `OneHot`.

use crate::graph::OutputInfo;
use crate::ops::{single, InferContext, OpDef, FLOATS, INDEX};
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn fill(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, INDEX)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 0)?;
    if let Some(dims) = ctx.const_ints(0) {
        if let Some((i, bad)) = dims.iter().enumerate().find(|(_, &x)| x < 0) {
            return Err(ctx.shape_error(format!(
                "Fill dimensions must be >= 0, but dimension {i} of the shape {dims:?} is {bad}"
            )));
        }
    }
    single(ctx.dtype(1), ctx.shape_value(0))
}

fn zeros_like(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    single(ctx.dtype(0), ctx.shape(0).clone())
}

fn range(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.dtype(0);
    if matches!(d, DType::UInt32 | DType::UInt64) {
        // TensorFlow's op definition lists uint32, but no CPU kernel has it.
        return Err(ferroflow_tensor::Error::type_error(format!(
            "Range has no kernel for {d} values (TensorFlow registers none)"
        )));
    }
    for i in 1..3 {
        ctx.expect_same(0, i)?;
    }
    let known = (|| {
        let s = ctx.const_value(0)?.scalar_f64().ok()?;
        let l = ctx.const_value(1)?.scalar_f64().ok()?;
        let st = ctx.const_value(2)?.scalar_f64().ok()?;
        Some((s, l, st))
    })();
    let n = match known {
        Some((s, l, st)) => {
            if st == 0.0 {
                return Err(ctx.shape_error("Requires delta != 0"));
            }
            if (st > 0.0 && s > l) || (st < 0.0 && s < l) {
                let rel = if st > 0.0 { "<=" } else { ">=" };
                let sign = if st > 0.0 { ">" } else { "<" };
                return Err(ctx.shape_error(format!(
                    "Requires start {rel} limit when delta {sign} 0: {s}/{l}"
                )));
            }
            Some(ferroflow_tensor::kernels::array::range_len(s, l, st, d))
        }
        None => None,
    };
    single(d, PartialShape::from_dims(vec![n]))
}

fn linspace(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    let n = ctx
        .const_value(2)
        .and_then(|t| t.scalar_i64().ok())
        .and_then(|v| usize::try_from(v).ok());
    single(d, PartialShape::from_dims(vec![n]))
}

fn one_hot(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::UInt8, DType::Int32, DType::Int64])?;
    ctx.expect_same(2, 3)?;
    let axis = ctx.int_or("axis", -1)?;
    if axis < -1 {
        return Err(ctx.shape_error(format!("axis must be >= -1, but is {axis}")));
    }
    let depth = match ctx.const_value(1).and_then(|t| t.scalar_i64().ok()) {
        Some(v) if v < 0 => {
            return Err(ctx.shape_error(format!(
                "Dimension size, given by scalar input 1, must be non-negative but is {v}"
            )))
        }
        v => v.map(|v| v as usize),
    };
    // An axis past the output's rank is the kernel's error, as in TF.
    let shape = match ctx.shape(0).dims() {
        Some(d) if axis <= d.len() as i64 => {
            let a = if axis == -1 { d.len() } else { axis as usize };
            let mut out = d.to_vec();
            out.insert(a, depth);
            PartialShape::from_dims(out)
        }
        Some(d) => PartialShape::unknown_dims(d.len() + 1),
        None => PartialShape::unknown(),
    };
    single(ctx.dtype(2), shape)
}

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Fill", &["dims", "value"], fill),
        OpDef::new("ZerosLike", &["x"], zeros_like),
        OpDef::new("OnesLike", &["x"], zeros_like),
        OpDef::new("Range", &["start", "limit", "delta"], range),
        OpDef::new("LinSpace", &["start", "stop", "num"], linspace),
        OpDef::new(
            "OneHot",
            &["indices", "depth", "on_value", "off_value"],
            one_hot,
        ),
    ]
}
