//! Gradients of the ops that rearrange whole tensors: `Transpose`,
//! `ConcatV2`, `Pack`/`Unpack`, `Split`/`SplitV`, `Tile`, the pads (and
//! `MirrorPadGrad`), `ReverseV2`, `BroadcastTo`, `Roll` (rolls back),
//! `ReverseSequence` (reverses again) and the space/batch ops (each the
//! other's transpose), in TensorFlow's formulas (`array_grad.py`,
//! `manip_grad.py`).

use super::{attrs_of, d, g0, try_g0, R};
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Result};

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

/// Roll(x, shift, axis): Roll(g, -shift, axis).
fn roll(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = try_g0(g)?;
    let back = b.neg(n.inputs[1])?;
    let dx = b.op("Roll", &[g, back, n.inputs[2]], vec![])?;
    Ok(vec![d(dx), None, None])
}

/// ReverseSequence(x, lengths) is its own inverse.
fn reverse_sequence(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = try_g0(g)?;
    let attrs = attrs_of(n, &["seq_dim", "batch_dim"]);
    let dx = b.op("ReverseSequence", &[g, n.inputs[1]], attrs)?;
    Ok(vec![d(dx), None])
}

/// SpaceToBatchND and BatchToSpaceND (with the same block shape and
/// paddings/crops) are each other's transposes; so are the 4-D forms.
fn space_batch(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = try_g0(g)?;
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

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("MirrorPad", GradEntry::Func(mirror_pad));
    reg("MirrorPadGrad", GradEntry::Func(mirror_pad_grad));
    reg("Transpose", GradEntry::Func(transpose));
    reg("ConcatV2", GradEntry::Func(concat));
    reg("Pack", GradEntry::Func(pack));
    reg("Unpack", GradEntry::Func(unpack));
    reg("Split", GradEntry::Func(split));
    reg("SplitV", GradEntry::Func(split_v));
    reg("Tile", GradEntry::Func(tile));
    for op in ["Pad", "PadV2"] {
        reg(op, GradEntry::Func(pad));
    }
    reg("ReverseV2", GradEntry::Func(reverse));
    reg("BroadcastTo", GradEntry::Func(broadcast_to));
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
}
