//! Gradients of the fake-quant ops, as TensorFlow's `array_grad.py`
//! registers them: each forward op's gradient is its `...Gradient` op, with
//! the same `num_bits` / `narrow_range` (and, for `Args`, `min`/`max`).

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

/// The node's attrs that its gradient op takes.
fn carried(n: &Node, names: &[&'static str]) -> Vec<(&'static str, AttrValue)> {
    names
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect()
}

fn upstream(g: &[Option<Output>]) -> Output {
    g[0].expect("called with an output gradient")
}

fn args(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let attrs = carried(n, &["min", "max", "num_bits", "narrow_range"]);
    let dx = b.op(
        "FakeQuantWithMinMaxArgsGradient",
        &[upstream(g), n.inputs[0]],
        attrs,
    )?;
    Ok(vec![d(dx)])
}

fn vars_op(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], op: &str) -> R {
    let attrs = carried(n, &["num_bits", "narrow_range"]);
    let id = b.node(
        op,
        &[upstream(g), n.inputs[0], n.inputs[1], n.inputs[2]],
        attrs,
    )?;
    Ok((0..3).map(|i| d(Output::new(id, i))).collect())
}

fn vars(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    vars_op(b, n, g, "FakeQuantWithMinMaxVarsGradient")
}

fn per_channel(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    vars_op(b, n, g, "FakeQuantWithMinMaxVarsPerChannelGradient")
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    use GradEntry::Func;
    reg("FakeQuantWithMinMaxArgs", Func(args));
    reg("FakeQuantWithMinMaxVars", Func(vars));
    reg("FakeQuantWithMinMaxVarsPerChannel", Func(per_channel));
}
