//! Gradients of TensorFlow's ragged ops, built as TensorFlow's
//! `ragged_tensor.py`, `ragged_conversion_ops.py` and `ragged_gather_ops.py`
//! build them: `RaggedTensorToSparse` (the sparse values' gradient is the flat
//! values'), `RaggedTensorToTensor` (the values' gradient as rows picked out of the
//! output gradient, the default's as the sum of the padded positions) and
//! `RaggedGather` (the gathered values' gradient sent back to the positions
//! they came from). Row partitions and indices get none.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::{DType, Result};

type R = Result<Vec<Option<Grad>>>;

/// `v[begin:end]` of a vector (`end` None: to the end).
fn slice_1d(b: &mut Builder<'_>, v: Output, begin: i32, end: Option<i32>) -> Result<Output> {
    let bg = b.const_i32(vec![begin])?;
    let en = b.const_i32(vec![end.unwrap_or(0)])?;
    let st = b.const_i32(vec![1])?;
    b.op(
        "StridedSlice",
        &[v, bg, en, st],
        vec![("end_mask", AttrValue::Int(i64::from(end.is_none())))],
    )
}

/// The positions where the vector `mask` holds, as an int64 vector.
fn true_positions(b: &mut Builder<'_>, mask: Output) -> Result<Output> {
    let w = b.op("Where", &[mask], vec![])?;
    let flat = b.const_i32(vec![-1])?;
    b.reshape(w, flat)
}

fn gather0(b: &mut Builder<'_>, params: Output, ids: Output) -> Result<Output> {
    let axis = b.scalar_i32(0)?;
    b.op("GatherV2", &[params, ids, axis], vec![])
}

fn ragged_tensor_to_tensor(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let parts = n.inputs.len() - 3;
    let Some(grad) = g[0] else {
        return Ok(vec![None; n.inputs.len()]);
    };
    let (values, default) = (n.inputs[1], n.inputs[2]);
    let types = match n.attrs.get("row_partition_types") {
        Some(AttrValue::StrList(v)) => v.clone(),
        _ => Vec::new(),
    };
    let ragged_rank = types
        .iter()
        .filter(|t| t.as_slice() != b"FIRST_DIM_SIZE")
        .count() as i32;
    // indices[cell] = the value that filled an outer cell of the output, or -1 for the default.
    let gshape = b.shape(grad)?;
    let outer = slice_1d(b, gshape, 0, Some(1 + ragged_rank))?;
    let vshape = b.shape(values)?;
    let nvals = slice_1d(b, vshape, 0, Some(1))?;
    let scalar = b.const_i32(vec![])?;
    let nvals = b.reshape(nvals, scalar)?;
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let ids = b.op("Range", &[zero, nvals, one], vec![])?;
    let minus_one = b.scalar_i32(-1)?;
    let mut inputs = vec![outer, ids, minus_one];
    inputs.extend_from_slice(&n.inputs[3..]);
    let index_type = n
        .attrs
        .get("Tindex")
        .cloned()
        .unwrap_or(AttrValue::Type(DType::Int64));
    let indices = b.op(
        "RaggedTensorToTensor",
        &inputs,
        vec![
            ("T", AttrValue::Type(DType::Int32)),
            ("Tindex", index_type),
            ("Tshape", AttrValue::Type(DType::Int32)),
            ("num_row_partition_tensors", AttrValue::Int(parts as i64)),
            ("row_partition_types", AttrValue::StrList(types)),
        ],
    )?;
    let flat = b.const_i32(vec![-1])?;
    let indices = b.reshape(indices, flat)?;
    let filled = b.binary("NotEqual", indices, minus_one)?;
    // The gradient's outer cells as rows of items.
    let inner = slice_1d(b, gshape, 1 + ragged_rank, None)?;
    let axis0 = b.scalar_i32(0)?;
    let rows_shape = b.concat(&[flat, inner], axis0)?;
    let rows = b.reshape(grad, rows_shape)?;
    let kept = true_positions(b, filled)?;
    let value_rows = gather0(b, rows, kept)?;
    let value_ids = gather0(b, indices, kept)?;
    let padded = b.unary("LogicalNot", filled)?;
    let padded = true_positions(b, padded)?;
    let default_rows = gather0(b, rows, padded)?;
    // The default was broadcast to every padded item: sum over the padded cells and the leading item
    // dimensions the default lacks.
    let default_shape = b.shape(default)?;
    let rank_rows = b.rank(default_rows)?;
    let rank_default = b.rank(default)?;
    let lead = b.sub(rank_rows, rank_default)?;
    let axes = b.op("Range", &[zero, lead, one], vec![])?;
    let summed = b.sum(default_rows, axes, false)?;
    // Item dimensions of size 1 in the default were broadcast too.
    let summed_shape = b.shape(summed)?;
    let reduce = b.op(
        "BroadcastGradientArgs",
        &[default_shape, summed_shape],
        vec![],
    )?;
    let default_grad = b.sum_to_shape(summed, reduce, default_shape)?;
    let mut out = vec![
        None,
        Some(Grad::Sparse {
            values: value_rows,
            indices: value_ids,
            dense_shape: vshape,
        }),
        d(default_grad),
    ];
    out.extend((0..parts).map(|_| None));
    Ok(out)
}

fn ragged_gather(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let k = n.inputs.len() - 2;
    let none = || vec![None; n.inputs.len()];
    let Some(&Some(grad)) = g.last() else {
        return Ok(none());
    };
    let (values, indices) = (n.inputs[k], n.inputs[k + 1]);
    // combined[i]..combined[i + 1]: the flat values of params row i.
    let mut combined = n.inputs[0];
    for &s in &n.inputs[1..k] {
        combined = gather0(b, s, combined)?;
    }
    let flat = b.const_i32(vec![-1])?;
    let rows = b.reshape(indices, flat)?;
    let splits_type = b.dtype(combined);
    let rows = b.cast(rows, splits_type)?;
    let starts = gather0(b, combined, rows)?;
    let ends = slice_1d(b, combined, 1, None)?;
    let limits = gather0(b, ends, rows)?;
    let step = b.scalar(splits_type, 1.0)?;
    let range = b.node(
        "RaggedRange",
        &[starts, limits, step],
        vec![
            ("T", AttrValue::Type(splits_type)),
            ("Tsplits", AttrValue::Type(DType::Int64)),
        ],
    )?;
    let positions = Output::new(range, 1);
    let vshape = b.shape(values)?;
    let mut out: Vec<Option<Grad>> = (0..k).map(|_| None).collect();
    out.push(Some(Grad::Sparse {
        values: grad,
        indices: positions,
        dense_shape: vshape,
    }));
    out.push(None);
    Ok(out)
}

/// `RaggedTensorToSparse`: the sparse values are the flat values in order, so
/// their gradient, reshaped, is the flat values'.
fn ragged_tensor_to_sparse(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let k = n.inputs.len() - 1;
    let mut out: Vec<Option<Grad>> = (0..k).map(|_| None).collect();
    match g.get(1).copied().flatten() {
        Some(values_grad) => {
            let shape = b.shape(n.inputs[k])?;
            out.push(d(b.reshape(values_grad, shape)?));
        }
        None => out.push(None),
    }
    Ok(out)
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg(
        "RaggedTensorToSparse",
        GradEntry::Func(ragged_tensor_to_sparse),
    );
    reg(
        "RaggedTensorToTensor",
        GradEntry::Func(ragged_tensor_to_tensor),
    );
    reg("RaggedGather", GradEntry::Func(ragged_gather));
}
