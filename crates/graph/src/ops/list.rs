//! Lists of tensors: the value-semantics ops under `tf.TensorArray`.
//!
//! A list flows along an edge like a tensor (declared as a float32 flow, see
//! [`OutputInfo::is_list`]); every op that changes a list returns a new one
//! (copy-on-write at run time, so a list owned by one loop is updated in
//! place). Ops that read elements carry `element_dtype` and `element_shape`.

use super::{InferContext, OpDef, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result};

fn expect_list(ctx: &InferContext, i: usize) -> Result<()> {
    if ctx.info(i).is_list {
        Ok(())
    } else {
        Err(Error::type_error(format!(
            "'{}' ({}): input {i} must be a TensorArray's flow (a list of tensors), got {}",
            ctx.name,
            ctx.def.name,
            ctx.graph.output_name(ctx.inputs[i])
        )))
    }
}

fn element(ctx: &InferContext) -> Result<(DType, PartialShape)> {
    Ok((
        ctx.attrs().dtype("element_dtype")?,
        ctx.attrs().shape("element_shape")?,
    ))
}

/// `[None] + element_shape`.
fn stacked(s: &PartialShape) -> PartialShape {
    match s.dims() {
        Some(d) => PartialShape::from_dims([&[None][..], d].concat()),
        None => PartialShape::unknown(),
    }
}

fn new_list(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in 0..ctx.num_inputs() {
        if ctx.info(i).is_list {
            expect_list(ctx, i)?;
        }
    }
    Ok(vec![OutputInfo::list()])
}

fn list_in_list_out(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    Ok(vec![OutputInfo::list()])
}

fn reserve(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Int32])?;
    Ok(vec![OutputInfo::list()])
}

fn set_item(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    let (d, _) = element(ctx)?;
    if ctx.dtype(2) != d {
        return Err(Error::type_error(format!(
            "TensorArray dtype is {} but Op is trying to write dtype {} ('{}')",
            d.name(),
            ctx.dtype(2).name(),
            ctx.name
        )));
    }
    Ok(vec![OutputInfo::list()])
}

fn get_item(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    let (d, s) = element(ctx)?;
    Ok(vec![OutputInfo::new(d, s)])
}

fn stack(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    let (d, s) = element(ctx)?;
    Ok(vec![OutputInfo::new(d, stacked(&s))])
}

fn gather(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    ctx.expect_dtype(1, INDEX)?;
    let (d, s) = element(ctx)?;
    let rows = ctx.shape(1).dim(0);
    let shape = match (rows, s.dims()) {
        (Some(k), Some(dims)) => PartialShape::from_dims([&[Some(k)][..], dims].concat()),
        _ => stacked(&s),
    };
    Ok(vec![OutputInfo::new(d, shape)])
}

fn concat(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    let (d, s) = element(ctx)?;
    let rows = match s.dims() {
        Some(d) if !d.is_empty() => PartialShape::from_dims([&[None][..], &d[1..]].concat()),
        _ => PartialShape::unknown(),
    };
    Ok(vec![
        OutputInfo::new(d, rows),
        OutputInfo::new(DType::Int64, PartialShape::unknown_dims(1)),
    ])
}

fn size(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_list(ctx, 0)?;
    Ok(vec![OutputInfo::new(DType::Int32, PartialShape::scalar())])
}

fn add_n(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    for i in 0..ctx.num_inputs() {
        expect_list(ctx, i)?;
    }
    Ok(vec![OutputInfo::list()])
}

pub(super) fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("ListReserve", &["size"], reserve),
        OpDef::new("ListFromTensor", &["tensor"], new_list),
        OpDef::new("ListSplit", &["value", "lengths"], new_list),
        OpDef::new("ListSetItem", &["list", "index", "item"], set_item),
        OpDef::new(
            "ListScatter",
            &["list", "indices", "value"],
            list_in_list_out,
        ),
        OpDef::new("ListGetItem", &["list", "index"], get_item),
        OpDef::new("ListStack", &["list"], stack),
        OpDef::new("ListGather", &["list", "indices"], gather),
        OpDef::new("ListConcat", &["list"], concat),
        OpDef::new("ListSize", &["list"], size),
        OpDef::new("ListZerosLike", &["list"], list_in_list_out),
        OpDef::new("ListAddN", &["lists*"], add_n),
        OpDef::new(
            "ListOneHot",
            &["like", "indices", "value"],
            list_in_list_out,
        ),
    ]
}
