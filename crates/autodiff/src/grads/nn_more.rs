//! Gradients of the 3-D convolution and pooling ops, `Dilation2D` and
//! `CTCLoss`, in TensorFlow's formulas (`nn_grad.py`): each convolution's
//! gradient is the op that is its transpose; pooling gradients are their
//! `...Grad` ops (and those of the max pool's grad each other); CTC's is the
//! loss gradient times the op's second output. The decoders and the
//! dilation backprops have none, as in TensorFlow.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

const CONV_ATTRS: &[&str] = &["strides", "padding", "dilations", "data_format"];
const POOL_ATTRS: &[&str] = &["ksize", "strides", "padding", "data_format"];
const DILATION_ATTRS: &[&str] = &["strides", "rates", "padding"];

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

/// Conv3D(x, w): dx = Conv3DBackpropInputV2(shape(x), w, g),
/// dw = Conv3DBackpropFilterV2(x, shape(w), g).
fn conv3d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, w) = (n.inputs[0], n.inputs[1]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let ws = b.shape(w)?;
    let dx = b.op("Conv3DBackpropInputV2", &[xs, w, g], attrs.clone())?;
    let dw = b.op("Conv3DBackpropFilterV2", &[x, ws, g], attrs)?;
    Ok(vec![d(dx), d(dw)])
}

/// Conv3DBackpropInputV2(sizes, w, dy) is linear in w and dy.
fn conv3d_backprop_input(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (w, dy) = (n.inputs[1], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let ws = b.shape(w)?;
    let dw = b.op("Conv3DBackpropFilterV2", &[g, ws, dy], attrs.clone())?;
    let ddy = b.op("Conv3D", &[g, w], attrs)?;
    Ok(vec![None, d(dw), d(ddy)])
}

/// Conv3DBackpropFilterV2(x, sizes, dy) is linear in x and dy.
fn conv3d_backprop_filter(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, dy) = (n.inputs[0], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let dx = b.op("Conv3DBackpropInputV2", &[xs, g, dy], attrs.clone())?;
    let ddy = b.op("Conv3D", &[x, g], attrs)?;
    Ok(vec![d(dx), None, d(ddy)])
}

fn max_pool3d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let y = Output::new(n.id, 0);
    let dx = b.op(
        "MaxPool3DGrad",
        &[n.inputs[0], y, g],
        attrs_of(n, POOL_ATTRS),
    )?;
    Ok(vec![d(dx)])
}

/// MaxPool3DGrad and MaxPool3DGradGrad are linear in their last input and
/// each other's transposes.
fn max_pool3d_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, y) = (n.inputs[0], n.inputs[1]);
    let other = if n.op == "MaxPool3DGrad" {
        "MaxPool3DGradGrad"
    } else {
        "MaxPool3DGrad"
    };
    let dg = b.op(other, &[x, y, g], attrs_of(n, POOL_ATTRS))?;
    let zx = b.zeros_like(x)?;
    let zy = b.zeros_like(y)?;
    Ok(vec![d(zx), d(zy), d(dg)])
}

fn avg_pool3d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let xs = b.shape(n.inputs[0])?;
    let dx = b.op("AvgPool3DGrad", &[xs, g], attrs_of(n, POOL_ATTRS))?;
    Ok(vec![d(dx)])
}

fn avg_pool3d_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let dy = b.op("AvgPool3D", &[g], attrs_of(n, POOL_ATTRS))?;
    Ok(vec![None, d(dy)])
}

/// Dilation2D(x, w): its two backprop ops.
fn dilation2d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, w) = (n.inputs[0], n.inputs[1]);
    let attrs = attrs_of(n, DILATION_ATTRS);
    let dx = b.op("Dilation2DBackpropInput", &[x, w, g], attrs.clone())?;
    let dw = b.op("Dilation2DBackpropFilter", &[x, w, g], attrs)?;
    Ok(vec![d(dx), d(dw)])
}

/// CTCLoss: `expand_dims(grad_loss, -1) * gradient` for the logits (the
/// second output does not propagate gradient further), none for the labels
/// and lengths.
fn ctc_loss(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let Some(gl) = g[0] else {
        return Ok(vec![None, None, None, None]);
    };
    let grad = b.op("StopGradient", &[Output::new(n.id, 1)], vec![])?;
    let ax = b.scalar_i32(-1)?;
    let col = b.op("ExpandDims", &[gl, ax], vec![])?;
    let dx = b.mul(col, grad)?;
    Ok(vec![d(dx), None, None, None])
}

/// FractionalMaxPool: FractionalMaxPoolGrad(x, y, g, rows, cols).
fn fractional_max_pool(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let out = |i| Output::new(n.id, i);
    let dx = b.op(
        "FractionalMaxPoolGrad",
        &[n.inputs[0], out(0), g, out(1), out(2)],
        attrs_of(n, &["overlapping"]),
    )?;
    Ok(vec![d(dx)])
}

/// FractionalAvgPool: FractionalAvgPoolGrad(shape(x), g, rows, cols).
fn fractional_avg_pool(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let xs = b.node(
        "Shape",
        &[n.inputs[0]],
        vec![("out_type", AttrValue::Type(ferroflow_tensor::DType::Int64))],
    )?;
    let xs = Output::new(xs, 0);
    let dx = b.op(
        "FractionalAvgPoolGrad",
        &[xs, g, Output::new(n.id, 1), Output::new(n.id, 2)],
        attrs_of(n, &["overlapping"]),
    )?;
    Ok(vec![d(dx)])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("Conv3D", GradEntry::Func(conv3d));
    reg(
        "Conv3DBackpropInputV2",
        GradEntry::Func(conv3d_backprop_input),
    );
    reg(
        "Conv3DBackpropFilterV2",
        GradEntry::Func(conv3d_backprop_filter),
    );
    reg("MaxPool3D", GradEntry::Func(max_pool3d));
    reg("MaxPool3DGrad", GradEntry::Func(max_pool3d_grad));
    reg("MaxPool3DGradGrad", GradEntry::Func(max_pool3d_grad));
    reg("AvgPool3D", GradEntry::Func(avg_pool3d));
    reg("AvgPool3DGrad", GradEntry::Func(avg_pool3d_grad));
    reg("Dilation2D", GradEntry::Func(dilation2d));
    reg("CTCLoss", GradEntry::Func(ctc_loss));
    reg("CTCGreedyDecoder", GradEntry::NotDifferentiable);
    reg("CTCBeamSearchDecoder", GradEntry::NotDifferentiable);
    reg("FractionalMaxPool", GradEntry::Func(fractional_max_pool));
    reg("FractionalAvgPool", GradEntry::Func(fractional_avg_pool));
}
