//! Gradients of the array ops, along the seams of the op definitions
//! (`ferroflow_graph`'s `ops/array/`) and their kernels:
//!
//! * `layout`: whole tensors rearranged (transpose, concat/split,
//!   pack/unpack, tile, the pads, reverses, roll, broadcast_to, the
//!   space/batch ops);
//! * `indexing`: parts chosen or written by position (slice, strided slice,
//!   the gathers and scatters, `UnsortedSegmentSum`, the volume patches);
//! * this module: the helpers both use, the reshapes (`Reshape`,
//!   `ExpandDims`, `Squeeze`), the pass-throughs (`PlaceholderWithDefault`,
//!   `Print`, `IdentityN`, `EnsureShape`, `CheckNumerics`), and the two
//!   seams too small for a file of their own: `Fill` (the sum of its
//!   gradient) and `EditDistance` (not differentiable, in `search`'s seam).
//!   The other fill and search ops have no gradient (`NOT_DIFFERENTIABLE` in
//!   `grads/mod.rs`, or none, as in TensorFlow).

mod indexing;
mod layout;

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::{DType, Error, Result};

type R = Result<Vec<Option<Grad>>>;

/// The gradient of output 0, which these gradient functions expect.
fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("called with an output gradient")
}

/// [`g0`], with a missing gradient reported as an internal error instead
/// of a panic.
fn try_g0(grads: &[Option<Output>]) -> Result<Output> {
    grads[0].ok_or_else(|| Error::internal("gradient function called without dy"))
}

/// The node's attributes among `names`, for the gradient op.
fn attrs_of(n: &Node, names: &[&'static str]) -> Vec<(&'static str, AttrValue)> {
    names
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect()
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

/// IdentityN passes each gradient through.
fn identity_n(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(g.iter().map(|o| o.map(Grad::Dense)).collect())
}

/// EnsureShape passes the gradient through.
fn ensure_shape(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![g[0].map(Grad::Dense)])
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

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    layout::register(reg);
    indexing::register(reg);
    reg("CheckNumerics", GradEntry::Func(check_numerics));
    for op in ["Reshape", "ExpandDims", "Squeeze"] {
        reg(op, GradEntry::Func(reshape_like_input));
    }
    // (No PreventGradient here: TF's gradient of it raises LookupError, and
    // the graph has no such op yet.)
    for op in ["PlaceholderWithDefault", "Print"] {
        reg(op, GradEntry::Func(pass_through));
    }
    reg("Fill", GradEntry::Func(fill));
    reg("IdentityN", GradEntry::Func(identity_n));
    reg("EnsureShape", GradEntry::Func(ensure_shape));
    reg("EditDistance", GradEntry::NotDifferentiable);
}
