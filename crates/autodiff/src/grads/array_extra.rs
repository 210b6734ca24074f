//! Gradients of the remaining array ops, in TensorFlow's formulas
//! (`array_grad.py`, `manip_grad.py`, `check_ops.py`): `Roll` rolls back,
//! `ReverseSequence` reverses again, the space/batch ops are each other's
//! transposes, `IdentityN` and `EnsureShape` pass gradients through, and
//! `ExtractVolumePatches` scatters each window element back to its voxel.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::{DType, Error, Result};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Result<Output> {
    grads[0].ok_or_else(|| Error::internal("gradient function called without dy"))
}

/// The node's attributes among `names`, for the gradient op.
fn attrs_of(n: &Node, names: &[&'static str]) -> Vec<(&'static str, AttrValue)> {
    names
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect()
}

/// Roll(x, shift, axis): Roll(g, -shift, axis).
fn roll(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g)?;
    let back = b.neg(n.inputs[1])?;
    let dx = b.op("Roll", &[g, back, n.inputs[2]], vec![])?;
    Ok(vec![d(dx), None, None])
}

/// ReverseSequence(x, lengths) is its own inverse.
fn reverse_sequence(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g)?;
    let attrs = attrs_of(n, &["seq_dim", "batch_dim"]);
    let dx = b.op("ReverseSequence", &[g, n.inputs[1]], attrs)?;
    Ok(vec![d(dx), None])
}

/// SpaceToBatchND and BatchToSpaceND (with the same block shape and
/// paddings/crops) are each other's transposes; so are the 4-D forms.
fn space_batch(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g)?;
    match n.op.as_str() {
        "SpaceToBatchND" | "BatchToSpaceND" => {
            let other = if n.op == "SpaceToBatchND" {
                "BatchToSpaceND"
            } else {
                "SpaceToBatchND"
            };
            let dx = b.op(other, &[g, n.inputs[1], n.inputs[2]], vec![])?;
            Ok(vec![d(dx), None, None])
        }
        _ => {
            let other = if n.op == "SpaceToBatch" {
                "BatchToSpace"
            } else {
                "SpaceToBatch"
            };
            let dx = b.op(other, &[g, n.inputs[1]], attrs_of(n, &["block_size"]))?;
            Ok(vec![d(dx), None])
        }
    }
}

/// IdentityN passes each gradient through.
fn identity_n(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(g.iter().map(|o| o.map(Grad::Dense)).collect())
}

/// EnsureShape passes the gradient through.
fn ensure_shape(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![g[0].map(Grad::Dense)])
}

/// ExtractVolumePatches: windows of voxel numbers (1-based, so padding reads
/// 0 and becomes the dropped segment -1) index an `UnsortedSegmentSum` of
/// the incoming gradient over voxels (TensorFlow builds the same mapping
/// and applies it as a sparse matmul).
fn extract_volume_patches(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let dy = g0(g)?;
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

pub(crate) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("Roll", GradEntry::Func(roll));
    reg("ReverseSequence", GradEntry::Func(reverse_sequence));
    for op in [
        "SpaceToBatchND",
        "BatchToSpaceND",
        "SpaceToBatch",
        "BatchToSpace",
    ] {
        reg(op, GradEntry::Func(space_batch));
    }
    reg("IdentityN", GradEntry::Func(identity_n));
    reg("EnsureShape", GradEntry::Func(ensure_shape));
    reg(
        "ExtractVolumePatches",
        GradEntry::Func(extract_volume_patches),
    );
    reg("EditDistance", GradEntry::NotDifferentiable);
}
