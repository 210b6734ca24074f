//! Gradients of shape and data-movement ops.

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

/// Reshape back to input 0's shape; other inputs get none.
fn reshape_like_input(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let s = b.shape(n.inputs[0])?;
    let r = b.reshape(g0(g), s)?;
    let mut out = vec![d(r)];
    out.extend(std::iter::repeat_n(None, n.inputs.len() - 1));
    Ok(out)
}

/// Input 0 receives the gradient unchanged; others none.
fn pass_through(_: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let mut out = vec![d(g0(g))];
    out.extend(std::iter::repeat_n(None, n.inputs.len() - 1));
    Ok(out)
}

fn transpose(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let inv = b.op("InvertPermutation", &[n.inputs[1]], vec![])?;
    let r = b.transpose(g0(g), inv)?;
    Ok(vec![d(r), None])
}

/// Splits the gradient into the pieces each input contributed along `axis`.
fn concat(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let k = n.inputs.len() - 1;
    let axis = n.inputs[k];
    let values = &n.inputs[..k];
    let g = g0(g);
    let rank = b.rank(g)?;
    // Non-negative axis: (axis % rank); the axis may be int64.
    let axis = b.cast(axis, DType::Int32)?;
    let ax = b.binary("FloorMod", axis, rank)?;
    let mut sizes = Vec::with_capacity(k);
    for &v in values {
        let s = b.shape(v)?;
        let zero = b.scalar_i32(0)?;
        sizes.push(b.op("GatherV2", &[s, ax, zero], vec![])?);
    }
    let sizes = b.pack(&sizes, 0)?;
    let id = b.node(
        "SplitV",
        &[g, sizes, ax],
        vec![("num_split", AttrValue::Int(k as i64))],
    )?;
    let mut out: Vec<Option<Grad>> = (0..k).map(|i| d(Output::new(id, i))).collect();
    out.push(None);
    Ok(out)
}

fn pack(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let axis = n.attrs.int_or("axis", 0)?;
    let num = n.inputs.len() as i64;
    let id = b.node(
        "Unpack",
        &[g0(g)],
        vec![("num", AttrValue::Int(num)), ("axis", AttrValue::Int(axis))],
    )?;
    Ok((0..n.inputs.len()).map(|i| d(Output::new(id, i))).collect())
}

/// Gradients of a multi-output op, with zeros for outputs that got none.
fn filled(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> Result<Vec<Output>> {
    (0..n.outputs.len())
        .map(|i| match g[i] {
            Some(o) => Ok(o),
            None => b.zeros_like(Output::new(n.id, i)),
        })
        .collect()
}

fn unpack(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let axis = n.attrs.int_or("axis", 0)?;
    let parts = filled(b, n, g)?;
    Ok(vec![d(b.pack(&parts, axis)?)])
}

fn split(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let parts = filled(b, n, g)?;
    let r = b.concat(&parts, n.inputs[0])?;
    Ok(vec![None, d(r)])
}

fn split_v(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let parts = filled(b, n, g)?;
    let r = b.concat(&parts, n.inputs[2])?;
    Ok(vec![d(r), None, None])
}

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

fn tile(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    // Reshape the gradient to [m0, d0, m1, d1, ...] and sum over the m axes.
    let (x, multiples) = (n.inputs[0], n.inputs[1]);
    let xs = b.shape(x)?;
    let m = b.cast(multiples, DType::Int32)?;
    let split = b.pack(&[m, xs], 1)?;
    let flat = b.const_i32(vec![-1])?;
    let split = b.reshape(split, flat)?;
    let rank = b.size(xs)?;
    let zero = b.scalar_i32(0)?;
    let two = b.scalar_i32(2)?;
    let r2 = b.mul(rank, two)?;
    let axes = b.op(
        "Range",
        &[zero, r2, two],
        vec![("Tidx", AttrValue::Type(DType::Int32))],
    )?;
    let gr = b.reshape(g0(g), split)?;
    let r = b.sum(gr, axes, false)?;
    Ok(vec![d(r), None])
}

fn pad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let (x, paddings) = (n.inputs[0], n.inputs[1]);
    let zero = b.const_i32(vec![0, 0])?;
    let size = b.const_i32(vec![-1, 1])?;
    let p = b.cast(paddings, DType::Int32)?;
    let before = b.op("Slice", &[p, zero, size], vec![])?;
    let flat = b.const_i32(vec![-1])?;
    let before = b.reshape(before, flat)?;
    let xs = b.shape(x)?;
    let r = b.op("Slice", &[g0(g), before, xs], vec![])?;
    let mut out = vec![d(r), None];
    if n.inputs.len() == 3 {
        out.push(None);
    }
    Ok(out)
}

fn reverse(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let r = b.op("ReverseV2", &[g0(g), n.inputs[1]], vec![])?;
    Ok(vec![d(r), None])
}

fn broadcast_to(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let x = n.inputs[0];
    let xs = b.shape(x)?;
    let out_shape = b.cast(n.inputs[1], DType::Int32)?;
    let args = b.node("BroadcastGradientArgs", &[xs, out_shape], vec![])?;
    let r = b.sum_to_shape(g0(g), Output::new(args, 0), xs)?;
    Ok(vec![d(r), None])
}

fn fill(b: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let rank = b.rank(g)?;
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let axes = b.op(
        "Range",
        &[zero, rank, one],
        vec![("Tidx", AttrValue::Type(DType::Int32))],
    )?;
    let r = b.sum(g, axes, false)?;
    Ok(vec![None, d(r)])
}

/// CheckNumerics passes the gradient through, checked too (as TensorFlow).
fn check_numerics(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let msg = n.attrs.str_or("message", "")?;
    let msg = format!("Not a number (NaN) or infinity (Inf) values detected in gradient. {msg}");
    let r = b.op(
        "CheckNumerics",
        &[g0(g)],
        vec![("message", AttrValue::Str(msg.into_bytes()))],
    )?;
    Ok(vec![d(r)])
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

fn mirror_pad_mode(n: &Node) -> Result<Vec<(&'static str, AttrValue)>> {
    let mode = n.attrs.str_or("mode", "REFLECT")?;
    Ok(vec![("mode", AttrValue::Str(mode.into_bytes()))])
}

/// MirrorPad: padded positions add their gradient to the elements they copy.
fn mirror_pad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let attrs = mirror_pad_mode(n)?;
    let r = b.op("MirrorPadGrad", &[g0(g), n.inputs[1]], attrs)?;
    Ok(vec![d(r), None])
}

/// MirrorPadGrad is linear: its gradient mirror-pads the incoming gradient.
fn mirror_pad_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let attrs = mirror_pad_mode(n)?;
    let r = b.op("MirrorPad", &[g0(g), n.inputs[1]], attrs)?;
    Ok(vec![d(r), None])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("CheckNumerics", GradEntry::Func(check_numerics));
    reg("UnsortedSegmentSum", GradEntry::Func(unsorted_segment_sum));
    reg("StridedSliceGrad", GradEntry::Func(strided_slice_grad));
    reg("ScatterNd", GradEntry::Func(scatter_nd));
    reg("MirrorPad", GradEntry::Func(mirror_pad));
    reg("MirrorPadGrad", GradEntry::Func(mirror_pad_grad));
    for op in ["Reshape", "ExpandDims", "Squeeze"] {
        reg(op, GradEntry::Func(reshape_like_input));
    }
    // (No PreventGradient here: TF's gradient of it raises LookupError, and
    // the graph has no such op yet.)
    for op in ["PlaceholderWithDefault", "Print"] {
        reg(op, GradEntry::Func(pass_through));
    }
    reg("Transpose", GradEntry::Func(transpose));
    reg("ConcatV2", GradEntry::Func(concat));
    reg("Pack", GradEntry::Func(pack));
    reg("Unpack", GradEntry::Func(unpack));
    reg("Split", GradEntry::Func(split));
    reg("SplitV", GradEntry::Func(split_v));
    reg("Slice", GradEntry::Func(slice));
    reg("StridedSlice", GradEntry::Func(strided_slice));
    reg("GatherV2", GradEntry::Func(gather));
    reg("GatherNd", GradEntry::Func(gather_nd));
    reg("Tile", GradEntry::Func(tile));
    for op in ["Pad", "PadV2"] {
        reg(op, GradEntry::Func(pad));
    }
    reg("ReverseV2", GradEntry::Func(reverse));
    reg("BroadcastTo", GradEntry::Func(broadcast_to));
    reg("Fill", GradEntry::Func(fill));
}
