//! Gradients of the ops that choose or write parts of a tensor by
//! position: `Slice`, `StridedSlice` (and `StridedSliceGrad`), `GatherV2`
//! (sparse along axis 0), `GatherNd`, `ScatterNd`, `UnsortedSegmentSum`
//! and `ExtractVolumePatches` (each window element scattered back to its
//! voxel).

use super::{attrs_of, d, g0, try_g0, R};
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Result};

fn slice(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (x, begin) = (n.inputs[0], n.inputs[1]);
    let g = g0(g);
    let xs = b.shape(x)?;
    let gs = b.shape(g)?;
    let begin = b.cast(begin, DType::Int32)?;
    let after = b.sub(xs, gs)?;
    let after = b.sub(after, begin)?;
    let pads = b.pack(&[begin, after], 1)?;
    let r = b.op("Pad", &[g, pads], vec![])?;
    Ok(vec![d(r), None, None])
}

fn strided_slice(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let xs = b.shape(n.inputs[0])?;
    let mut attrs = Vec::new();
    for k in [
        "begin_mask",
        "end_mask",
        "ellipsis_mask",
        "new_axis_mask",
        "shrink_axis_mask",
    ] {
        attrs.push((k, AttrValue::Int(n.attrs.int_or(k, 0)?)));
    }
    let (bg, en, st) = (n.inputs[1], n.inputs[2], n.inputs[3]);
    let xs = b.cast(xs, b.dtype(bg))?;
    let r = b.op("StridedSliceGrad", &[xs, bg, en, st, g0(g)], attrs)?;
    Ok(vec![d(r), None, None, None])
}

fn gather(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (params, indices, axis) = (n.inputs[0], n.inputs[1], n.inputs[2]);
    let g = g0(g);
    let batch = n.attrs.int_or("batch_dims", 0)?;
    let axis_v = b.graph.const_value(axis).and_then(|t| t.scalar_i64().ok());
    let pshape = b.shape(params)?;
    if batch == 0 && axis_v == Some(0) {
        // Sparse: one gradient row per looked-up index (duplicates kept).
        let isize = b.size(indices)?;
        let isize = b.pack(&[isize], 0)?;
        let axis0 = b.scalar_i32(0)?;
        let inner = slice_1d(b, pshape, 1, None)?;
        let vshape = b.concat(&[isize, inner], axis0)?;
        let values = b.reshape(g, vshape)?;
        let flat = b.const_i32(vec![-1])?;
        let idx = b.reshape(indices, flat)?;
        return Ok(vec![
            Some(Grad::Sparse {
                values,
                indices: idx,
                dense_shape: pshape,
            }),
            None,
            None,
        ]);
    }
    // Dense: segment-sum the gradient's rows into params' `axis` dimension,
    // separately for each batch position (batch_dims leading dimensions that
    // params and indices share).
    let known_rank = |b: &Builder<'_>, o: Output, what: &str| {
        b.graph.output(o).shape.rank().ok_or_else(|| {
            ferroflow_tensor::Error::value(format!(
                "the gradient of gather along axis != 0 needs {what} of known rank"
            ))
        })
    };
    let rank = known_rank(b, params, "params")?;
    let irank = known_rank(b, indices, "indices")?;
    let ax = axis_v.ok_or_else(|| {
        ferroflow_tensor::Error::value("the gradient of gather needs a constant axis")
    })?;
    let ax = if ax < 0 { ax + rank as i64 } else { ax } as usize;
    let nb = if batch < 0 {
        batch + irank as i64
    } else {
        batch
    } as usize;
    if nb > ax || nb > irank || ax >= rank {
        return Err(ferroflow_tensor::Error::value(format!(
            "gather gradient: batch_dims {batch} and axis {ax} do not fit params of rank {rank} and indices of rank {irank}"
        )));
    }
    let k = irank - nb;
    // g: [B (nb), A (params[nb:ax]), K (indices[nb:]), I (params[ax+1:])].
    // Move K right after B, then flatten B and K into one row dimension.
    let grank = k + rank - 1;
    let perm: Vec<i32> = (0..nb)
        .chain(ax..ax + k)
        .chain(nb..ax)
        .chain(ax + k..grank)
        .map(|i| i as i32)
        .collect();
    let perm_t = b.const_i32(perm)?;
    let gt = b.transpose(g, perm_t)?;
    let gts = b.shape(gt)?;
    let rest = slice_1d(b, gts, (nb + k) as i32, None)?;
    let flat = b.const_i32(vec![-1])?;
    let axis0 = b.scalar_i32(0)?;
    let vshape = b.concat(&[flat, rest], axis0)?;
    let values = b.reshape(gt, vshape)?;
    // Row ids: indices offset by (batch position * params[axis]).
    let idt = b.dtype(indices);
    let zero = b.scalar_i32(0)?;
    let axt = b.scalar_i32(ax as i32)?;
    let n_rows = b.op("GatherV2", &[pshape, axt, zero], vec![])?;
    let n_rows = b.cast(n_rows, idt)?;
    let (ids, num) = if nb == 0 {
        (indices, n_rows)
    } else {
        let ishape = b.shape(indices)?;
        let bshape = slice_1d(b, ishape, 0, Some(nb as i32))?;
        let zr = b.const_i32(vec![0])?;
        let batches = b.op(
            "Prod",
            &[bshape, zr],
            vec![("keep_dims", AttrValue::Bool(false))],
        )?;
        let batches = b.cast(batches, idt)?;
        let num = b.mul(batches, n_rows)?;
        let start = b.scalar(idt, 0.0)?;
        let offsets = b.op(
            "Range",
            &[start, num, n_rows],
            vec![("Tidx", AttrValue::Type(idt))],
        )?;
        let ones = b.const_i32(vec![1; k])?;
        let oshape = b.concat(&[bshape, ones], axis0)?;
        let offsets = b.reshape(offsets, oshape)?;
        (b.add(indices, offsets)?, num)
    };
    let ids = b.reshape(ids, flat)?;
    let summed = b.op("UnsortedSegmentSum", &[values, ids, num], vec![])?;
    // summed: [B * params[axis], A, I] -> [B, params[axis], A, I] -> params order.
    let order: Vec<i32> = (0..nb)
        .chain(std::iter::once(ax))
        .chain(nb..ax)
        .chain(ax + 1..rank)
        .map(|i| i as i32)
        .collect();
    let order_t = b.const_i32(order.clone())?;
    let sshape = b.op("GatherV2", &[pshape, order_t, zero], vec![])?;
    let summed = b.reshape(summed, sshape)?;
    let mut inv = vec![0i32; rank];
    for (i, &p) in order.iter().enumerate() {
        inv[p as usize] = i as i32;
    }
    let inv_t = b.const_i32(inv)?;
    let r = b.transpose(summed, inv_t)?;
    Ok(vec![d(r), None, None])
}

/// `v[begin:end]` of a 1-D tensor (`end` None: to the end).
fn slice_1d(b: &mut Builder<'_>, v: Output, begin: i32, end: Option<i32>) -> Result<Output> {
    let bg = b.const_i32(vec![begin])?;
    let en = b.const_i32(vec![end.unwrap_or(0)])?;
    let st = b.const_i32(vec![1])?;
    let end_mask = i64::from(end.is_none());
    b.op(
        "StridedSlice",
        &[v, bg, en, st],
        vec![("end_mask", AttrValue::Int(end_mask))],
    )
}

fn gather_nd(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (params, indices) = (n.inputs[0], n.inputs[1]);
    let ps = b.shape(params)?;
    let ps = b.cast(ps, b.dtype(indices))?;
    let r = b.op("ScatterNd", &[indices, g0(g), ps], vec![])?;
    Ok(vec![d(r), None])
}

/// UnsortedSegmentSum: each data row receives its segment's gradient; rows
/// with a negative id (dropped by the op) receive zeros.
fn unsorted_segment_sum(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let ids = n.inputs[1];
    let zero = b.scalar(b.dtype(ids), 0.0)?;
    let clipped = b.binary("Maximum", ids, zero)?;
    let axis0 = b.scalar_i32(0)?;
    let gathered = b.op("GatherV2", &[grad, clipped, axis0], vec![])?;
    let keep = b.binary("GreaterEqual", ids, zero)?;
    // ids.shape + [1] * (rank(gathered) - rank(ids)), so `keep` broadcasts.
    let ids_shape = b.shape(ids)?;
    let gr = b.rank(gathered)?;
    let ir = b.rank(ids)?;
    let extra = b.sub(gr, ir)?;
    let extra = b.pack(&[extra], 0)?;
    let one = b.scalar_i32(1)?;
    let ones = b.fill(extra, one)?;
    let axis0 = b.scalar_i32(0)?;
    let s = b.concat(&[ids_shape, ones], axis0)?;
    let keep = b.reshape(keep, s)?;
    let zeros = b.zeros_like(gathered)?;
    let r = b.select(keep, gathered, zeros)?;
    Ok(vec![d(r), None, None])
}

/// StridedSliceGrad is linear in `dy`: its gradient slices the incoming
/// gradient the same way.
fn strided_slice_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let mut attrs = Vec::new();
    for k in [
        "begin_mask",
        "end_mask",
        "ellipsis_mask",
        "new_axis_mask",
        "shrink_axis_mask",
    ] {
        attrs.push((k, AttrValue::Int(n.attrs.int_or(k, 0)?)));
    }
    let (bg, en, st) = (n.inputs[1], n.inputs[2], n.inputs[3]);
    let r = b.op("StridedSlice", &[g0(g), bg, en, st], attrs)?;
    Ok(vec![None, None, None, None, d(r)])
}

/// ScatterNd: each update receives the gradient at its index.
fn scatter_nd(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let r = b.op("GatherNd", &[g0(g), n.inputs[0]], vec![])?;
    Ok(vec![None, d(r), None])
}

/// ExtractVolumePatches: windows of voxel numbers (1-based, so padding reads
/// 0 and becomes the dropped segment -1) index an `UnsortedSegmentSum` of
/// the incoming gradient over voxels (TensorFlow builds the same mapping
/// and applies it as a sparse matmul).
fn extract_volume_patches(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let dy = try_g0(g)?;
    let x = n.inputs[0];
    let attrs = attrs_of(n, &["ksizes", "strides", "padding"]);
    let shape = b.shape(x)?; // [batch, planes, rows, cols, depth]
    let mut at = Vec::with_capacity(5);
    for i in 0..5 {
        at.push(b.element(shape, i)?);
    }
    let (batch, depth) = (at[0], at[4]);
    let pr = b.binary("Mul", at[1], at[2])?;
    let voxels = b.binary("Mul", pr, at[3])?;
    let one = b.scalar(DType::Int64, 1.0)?;
    let voxels64 = b.cast(voxels, DType::Int64)?;
    let limit = b.add(voxels64, one)?;
    let numbers = b.op(
        "Range",
        &[one, limit, one],
        vec![("Tidx", AttrValue::Type(DType::Int64))],
    )?;
    let one32 = b.scalar_i32(1)?;
    let vol_shape = b.pack(&[one32, at[1], at[2], at[3], one32], 0)?;
    let numbers = b.reshape(numbers, vol_shape)?;
    let windows = b.op("ExtractVolumePatches", &[numbers], attrs)?;
    let ids = b.sub(windows, one)?;
    let flat = b.const_i32(vec![-1])?;
    let ids = b.reshape(ids, flat)?;
    // dy: [batch, op, or, oc, kp*kr*kc*depth] -> [positions, batch, depth].
    let minus1 = b.scalar_i32(-1)?;
    let by_pos = b.pack(&[batch, minus1, depth], 0)?;
    let dy3 = b.reshape(dy, by_pos)?;
    let perm = b.const_i32(vec![1, 0, 2])?;
    let dy3 = b.transpose(dy3, perm)?;
    let summed = b.op("UnsortedSegmentSum", &[dy3, ids, voxels], vec![])?;
    let summed = b.transpose(summed, perm)?;
    let dx = b.reshape(summed, shape)?;
    Ok(vec![d(dx)])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("UnsortedSegmentSum", GradEntry::Func(unsorted_segment_sum));
    reg("StridedSliceGrad", GradEntry::Func(strided_slice_grad));
    reg("ScatterNd", GradEntry::Func(scatter_nd));
    reg("Slice", GradEntry::Func(slice));
    reg("StridedSlice", GradEntry::Func(strided_slice));
    reg("GatherV2", GradEntry::Func(gather));
    reg("GatherNd", GradEntry::Func(gather_nd));
    reg(
        "ExtractVolumePatches",
        GradEntry::Func(extract_volume_patches),
    );
}
