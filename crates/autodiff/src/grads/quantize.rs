//! Gradients of the quantize-and-dequantize ops, as TensorFlow registers
//! them: V2 and V3 pass the gradient straight through to the input (none to
//! the range or `num_bits`); V4 masks it to the range with
//! `QuantizeAndDequantizeV4Grad`, which also gives the range's (zero)
//! gradients. `QuantizeV2`, `Dequantize` and `QuantizedConcat` have none in
//! TensorFlow, so `tf.gradients` through them raises `LookupError`.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::Result;

type R = Result<Vec<Option<Grad>>>;

fn upstream(g: &[Option<Output>]) -> Output {
    g[0].expect("called with an output gradient")
}

fn v2(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(upstream(g)), None, None])
}

fn v3(_: &mut Builder<'_>, _: &Node, g: &[Option<Output>]) -> R {
    Ok(vec![d(upstream(g)), None, None, None])
}

fn v4(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    let attrs: Vec<(&str, AttrValue)> = n
        .attrs
        .get("axis")
        .map(|v| vec![("axis", v.clone())])
        .unwrap_or_default();
    let id = b.node(
        "QuantizeAndDequantizeV4Grad",
        &[upstream(g), n.inputs[0], n.inputs[1], n.inputs[2]],
        attrs,
    )?;
    Ok((0..3).map(|i| d(Output::new(id, i))).collect())
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    use GradEntry::Func;
    reg("QuantizeAndDequantizeV2", Func(v2));
    reg("QuantizeAndDequantizeV3", Func(v3));
    reg("QuantizeAndDequantizeV4", Func(v4));
}
