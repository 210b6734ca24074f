//! `tf.sets`: set sizes and set operations over the last dimension of dense
//! or sparse tensors (sparse ones as `indices`, `values`, `shape` inputs),
//! giving sparse results. Names, inputs and attrs are TensorFlow's.

use super::{InferContext, OpDef};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

type Infer = Result<Vec<OutputInfo>>;

/// `SetSize`: int32 counts, one per group (the shape's leading dimensions).
fn set_size(ctx: &InferContext) -> Infer {
    let rank = ctx.shape(2).dim(0).map(|r| r.saturating_sub(1));
    let shape = match rank {
        Some(r) => PartialShape::from_dims(vec![None; r]),
        None => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(DType::Int32, shape)])
}

/// The sparse result: `[?, rank]` indices, `[?]` values, `[rank]` shape.
fn result(dtype: DType, rank: Option<usize>) -> Infer {
    Ok(vec![
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![None, rank])),
        OutputInfo::new(dtype, PartialShape::from_dims(vec![None])),
        OutputInfo::new(DType::Int64, PartialShape::from_dims(vec![rank])),
    ])
}

fn dense_rank(ctx: &InferContext, i: usize) -> Option<usize> {
    ctx.shape(i).rank()
}

/// Dense operands must agree on every dimension but the last (where known).
fn check_groups(ctx: &InferContext) -> Result<()> {
    let (a, b) = (ctx.shape(0), ctx.shape(1));
    if let (Some(ra), Some(rb)) = (a.rank(), b.rank()) {
        if ra != rb {
            return Err(ctx.shape_error(format!(
                "Shapes must be equal rank, but are {} and {}",
                ra.saturating_sub(1),
                rb.saturating_sub(1)
            )));
        }
        for d in 0..ra.saturating_sub(1) {
            if let (Some(x), Some(y)) = (a.dim(d), b.dim(d)) {
                if x != y {
                    let groups = |s: &PartialShape| {
                        let dims: Vec<String> = (0..ra - 1)
                            .map(|i| s.dim(i).map_or("?".to_string(), |v| v.to_string()))
                            .collect();
                        format!("[{}]", dims.join(","))
                    };
                    return Err(ctx.shape_error(format!(
                        "Dimension {d} in both shapes must be equal, but are {x} and {y}. \
                         Shapes are {} and {}.",
                        groups(a),
                        groups(b)
                    )));
                }
            }
        }
    }
    Ok(())
}

fn dense_dense(ctx: &InferContext) -> Infer {
    ctx.expect_same(0, 1)?;
    check_groups(ctx)?;
    result(ctx.dtype(0), dense_rank(ctx, 0).or(dense_rank(ctx, 1)))
}

fn dense_sparse(ctx: &InferContext) -> Infer {
    ctx.expect_same(0, 2)?;
    result(ctx.dtype(0), dense_rank(ctx, 0).or(ctx.shape(3).dim(0)))
}

fn sparse_sparse(ctx: &InferContext) -> Infer {
    ctx.expect_same(1, 4)?;
    result(ctx.dtype(1), ctx.shape(2).dim(0).or(ctx.shape(5).dim(0)))
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "SetSize",
            &["set_indices", "set_values", "set_shape"],
            set_size,
        ),
        OpDef::new("DenseToDenseSetOperation", &["set1", "set2"], dense_dense),
        OpDef::new(
            "DenseToSparseSetOperation",
            &["set1", "set2_indices", "set2_values", "set2_shape"],
            dense_sparse,
        ),
        OpDef::new(
            "SparseToSparseSetOperation",
            &[
                "set1_indices",
                "set1_values",
                "set1_shape",
                "set2_indices",
                "set2_values",
                "set2_shape",
            ],
            sparse_sparse,
        ),
    ]
}
