//! Neural-network ops: softmax, bias_add, fused cross-entropies, top-k.

use super::{single, InferContext, OpDef, FLOATS, INDEX, NUMERIC_WIDE};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn softmax(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    if ctx.shape(0).rank() == Some(0) {
        return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
    }
    single(d, ctx.shape(0).clone())
}

fn leaky_relu(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    single(d, ctx.shape(0).clone())
}

fn bias_add(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(1, 1)?;
    let value = ctx.shape(0);
    let nchw = matches!(ctx.attrs().get("data_format"), Some(crate::AttrValue::Str(s)) if s.as_slice() == b"NCHW");
    if let Some(dims) = value.dims() {
        if dims.len() < 2 {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank 2 but is rank {}",
                dims.len()
            )));
        }
        let at = if nchw { 1 } else { dims.len() - 1 };
        let b = ctx.shape(1).dim(0);
        if let (Some(c), Some(b)) = (dims[at], b) {
            if c != b {
                return Err(
                    ctx.shape_error(format!("Dimensions must be equal, but are {c} and {b}"))
                );
            }
        }
        // The bias's length fixes the channel dim when the value's is unknown.
        let mut out = dims.to_vec();
        out[at] = out[at].or(b);
        return single(d, PartialShape::from_dims(out));
    }
    single(d, value.clone())
}

fn xent(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_same(0, 1)?;
    let s = ctx.shape(0).merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error("logits and labels must be broadcastable to the same shape")
    })?;
    let s = s
        .with_rank(2, "logits")
        .map_err(|e| ctx.shape_error(e.message()))?;
    Ok(vec![
        OutputInfo::new(d, PartialShape::from_dims(vec![s.dim(0)])),
        OutputInfo::new(d, s),
    ])
}

fn sparse_xent(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    let (l, y) = (ctx.shape(0), ctx.shape(1));
    if let (Some(a), Some(b)) = (l.dim(0), y.dim(0)) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    let batch = l.dim(0).or(y.dim(0));
    let logits = PartialShape::from_dims(vec![batch, l.dim(1)]);
    Ok(vec![
        OutputInfo::new(d, PartialShape::from_dims(vec![batch])),
        OutputInfo::new(d, logits),
    ])
}

fn l2_loss(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, FLOATS)?;
    single(d, PartialShape::scalar())
}

fn top_k(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    let k = ctx.const_value(1).and_then(|t| t.scalar_i64().ok());
    let shape = match ctx.shape(0).dims() {
        Some([]) => return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0")),
        Some(dims) => {
            let mut out = dims.to_vec();
            let last = out.len() - 1;
            if let (Some(k), Some(n)) = (k, out[last]) {
                if k as usize > n {
                    return Err(ctx.shape_error(format!(
                        "input must have at least k columns. Had {n}, needed {k}"
                    )));
                }
            }
            out[last] = k.map(|v| v as usize);
            PartialShape::from_dims(out)
        }
        None => PartialShape::unknown(),
    };
    Ok(vec![
        OutputInfo::new(d, shape.clone()),
        OutputInfo::new(DType::Int32, shape),
    ])
}

fn in_top_k(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    if let (Some(a), Some(b)) = (ctx.shape(0).dim(0), ctx.shape(1).dim(0)) {
        if a != b {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
    }
    single(
        DType::Bool,
        PartialShape::from_dims(vec![ctx.shape(0).dim(0).or(ctx.shape(1).dim(0))]),
    )
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("Softmax", &["logits"], softmax),
        OpDef::new("LogSoftmax", &["logits"], softmax),
        OpDef::new("LeakyRelu", &["features"], leaky_relu),
        OpDef::new("BiasAdd", &["value", "bias"], bias_add),
        OpDef::new(
            "SoftmaxCrossEntropyWithLogits",
            &["features", "labels"],
            xent,
        ),
        OpDef::new(
            "SparseSoftmaxCrossEntropyWithLogits",
            &["features", "labels"],
            sparse_xent,
        ),
        OpDef::new("L2Loss", &["t"], l2_loss),
        OpDef::new("TopKV2", &["input", "k"], top_k),
        OpDef::new("InTopKV2", &["predictions", "targets", "k"], in_top_k),
    ]
}
