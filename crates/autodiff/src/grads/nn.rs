//! Gradients of softmax, bias_add and the fused cross-entropies.

use super::d;
use crate::builder::Builder;
use crate::registry::GradEntry;
use crate::Grad;
use ferroflow_graph::{AttrValue, AttrsExt, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("called with an output gradient")
}

fn last_axis(b: &mut Builder<'_>) -> Result<Output> {
    b.const_i32(vec![-1])
}

fn softmax(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    // (g - sum(g * s, -1, keepdims)) * s
    let s = Output::new(n.id, 0);
    let g = g0(g);
    let gs = b.mul(g, s)?;
    let ax = last_axis(b)?;
    let sum = b.sum(gs, ax, true)?;
    let t = b.sub(g, sum)?;
    Ok(vec![d(b.mul(t, s)?)])
}

fn log_softmax(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    // g - sum(g, -1, keepdims) * exp(logsoftmax)
    let ls = Output::new(n.id, 0);
    let g = g0(g);
    let ax = last_axis(b)?;
    let sum = b.sum(g, ax, true)?;
    let e = b.unary("Exp", ls)?;
    let t = b.mul(sum, e)?;
    Ok(vec![d(b.sub(g, t)?)])
}

fn bias_add(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let g = g0(g);
    let fmt = n.attrs.str_or("data_format", "NHWC")?;
    let gb = b.op(
        "BiasAddGrad",
        &[g],
        vec![("data_format", AttrValue::Str(fmt.into_bytes()))],
    )?;
    Ok(vec![d(g), d(gb)])
}

/// Loss gradient (a column) times the op's second output (softmax - labels).
fn xent_logits(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> Result<Output> {
    let backprop = Output::new(n.id, 1);
    let gl = match g[0] {
        Some(gl) => gl,
        None => return b.zeros_like(backprop),
    };
    let ax = b.scalar_i32(-1)?;
    let col = b.op("ExpandDims", &[gl, ax], vec![])?;
    b.mul(col, backprop)
}

fn softmax_xent(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let gx = xent_logits(b, n, g)?;
    // The labels' gradient: -g * log_softmax(logits).
    let gy = match g[0] {
        Some(gl) => {
            let ls = b.unary("LogSoftmax", n.inputs[0])?;
            let ax = b.scalar_i32(-1)?;
            let col = b.op("ExpandDims", &[gl, ax], vec![])?;
            let t = b.mul(col, ls)?;
            Some(b.neg(t)?)
        }
        None => None,
    };
    Ok(vec![d(gx), gy.and_then(d)])
}

fn sparse_softmax_xent(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(xent_logits(b, n, g)?), None])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    reg("Softmax", GradEntry::Func(softmax));
    reg("LogSoftmax", GradEntry::Func(log_softmax));
    reg("BiasAdd", GradEntry::Func(bias_add));
    reg(
        "SoftmaxCrossEntropyWithLogits",
        GradEntry::Func(softmax_xent),
    );
    reg(
        "SparseSoftmaxCrossEntropyWithLogits",
        GradEntry::Func(sparse_softmax_xent),
    );
}
