//! Gradients of depthwise convolution and fused batch norm, in
//! TensorFlow's formulas (`nn_grad.py`): the depthwise ops' gradients are
//! each other's transposes, as for `Conv2D`; a fused batch norm's gradient
//! is its `FusedBatchNormGrad*` op; `LRN`'s is `LRNGrad`; `SpaceToDepth` and
//! `DepthToSpace` are each other's; max pooling with argmax scatters to and
//! gathers from the argmax.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

const CONV_ATTRS: &[&str] = &[
    "strides",
    "padding",
    "dilations",
    "explicit_paddings",
    "data_format",
];

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("called with an output gradient")
}

/// The node's attributes among `names`, for the gradient op.
fn attrs_of(n: &Node, names: &[&'static str]) -> Vec<(&'static str, AttrValue)> {
    names
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect()
}

/// DepthwiseConv2dNative(x, w): dx = BackpropInput(shape(x), w, g),
/// dw = BackpropFilter(x, shape(w), g).
fn depthwise(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, w) = (n.inputs[0], n.inputs[1]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let ws = b.shape(w)?;
    let dx = b.op(
        "DepthwiseConv2dNativeBackpropInput",
        &[xs, w, g],
        attrs.clone(),
    )?;
    let dw = b.op("DepthwiseConv2dNativeBackpropFilter", &[x, ws, g], attrs)?;
    Ok(vec![d(dx), d(dw)])
}

/// BackpropInput(sizes, w, dy) is linear in w and dy.
fn depthwise_backprop_input(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (w, dy) = (n.inputs[1], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let ws = b.shape(w)?;
    let dw = b.op(
        "DepthwiseConv2dNativeBackpropFilter",
        &[g, ws, dy],
        attrs.clone(),
    )?;
    let ddy = b.op("DepthwiseConv2dNative", &[g, w], attrs)?;
    Ok(vec![None, d(dw), d(ddy)])
}

/// BackpropFilter(x, sizes, dy) is linear in x and dy.
fn depthwise_backprop_filter(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, dy) = (n.inputs[0], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let dx = b.op(
        "DepthwiseConv2dNativeBackpropInput",
        &[xs, g, dy],
        attrs.clone(),
    )?;
    let ddy = b.op("DepthwiseConv2dNative", &[x, g], attrs)?;
    Ok(vec![d(dx), None, d(ddy)])
}

/// FusedBatchNorm*(x, scale, offset, mean, variance): (dx, dscale, doffset)
/// from the matching grad op; the statistics inputs get none, as in
/// TensorFlow. Training differentiates through the batch statistics
/// (reserve spaces); inference uses the given mean and variance.
fn fused_batch_norm(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let y = Output::new(n.id, 0);
    let gy = match g[0] {
        Some(gy) => gy,
        None => b.zeros_like(y)?,
    };
    let (x, scale) = (n.inputs[0], n.inputs[1]);
    let training = n.attrs.bool_or("is_training", true)?;
    let (m, v) = if training {
        (Output::new(n.id, 3), Output::new(n.id, 4))
    } else {
        (n.inputs[3], n.inputs[4])
    };
    let (op, mut inputs) = match n.op.as_str() {
        "FusedBatchNorm" => ("FusedBatchNormGrad", vec![gy, x, scale, m, v]),
        "FusedBatchNormV2" => ("FusedBatchNormGradV2", vec![gy, x, scale, m, v]),
        _ => ("FusedBatchNormGradV3", vec![gy, x, scale, m, v]),
    };
    if op == "FusedBatchNormGradV3" {
        inputs.push(Output::new(n.id, 5));
    }
    let attrs = attrs_of(n, &["epsilon", "data_format", "is_training"]);
    let id = b.node(op, &inputs, attrs)?;
    let out = |i| d(Output::new(id, i));
    Ok(vec![out(0), out(1), out(2), None, None])
}

/// LRN(x): LRNGrad(g, x, y) with the node's attrs.
fn lrn(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let y = Output::new(n.id, 0);
    let attrs = attrs_of(n, &["depth_radius", "bias", "alpha", "beta"]);
    let dx = b.op("LRNGrad", &[g, n.inputs[0], y], attrs)?;
    Ok(vec![d(dx)])
}

/// SpaceToDepth and DepthToSpace are permutations, each the other's inverse.
fn space_depth(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let other = if n.op == "SpaceToDepth" {
        "DepthToSpace"
    } else {
        "SpaceToDepth"
    };
    let dx = b.op(other, &[g], attrs_of(n, &["block_size", "data_format"]))?;
    Ok(vec![d(dx)])
}

const ARGMAX_ATTRS: &[&str] = &["ksize", "strides", "padding", "include_batch_in_index"];

/// MaxPoolWithArgmax(x): MaxPoolGradWithArgmax(x, g, argmax).
fn max_pool_with_argmax(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let x = n.inputs[0];
    let gy = match g[0] {
        Some(gy) => gy,
        None => return Ok(vec![None]),
    };
    let argmax = Output::new(n.id, 1);
    let attrs = attrs_of(n, ARGMAX_ATTRS);
    let dx = b.op("MaxPoolGradWithArgmax", &[x, gy, argmax], attrs)?;
    Ok(vec![d(dx)])
}

/// MaxPoolGradWithArgmax(x, grad, argmax) is linear in grad: its gradient
/// gathers at the argmax (MaxPoolGradGradWithArgmax); x gets zeros.
fn max_pool_grad_with_argmax(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, argmax) = (n.inputs[0], n.inputs[2]);
    let attrs = attrs_of(n, ARGMAX_ATTRS);
    let dgrad = b.op("MaxPoolGradGradWithArgmax", &[x, g, argmax], attrs)?;
    let zx = b.zeros_like(x)?;
    Ok(vec![d(zx), d(dgrad), None])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("DepthwiseConv2dNative", GradEntry::Func(depthwise));
    reg(
        "DepthwiseConv2dNativeBackpropInput",
        GradEntry::Func(depthwise_backprop_input),
    );
    reg(
        "DepthwiseConv2dNativeBackpropFilter",
        GradEntry::Func(depthwise_backprop_filter),
    );
    reg("LRN", GradEntry::Func(lrn));
    reg("MaxPoolWithArgmax", GradEntry::Func(max_pool_with_argmax));
    reg(
        "MaxPoolGradWithArgmax",
        GradEntry::Func(max_pool_grad_with_argmax),
    );
    reg("SpaceToDepth", GradEntry::Func(space_depth));
    reg("DepthToSpace", GradEntry::Func(space_depth));
    for op in ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"] {
        reg(op, GradEntry::Func(fused_batch_norm));
    }
}
