//! Gradients of convolution and pooling (NHWC), in TensorFlow's formulas:
//! each op's gradient is the op that is its transpose, so second
//! derivatives and `conv2d_transpose` come out of the same kernels.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

const CONV_ATTRS: &[&str] = &[
    "strides",
    "padding",
    "dilations",
    "explicit_paddings",
    "data_format",
    "use_cudnn_on_gpu",
];

const POOL_ATTRS: &[&str] = &[
    "ksize",
    "strides",
    "padding",
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

/// Conv2D(x, w): dx = Conv2DBackpropInput(shape(x), w, g),
/// dw = Conv2DBackpropFilter(x, shape(w), g).
fn conv2d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, w) = (n.inputs[0], n.inputs[1]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let ws = b.shape(w)?;
    let dx = b.op("Conv2DBackpropInput", &[xs, w, g], attrs.clone())?;
    let dw = b.op("Conv2DBackpropFilter", &[x, ws, g], attrs)?;
    Ok(vec![d(dx), d(dw)])
}

/// Conv2DBackpropInput(sizes, w, dy) is linear in w and dy:
/// (None, Conv2DBackpropFilter(g, shape(w), dy), Conv2D(g, w)).
fn conv2d_backprop_input(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (w, dy) = (n.inputs[1], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let ws = b.shape(w)?;
    let dw = b.op("Conv2DBackpropFilter", &[g, ws, dy], attrs.clone())?;
    let ddy = b.op("Conv2D", &[g, w], attrs)?;
    Ok(vec![None, d(dw), d(ddy)])
}

/// Conv2DBackpropFilter(x, sizes, dy):
/// (Conv2DBackpropInput(shape(x), g, dy), None, Conv2D(x, g)).
fn conv2d_backprop_filter(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, dy) = (n.inputs[0], n.inputs[2]);
    let attrs = attrs_of(n, CONV_ATTRS);
    let xs = b.shape(x)?;
    let dx = b.op("Conv2DBackpropInput", &[xs, g, dy], attrs.clone())?;
    let ddy = b.op("Conv2D", &[x, g], attrs)?;
    Ok(vec![d(dx), None, d(ddy)])
}

fn max_pool(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let y = Output::new(n.id, 0);
    let dx = b.op("MaxPoolGrad", &[n.inputs[0], y, g], attrs_of(n, POOL_ATTRS))?;
    Ok(vec![d(dx)])
}

/// MaxPoolGrad and MaxPoolGradGrad are linear in their last input and
/// transposes of each other; the pooled values only pick positions.
fn max_pool_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let (x, y) = (n.inputs[0], n.inputs[1]);
    let other = if n.op == "MaxPoolGrad" {
        "MaxPoolGradGrad"
    } else {
        "MaxPoolGrad"
    };
    let dg = b.op(other, &[x, y, g], attrs_of(n, POOL_ATTRS))?;
    let zx = b.zeros_like(x)?;
    let zy = b.zeros_like(y)?;
    Ok(vec![d(zx), d(zy), d(dg)])
}

fn avg_pool(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let xs = b.shape(n.inputs[0])?;
    let dx = b.op("AvgPoolGrad", &[xs, g], attrs_of(n, POOL_ATTRS))?;
    Ok(vec![d(dx)])
}

fn avg_pool_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let dy = b.op("AvgPool", &[g], attrs_of(n, POOL_ATTRS))?;
    Ok(vec![None, d(dy)])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("Conv2D", GradEntry::Func(conv2d));
    reg(
        "Conv2DBackpropInput",
        GradEntry::Func(conv2d_backprop_input),
    );
    reg(
        "Conv2DBackpropFilter",
        GradEntry::Func(conv2d_backprop_filter),
    );
    reg("MaxPool", GradEntry::Func(max_pool));
    reg("MaxPoolGrad", GradEntry::Func(max_pool_grad));
    reg("MaxPoolGradGrad", GradEntry::Func(max_pool_grad));
    reg("AvgPool", GradEntry::Func(avg_pool));
    reg("AvgPoolGrad", GradEntry::Func(avg_pool_grad));
}
