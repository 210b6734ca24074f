//! Variables and the ops that update them in place.

use super::{single, InferContext, OpDef, INDEX};
use crate::attr::AttrsExt;
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

fn variable(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    Ok(vec![OutputInfo::reference(
        ctx.type_attr("dtype")?,
        ctx.attrs().shape("shape")?,
    )])
}

fn assign(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_same(0, 1)?;
    let validate = ctx.bool_or("validate_shape", true)?;
    let shape = if validate {
        ctx.shape(0).merge(ctx.shape(1)).ok_or_else(|| {
            ctx.shape_error(format!(
                "Shapes must be equal, but are {} and {}",
                ctx.shape(0),
                ctx.shape(1)
            ))
        })?
    } else {
        ctx.shape(1).clone()
    };
    Ok(vec![OutputInfo::reference(d, shape)])
}

fn assign_update(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, super::NUMERIC_WIDE)?;
    ctx.expect_same(0, 1)?;
    let shape = ctx.shape(0).merge(ctx.shape(1)).ok_or_else(|| {
        ctx.shape_error(format!(
            "Shapes must be equal, but are {} and {}",
            ctx.shape(0),
            ctx.shape(1)
        ))
    })?;
    Ok(vec![OutputInfo::reference(d, shape)])
}

fn scatter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_same(0, 2)?;
    let (v, i, u) = (ctx.shape(0), ctx.shape(1), ctx.shape(2));
    if let (Some(vd), Some(id)) = (v.dims(), i.dims()) {
        if vd.is_empty() {
            return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
        }
        let want = PartialShape::from_dims(id.iter().chain(&vd[1..]).copied().collect());
        if !u.is_compatible_with(&want) && u.rank() != Some(0) {
            return Err(ctx.shape_error(format!(
                "Shapes must be equal: updates {u} vs. indices.shape + ref.shape[1:] {want}"
            )));
        }
    }
    Ok(vec![OutputInfo::reference(ctx.dtype(0), v.clone())])
}

/// `StridedSliceAssign`: the variable's own shape (TF's `UnchangedShape`);
/// the slice bounds must be integer vectors and the value of the variable's dtype.
fn strided_slice_assign(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_same(0, 4)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_same(1, 2)?;
    ctx.expect_same(1, 3)?;
    for (i, what) in [(1, "begin"), (2, "end"), (3, "strides")] {
        if let Some(r) = ctx.shape(i).rank().filter(|&r| r != 1) {
            return Err(ctx.shape_error(format!(
                "Shape must be rank 1 but is rank {r} for {what} with shape {}",
                ctx.shape(i)
            )));
        }
    }
    Ok(vec![OutputInfo::reference(d, ctx.shape(0).clone())])
}

fn is_initialized(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::Bool, PartialShape::scalar())
}

/// `GetSessionHandle`: keeps its input in the session, returns the string handle naming it.
fn session_handle(_: &InferContext) -> Result<Vec<OutputInfo>> {
    single(DType::String, PartialShape::scalar())
}

/// `GetSessionTensor`: the tensor a handle names, of the `dtype` attr (shape known at run time).
fn session_tensor(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    single(ctx.type_attr("dtype")?, PartialShape::unknown())
}

/// `DeleteSessionTensor`: drops a kept tensor; no outputs.
fn delete_session_tensor(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    Ok(vec![])
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("VariableV2", &[], variable).stateful(),
        OpDef::new("Assign", &["ref", "value"], assign).refs(&[0]),
        OpDef::new("AssignAdd", &["ref", "value"], assign_update).refs(&[0]),
        OpDef::new("AssignSub", &["ref", "value"], assign_update).refs(&[0]),
        OpDef::new("ScatterUpdate", &["ref", "indices", "updates"], scatter).refs(&[0]),
        OpDef::new("ScatterAdd", &["ref", "indices", "updates"], scatter).refs(&[0]),
        OpDef::new("ScatterSub", &["ref", "indices", "updates"], scatter).refs(&[0]),
        OpDef::new(
            "StridedSliceAssign",
            &["ref", "begin", "end", "strides", "value"],
            strided_slice_assign,
        )
        .refs(&[0]),
        OpDef::new("IsVariableInitialized", &["ref"], is_initialized).refs(&[0]),
        OpDef::new("GetSessionHandle", &["value"], session_handle).stateful(),
        OpDef::new("GetSessionTensor", &["handle"], session_tensor).stateful(),
        OpDef::new("DeleteSessionTensor", &["handle"], delete_session_tensor).stateful(),
    ]
}
