//! Gradients of softmax, bias_add and the fused cross-entropies.

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

/// The logits' gradient of a fused cross-entropy: the loss gradient (a
/// column) times the op's second output (softmax - labels), plus, when the
/// second output itself received a gradient `gg` (second derivatives), the
/// softmax Jacobian applied to it: `(gg - sum(gg * softmax)) * softmax`.
fn xent_logits(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> Result<Output> {
    let backprop = Output::new(n.id, 1);
    let mut grad = match g[0] {
        Some(gl) => {
            let ax = b.scalar_i32(-1)?;
            let col = b.op("ExpandDims", &[gl, ax], vec![])?;
            Some(b.mul(col, backprop)?)
        }
        None => None,
    };
    if let Some(gg) = g.get(1).copied().flatten() {
        let sm = b.unary("Softmax", n.inputs[0])?;
        let t = b.mul(gg, sm)?;
        let ax = last_axis(b)?;
        let s = b.sum(t, ax, true)?;
        let t = b.sub(gg, s)?;
        let t = b.mul(t, sm)?;
        grad = Some(match grad {
            Some(gr) => b.add(gr, t)?,
            None => t,
        });
    }
    match grad {
        Some(gr) => Ok(gr),
        None => b.zeros_like(backprop),
    }
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

/// Gradients of the fused activation-gradient ops `XGrad(gradients, z)`
/// (second derivatives), in TensorFlow's formulas: the op is linear in
/// `gradients`, so that part is the same op applied to the incoming `grad`.
fn activation_grad_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let (dy, z) = (n.inputs[0], n.inputs[1]);
    let dt = b.dtype(z);
    let attrs = match n.op.as_str() {
        "LeakyReluGrad" => vec![("alpha", AttrValue::Float(n.attrs.float_or("alpha", 0.2)?))],
        _ => vec![],
    };
    let gdy = b.op(&n.op, &[grad, z], attrs)?;
    let gz = match n.op.as_str() {
        // Piecewise constant in the features: no gradient through them.
        "ReluGrad" | "Relu6Grad" | "LeakyReluGrad" => b.zeros_like(z)?,
        // z is the forward output y: y < 0 ? dy * (y + c) : ...; d/dy = dy there.
        "EluGrad" | "SeluGrad" => {
            let zero = b.scalar(dt, 0.0)?;
            let neg = b.binary("Less", z, zero)?;
            let t = b.mul(grad, dy)?;
            let zeros = b.zeros_like(z)?;
            b.select(neg, t, zeros)?
        }
        // dy / (1 + exp(-x)): d/dx = dy / (exp(-x) + 2 + exp(x)).
        "SoftplusGrad" => {
            let e = b.unary("Exp", z)?;
            let nz = b.neg(z)?;
            let en = b.unary("Exp", nz)?;
            let two = b.scalar(dt, 2.0)?;
            let den = b.add(en, two)?;
            let den = b.add(den, e)?;
            let t = b.mul(grad, dy)?;
            b.div(t, den)?
        }
        // dy / (1 + |x|)^2: d/dx = -2 dy sign(x) / (1 + |x|)^3.
        "SoftsignGrad" => {
            let one = b.scalar(dt, 1.0)?;
            let a = b.unary("Abs", z)?;
            let p = b.add(one, a)?;
            let p2 = b.unary("Square", p)?;
            let p3 = b.mul(p2, p)?;
            let s = b.unary("Sign", z)?;
            let m2 = b.scalar(dt, -2.0)?;
            let t = b.mul(grad, dy)?;
            let t = b.mul(t, m2)?;
            let t = b.mul(t, s)?;
            b.div(t, p3)?
        }
        other => unreachable!("no activation grad-grad for {other}"),
    };
    Ok(vec![d(gdy), d(gz)])
}

/// BiasAddGrad sums over all but the channel axis: its gradient broadcasts
/// the incoming `[C]` gradient back over those axes.
fn bias_add_grad_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = g0(g);
    let input = n.inputs[0];
    let shape = b.shape(input)?;
    let nchw = n.attrs.str_or("data_format", "NHWC")? == "NCHW";
    let grad = if nchw {
        // [C] -> [C, 1, ..., 1] (rank - 2 ones), which broadcasts from axis 1.
        let rank = b.rank(input)?;
        let two = b.scalar_i32(2)?;
        let k = b.sub(rank, two)?;
        let k = b.pack(&[k], 0)?;
        let one = b.scalar_i32(1)?;
        let ones = b.fill(k, one)?;
        let minus1 = b.const_i32(vec![-1])?;
        let axis0 = b.scalar_i32(0)?;
        let s = b.concat(&[minus1, ones], axis0)?;
        b.reshape(grad, s)?
    } else {
        grad
    };
    Ok(vec![d(b.op("BroadcastTo", &[grad, shape], vec![])?)])
}

/// TopKV2: the values' gradient scattered back to where they came from
/// (flattened to 1-D positions, as TensorFlow does).
fn top_k(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let grad = match g[0] {
        Some(gr) => gr,
        None => return Ok(vec![None, None]),
    };
    let input = n.inputs[0];
    let indices = Output::new(n.id, 1);
    let in_shape = b.shape(input)?;
    let ind_shape = b.shape(indices)?;
    let k = b.element(ind_shape, -1)?;
    let last = b.element(in_shape, -1)?;
    let minus1 = b.scalar_i32(-1)?;
    let s2 = b.pack(&[minus1, k], 0)?;
    let ind2 = b.reshape(indices, s2)?;
    let ind2 = b.cast(ind2, DType::Int32)?;
    let s2 = b.shape(ind2)?;
    let outer = b.element(s2, 0)?;
    let zero = b.scalar_i32(0)?;
    let limit = b.mul(outer, last)?;
    let offsets = b.op(
        "Range",
        &[zero, limit, last],
        vec![("Tidx", AttrValue::Type(DType::Int32))],
    )?;
    let ax = b.scalar_i32(-1)?;
    let offsets = b.op("ExpandDims", &[offsets, ax], vec![])?;
    let flat = b.add(ind2, offsets)?;
    let minus1v = b.const_i32(vec![-1])?;
    let flat = b.reshape(flat, minus1v)?;
    let flat = b.op("ExpandDims", &[flat, ax], vec![])?;
    let gflat = b.reshape(grad, minus1v)?;
    let total = b.size(input)?;
    let total = b.pack(&[total], 0)?;
    let scattered = b.op("ScatterNd", &[flat, gflat, total], vec![])?;
    Ok(vec![d(b.reshape(scattered, in_shape)?), None])
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    for op in [
        "ReluGrad",
        "Relu6Grad",
        "LeakyReluGrad",
        "EluGrad",
        "SeluGrad",
        "SoftplusGrad",
        "SoftsignGrad",
    ] {
        reg(op, GradEntry::Func(activation_grad_grad));
    }
    reg("BiasAddGrad", GradEntry::Func(bias_add_grad_grad));
    reg("TopKV2", GradEntry::Func(top_k));
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
