//! Ops on sparse tensors (`tf.sparse`), each taking and returning a sparse
//! tensor's three parts: int64 `indices` `[N, rank]`, `values` `[N]` and an
//! int64 `dense_shape` `[rank]`. Names, inputs and attrs are TensorFlow's.

use super::{single, InferContext, OpDef, INDEX, NUMERIC_WIDE};
use crate::graph::OutputInfo;
use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Result};

type Infer = Result<Vec<OutputInfo>>;

fn vec_of(n: Option<usize>) -> PartialShape {
    PartialShape::from_dims(vec![n])
}

fn mat(n: Option<usize>, r: Option<usize>) -> PartialShape {
    PartialShape::from_dims(vec![n, r])
}

/// The rank of the sparse tensor whose `dense_shape` is input `i` (its length).
fn rank_of(ctx: &InferContext, i: usize) -> Option<usize> {
    ctx.shape(i).dim(0)
}

/// Checks the ranks of an `(indices, values, shape)` triple starting at input `i`.
fn check_triple(ctx: &InferContext, i: usize) -> Result<()> {
    ctx.expect_dtype(i, &[DType::Int64])?;
    ctx.expect_rank(i, 2)?;
    ctx.expect_rank(i + 1, 1)?;
    ctx.expect_dtype(i + 2, &[DType::Int64])?;
    ctx.expect_rank(i + 2, 1)
}

/// `[?, rank]` indices, `[?]` values of `dtype`, `[rank]` shape.
fn triple_out(dtype: DType, rank: Option<usize>) -> Vec<OutputInfo> {
    vec![
        OutputInfo::new(DType::Int64, mat(None, rank)),
        OutputInfo::new(dtype, vec_of(None)),
        OutputInfo::new(DType::Int64, vec_of(rank)),
    ]
}

fn sparse_to_dense(ctx: &InferContext) -> Infer {
    ctx.expect_dtype(0, INDEX)?;
    ctx.expect_same(0, 1)?;
    ctx.expect_same(2, 3)?;
    ctx.expect_rank(3, 0)?;
    let shape = match ctx.shape(1).rank() {
        Some(0) => vec_of(
            ctx.const_value(1)
                .and_then(|t| t.scalar_i64().ok())
                .map(|v| v as usize),
        ),
        Some(1) => ctx.shape_value(1),
        Some(r) => {
            return Err(ctx.shape_error(format!("Shape must be at most rank 1 but is rank {r}")))
        }
        None => PartialShape::unknown(),
    };
    single(ctx.dtype(2), shape)
}

fn dense_matmul(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    let d = ctx.expect_same(1, 3)?;
    ctx.expect_rank(3, 2)?;
    let adj_a = ctx.bool_or("adjoint_a", false)?;
    let adj_b = ctx.bool_or("adjoint_b", false)?;
    let a = ctx.shape_value(2);
    if let Some(r) = a.rank() {
        if r != 2 {
            return Err(ctx.shape_error(format!("Shape must be rank 2 but is rank {r}")));
        }
    }
    let b = ctx.shape(3);
    let (ai, ak) = if adj_a { (1, 0) } else { (0, 1) };
    let (bk, bj) = if adj_b { (1, 0) } else { (0, 1) };
    if let (Some(k1), Some(k2)) = (a.dim(ak), b.dim(bk)) {
        if k1 != k2 {
            return Err(ctx.shape_error(format!("Dimensions must be equal, but are {k1} and {k2}")));
        }
    }
    single(d, mat(a.dim(ai), b.dim(bj)))
}

fn reorder(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    Ok(vec![
        OutputInfo::new(DType::Int64, ctx.shape(0).clone()),
        OutputInfo::new(ctx.dtype(1), ctx.shape(1).clone()),
    ])
}

fn reshape(ctx: &InferContext) -> Infer {
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let r = ctx.shape(2).dim(0);
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(ctx.shape(0).dim(0), r)),
        OutputInfo::new(DType::Int64, vec_of(r)),
    ])
}

fn concat(ctx: &InferContext) -> Infer {
    let n = ctx.num_inputs() / 3;
    if n == 0 || ctx.num_inputs() != 3 * n {
        return Err(ctx.shape_error("SparseConcat takes N indices, N values and N shapes"));
    }
    let types: Vec<DType> = (n..2 * n).map(|i| ctx.dtype(i)).collect();
    if types.iter().any(|&t| t != types[0]) {
        let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
        return Err(ferroflow_tensor::Error::type_error(format!(
            "Tensors in list passed to 'values' of 'SparseConcat' Op have types [{}] that don't all match.",
            names.join(", ")
        )));
    }
    let rank = (0..n).find_map(|i| rank_of(ctx, 2 * n + i));
    let mut out = triple_out(ctx.dtype(n), rank);
    // The entries of all inputs, when every input's count is known.
    let count: Option<usize> = (0..n).map(|i| ctx.shape(i).dim(0)).sum();
    out[0] = OutputInfo::new(DType::Int64, mat(count, rank));
    out[1] = OutputInfo::new(ctx.dtype(n), vec_of(count));
    Ok(out)
}

fn add(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    check_triple(ctx, 3)?;
    let d = ctx.expect_same(1, 4)?;
    ctx.expect_rank(6, 0)?;
    Ok(triple_out(d, rank_of(ctx, 2).or(rank_of(ctx, 5))))
}

fn add_grad(ctx: &InferContext) -> Infer {
    let d = ctx.dtype(0);
    Ok(vec![
        OutputInfo::new(d, vec_of(ctx.shape(1).dim(0))),
        OutputInfo::new(d, vec_of(ctx.shape(2).dim(0))),
    ])
}

/// The dense shape after reducing, when the input shape and the axes are constants.
fn reduced_dims(ctx: &InferContext) -> Option<Vec<Option<usize>>> {
    let shape = ctx.const_ints(2)?;
    let axes = ctx.const_ints(3)?;
    let keep = ctx.bool_or("keep_dims", false).ok()?;
    let r = shape.len() as i64;
    let mut reduce = vec![false; shape.len()];
    for a in axes {
        if a < -r || a >= r {
            return None;
        }
        reduce[((a + r) % r) as usize] = true;
    }
    Some(
        shape
            .iter()
            .zip(&reduce)
            .filter_map(|(&d, &red)| match (red, keep) {
                (true, true) => Some(Some(1)),
                (true, false) => None,
                (false, _) => Some(Some(d as usize)),
            })
            .collect(),
    )
}

fn reduce(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    ctx.expect_dtype(1, NUMERIC_WIDE)?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    let shape = reduced_dims(ctx).map_or_else(PartialShape::unknown, PartialShape::from_dims);
    single(ctx.dtype(1), shape)
}

fn reduce_sparse(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    ctx.expect_dtype(1, NUMERIC_WIDE)?;
    ctx.expect_dtype(3, &[DType::Int32])?;
    let rank = reduced_dims(ctx).map(|d| d.len());
    Ok(triple_out(ctx.dtype(1), rank))
}

fn fill_empty_rows(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    ctx.expect_same(1, 3)?;
    ctx.expect_rank(3, 0)?;
    let rank = rank_of(ctx, 2).or(ctx.shape(0).dim(1));
    let rows = ctx
        .const_ints(2)
        .and_then(|s| s.first().map(|&d| d as usize));
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(None, rank)),
        OutputInfo::new(ctx.dtype(1), vec_of(None)),
        OutputInfo::new(DType::Bool, vec_of(rows)),
        OutputInfo::new(DType::Int64, vec_of(ctx.shape(0).dim(0))),
    ])
}

fn fill_empty_rows_grad(ctx: &InferContext) -> Infer {
    let d = ctx.dtype(1);
    Ok(vec![
        OutputInfo::new(d, ctx.shape(0).clone()),
        OutputInfo::new(d, PartialShape::scalar()),
    ])
}

fn split(ctx: &InferContext) -> Infer {
    ctx.expect_dtype(0, &[DType::Int64])?;
    check_triple(ctx, 1)?;
    let k = ctx.int("num_split")?;
    if k < 1 {
        return Err(ctx.shape_error(format!("num_split must be at least 1, got {k}")));
    }
    let rank = rank_of(ctx, 3).or(ctx.shape(1).dim(1));
    let d = ctx.dtype(2);
    let k = k as usize;
    let mut out = Vec::with_capacity(3 * k);
    out.extend((0..k).map(|_| OutputInfo::new(DType::Int64, mat(None, rank))));
    out.extend((0..k).map(|_| OutputInfo::new(d, vec_of(None))));
    out.extend((0..k).map(|_| OutputInfo::new(DType::Int64, vec_of(rank))));
    Ok(out)
}

fn slice(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    ctx.expect_rank(3, 1)?;
    ctx.expect_rank(4, 1)?;
    Ok(triple_out(
        ctx.dtype(1),
        rank_of(ctx, 2).or(ctx.shape(0).dim(1)),
    ))
}

/// An output of input `n`'s dtype, shaped like input `like`'s first dimension.
fn values_like(ctx: &InferContext, dtype_of: usize, like: usize) -> Infer {
    single(ctx.dtype(dtype_of), vec_of(ctx.shape(like).dim(0)))
}

fn slice_grad(ctx: &InferContext) -> Infer {
    values_like(ctx, 0, 1)
}

fn softmax(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    ctx.expect_dtype(1, super::FLOATS)?;
    single(ctx.dtype(1), ctx.shape(1).clone())
}

fn sparse_sparse(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    check_triple(ctx, 3)?;
    let d = ctx.expect_same(1, 4)?;
    let rank = rank_of(ctx, 2).or(rank_of(ctx, 5));
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(None, rank)),
        OutputInfo::new(d, vec_of(None)),
    ])
}

fn dense_cwise(ctx: &InferContext) -> Infer {
    check_triple(ctx, 0)?;
    let d = ctx.expect_same(1, 3)?;
    single(d, ctx.shape(1).clone())
}

fn tensor_dense_add(ctx: &InferContext) -> Infer {
    ctx.expect_dtype(0, INDEX)?;
    ctx.expect_rank(0, 2)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let d = ctx.expect_same(1, 3)?;
    single(d, ctx.shape(3).clone())
}

/// `[segments] + data.shape[1:]`.
fn segment_shape(ctx: &InferContext, data: usize, segments: Option<usize>) -> PartialShape {
    match ctx.shape(data).dims() {
        Some([]) | None => PartialShape::unknown(),
        Some(d) => {
            let mut out = vec![segments];
            out.extend_from_slice(&d[1..]);
            PartialShape::from_dims(out)
        }
    }
}

fn segment(ctx: &InferContext) -> Infer {
    ctx.expect_dtype(0, NUMERIC_WIDE)?;
    ctx.expect_dtype(1, INDEX)?;
    ctx.expect_dtype(2, INDEX)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let segments = if ctx.num_inputs() > 3 {
        ctx.expect_dtype(3, INDEX)?;
        ctx.const_value(3)
            .and_then(|t| t.scalar_i64().ok())
            .map(|v| v.max(0) as usize)
    } else {
        None
    };
    single(ctx.dtype(0), segment_shape(ctx, 0, segments))
}

fn segment_grad(ctx: &InferContext) -> Infer {
    let rows = ctx
        .const_value(3)
        .and_then(|t| t.scalar_i64().ok())
        .map(|v| v.max(0) as usize);
    single(ctx.dtype(0), segment_shape(ctx, 0, rows))
}

fn segment_grad_v2(ctx: &InferContext) -> Infer {
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), segment_shape(ctx, 0, None)),
        OutputInfo::new(ctx.dtype(1), vec_of(None)),
    ])
}

/// `DenseCountSparseOutput(values, weights)` and `SparseCountSparseOutput(indices, values, shape, weights)`:
/// a sparse tensor of the rank of the counted values, of the weights' dtype.
fn count_sparse(ctx: &InferContext) -> Infer {
    let w = ctx.num_inputs() - 1;
    let rank = if ctx.num_inputs() == 2 {
        ctx.shape(0).rank()
    } else {
        ctx.shape(0).dim(1)
    };
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(None, rank)),
        OutputInfo::new(ctx.dtype(w), vec_of(None)),
        OutputInfo::new(DType::Int64, vec_of(rank)),
    ])
}

fn cross(ctx: &InferContext) -> Infer {
    let out = ctx.type_or("out_type", DType::String)?;
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(None, Some(2))),
        OutputInfo::new(out, vec_of(None)),
        OutputInfo::new(DType::Int64, vec_of(Some(2))),
    ])
}

fn cross_v2(_: &InferContext) -> Infer {
    Ok(vec![
        OutputInfo::new(DType::Int64, mat(None, Some(2))),
        OutputInfo::new(DType::String, vec_of(None)),
        OutputInfo::new(DType::Int64, vec_of(Some(2))),
    ])
}

fn ragged_cross(ctx: &InferContext) -> Infer {
    use crate::attr::AttrsExt;
    let values = ctx.type_or("out_values_type", DType::String)?;
    let splits = ctx.type_or("out_row_splits_type", DType::Int64)?;
    let nr = ctx.attrs().dtypes("ragged_values_types")?.len();
    let ns = ctx.int_or("Nsparse", 0)?.max(0) as usize;
    // The batch sizes known statically: ragged row splits (minus one) and dense rows.
    let mut batch = None;
    let ragged = (nr..2 * nr).map(|i| ctx.shape(i).dim(0).map(|n| n.saturating_sub(1)));
    let dense = (2 * nr + 3 * ns..ctx.num_inputs()).map(|i| ctx.shape(i).dim(0));
    for n in ragged.chain(dense).flatten() {
        match batch {
            Some(b) if b != n => {
                return Err(ctx.shape_error("inputs must all have the same batch dimension size."))
            }
            _ => batch = Some(n),
        }
    }
    Ok(vec![
        OutputInfo::new(values, vec_of(None)),
        OutputInfo::new(splits, vec_of(batch.map(|b| b + 1))),
    ])
}

fn list_diff(ctx: &InferContext) -> Infer {
    ctx.expect_same(0, 1)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 1)?;
    Ok(vec![
        OutputInfo::new(ctx.dtype(0), vec_of(None)),
        OutputInfo::new(ctx.type_or("out_idx", DType::Int32)?, vec_of(None)),
    ])
}

pub fn ops() -> Vec<OpDef> {
    const TRIPLE: &[&str] = &[
        "input_indices",
        "input_values",
        "input_shape",
        "reduction_axes",
    ];
    const AB: &[&str] = &[
        "a_indices",
        "a_values",
        "a_shape",
        "b_indices",
        "b_values",
        "b_shape",
        "thresh",
    ];
    const CWISE: &[&str] = &["sp_indices", "sp_values", "sp_shape", "dense"];
    const SEG: &[&str] = &["data", "indices", "segment_ids", "num_segments"];
    const SEG_GRAD: &[&str] = &["grad", "indices", "segment_ids", "output_dim0"];
    const SEG_GRAD_V2: &[&str] = &["grad", "indices", "segment_ids", "dense_output_dim0"];
    vec![
        OpDef::new(
            "SparseToDense",
            &[
                "sparse_indices",
                "output_shape",
                "sparse_values",
                "default_value",
            ],
            sparse_to_dense,
        ),
        OpDef::new(
            "SparseTensorDenseMatMul",
            &["a_indices", "a_values", "a_shape", "b"],
            dense_matmul,
        ),
        OpDef::new("SparseReorder", &TRIPLE[..3], reorder),
        OpDef::new(
            "SparseReshape",
            &["input_indices", "input_shape", "new_shape"],
            reshape,
        ),
        OpDef::new("SparseConcat", &["inputs*"], concat),
        OpDef::new("SparseAdd", AB, add),
        OpDef::new(
            "SparseAddGrad",
            &["backprop_val_grad", "a_indices", "b_indices", "sum_indices"],
            add_grad,
        ),
        OpDef::new("SparseReduceSum", TRIPLE, reduce),
        OpDef::new("SparseReduceMax", TRIPLE, reduce),
        OpDef::new("SparseReduceSumSparse", TRIPLE, reduce_sparse),
        OpDef::new("SparseReduceMaxSparse", TRIPLE, reduce_sparse),
        OpDef::new(
            "SparseFillEmptyRows",
            &["indices", "values", "dense_shape", "default_value"],
            fill_empty_rows,
        ),
        OpDef::new(
            "SparseFillEmptyRowsGrad",
            &["reverse_index_map", "grad_values"],
            fill_empty_rows_grad,
        ),
        OpDef::new(
            "SparseSplit",
            &["split_dim", "indices", "values", "shape"],
            split,
        ),
        OpDef::new(
            "SparseSlice",
            &["indices", "values", "shape", "start", "size"],
            slice,
        ),
        OpDef::new(
            "SparseSliceGrad",
            &[
                "backprop_val_grad",
                "input_indices",
                "input_start",
                "output_indices",
            ],
            slice_grad,
        ),
        OpDef::new("SparseSoftmax", &CWISE[..3], softmax),
        OpDef::new("SparseSparseMaximum", &AB[..6], sparse_sparse),
        OpDef::new("SparseSparseMinimum", &AB[..6], sparse_sparse),
        OpDef::new("SparseDenseCwiseMul", CWISE, dense_cwise),
        OpDef::new("SparseDenseCwiseDiv", CWISE, dense_cwise),
        OpDef::new("SparseDenseCwiseAdd", CWISE, dense_cwise),
        OpDef::new(
            "SparseTensorDenseAdd",
            &["a_indices", "a_values", "a_shape", "b"],
            tensor_dense_add,
        ),
        OpDef::new("SparseSegmentSum", &SEG[..3], segment),
        OpDef::new("SparseSegmentMean", &SEG[..3], segment),
        OpDef::new("SparseSegmentSqrtN", &SEG[..3], segment),
        OpDef::new("SparseSegmentSumWithNumSegments", SEG, segment),
        OpDef::new("SparseSegmentMeanWithNumSegments", SEG, segment),
        OpDef::new("SparseSegmentSqrtNWithNumSegments", SEG, segment),
        OpDef::new("SparseSegmentSumGrad", SEG_GRAD, segment_grad),
        OpDef::new("SparseSegmentMeanGrad", SEG_GRAD, segment_grad),
        OpDef::new("SparseSegmentSqrtNGrad", SEG_GRAD, segment_grad),
        OpDef::new("SparseSegmentSumGradV2", SEG_GRAD_V2, segment_grad_v2),
        OpDef::new("SparseSegmentMeanGradV2", SEG_GRAD_V2, segment_grad_v2),
        OpDef::new("SparseSegmentSqrtNGradV2", SEG_GRAD_V2, segment_grad_v2),
        OpDef::new(
            "DenseCountSparseOutput",
            &["values", "weights"],
            count_sparse,
        ),
        OpDef::new(
            "SparseCountSparseOutput",
            &["indices", "values", "dense_shape", "weights"],
            count_sparse,
        ),
        OpDef::new("SparseCross", &["inputs*"], cross),
        OpDef::new("SparseCrossV2", &["inputs*"], cross_v2),
        // `tf.ragged.cross`: ragged values and splits, sparse indices, values
        // and shapes, then dense inputs (TensorFlow's six input lists, flat).
        OpDef::new("RaggedCross", &["inputs*"], ragged_cross),
        // `tf.sparse.mask`'s set difference (`tf.compat.v1.setdiff1d`).
        OpDef::new("ListDiff", &["x", "y"], list_diff),
    ]
}
