//! Gradients of the sparse-tensor ops, as TensorFlow defines them
//! (`sparse_grad.py`): only `values` (and dense operands) receive gradient;
//! indices and shapes never do.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Error, Result, Tensor};

type R = Result<Vec<Option<Grad>>>;

/// Ops whose inputs receive no gradient: TensorFlow registers them
/// `NotDifferentiable` (or a gradient that only raises). The ops that
/// TensorFlow registers nothing for (`SparseReshape`, `SparseSplit`,
/// `SparseReduceMax`, the gradient ops, ...) have no entry either, so
/// `tf.gradients` through a float one raises LookupError, as there.
const NOT_DIFFERENTIABLE: &[&str] = &[
    "SparseConcat",
    "SparseAddGrad",
    "SparseSparseMaximum",
    "SparseSparseMinimum",
    "SparseDenseCwiseAdd",
];

/// `grads[i]` or, when that output received none, None for every input.
macro_rules! need {
    ($g:expr, $i:expr, $n:expr) => {
        match $g.get($i).copied().flatten() {
            Some(o) => o,
            None => return Ok(vec![None; $n]),
        }
    };
}

fn none(n: usize) -> Vec<Option<Grad>> {
    vec![None; n]
}

fn sum_all(b: &mut Builder<'_>, x: Output) -> Result<Output> {
    let flat = b.const_i32(vec![-1])?;
    let x = b.reshape(x, flat)?;
    let ax = b.const_i32(vec![0])?;
    b.sum(x, ax, false)
}

fn gather(b: &mut Builder<'_>, params: Output, indices: Output, axis: i32) -> Result<Output> {
    let ax = b.scalar_i32(axis)?;
    b.op("GatherV2", &[params, indices, ax], vec![])
}

fn rank_of(b: &Builder<'_>, o: Output) -> Option<usize> {
    b.graph.output(o).shape.rank()
}

fn sparse_to_dense(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 0, 4);
    let mut ind = n.inputs[0];
    // A vector of indices addresses a 1-D output: one coordinate per row.
    if rank_of(b, ind) != Some(2) {
        let shape = b.const_i32(vec![-1, 1])?;
        ind = b.reshape(ind, shape)?;
    }
    let mut vg = b.op("GatherNd", &[g, ind], vec![])?;
    if rank_of(b, n.inputs[2]) == Some(0) {
        vg = sum_all(b, vg)?;
    }
    let total = sum_all(b, g)?;
    let taken = sum_all(b, vg)?;
    let dg = b.sub(total, taken)?;
    Ok(vec![None, None, d(vg), d(dg)])
}

fn dense_matmul(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 0, 4);
    let adj_a = n.attrs.bool_or("adjoint_a", false)?;
    let adj_b = n.attrs.bool_or("adjoint_b", false)?;
    let (ind, vals, shape, bm) = (n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]);
    let mut bg = b.op(
        "SparseTensorDenseMatMul",
        &[ind, vals, shape, g],
        vec![
            ("adjoint_a", AttrValue::Bool(!adj_a)),
            ("adjoint_b", AttrValue::Bool(false)),
        ],
    )?;
    if adj_b {
        let perm = b.const_i32(vec![1, 0])?;
        bg = b.transpose(bg, perm)?;
    }
    // d values[k] = sum_j g[row(k), j] * op(B)[col(k), j], rows and columns swapped under adjoint_a.
    let i0 = b.constant(Tensor::scalar(0i64))?;
    let i1 = b.constant(Tensor::scalar(1i64))?;
    let rows = gather(b, ind, i0, 1)?;
    let cols = gather(b, ind, i1, 1)?;
    let (gr, bc) = if adj_a { (cols, rows) } else { (rows, cols) };
    let pa = gather(b, g, gr, 0)?;
    let opb = if adj_b {
        let perm = b.const_i32(vec![1, 0])?;
        b.transpose(bm, perm)?
    } else {
        bm
    };
    let pb = gather(b, opb, bc, 0)?;
    let prod = b.mul(pa, pb)?;
    let ax = b.const_i32(vec![1])?;
    let vg = b.sum(prod, ax, false)?;
    Ok(vec![None, d(vg), None, d(bg)])
}

fn reorder(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 1, 3);
    let (ind, vals, shape) = (n.inputs[0], n.inputs[1], n.inputs[2]);
    let count = b.size(vals)?;
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let range = b.op("Range", &[zero, count, one], vec![])?;
    let re = b.node("SparseReorder", &[ind, range, shape], vec![])?;
    let inv = b.op("InvertPermutation", &[Output::new(re, 1)], vec![])?;
    Ok(vec![None, d(gather(b, g, inv, 0)?), None])
}

fn add(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 1, 7);
    let grads = b.node(
        "SparseAddGrad",
        &[g, n.inputs[0], n.inputs[3], Output::new(n.id, 0)],
        vec![],
    )?;
    Ok(vec![
        None,
        d(Output::new(grads, 0)),
        None,
        None,
        d(Output::new(grads, 1)),
        None,
        None,
    ])
}

fn reduce_sum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 0, 4);
    let (ind, shape, axes) = (n.inputs[0], n.inputs[2], n.inputs[3]);
    let kept = b.op("ReducedShape", &[shape, axes], vec![])?;
    let gr = b.reshape(g, kept)?;
    let scale = b.binary("FloorDiv", shape, kept)?;
    let at = b.binary("FloorDiv", ind, scale)?;
    Ok(vec![
        None,
        d(b.op("GatherNd", &[gr, at], vec![])?),
        None,
        None,
    ])
}

fn fill_empty_rows(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 1, 4);
    let grads = b.node(
        "SparseFillEmptyRowsGrad",
        &[Output::new(n.id, 3), g],
        vec![],
    )?;
    Ok(vec![
        None,
        d(Output::new(grads, 0)),
        None,
        d(Output::new(grads, 1)),
    ])
}

fn slice(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 1, 5);
    let vg = b.op(
        "SparseSliceGrad",
        &[g, n.inputs[0], n.inputs[3], Output::new(n.id, 0)],
        vec![],
    )?;
    Ok(vec![None, d(vg), None, None, None])
}

fn softmax(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    // (g - sum_last(g * y)) * y over each row's values.
    let g = need!(g, 0, 3);
    let (ind, shape) = (n.inputs[0], n.inputs[2]);
    let y = Output::new(n.id, 0);
    let prod = b.mul(y, g)?;
    let ax = b.const_i32(vec![-1])?;
    let s = b.op(
        "SparseReduceSum",
        &[ind, prod, shape, ax],
        vec![("keep_dims", AttrValue::Bool(true))],
    )?;
    let neg = b.neg(s)?;
    let shifted = b.op("SparseDenseCwiseAdd", &[ind, g, shape, neg], vec![])?;
    Ok(vec![None, d(b.mul(shifted, y)?), None])
}

fn dense_cwise(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], mul: bool) -> R {
    let g = need!(g, 0, 4);
    let (ind, vals, xs, y) = (n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3]);
    let (Some(rx), Some(ry)) = (b.graph.output(ind).shape.dim(1), rank_of(b, y)) else {
        return Err(Error::value(format!(
            "The gradient of {} needs the static ranks of the sparse and dense operands",
            n.name
        )));
    };
    let added = rx.saturating_sub(ry);
    // Each entry's position in the (broadcast) dense operand.
    let ys = b.shape(y)?;
    let ys = b.cast(ys, DType::Int64)?;
    let ones = b.constant(Tensor::vector(vec![1i64; added]))?;
    let axis = b.scalar_i32(0)?;
    let aug = b.concat(&[ones, ys], axis)?;
    let scaling = b.binary("FloorDiv", xs, aug)?;
    let scaled = b.binary("FloorDiv", ind, scaling)?;
    let begin = b.const_i32(vec![0, added as i32])?;
    let size = b.const_i32(vec![-1, -1])?;
    let scaled = b.op("Slice", &[scaled, begin, size], vec![])?;
    let dense = b.op("GatherNd", &[y, scaled], vec![])?;
    let (dx, dyv) = if mul {
        (b.mul(g, dense)?, b.mul(g, vals)?)
    } else {
        let dx = b.div(g, dense)?;
        let sq = b.unary("Square", dense)?;
        let q = b.div(vals, sq)?;
        let q = b.neg(q)?;
        (dx, b.mul(g, q)?)
    };
    let dy = b.op("ScatterNd", &[scaled, dyv, ys], vec![])?;
    Ok(vec![None, d(dx), None, d(dy)])
}

fn dense_mul(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    dense_cwise(b, n, g, true)
}

fn dense_div(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    dense_cwise(b, n, g, false)
}

fn tensor_dense_add(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = need!(g, 0, 4);
    let vg = b.op("GatherNd", &[g, n.inputs[0]], vec![])?;
    Ok(vec![None, d(vg), None, d(g)])
}

fn segment(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], grad_op: &str) -> R {
    let k = n.inputs.len();
    let g = need!(g, 0, k);
    let shape = b.shape(n.inputs[0])?;
    let dim0 = b.element(shape, 0)?;
    let mut out = none(k);
    if n.attrs.bool_or("sparse_gradient", false)? {
        // An IndexedSlices over the distinct indices (TensorFlow's `sparse_gradient=True`).
        let v2 = format!("{grad_op}V2");
        let node = b.node(&v2, &[g, n.inputs[1], n.inputs[2], dim0], vec![])?;
        out[0] = Some(Grad::Sparse {
            values: Output::new(node, 0),
            indices: Output::new(node, 1),
            dense_shape: shape,
        });
        return Ok(out);
    }
    let dg = b.op(grad_op, &[g, n.inputs[1], n.inputs[2], dim0], vec![])?;
    out[0] = d(dg);
    Ok(out)
}

fn segment_sum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    segment(b, n, g, "SparseSegmentSumGrad")
}

fn segment_mean(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    segment(b, n, g, "SparseSegmentMeanGrad")
}

fn segment_sqrt_n(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    segment(b, n, g, "SparseSegmentSqrtNGrad")
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in NOT_DIFFERENTIABLE {
        reg(op, GradEntry::NotDifferentiable);
    }
    reg("SparseToDense", GradEntry::Func(sparse_to_dense));
    reg("SparseTensorDenseMatMul", GradEntry::Func(dense_matmul));
    reg("SparseReorder", GradEntry::Func(reorder));
    reg("SparseAdd", GradEntry::Func(add));
    reg("SparseReduceSum", GradEntry::Func(reduce_sum));
    reg("SparseFillEmptyRows", GradEntry::Func(fill_empty_rows));
    reg("SparseSlice", GradEntry::Func(slice));
    reg("SparseSoftmax", GradEntry::Func(softmax));
    reg("SparseDenseCwiseMul", GradEntry::Func(dense_mul));
    reg("SparseDenseCwiseDiv", GradEntry::Func(dense_div));
    reg("SparseTensorDenseAdd", GradEntry::Func(tensor_dense_add));
    for op in ["SparseSegmentSum", "SparseSegmentSumWithNumSegments"] {
        reg(op, GradEntry::Func(segment_sum));
    }
    for op in ["SparseSegmentMean", "SparseSegmentMeanWithNumSegments"] {
        reg(op, GradEntry::Func(segment_mean));
    }
    for op in ["SparseSegmentSqrtN", "SparseSegmentSqrtNWithNumSegments"] {
        reg(op, GradEntry::Func(segment_sqrt_n));
    }
}
