//! Segment reductions (`SegmentSum`/`Mean`/`Prod`/`Max`/`Min`,
//! `UnsortedSegmentSum`/`Max`/`Min`/`Prod`), the scatters TF1 adds to `ScatterUpdate`/`Add`/`Sub`
//! (`ScatterMul`/`Div`/`Max`/`Min`, `ScatterNdAdd`/`Sub`/`Update` on variable
//! references, `TensorScatterUpdate`/`Add`/`Sub`/`Max`/`Min` on tensors) and
//! `DynamicPartition` / `DynamicStitch` / `ParallelDynamicStitch`, with
//! TensorFlow's op names, inputs, attrs and shape functions.

use super::{InferContext, OpDef, INDEX, NUMERIC, NUMERIC_WIDE};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

/// `Segment*(data, segment_ids)`: `[?] + data.shape[1:]`.
fn segment(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_rank(1, 1)?;
    let shape = match ctx.shape(0).dims() {
        Some([]) => {
            return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
        }
        Some(dims) => {
            // TF checks that the ids cover data's first dimension only when running.
            let mut out = vec![None];
            out.extend_from_slice(&dims[1..]);
            PartialShape::from_dims(out)
        }
        None => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(d, shape)])
}

/// `UnsortedSegment*(data, segment_ids, num_segments)`:
/// `[num_segments] + data.shape[rank(segment_ids):]`.
fn unsorted_segment(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let d = ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_rank(2, 0)?;
    let num = match ctx.const_value(2).and_then(|t| t.scalar_i64().ok()) {
        Some(v) if v < 0 => {
            return Err(ctx.shape_error(format!(
                "Dimension size, given by scalar input 2, must be non-negative but is {v}"
            )))
        }
        Some(v) => Some(v as usize),
        None => None,
    };
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).dims()) {
        (Some(dd), Some(ids)) => {
            if dd.len() < ids.len() {
                return Err(ctx.shape_error(format!(
                    "Shape must be at least rank {} but is rank {}",
                    ids.len(),
                    dd.len()
                )));
            }
            for (a, b) in dd.iter().zip(ids) {
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        return Err(ctx.shape_error(format!(
                            "Dimensions must be equal, but are {a} and {b}"
                        )));
                    }
                }
            }
            let mut out = vec![num];
            out.extend_from_slice(&dd[ids.len()..]);
            PartialShape::from_dims(out)
        }
        _ => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(d, shape)])
}

/// `a` and `b` must agree wherever both are known.
fn check_equal_shapes(ctx: &InferContext, a: &PartialShape, b: &PartialShape) -> Result<()> {
    if let (Some(x), Some(y)) = (a.dims(), b.dims()) {
        if x.len() != y.len() {
            return Err(ctx.shape_error(format!(
                "Shapes must be equal rank, but are {} and {}",
                x.len(),
                y.len()
            )));
        }
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            if let (Some(p), Some(q)) = (p, q) {
                if p != q {
                    return Err(ctx.shape_error(format!(
                        "Dimension {i} in both shapes must be equal, but are {p} and {q}. Shapes are {a} and {b}."
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `Scatter{Mul,Div,Max,Min}(ref, indices, updates)`: updates are
/// `indices.shape + ref.shape[1:]` (or a scalar); the output is the reference.
fn scatter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, NUMERIC)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_same(0, 2)?;
    let (v, i, u) = (ctx.shape(0), ctx.shape(1), ctx.shape(2));
    if let Some([]) = v.dims() {
        return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
    }
    if let (Some(vd), Some(id)) = (v.dims(), i.dims()) {
        let want = PartialShape::from_dims(id.iter().chain(&vd[1..]).copied().collect());
        if u.rank() != Some(0) {
            check_equal_shapes(ctx, u, &want)?;
        }
    }
    Ok(vec![OutputInfo::reference(ctx.dtype(0), v.clone())])
}

/// `indices.shape[:-1] + shape[indices.shape[-1]:]`: the shape `updates`
/// of an n-dimensional scatter into `shape` must have, as far as known.
fn nd_updates_shape(
    ctx: &InferContext,
    shape: &PartialShape,
    indices: &PartialShape,
) -> Result<Option<PartialShape>> {
    let (Some(sd), Some(id)) = (shape.dims(), indices.dims()) else {
        return Ok(None);
    };
    let Some((&last, outer)) = id.split_last() else {
        return Err(ctx.shape_error("Shape must be at least rank 1 but is rank 0"));
    };
    let Some(depth) = last else {
        return Ok(None);
    };
    if depth > sd.len() {
        return Err(ctx.shape_error(format!(
            "Index innermost dimension length must be <= output rank; saw: {depth} vs. {}",
            sd.len()
        )));
    }
    let dims = outer.iter().chain(&sd[depth..]).copied().collect();
    Ok(Some(PartialShape::from_dims(dims)))
}

/// `ScatterNd{Add,Sub,Update}(ref, indices, updates)` on a variable.
fn scatter_nd_ref(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let d = ctx.expect_same(0, 2)?;
    if let Some(want) = nd_updates_shape(ctx, ctx.shape(0), ctx.shape(1))? {
        check_equal_shapes(ctx, ctx.shape(2), &want)?;
    }
    Ok(vec![OutputInfo::reference(d, ctx.shape(0).clone())])
}

/// `TensorScatter*(tensor, indices, updates)`: a new tensor like `tensor`.
fn tensor_scatter(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, INDEX)?;
    let d = ctx.expect_same(0, 2)?;
    if ctx.def.name != "TensorScatterUpdate" {
        ctx.expect_dtype(0, NUMERIC_WIDE)?;
    }
    if let Some(want) = nd_updates_shape(ctx, ctx.shape(0), ctx.shape(1))? {
        check_equal_shapes(ctx, ctx.shape(2), &want)?;
    }
    Ok(vec![OutputInfo::new(d, ctx.shape(0).clone())])
}

/// `DynamicPartition(data, partitions)`: `num_partitions` outputs of shape
/// `[?] + data.shape[rank(partitions):]`.
fn dynamic_partition(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(1, &[DType::Int32])?;
    let num = ctx.int("num_partitions")?;
    if num < 1 {
        return Err(ctx.shape_error(format!("num_partitions must be at least 1, got {num}")));
    }
    let d = ctx.dtype(0);
    let shape = match (ctx.shape(0).dims(), ctx.shape(1).dims()) {
        (Some(dd), Some(p)) => {
            if dd.len() < p.len() {
                return Err(ctx.shape_error(format!(
                    "Shape must be at least rank {} but is rank {}",
                    p.len(),
                    dd.len()
                )));
            }
            for (a, b) in dd.iter().zip(p) {
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        return Err(ctx.shape_error(format!(
                            "Dimensions must be equal, but are {a} and {b}"
                        )));
                    }
                }
            }
            let mut out = vec![None];
            out.extend_from_slice(&dd[p.len()..]);
            PartialShape::from_dims(out)
        }
        _ => PartialShape::unknown(),
    };
    Ok((0..num)
        .map(|_| OutputInfo::new(d, shape.clone()))
        .collect())
}

/// `DynamicStitch(indices[N], data[N])`: `[?] + data[0].shape[rank(indices[0]):]`.
fn dynamic_stitch(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let k = ctx.num_inputs();
    if k == 0 || !k.is_multiple_of(2) {
        return Err(ctx.shape_error(format!(
            "DynamicStitch needs as many data tensors as indices, got {k} inputs"
        )));
    }
    let n = k / 2;
    for i in 0..n {
        ctx.expect_dtype(i, &[DType::Int32])?;
        ctx.expect_same(n, n + i)?;
    }
    let mut rest: Option<Vec<Option<usize>>> = None;
    for i in 0..n {
        if let (Some(ix), Some(dx)) = (ctx.shape(i).dims(), ctx.shape(n + i).dims()) {
            if dx.len() < ix.len() {
                return Err(ctx.shape_error(format!(
                    "Shape must be at least rank {} but is rank {}",
                    ix.len(),
                    dx.len()
                )));
            }
            let tail = dx[ix.len()..].to_vec();
            match &rest {
                Some(r) => {
                    let a = PartialShape::from_dims(r.clone());
                    let b = PartialShape::from_dims(tail.clone());
                    let m = a.merge(&b).ok_or_else(|| {
                        ctx.shape_error(format!("Shapes must be equal, but are {a} and {b}"))
                    })?;
                    rest = m.dims().map(|x| x.to_vec());
                }
                None => rest = Some(tail),
            }
        }
    }
    let shape = match rest {
        Some(r) => {
            let mut out = vec![None];
            out.extend(r);
            PartialShape::from_dims(out)
        }
        None => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(ctx.dtype(n), shape)])
}

pub fn ops() -> Vec<OpDef> {
    const SEG: &[&str] = &["data", "segment_ids"];
    const USEG: &[&str] = &["data", "segment_ids", "num_segments"];
    const SCAT: &[&str] = &["ref", "indices", "updates"];
    const TSCAT: &[&str] = &["tensor", "indices", "updates"];
    let mut v = Vec::new();
    for name in [
        "SegmentSum",
        "SegmentMean",
        "SegmentProd",
        "SegmentMax",
        "SegmentMin",
    ] {
        v.push(OpDef::new(name, SEG, segment));
    }
    for name in [
        "UnsortedSegmentSum",
        "UnsortedSegmentProd",
        "UnsortedSegmentMax",
        "UnsortedSegmentMin",
    ] {
        v.push(OpDef::new(name, USEG, unsorted_segment));
    }
    for name in ["ScatterMul", "ScatterDiv", "ScatterMax", "ScatterMin"] {
        v.push(OpDef::new(name, SCAT, scatter).refs(&[0]));
    }
    for name in ["ScatterNdAdd", "ScatterNdSub", "ScatterNdUpdate"] {
        v.push(OpDef::new(name, SCAT, scatter_nd_ref).refs(&[0]));
    }
    for name in [
        "TensorScatterUpdate",
        "TensorScatterAdd",
        "TensorScatterSub",
        "TensorScatterMax",
        "TensorScatterMin",
    ] {
        v.push(OpDef::new(name, TSCAT, tensor_scatter));
    }
    v.push(OpDef::new(
        "DynamicPartition",
        &["data", "partitions"],
        dynamic_partition,
    ));
    v.push(OpDef::new("DynamicStitch", &["indices*"], dynamic_stitch));
    v.push(OpDef::new(
        "ParallelDynamicStitch",
        &["indices*"],
        dynamic_stitch,
    ));
    v
}
