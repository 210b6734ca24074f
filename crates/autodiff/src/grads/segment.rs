//! Gradients of the segment reductions, the tensor scatters and
//! `DynamicPartition` / `DynamicStitch`, built as TensorFlow's
//! `math_grad.py`, `array_grad.py` and `data_flow_grad.py` build them.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Result};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("called with an output gradient")
}

fn out0(n: &Node) -> Output {
    Output::new(n.id, 0)
}

/// `gather(params, ids)` along axis 0.
fn gather(b: &mut Builder<'_>, params: Output, ids: Output) -> Result<Output> {
    let axis = b.scalar_i32(0)?;
    b.op("GatherV2", &[params, ids, axis], vec![])
}

/// `ones` of `shape` in `dtype`.
fn ones(b: &mut Builder<'_>, shape: Output, dtype: DType) -> Result<Output> {
    let one = b.scalar(dtype, 1.0)?;
    b.fill(shape, one)
}

/// `shape(ids) + [1] * (rank(x) - rank(ids))`: `ids`-shaped values reshaped
/// to this broadcast against `x`.
fn broadcastable(b: &mut Builder<'_>, ids: Output, x: Output) -> Result<Output> {
    let ids_shape = b.shape(ids)?;
    let xr = b.rank(x)?;
    let ir = b.rank(ids)?;
    let extra = b.sub(xr, ir)?;
    let extra = b.pack(&[extra], 0)?;
    let ones = ones(b, extra, DType::Int32)?;
    let axis0 = b.scalar_i32(0)?;
    b.concat(&[ids_shape, ones], axis0)
}

/// TensorFlow's `_GatherDropNegatives`: `params[max(ids, 0)]` where
/// `ids >= 0`, zeros elsewhere. Returns the result, the clipped ids and the
/// (broadcastable) mask of non-negative ids.
fn gather_drop_negatives(
    b: &mut Builder<'_>,
    params: Output,
    ids: Output,
    reuse: Option<(Output, Output)>,
) -> Result<(Output, Output, Output)> {
    let (clipped, keep, gathered) = match reuse {
        Some((clipped, keep)) => {
            let gathered = gather(b, params, clipped)?;
            (clipped, keep, gathered)
        }
        None => {
            let zero = b.zeros_like(ids)?;
            let clipped = b.binary("Maximum", ids, zero)?;
            let gathered = gather(b, params, clipped)?;
            let keep = b.binary("GreaterEqual", ids, zero)?;
            let s = broadcastable(b, ids, gathered)?;
            (clipped, b.reshape(keep, s)?, gathered)
        }
    };
    let zeros = b.zeros_like(gathered)?;
    let r = b.select(keep, gathered, zeros)?;
    Ok((r, clipped, keep))
}

fn segment_sum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let r = gather(b, g0(g), n.inputs[1])?;
    Ok(vec![d(r), None])
}

fn segment_mean(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, ids, grad) = (n.inputs[0], n.inputs[1], g0(g));
    let rank = b.rank(data)?;
    let one = b.scalar_i32(1)?;
    let rest = b.sub(rank, one)?;
    let rest = b.pack(&[rest], 0)?;
    let rest = ones(b, rest, DType::Int32)?;
    let ids_shape = b.shape(ids)?;
    let axis0 = b.scalar_i32(0)?;
    let shape = b.concat(&[ids_shape, rest], axis0)?;
    let ones = ones(b, shape, b.dtype(grad))?;
    let counts = b.op("SegmentSum", &[ones, ids], vec![])?;
    let scaled = b.div(grad, counts)?;
    let r = gather(b, scaled, ids)?;
    Ok(vec![d(r), None])
}

fn segment_min_max(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, ids, grad) = (n.inputs[0], n.inputs[1], g0(g));
    let zeros = b.zeros_like(data)?;
    let gathered = gather(b, out0(n), ids)?;
    let selected = b.binary("Equal", data, gathered)?;
    let sel = b.cast(selected, b.dtype(grad))?;
    let count = b.op("SegmentSum", &[sel, ids], vec![])?;
    let weighted = b.div(grad, count)?;
    let gathered_grads = gather(b, weighted, ids)?;
    let r = b.select(selected, gathered_grads, zeros)?;
    Ok(vec![d(r), None])
}

fn segment_prod(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, ids, grad) = (n.inputs[0], n.inputs[1], g0(g));
    let zero = b.scalar(b.dtype(data), 0.0)?;
    let is_zero = b.binary("Equal", data, zero)?;
    let zi = b.cast(is_zero, DType::Int32)?;
    let num_zeros = b.op("SegmentSum", &[zi, ids], vec![])?;
    let one_i = b.scalar_i32(1)?;
    let many = b.binary("Greater", num_zeros, one_i)?;
    let gz = b.zeros_like(grad)?;
    let grad = b.select(many, gz, grad)?;
    let ones = b.ones_like(data)?;
    let non_zero = b.select(is_zero, ones, data)?;
    let non_zero_prod = b.op("SegmentProd", &[non_zero, ids], vec![])?;
    let gathered_prod = gather(b, out0(n), ids)?;
    let gathered_nz = gather(b, non_zero_prod, ids)?;
    let divided = b.div(gathered_prod, non_zero)?;
    let partial = b.select(is_zero, gathered_nz, divided)?;
    let gathered_grad = gather(b, grad, ids)?;
    let r = b.mul(gathered_grad, partial)?;
    Ok(vec![d(r), None])
}

fn unsorted_min_max(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, ids, num, grad) = (n.inputs[0], n.inputs[1], n.inputs[2], g0(g));
    let (gathered, clipped, keep) = gather_drop_negatives(b, out0(n), ids, None)?;
    let selected = b.binary("Equal", data, gathered)?;
    let selected = b.binary("LogicalAnd", selected, keep)?;
    let sel = b.cast(selected, b.dtype(grad))?;
    let count = b.op("UnsortedSegmentSum", &[sel, ids, num], vec![])?;
    let weighted = b.div(grad, count)?;
    let (gathered_grads, _, _) = gather_drop_negatives(b, weighted, ids, Some((clipped, keep)))?;
    let zeros = b.zeros_like(gathered_grads)?;
    let r = b.select(selected, gathered_grads, zeros)?;
    Ok(vec![d(r), None, None])
}

fn unsorted_prod(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, ids, num, grad) = (n.inputs[0], n.inputs[1], n.inputs[2], g0(g));
    let zero = b.scalar(b.dtype(data), 0.0)?;
    let is_zero = b.binary("Equal", data, zero)?;
    let zi = b.cast(is_zero, DType::Int32)?;
    let num_zeros = b.op("UnsortedSegmentSum", &[zi, ids, num], vec![])?;
    let one_i = b.scalar_i32(1)?;
    let many = b.binary("Greater", num_zeros, one_i)?;
    let gz = b.zeros_like(grad)?;
    let grad = b.select(many, gz, grad)?;
    let ones = b.ones_like(data)?;
    let non_zero = b.select(is_zero, ones, data)?;
    let non_zero_prod = b.op("UnsortedSegmentProd", &[non_zero, ids, num], vec![])?;
    let zid = b.zeros_like(ids)?;
    let clipped = b.binary("Maximum", ids, zid)?;
    let gathered_prod = gather(b, out0(n), clipped)?;
    let gathered_nz = gather(b, non_zero_prod, clipped)?;
    let divided = b.div(gathered_prod, data)?;
    let partial = b.select(is_zero, gathered_nz, divided)?;
    let (gathered_grad, _, _) = gather_drop_negatives(b, grad, ids, None)?;
    let r = b.mul(gathered_grad, partial)?;
    Ok(vec![d(r), None, None])
}

fn gather_nd(b: &mut Builder<'_>, params: Output, indices: Output) -> Result<Output> {
    b.op("GatherNd", &[params, indices], vec![])
}

fn tensor_scatter_update(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (indices, updates, grad) = (n.inputs[1], n.inputs[2], g0(g));
    let ug = gather_nd(b, grad, indices)?;
    let gi = b.unary("Identity", grad)?;
    let zu = b.zeros_like(updates)?;
    let tg = b.op("TensorScatterUpdate", &[gi, indices, zu], vec![])?;
    Ok(vec![d(tg), None, d(ug)])
}

fn tensor_scatter_add(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let ug = gather_nd(b, grad, n.inputs[1])?;
    let tg = b.unary("Identity", grad)?;
    Ok(vec![d(tg), None, d(ug)])
}

fn tensor_scatter_sub(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let ug = gather_nd(b, grad, n.inputs[1])?;
    let ug = b.neg(ug)?;
    let tg = b.unary("Identity", grad)?;
    Ok(vec![d(tg), None, d(ug)])
}

fn tensor_scatter_min_max(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (x, indices, y, grad) = (n.inputs[0], n.inputs[1], n.inputs[2], g0(g));
    let out = out0(n);
    let dt = b.dtype(grad);
    let xe = b.binary("Equal", x, out)?;
    let x_ind = b.cast(xe, dt)?;
    let y_out = gather_nd(b, out, indices)?;
    let ye = b.binary("Equal", y, y_out)?;
    let y_ind = b.cast(ye, dt)?;
    let xs = b.shape(x)?;
    let xs = b.cast(xs, b.dtype(indices))?;
    let ys_ind = b.op("ScatterNd", &[indices, y_ind, xs], vec![])?;
    let indicators = b.add(x_ind, ys_ind)?;
    let gx = b.mul(grad, x_ind)?;
    let x_grad = b.div(gx, indicators)?;
    let gi = b.div(grad, indicators)?;
    let gy = gather_nd(b, gi, indices)?;
    let y_grad = b.mul(gy, y_ind)?;
    Ok(vec![d(x_grad), None, d(y_grad)])
}

fn dynamic_partition(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (data, partitions) = (n.inputs[0], n.inputs[1]);
    let num = n.attrs.int("num_partitions")?;
    let prefix = b.shape(partitions)?;
    let axis0 = b.const_i32(vec![0])?;
    let total = b.op(
        "Prod",
        &[prefix, axis0],
        vec![("keep_dims", AttrValue::Bool(false))],
    )?;
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let range = b.op(
        "Range",
        &[zero, total, one],
        vec![("Tidx", AttrValue::Type(DType::Int32))],
    )?;
    let original = b.reshape(range, prefix)?;
    let parts = b.node(
        "DynamicPartition",
        &[original, partitions],
        vec![("num_partitions", AttrValue::Int(num))],
    )?;
    let mut inputs: Vec<Output> = (0..num as usize).map(|i| Output::new(parts, i)).collect();
    for (i, gi) in g.iter().enumerate().take(num as usize) {
        let gi = match gi {
            Some(o) => *o,
            None => b.zeros_like(Output::new(n.id, i))?,
        };
        inputs.push(gi);
    }
    let stitched = b.op(
        "ParallelDynamicStitch",
        &inputs,
        vec![("N", AttrValue::Int(num))],
    )?;
    let ds = b.shape(data)?;
    let r = b.reshape(stitched, ds)?;
    Ok(vec![d(r), None])
}

fn dynamic_stitch(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let k = n.inputs.len() / 2;
    let grad = g0(g);
    let mut out: Vec<Option<Grad>> = vec![None; k];
    for i in 0..k {
        let idx = b.cast(n.inputs[i], DType::Int32)?;
        out.push(d(gather(b, grad, idx)?));
    }
    Ok(out)
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    use GradEntry::{Func, NotDifferentiable};
    reg("SegmentSum", Func(segment_sum));
    reg("SegmentMean", Func(segment_mean));
    reg("SegmentMax", Func(segment_min_max));
    reg("SegmentMin", Func(segment_min_max));
    reg("SegmentProd", Func(segment_prod));
    reg("UnsortedSegmentMax", Func(unsorted_min_max));
    reg("UnsortedSegmentMin", Func(unsorted_min_max));
    reg("UnsortedSegmentProd", Func(unsorted_prod));
    reg("TensorScatterUpdate", Func(tensor_scatter_update));
    reg("TensorScatterAdd", Func(tensor_scatter_add));
    reg("TensorScatterSub", Func(tensor_scatter_sub));
    reg("TensorScatterMax", Func(tensor_scatter_min_max));
    reg("TensorScatterMin", Func(tensor_scatter_min_max));
    reg("DynamicPartition", Func(dynamic_partition));
    reg("DynamicStitch", Func(dynamic_stitch));
    reg("ParallelDynamicStitch", Func(dynamic_stitch));
    // Updates of variables in place, as TensorFlow's state_grad.py.
    for op in [
        "ScatterMul",
        "ScatterDiv",
        "ScatterMax",
        "ScatterMin",
        "ScatterNdAdd",
        "ScatterNdSub",
        "ScatterNdUpdate",
    ] {
        reg(op, NotDifferentiable);
    }
}
